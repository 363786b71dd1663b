import Anthropic from '@anthropic-ai/sdk';

// What a failed Messages API request means for a run: try the turn again, or stop and say what to fix.
// The SDK has already retried 408/409/429/5xx and dropped connections `anthropic.max_retries` times when
// an error reaches here; an `error` event in the middle of a stream it never retries (SDK 1.14,
// core/streaming: the event becomes an APIError without a status).

export interface ModelFailure {
  retry: boolean;
  /** What failed, for the `drydock_model_errors` metric and for what the run does next. */
  kind: ModelErrorKind;
  /** One line in plain words, for the run's error and events. */
  reason: string;
  /** From `retry-after-ms` / `retry-after` when the API sent one. */
  retryAfterMs: number | null;
}

/** Thrown by the agent loop when a turn cannot be had: the run fails with this message. */
export class ModelUnavailable extends Error {}

/** Thrown by the agent loop when the account's spend limit was reached: the run waits (docs/models.md). */
export class SpendLimitReached extends Error {
  /**
   * @param until when a run held back by another run's wait resumes: that wait's end (it never starts a new
   * one, or waiting runs would push each other back forever); unset for a request the API refused, whose
   * run waits anthropic.spend_limit_wait_ms from now.
   */
  constructor(
    message: string,
    readonly until?: number,
  ) {
    super(message);
  }
}

const TRANSIENT_TYPES = new Set(['overloaded_error', 'api_error', 'rate_limit_error', 'timeout_error']);

export function classifyModelError(err: unknown, model: string): ModelFailure {
  if (err instanceof Anthropic.APIConnectionTimeoutError) {
    return {
      retry: true,
      kind: 'timeout',
      reason: 'the request to the Messages API timed out',
      retryAfterMs: null,
    };
  }
  if (err instanceof Anthropic.APIConnectionError) {
    return {
      retry: true,
      kind: 'connection',
      reason: `the connection to the Messages API failed (${err.message})`,
      retryAfterMs: null,
    };
  }
  if (err instanceof Anthropic.APIError) return classifyApiError(err, model);
  // The SDK's own errors (a stream that ended before message_stop) and a connection lost in the middle of the
  // reply (undici: TypeError "terminated", socket error codes): the stored conversation is untouched, so the
  // turn can be asked again. Anything else is a bug, not the network: not retried.
  if (isMissingKey(err)) return missingKey();
  if (err instanceof Anthropic.AnthropicError || isNetworkError(err)) {
    return {
      retry: true,
      kind: 'connection',
      reason: `the connection was lost or the reply ended early (${(err as Error).message})`,
      retryAfterMs: null,
    };
  }
  return {
    retry: false,
    kind: 'unexpected',
    reason: `an unexpected error while reading the model's reply (${(err as Error)?.name ?? 'Error'}: ${(err as Error)?.message ?? String(err)})`,
    retryAfterMs: null,
  };
}

type ApiError = InstanceType<typeof Anthropic.APIError>;

/** An error the Messages API answered (an HTTP status), or sent in the middle of the stream (no status). */
function classifyApiError(err: ApiError, model: string): ModelFailure {
  const body = err.error as { error?: { type?: string; message?: string } } | undefined;
  const type = body?.error?.type ?? err.type ?? null;
  const message = body?.error?.message ?? err.apiMessage ?? err.message;
  const what = `${err.status ?? 'stream'}${type ? ` ${type}` : ''}: ${message}`;
  const retryAfterMs = retryAfter(err.headers);
  switch (err.status) {
    case undefined:
      // An `error` event in the middle of the stream.
      return streamFailure(type, what, retryAfterMs);
    case 400:
      if (isSpendLimit(err)) return spendLimit(what);
      return {
        retry: false,
        kind: 'invalid_request',
        reason: `the Messages API refused the request (${what}); a setting the model ${model} does not accept, or a drydock bug: check the model's thinking and effort settings (docs/models.md)`,
        retryAfterMs: null,
      };
    case 401:
      return {
        retry: false,
        kind: 'auth',
        reason: `the API key was refused (${what}): set ANTHROPIC_API_KEY (or anthropic.api_key) to a valid key`,
        retryAfterMs: null,
      };
    case 403:
      return {
        retry: false,
        kind: 'permission',
        reason: `the API key may not use ${model} (${what}): check the key's workspace and model access`,
        retryAfterMs: null,
      };
    case 404:
      return {
        retry: false,
        kind: 'not_found',
        reason: `the model ${model} was not found (${what}): check anthropic.model, or the session's or job's model (docs/models.md)`,
        retryAfterMs: null,
      };
    case 413:
      return {
        retry: false,
        kind: 'request_too_large',
        reason: `the request is too large for the Messages API (${what})`,
        retryAfterMs: null,
      };
    default:
      return otherStatus(err, err.status, what, retryAfterMs);
  }
}

/** An `error` event in the middle of the stream: retried when its type is a transient one. */
function streamFailure(type: string | null, what: string, retryAfterMs: number | null): ModelFailure {
  return TRANSIENT_TYPES.has(type ?? '')
    ? {
        retry: true,
        kind: streamKind(type),
        reason: `the reply broke off mid-stream (${what})`,
        retryAfterMs,
      }
    : {
        retry: false,
        kind: streamKind(type),
        reason: `the reply broke off mid-stream (${what})`,
        retryAfterMs: null,
      };
}

/** A status with no case of its own: retried when it is a timeout, a conflict, a rate limit or a 5xx. */
function otherStatus(err: ApiError, status: number, what: string, retryAfterMs: number | null): ModelFailure {
  if (isSpendLimit(err)) return spendLimit(what);
  if (status === 408 || status === 409 || status === 429 || status >= 500) {
    const kind =
      status === 429 ? 'rate limited' : status === 529 ? 'the API is overloaded' : 'the API failed';
    return { retry: true, kind: statusKind(status), reason: `${kind} (${what})`, retryAfterMs };
  }
  return {
    retry: false,
    kind: 'api_error',
    reason: `the Messages API answered ${what}`,
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

// ---- account limits (spend limits, keys, permissions): never retried ------------------------------------
//
// What the Messages API answers when the account, not the request, is the problem (read 2026-12-04):
// - "Claude API errors" (https://platform.claude.com/docs/en/api/errors): 400 invalid_request_error is also
//   what a request gets once usage reaches an organization or workspace spend limit set in the Console (the
//   Claude Code workspace may answer 429 instead); 401 authentication_error: the key is malformed, revoked
//   or expired; 403 permission_error: the key may not use the resource; 429 rate_limit_error: a rate limit,
//   or the monthly spend cap of the organization's usage tier, whose 429 carries no retry-after.
// - "Rate limits" (https://platform.claude.com/docs/en/api/rate-limits): at the tier's spend cap usage pauses
//   until 00:00 UTC on the first of the next month; the 429's body is rate_limit_error with
//   `error.details.error_code: "enforced_spend_limit_reached"` and a message ending "You will regain access
//   on <date> at 00:00 UTC."; retrying, the SDKs' own retries included, fails until access resumes.
// - The 400 of a spend limit one sets has no details; its message begins "You have reached your specified
//   API usage limits" ("... specified workspace API usage limits" for a workspace) and says when access
//   resumes (third-party captures of the live API; the docs give no text).
// - @anthropic-ai/sdk 1.14 (client.js shouldRetry): retries 408, 409, 429 and >= 500 unless the response says
//   `x-should-retry: false`; with no key it throws "Could not resolve authentication method..." before any
//   request is sent (MessageStream wraps it in an AnthropicError). See src/models/client.ts.

export const MODEL_ERROR_KINDS = [
  'spend_limit',
  'auth',
  'permission',
  'rate_limit',
  'overloaded',
  'invalid_request',
  'not_found',
  'request_too_large',
  'api_error',
  'timeout',
  'connection',
  'unexpected',
] as const;
export type ModelErrorKind = (typeof MODEL_ERROR_KINDS)[number];

/** `error.details.error_code` values of spend limits: the tier's cap (rate-limits page) and its kin. */
const SPEND_LIMIT_CODES = new Set([
  'enforced_spend_limit_reached',
  'contract_spend_limit_reached',
  'linked_organization_spend_limit_reached',
]);

export const isSpendLimitCode = (code: string | null): boolean => SPEND_LIMIT_CODES.has(code ?? '');

/** The `error.details.error_code` of an API error body, if it has one. */
export function errorCodeOf(body: unknown): string | null {
  const code = (body as { error?: { details?: { error_code?: unknown } } } | null)?.error?.details
    ?.error_code;
  return typeof code === 'string' ? code : null;
}

/** A 429 carrying a spend limit's error code, or the 400 of a spend limit set in the Console. */
function isSpendLimit(err: InstanceType<typeof Anthropic.APIError>): boolean {
  if (err.status === 429) return isSpendLimitCode(errorCodeOf(err.error));
  if (err.status !== 400) return false;
  const message = (err.error as { error?: { message?: unknown } } | undefined)?.error?.message;
  return (
    typeof message === 'string' &&
    /^You have reached your specified (workspace )?API usage limits/.test(message)
  );
}

function spendLimit(what: string): ModelFailure {
  return {
    retry: false,
    kind: 'spend_limit',
    reason: `the account reached its spend limit (${what}): the run waits until an admin resumes it (\`drydock runs resume\`) or anthropic.spend_limit_wait_ms passes; raise the limit on the Claude Console's Billing or Limits page`,
    retryAfterMs: null,
  };
}

/** The SDK's own error for a client with no key: no request was sent. */
function isMissingKey(err: unknown): boolean {
  const e = err as { message?: unknown; cause?: { message?: unknown } } | null;
  const says = (m: unknown) =>
    typeof m === 'string' && m.startsWith('Could not resolve authentication method');
  return err instanceof Error && (says(e?.message) || says(e?.cause?.message));
}

export function missingKey(): ModelFailure {
  return {
    retry: false,
    kind: 'auth',
    reason:
      'no API key is set: set ANTHROPIC_API_KEY (or anthropic.api_key) and restart drydock; no request was sent',
    retryAfterMs: null,
  };
}

function statusKind(status: number): ModelErrorKind {
  if (status === 429) return 'rate_limit';
  if (status === 529) return 'overloaded';
  if (status === 408 || status === 504) return 'timeout';
  return 'api_error';
}

function streamKind(type: string | null): ModelErrorKind {
  if (type === 'overloaded_error') return 'overloaded';
  if (type === 'rate_limit_error') return 'rate_limit';
  if (type === 'timeout_error') return 'timeout';
  if (type === 'invalid_request_error') return 'invalid_request';
  return 'api_error';
}
