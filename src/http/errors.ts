import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import type { Logger } from '../logger.js';
import { CronError } from '../scheduler/cron.js';
import { ConflictError, InvalidCursorError, NotFoundError } from '../store/store.js';

/**
 * The one error type of the HTTP layer: a status, a stable code and a message safe to show, and any headers the
 * answer needs (Retry-After).
 */
export class HttpError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(message);
  }
}

export const notFound = (what: string, id: string) =>
  new HttpError(404, 'not_found', `${what} ${id} not found`);

export function invalid(error: z.ZodError, where: 'body' | 'query' = 'body'): HttpError {
  const details = error.issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message }));
  const summary = details.map((d) => `${d.path}: ${d.message}`).join('; ');
  return new HttpError(422, 'invalid_request', `invalid ${where}: ${summary}`, details);
}

/** Maps known errors to their status; anything else is logged and answered as a bare 500. */
export function errorResponse(err: unknown, c: Context, logger: Logger): Response {
  const e = toHttpError(err);
  if (!e) {
    logger.error({ err, method: c.req.method, path: c.req.path }, 'unhandled error in request');
    return c.json({ error: { code: 'internal', message: 'internal error' } }, 500);
  }
  const body: { code: string; message: string; details?: unknown } = { code: e.code, message: e.message };
  if (e.details !== undefined) body.details = e.details;
  if (e.status === 401) c.header('WWW-Authenticate', 'Bearer realm="drydock"');
  for (const [name, value] of Object.entries(e.headers ?? {})) c.header(name, value);
  return c.json({ error: body }, e.status);
}

function toHttpError(err: unknown): HttpError | null {
  if (err instanceof HttpError) return err;
  if (err instanceof CronError) return new HttpError(422, 'invalid_cron', err.message);
  if (err instanceof NotFoundError) return new HttpError(404, 'not_found', err.message);
  if (err instanceof ConflictError) return new HttpError(409, 'conflict', err.message);
  if (err instanceof InvalidCursorError) return new HttpError(400, 'bad_cursor', err.message);
  return null;
}
