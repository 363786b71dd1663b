import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  askUserQuestionInput,
  exitPlanModeInput,
  globInput,
  grepInput,
  PLAN_TOOLS,
  readInput,
  type ToolDefinition,
} from '../../src/agent/tools/index.js';

const schemas: Record<string, z.ZodObject> = {
  Read: readInput,
  Glob: globInput,
  Grep: grepInput,
  AskUserQuestion: askUserQuestionInput as unknown as z.ZodObject,
  ExitPlanMode: exitPlanModeInput,
};

function definition(name: string): ToolDefinition {
  const found = PLAN_TOOLS.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

describe('PLAN_TOOLS', () => {
  it('lists the plan-phase tools in order', () => {
    expect(PLAN_TOOLS.map((t) => t.name)).toEqual([
      'Read',
      'Glob',
      'Grep',
      'AskUserQuestion',
      'ExitPlanMode',
    ]);
  });

  it.each(Object.keys(schemas))('%s: the JSON schema and the zod schema agree', (name) => {
    const def = definition(name);
    const shape = schemas[name]!.shape as Record<string, z.ZodType>;
    expect(def.input_schema.type).toBe('object');
    expect(def.input_schema.additionalProperties).toBe(false);
    expect(Object.keys(def.input_schema.properties).sort()).toEqual(Object.keys(shape).sort());
    const required = Object.entries(shape)
      .filter(([, s]) => !s.safeParse(undefined).success)
      .map(([k]) => k)
      .sort();
    expect([...(def.input_schema.required ?? [])].sort()).toEqual(required);
    expect(def.description.length).toBeGreaterThan(20);
  });

  it('uses Claude Code input names', () => {
    expect(definition('Read').input_schema.required).toEqual(['file_path']);
    expect(Object.keys(definition('Grep').input_schema.properties)).toEqual(
      expect.arrayContaining([
        'pattern',
        'path',
        'glob',
        'output_mode',
        '-i',
        '-n',
        '-A',
        '-B',
        '-C',
        'head_limit',
        'multiline',
      ]),
    );
    expect(definition('ExitPlanMode').input_schema.required).toEqual(['plan']);
  });

  it('is plain JSON', () => {
    expect(JSON.parse(JSON.stringify(PLAN_TOOLS))).toEqual(PLAN_TOOLS);
  });
});
