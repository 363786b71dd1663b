import { expect, it } from 'vitest';
import { describeEvent } from '../../src/cli/commands/run-follow.js';

const at = '2026-06-01T08:00:00.000Z';

it('prints a known event from its RunEventMap fields', () => {
  expect(
    describeEvent({
      seq: 4,
      type: 'run_started',
      at,
      phase: 'plan',
      model: 'claude-x',
      attempt: 1,
      thinking: { type: 'adaptive' },
      effort: 'high',
      notes: [],
    }),
  ).toBe('• run started: plan phase, model claude-x, thinking adaptive, effort high, attempt 1');
  expect(
    describeEvent({ seq: 5, type: 'run_resumed', at, phase: 'execute', model: 'claude-x', attempt: 2 }),
  ).toBe('• run resumed: execute phase, model claude-x, attempt 2');
});

it('a field an older daemon does not send prints as "-", and an unknown event type prints generically', () => {
  expect(describeEvent({ seq: 1, type: 'tool_use', at })).toBe('• tool -: ');
  expect(describeEvent({ seq: 2, type: 'plan_decided', at, plan_id: 'pln_1' })).toBe(
    '• plan pln_1: - by -, now -',
  );
  expect(describeEvent({ seq: 3, type: 'some_new_event', at, count: 2, note: 'hi' })).toBe(
    '• some_new_event: count=2, note=hi',
  );
});
