import { describe, expect, it } from 'vitest';
import { turnProse } from '../../../src/agent/tools/turn-prose.js';

describe('turnProse', () => {
  it('joins the text blocks and keeps the last thinking block, never redacted thinking', () => {
    expect(
      turnProse([
        { type: 'thinking', thinking: 'Reasoning about the task.' },
        { type: 'text', text: 'First part.' },
        { type: 'redacted_thinking', data: 'ENCRYPTED' } as never,
        { type: 'thinking', thinking: '## Plan\n\n1. Do it' },
        { type: 'text', text: ' ' },
        { type: 'text', text: 'Second part.' },
        { type: 'redacted_thinking', data: 'LATER' } as never,
        { type: 'tool_use', id: 'p', name: 'ExitPlanMode', input: {} } as never,
      ]),
    ).toEqual({ text: 'First part.\n\nSecond part.', thinking: '## Plan\n\n1. Do it' });
  });

  it('has nothing when the blocks carry no prose (display omitted: empty thinking)', () => {
    expect(
      turnProse([{ type: 'thinking', thinking: '' }, { type: 'redacted_thinking', data: 'x' } as never]),
    ).toEqual({ text: '', thinking: '' });
  });
});
