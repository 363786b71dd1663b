import { HttpError } from './errors.js';

/**
 * Reads a request body chunk by chunk, handing each chunk to `onChunk` (which may throw to stop reading) and
 * keeping none itself; returns the number of bytes read. When the request is aborted meanwhile (the client went
 * away, or the server's request timeout cut it off), it stops with a 400 `incomplete_body` that nobody will
 * read: what matters is that the caller's `finally` runs.
 */
export async function eachChunk(request: Request, onChunk: (chunk: Uint8Array) => void): Promise<number> {
  const body = request.body;
  if (!body) return 0;
  const reader = body.getReader();
  const signal = request.signal;
  // An aborted request's stream normally errors by itself; cancelling it as well makes sure a read that is
  // waiting ends, so no reservation outlives its connection.
  const onAbort = () => {
    reader.cancel(signal.reason).catch(() => {});
  };
  signal.addEventListener('abort', onAbort, { once: true });
  let total = 0;
  try {
    for (;;) {
      const result = await reader.read().catch(() => null);
      if (result === null || signal.aborted) throw incomplete();
      if (result.done) return total;
      total += result.value.byteLength;
      onChunk(result.value);
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Reads and drops a body, up to `maxBytes` (past that the rest is left unread; the connection is closed after
 * the answer). For a request refused before its body matters: answering while the client is still sending makes
 * Node drop the connection instead of delivering the answer. Whatever happens to the body, the caller answers.
 */
export async function discardBody(request: Request, maxBytes: number): Promise<void> {
  let seen = 0;
  try {
    await eachChunk(request, (chunk) => {
      seen += chunk.byteLength;
      if (seen > maxBytes) throw new Error('body over the limit: left unread');
    });
  } catch {
    // The refusal is the answer, whether the body ended, went over the limit or never came.
  }
}

function incomplete(): HttpError {
  return new HttpError(
    400,
    'incomplete_body',
    'the request body ended before it was complete (the client went away or ran out of time)',
  );
}
