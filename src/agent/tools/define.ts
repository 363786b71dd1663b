import type { z } from 'zod';
import { guard } from './fs-errors.js';
import { parseInput } from './input.js';
import { errorResult, type ToolDefinition, type ToolResult } from './types.js';
import type { Workspace } from './workspace.js';

// How a tool is put together: the definition sent to the model, and for the tools that work in the
// workspace, the entry point the phases call with the model's raw input.

/**
 * A tool's definition as sent in `tools: [...]`. The description is given as sentences, sent joined by
 * spaces; the input schema is an object of `properties` that allows no other key. The key order is part of
 * the cached prompt prefix: name, description, input_schema (type, properties, required, additionalProperties).
 */
export function toolDefinition(tool: {
  name: string;
  description: readonly string[];
  properties: Record<string, unknown>;
  required: string[];
}): ToolDefinition {
  return {
    name: tool.name,
    description: tool.description.join(' '),
    input_schema: {
      type: 'object',
      properties: tool.properties,
      required: tool.required,
      additionalProperties: false,
    },
  };
}

/** A workspace tool's entry point: the workspace, the model's input as it came, the tool's limits. */
export type WorkspaceToolRun<L, R extends ToolResult = ToolResult> = (
  ws: Workspace,
  input: unknown,
  limits: L,
) => Promise<R>;

/**
 * The entry point of a workspace tool: the input is checked against `schema` first (an invalid one is an
 * error result that tells the model what to fix, named after `tool`), and whatever `work` did not foresee
 * becomes an error result instead of a throw (see `guard`).
 */
export function workspaceTool<S extends z.ZodType, L, R extends ToolResult>(
  tool: string,
  schema: S,
  work: (ws: Workspace, input: z.output<S>, limits: L) => Promise<R>,
): WorkspaceToolRun<L, R | ToolResult> {
  return (ws, input, limits) =>
    guard(tool, async () => {
      const parsed = parseInput(tool, schema, input);
      if (!parsed.ok) return errorResult(parsed.error);
      return work(ws, parsed.value, limits);
    });
}
