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
} from '../../../src/agent/tools/index.js';

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
        'context',
        '-o',
        'head_limit',
        'offset',
        'multiline',
      ]),
    );
    expect(Object.keys(definition('Read').input_schema.properties)).toContain('pages');
    expect(definition('ExitPlanMode').input_schema.required).toEqual(['plan']);
  });

  it('AskUserQuestion: the nested question and option schemas agree with zod, preview included', () => {
    const items = (definition('AskUserQuestion').input_schema.properties.questions as any).items;
    const questionShape = (askUserQuestionInput.shape.questions.element as unknown as z.ZodObject).shape;
    expect(Object.keys(items.properties).sort()).toEqual(Object.keys(questionShape).sort());
    const optionShape = ((questionShape.options as z.ZodArray).element as z.ZodObject).shape;
    expect(Object.keys(items.properties.options.items.properties).sort()).toEqual(
      Object.keys(optionShape).sort(),
    );
    expect(items.properties.options.items.required).toEqual(['label', 'description']);
    // Headers over 12 characters are accepted (and cut when shown), so the schema sets no maxLength.
    expect(items.properties.header.maxLength).toBeUndefined();
  });

  it('is plain JSON', () => {
    expect(JSON.parse(JSON.stringify(PLAN_TOOLS))).toEqual(PLAN_TOOLS);
  });
});
