import Anthropic from '@anthropic-ai/sdk';

// What a failed Messages API request means for a run: try the turn again, or stop and say what to fix.
// The SDK has already retried 408/409/429/5xx and dropped connections `anthropic.max_retries` times when
// an error reaches here; an `error` event in the middle of a stream it never retries (SDK 1.14,
// core/streaming: the event becomes an APIError without a status).

export interface ModelFailure {
  retry: boolean;
  /** One line in plain words, for the run's error and events. */
  reason: string;
  /** From `retry-after-ms` / `retry-after` when the API sent one. */
  retryAfterMs: number | null;
}

/** Thrown by the agent loop when a turn cannot be had: the run fails with this message. */
export class ModelUnavailable extends Error {}

const TRANSIENT_TYPES = new Set(['overloaded_error', 'api_error', 'rate_limit_error', 'timeout_error']);

export function classifyModelError(err: unknown, model: string): ModelFailure {
  if (err instanceof Anthropic.APIConnectionTimeoutError) {
    return { retry: true, reason: 'the request to the Messages API timed out', retryAfterMs: null };
  }
  if (err instanceof Anthropic.APIConnectionError) {
    return {
      retry: true,
      reason: `the connection to the Messages API failed (${err.message})`,
      retryAfterMs: null,
    };
  }
  if (err instanceof Anthropic.APIError) {
    const body = err.error as { error?: { type?: string; message?: string } } | undefined;
    const type = body?.error?.type ?? err.type ?? null;
    const message = body?.error?.message ?? err.apiMessage ?? err.message;
    const what = `${err.status ?? 'stream'}${type ? ` ${type}` : ''}: ${message}`;
    const retryAfterMs = retryAfter(err.headers);
    switch (err.status) {
      case undefined:
        // An `error` event in the middle of the stream.
        return TRANSIENT_TYPES.has(type ?? '')
          ? { retry: true, reason: `the reply broke off mid-stream (${what})`, retryAfterMs }
          : { retry: false, reason: `the reply broke off mid-stream (${what})`, retryAfterMs: null };
      case 400:
        return {
          retry: false,
          reason: `the Messages API refused the request (${what}); a setting the model ${model} does not accept, or a drydock bug: check the model's thinking and effort settings (README, Models)`,
          retryAfterMs: null,
        };
      case 401:
        return {
          retry: false,
          reason: `the API key was refused (${what}): set ANTHROPIC_API_KEY (or anthropic.api_key) to a valid key`,
          retryAfterMs: null,
        };
      case 403:
        return {
          retry: false,
          reason: `the API key may not use ${model} (${what}): check the key's workspace and model access`,
          retryAfterMs: null,
        };
      case 404:
        return {
          retry: false,
          reason: `the model ${model} was not found (${what}): check anthropic.model, or the session's or job's model (README, Models)`,
          retryAfterMs: null,
        };
      case 413:
        return {
          retry: false,
          reason: `the request is too large for the Messages API (${what})`,
          retryAfterMs: null,
        };
      default:
        if (err.status === 408 || err.status === 409 || err.status === 429 || err.status >= 500) {
          const kind =
            err.status === 429
              ? 'rate limited'
              : err.status === 529
                ? 'the API is overloaded'
                : 'the API failed';
          return { retry: true, reason: `${kind} (${what})`, retryAfterMs };
        }
        return { retry: false, reason: `the Messages API answered ${what}`, retryAfterMs: null };
    }
  }
  // The SDK's own errors (a stream that ended before message_stop) and a connection lost in the middle of the
  // reply (undici: TypeError "terminated", socket error codes): the stored conversation is untouched, so the
  // turn can be asked again. Anything else is a bug, not the network: not retried.
  if (err instanceof Anthropic.AnthropicError || isNetworkError(err)) {
    return {
      retry: true,
      reason: `the connection was lost or the reply ended early (${(err as Error).message})`,
      retryAfterMs: null,
    };
  }
  return {
    retry: false,
    reason: `an unexpected error while reading the model's reply (${(err as Error)?.name ?? 'Error'}: ${(err as Error)?.message ?? String(err)})`,
    retryAfterMs: null,
  };
}

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

function isNetworkError(err: unknown): boolean {
  const e = err as { name?: string; message?: string; code?: string; cause?: { code?: string } } | null;
  if (!e) return false;
  if (e.name === 'TypeError' && (e.message === 'terminated' || e.message === 'fetch failed')) return true;
  return NETWORK_CODES.has(e.code ?? '') || NETWORK_CODES.has(e.cause?.code ?? '');
}

function retryAfter(headers: Headers | undefined): number | null {
  const ms = headers?.get?.('retry-after-ms');
  if (ms != null && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const value = headers?.get?.('retry-after');
  if (value == null) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : null;
}

/**
 * Wait before attempt `attempt + 1`: exponential from `baseMs`, capped at 60 s, with jitter (a random
 * share of up to half), or what the API asked for with retry-after.
 */
export function retryDelay(
  attempt: number,
  baseMs: number,
  retryAfterMs: number | null,
  random = Math.random,
): number {
  if (retryAfterMs !== null) return Math.ceil(retryAfterMs);
  const ceiling = Math.min(60_000, baseMs * 2 ** (attempt - 1));
  return Math.ceil(ceiling * (1 - random() * 0.5));
}
