import type { Context } from 'hono';
import type { z } from 'zod';
import { HttpError, humanIssues, invalid } from './errors.js';

/**
 * Reads a JSON body and validates it: 400 when it is not JSON, 422 when it does not fit the schema.
 * `purpose` ends the message of a missing field: "comment is required to reject".
 */
export async function jsonBody<S extends z.ZodType>(
  c: Context,
  schema: S,
  purpose?: string,
): Promise<z.output<S>> {
  const text = await c.req.text();
  let value: unknown;
  try {
    value = text.trim() === '' ? {} : JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, 'malformed_json', `request body is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = schema.safeParse(value, { error: humanIssues(purpose ? { purpose } : {}) });
  if (!parsed.success) throw invalid(parsed.error);
  return parsed.data;
}

export function query<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  const parsed = schema.safeParse(c.req.query(), { error: humanIssues({ where: 'query' }) });
  if (!parsed.success) throw invalid(parsed.error, 'query');
  return parsed.data;
}
