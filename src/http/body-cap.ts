import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HttpError } from './errors.js';

export const tooLarge = (maxBytes: number, what: string) =>
  new HttpError(413, 'payload_too_large', `${what} exceeds ${maxBytes} bytes`);

/**
 * The body length a request declares with Content-Length (undefined when it declares none, or is chunked):
 * 400 when the header is not a length, 413 when it is over `maxBytes`. Judged from the header alone, before
 * any of the body is read.
 */
export function declaredLength(c: Context, maxBytes: number, what: string): number | undefined {
  const length = c.req.header('content-length');
  if (length === undefined || c.req.header('transfer-encoding')) return undefined;
  const n = Number(length);
  if (!Number.isSafeInteger(n) || n < 0) throw new HttpError(400, 'bad_request', 'invalid Content-Length');
  if (n > maxBytes) throw tooLarge(maxBytes, what);
  return n;
}

/**
 * 413 for bodies over `maxBytes`. A request that declares its length is judged by the header alone, which
 * keeps the body on @hono/node-server's fast path; only chunked bodies are counted as they stream (and are
 * buffered to do so: use it only where the request is already authenticated).
 */
export function bodyCap(maxBytes: number, what: string): MiddlewareHandler {
  const streamed = bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw tooLarge(maxBytes, what);
    },
  });
  return async (c, next) => {
    if (declaredLength(c, maxBytes, what) !== undefined) return next();
    return streamed(c, next);
  };
}
