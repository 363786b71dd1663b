import { setTimeout as sleep } from 'node:timers/promises';
import { type ApiClient, ApiError, UnreachableError } from './client.js';

// Reading a Server-Sent Events stream from the daemon, and following one across dropped connections: each
// reconnect sends the last `id:` seen as Last-Event-ID, so the daemon replays exactly what was missed.

export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}

/** The events of an SSE body, as they complete. Comment lines (keep-alives) are skipped. */
export async function* sseEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let id: string | null = null;
  let event = '';
  let data: string[] = [];
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline = buffer.search(/\r\n|\r|\n/);
    while (newline >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
      newline = buffer.search(/\r\n|\r|\n/);
      if (line === '') {
        // A blank line ends an event; one without data is only a comment or a lone id.
        if (data.length) yield { id, event: event || 'message', data: data.join('\n') };
        event = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
      else if (field === 'id' && !value.includes('\0')) id = value;
    }
  }
}

export interface FollowOptions {
  /** The event after which the stream is complete (the daemon closes it then). */
  last: string;
  /** Asked when a stream closed before `last` came: true when there is nothing more to wait for. */
  ended(): Promise<boolean>;
  /** Told of each reconnect, with the id it resumes after and why the connection ended. */
  onReconnect?(lastId: string | null, reason: string): void;
  /** A connection silent this long is taken for dead (the daemon sends a keep-alive every 15 s). */
  idleMs?: number;
  /** Reconnects in a row without an event in between before giving up. */
  maxRetries?: number;
  /** The first pause before reconnecting; it doubles, up to 10 s. */
  retryMs?: number;
}

/** Gave up reconnecting. */
export class StreamLostError extends Error {}

/**
 * Every event of `path` until `opts.last`, reconnecting with Last-Event-ID whenever the connection drops,
 * goes silent or cannot be made. Answers are not retried (a 404 stays a 404), except a 5xx: a daemon
 * restarting answers 503 for a moment.
 */
export async function* followEvents(
  client: ApiClient,
  path: string,
  opts: FollowOptions,
): AsyncGenerator<SseEvent> {
  const idleMs = opts.idleMs ?? 45_000;
  const maxRetries = opts.maxRetries ?? 8;
  let pause = opts.retryMs ?? 500;
  let lastId: string | null = null;
  let failures = 0;
  for (;;) {
    const abort = new AbortController();
    let idle: NodeJS.Timeout | undefined;
    const watch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => abort.abort(new Error(`nothing heard for ${idleMs / 1000} s`)), idleMs);
    };
    let reason = 'the daemon closed the stream';
    try {
      watch();
      const headers: Record<string, string> = lastId === null ? {} : { 'last-event-id': lastId };
      const res = await client.stream(path, headers, abort.signal);
      for await (const e of sseEvents(touching(res.body!, watch))) {
        failures = 0;
        pause = opts.retryMs ?? 500;
        if (e.id !== null) lastId = e.id;
        yield e;
        if (e.event === opts.last) return;
      }
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) throw err;
      reason = abort.signal.aborted
        ? (abort.signal.reason as Error).message
        : err instanceof UnreachableError || err instanceof ApiError
          ? err.message
          : `the connection dropped (${(err as Error).message})`;
    } finally {
      clearTimeout(idle);
      abort.abort();
    }
    // Closed before the last event: a run that ended without one, or a connection lost on the way.
    if (await opts.ended().catch(() => false)) return;
    if (++failures > maxRetries) {
      throw new StreamLostError(`gave up following after ${maxRetries} reconnects: ${reason}`);
    }
    opts.onReconnect?.(lastId, reason);
    await sleep(pause);
    pause = Math.min(pause * 2, 10_000);
  }
}

/** The chunks of `body`, calling `onChunk` as each arrives. */
async function* touching(body: AsyncIterable<Uint8Array>, onChunk: () => void): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    onChunk();
    yield chunk;
  }
}
