import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HttpError } from './errors.js';

/**
 * 413 for bodies over `maxBytes`. A request that declares its length is judged by the header alone, which
 * keeps the body on @hono/node-server's fast path; only chunked bodies are counted as they stream.
 */
export function bodyCap(maxBytes: number, what: string): MiddlewareHandler {
  const tooLarge = () => new HttpError(413, 'payload_too_large', `${what} exceeds ${maxBytes} bytes`);
  const streamed = bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw tooLarge();
    },
  });
  return async (c, next) => {
    const length = c.req.header('content-length');
    if (length !== undefined && !c.req.header('transfer-encoding')) {
      const n = Number(length);
      if (!Number.isSafeInteger(n) || n < 0)
        throw new HttpError(400, 'bad_request', 'invalid Content-Length');
      if (n > maxBytes) throw tooLarge();
      return next();
    }
    return streamed(c, next);
  };
}
