import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import type { Context } from 'hono';
import type { z } from 'zod';
import type { Config } from '../config/schema.js';
import type { RunDefaults } from '../domain/types.js';
import { canonicalZone } from '../domain/zone.js';
import { modelProblems } from '../models/catalogue.js';
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

/** Run options as submitted, refused (422) when they name a retired model or one with no price. */
export function runOptions(config: Config, options: RunDefaults | undefined): RunDefaults {
  if (options?.model !== undefined) {
    const [problem] = modelProblems(config, options.model).errors;
    if (problem) throw new HttpError(422, 'invalid_model', problem);
  }
  return options ?? {};
}

/**
 * A schedule's time zone as the caller spelled it, letter case corrected ("europe/kyiv" becomes
 * "Europe/Kyiv"), never the runtime's older alias (Node 20 resolves "Europe/Kyiv" to "Europe/Kiev"); 422
 * when there is no such zone.
 */
export function scheduleZone(requested: string): string {
  const zone = canonicalZone(requested);
  if (zone === null) {
    throw new HttpError(
      422,
      'invalid_timezone',
      `timezone: unknown IANA time zone "${requested}" (expected e.g. "Europe/Berlin" or "UTC")`,
    );
  }
  return zone;
}

/**
 * A workspace directory named over the API: an absolute path to an existing directory. A relative one is
 * refused rather than resolved against the daemon's own working directory, which the caller cannot see
 * (the CLI resolves relative paths against the caller's directory before sending them).
 */
export async function workspaceDir(path: string): Promise<string> {
  if (!isAbsolute(path)) {
    throw new HttpError(
      422,
      'invalid_workspace',
      `workspace "${path}" is not an absolute path: give the directory's full path (the daemon does not resolve paths against its own directory)`,
    );
  }
  const abs = resolve(path);
  if (!(await stat(abs).catch(() => null))?.isDirectory()) {
    throw new HttpError(422, 'invalid_workspace', `workspace ${abs} is not an existing directory`);
  }
  return abs;
}
