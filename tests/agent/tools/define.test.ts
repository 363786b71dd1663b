import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toolDefinition, workspaceTool } from '../../../src/agent/tools/define.js';
import type { Workspace } from '../../../src/agent/tools/workspace.js';

describe('toolDefinition', () => {
  it('joins the description and closes the input schema, keys in the order sent', () => {
    const def = toolDefinition({
      name: 'Probe',
      description: ['Does one thing.', 'Then stops.'],
      properties: { path: { type: 'string' } },
      required: ['path'],
    });
    expect(JSON.stringify(def)).toBe(
      JSON.stringify({
        name: 'Probe',
        description: 'Does one thing. Then stops.',
        input_schema: {
          type: 'object',
          properties: { path: { type: 'string' } },
          required: ['path'],
          additionalProperties: false,
        },
      }),
    );
  });
});

describe('workspaceTool', () => {
  const input = z.object({ word: z.string().min(1) });
  const ws = {} as Workspace;

  it('passes the parsed input to the work', async () => {
    const run = workspaceTool('Probe', input, async (_ws, given, limits: { times: number }) => ({
      content: given.word.repeat(limits.times),
      isError: false,
    }));
    await expect(run(ws, { word: 'ab', extra: true }, { times: 2 })).resolves.toEqual({
      content: 'abab',
      isError: false,
    });
  });

  it('answers an invalid input with what to fix, without running the work', async () => {
    let ran = false;
    const run = workspaceTool('Probe', input, async () => {
      ran = true;
      return { content: 'ran', isError: false };
    });
    const r = await run(ws, { word: 3 }, {});
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/^Probe: invalid input\n {2}- word: /);
    expect(ran).toBe(false);
  });

  it('turns a throw into an error result that names the tool and the error kind only', async () => {
    const run = workspaceTool('Probe', input, async () => {
      throw Object.assign(new Error('/secret/root/x'), { code: 'EIO' });
    });
    const r = await run(ws, { word: 'a' }, {});
    expect(r).toEqual({
      content: 'Probe: failed unexpectedly (EIO); try again or use another tool',
      isError: true,
    });
  });
});
