import type { z } from 'zod';
import type { Parsed } from '../../domain/input.js';

/** Most issues listed in one message; a model that got many things wrong needs the first few to fix. */
const MAX_ISSUES = 8;

/** One line per problem, naming the field by its path (`questions[0].header: ...`). */
export function describeIssues(tool: string, error: z.ZodError): string {
  const lines = error.issues.slice(0, MAX_ISSUES).map((issue) => {
    const where = issue.path
      .map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`))
      .join('');
    return `  - ${where === '' ? '(input)' : where}: ${issue.message}`;
  });
  const more = error.issues.length > MAX_ISSUES ? `\n  - …and ${error.issues.length - MAX_ISSUES} more` : '';
  return `${tool}: invalid input\n${lines.join('\n')}${more}`;
}

/**
 * Validates a tool input with `schema`; on failure the error says what was wrong, for the model to retry.
 * Tool schemas are plain `z.object`s, which drop keys they do not know: a model trained on Claude Code sends
 * fields that drydock has no use for, and ignoring them is kinder than refusing the call. Known fields of
 * the wrong type are still refused.
 */
export function parseInput<S extends z.ZodType>(
  tool: string,
  schema: S,
  input: unknown,
): Parsed<z.output<S>> {
  const result = schema.safeParse(input);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, error: describeIssues(tool, result.error) };
}

/** The `file_path` property of the input schemas of the tools that take one file (Read, Write, Edit). */
export const filePathProperty = {
  type: 'string',
  description: 'Path of the file, relative to the workspace (an absolute path inside it works too).',
};
