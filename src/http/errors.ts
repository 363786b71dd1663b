import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import { DomainError, type ErrorCode } from '../domain/errors.js';
import { SpendCapError } from '../domain/spend.js';
import type { Logger } from '../logger.js';
import { StoreUnavailableError } from '../store/store.js';

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

/**
 * The API's one table from a domain error's code to the status it is answered with. Every code has its row
 * (the compiler holds the list to `ERROR_CODES`); the body is always `{error: {code, message}}`.
 */
export const API_STATUS: Readonly<Record<ErrorCode, ContentfulStatusCode>> = {
  not_found: 404,
  conflict: 409,
  managed_by_trigger: 409,
  stale: 409,
  expired: 410,
  sha256_mismatch: 409,
  self_approval: 403,
  forbidden: 403,
  already_approved: 409,
  not_pending: 409,
  invalid_answers: 422,
  invalid_cron: 422,
  invalid_request: 422,
  invalid_prompt: 422,
  invalid_workspace: 422,
  invalid_timezone: 422,
  invalid_model: 422,
  bad_cursor: 400,
  capped: 429,
  spend_cap: 429,
};

export const notFound = (what: string, id: string) => new DomainError('not_found', `${what} ${id} not found`);

/** Where invalid input came from, and what the request was for ("to reject"), for messages. */
export interface InputContext {
  where?: 'body' | 'query';
  /** Appended to "<field> is required", when the route knows why: "to reject". */
  purpose?: string;
}

/**
 * A 422 naming every problem. The messages come from `humanIssues` (pass it to `safeParse`) or from the
 * schema itself where it says something specific; a message that does not name its field is prefixed with it.
 */
export function invalid(error: z.ZodError, where: 'body' | 'query' = 'body'): HttpError {
  const details = error.issues.map((i) => {
    const path = pathOf(i.path, where);
    return { path: i.path.length ? path : '(root)', message: named(path, i.message) };
  });
  return new HttpError(422, 'invalid_request', details.map((d) => d.message).join('; '), details);
}

const named = (path: string, message: string): string =>
  message.startsWith(`${path} `) ? message : `${path}: ${message}`;

function pathOf(path: readonly PropertyKey[] | undefined, where: 'body' | 'query'): string {
  return path?.length ? path.map(String).join('.') : `the ${where}`;
}

/**
 * A per-parse zod error map that words each problem for a person: "comment is required", "limit must be
 * a number", "status must be one of open, closed". Messages a schema sets itself take precedence over it.
 */
export function humanIssues(ctx: InputContext = {}): z.core.$ZodErrorMap {
  const where = ctx.where ?? 'body';
  return (iss) => {
    const field = pathOf(iss.path, where);
    return `${field} ${problem(iss, ctx.purpose)}`;
  };
}

type RawIssue = z.core.$ZodRawIssue;

/** What is wrong with one value, without its name: "is required", "must be a string". */
function problem(iss: RawIssue, purpose: string | undefined): string {
  // A JSON body has no undefined values and a query none either: undefined is a field that is absent.
  if (iss.input === undefined && (iss.code === 'invalid_type' || iss.code === 'invalid_union')) {
    return purpose ? `is required ${purpose}` : 'is required';
  }
  switch (iss.code) {
    case 'invalid_type':
      return `must be ${kind(iss.expected)}`;
    case 'invalid_value':
      return `must be ${oneOf(iss.values.map(literal))}`;
    case 'invalid_union': {
      const wanted = [...new Set(alternatives(iss.errors))];
      if (!wanted.length) return 'is not valid';
      return `must be ${wanted.length === 1 ? wanted[0] : `${wanted.slice(0, -1).join(', ')} or ${wanted.at(-1)}`}`;
    }
    case 'too_small':
      return bound(iss.origin, 'least', iss.minimum, iss.inclusive);
    case 'too_big':
      return bound(iss.origin, 'most', iss.maximum, iss.inclusive);
    case 'unrecognized_keys': {
      const keys = iss.keys.map((k) => `"${k}"`).join(', ');
      return `has unknown ${iss.keys.length === 1 ? 'field' : 'fields'} ${keys}`;
    }
    case 'invalid_format':
      return iss.format === 'regex'
        ? `must match ${iss.pattern ?? 'its pattern'}`
        : `must be a valid ${iss.format}`;
    case 'not_multiple_of':
      return `must be a multiple of ${iss.divisor}`;
    case 'invalid_key':
      return 'has an invalid key';
    case 'invalid_element':
      return 'has an invalid element';
    default:
      return 'is not valid';
  }
}

/** What each branch of a union would have taken ("off", "an object"), nested unions included. */
function alternatives(branches: readonly (readonly z.core.$ZodIssue[])[]): string[] {
  return branches.flatMap((branch) => {
    const first = branch[0];
    if (first?.code === 'invalid_value') return first.values.map(literal);
    if (first?.code === 'invalid_type') return [kind(first.expected)];
    if (first?.code === 'invalid_union') return alternatives(first.errors);
    return [];
  });
}

const KINDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

const kind = (expected: string): string => KINDS[expected] ?? `a ${expected}`;

const literal = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** "a", "a or b", "one of a, b, c". */
function oneOf(options: string[]): string {
  if (options.length <= 2) return options.join(' or ');
  return `one of ${options.join(', ')}`;
}

function bound(
  origin: string,
  side: 'least' | 'most',
  limit: unknown,
  inclusive: boolean | undefined,
): string {
  const n = Number(limit);
  switch (origin) {
    case 'string':
      if (side === 'least' && n === 1) return 'must not be empty';
      return `must be at ${side} ${n} character${n === 1 ? '' : 's'} long`;
    case 'array':
    case 'set':
      if (side === 'least' && n === 1) return 'must not be empty';
      return `must have at ${side} ${n} item${n === 1 ? '' : 's'}`;
    default:
      if (inclusive === false) return `must be ${side === 'least' ? 'greater' : 'less'} than ${limit}`;
      return `must be at ${side} ${limit}`;
  }
}

/** Maps known errors to their status; anything else is logged and answered as a bare 500. */
export function errorResponse(err: unknown, c: Context, logger: Logger): Response {
  const e = toHttpError(err);
  if (err instanceof StoreUnavailableError) {
    // The store logs an outage once, at its start and its end; each request it refused only at debug.
    logger.debug(
      { err: err.cause, method: c.req.method, path: c.req.path },
      'database unreachable; answered 503',
    );
  }
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
  if (err instanceof StoreUnavailableError) {
    // Nothing was decided (or a transaction's outcome is unknown): the client tries again, as it would after
    // a 503 of a proxy. The cause (a host, a port) is in the log, not in the answer.
    return new HttpError(503, 'unavailable', 'the database cannot be reached; try again shortly', undefined, {
      'retry-after': '5',
    });
  }
  if (err instanceof DomainError) {
    const code: ErrorCode = err.code;
    // A spend cap lifts when its day resets: said as an HTTP-date, which needs no clock here.
    const retry =
      err instanceof SpendCapError ? { 'retry-after': new Date(err.hit.resetsAt).toUTCString() } : undefined;
    return new HttpError(API_STATUS[code], code, err.message, err.details, retry);
  }
  return null;
}
