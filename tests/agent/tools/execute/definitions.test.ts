import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  bashInput,
  DEFAULT_EXEC_LIMITS,
  EXECUTE_TOOLS,
  editInput,
  execLimits,
  writeInput,
} from '../../../../src/agent/tools/execute-tools.js';
import { PLAN_TOOLS, readInput, type ToolDefinition } from '../../../../src/agent/tools/index.js';

const schemas: Record<string, z.ZodObject> = {
  Write: writeInput,
  Edit: editInput,
  Bash: bashInput,
  Read: readInput,
};

function definition(name: string): ToolDefinition {
  const found = EXECUTE_TOOLS.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

describe('EXECUTE_TOOLS', () => {
  it('lists the execute-phase tools in order, reusing the plan tools', () => {
    expect(EXECUTE_TOOLS.map((t) => t.name)).toEqual([
      'Read',
      'Glob',
      'Grep',
      'AskUserQuestion',
      'Write',
      'Edit',
      'Bash',
    ]);
    for (const tool of EXECUTE_TOOLS.slice(0, 4)) expect(PLAN_TOOLS).toContain(tool);
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
    expect(definition('Write').input_schema.required).toEqual(['file_path', 'content']);
    expect(definition('Edit').input_schema.required).toEqual(['file_path', 'old_string', 'new_string']);
    expect(Object.keys(definition('Edit').input_schema.properties)).toContain('replace_all');
    expect(definition('Bash').input_schema.required).toEqual(['command']);
    expect(Object.keys(definition('Bash').input_schema.properties).sort()).toEqual([
      'command',
      'description',
      'run_in_background',
      'timeout',
    ]);
  });

  it('is plain JSON', () => {
    expect(JSON.parse(JSON.stringify(EXECUTE_TOOLS))).toEqual(EXECUTE_TOOLS);
  });

  it('has default limits that can be overridden', () => {
    expect(DEFAULT_EXEC_LIMITS).toEqual({ maxWriteBytes: 5 * 1024 * 1024 });
    expect(execLimits({ maxWriteBytes: 10 })).toEqual({ maxWriteBytes: 10 });
    expect(execLimits()).toEqual(DEFAULT_EXEC_LIMITS);
  });
});
