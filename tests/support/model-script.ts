/**
 * What a test scripts for the model server to answer, and small builders for the outcomes tests need most.
 * The server module re-exports all of it; see its header for how each outcome looks on the wire.
 */
import {
  INVALID_API_KEY,
  PERMISSION_DENIED,
  spendLimitSetReached,
  tierSpendCapReached,
} from './model-errors.js';

export type ScriptedBlock =
  | { type: 'text'; text: string }
  /**
   * Streamed as `thinking_delta` chunks, then one `signature_delta`. Leave `signature` out to get a valid one
   * (bound to the model and the prompt prefix); a given signature is echoed verbatim and will be refused as
   * garbled if the client sends the block back.
   */
  | { type: 'thinking'; thinking: string; signature?: string }
  /** `input` is streamed as `input_json_delta` chunks split at arbitrary positions (≥ 3 chunks once long enough). */
  | { type: 'tool_use'; id?: string; name: string; input: unknown };

export interface ScriptedUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

export type ScriptedStopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

export type RefusalCategory = 'cyber' | 'bio' | 'frontier_llm' | 'reasoning_extraction' | 'general_harms';

export interface ScriptedMessage {
  kind: 'message';
  content: ScriptedBlock[];
  /**
   * Default: `max_tokens` when `cutToolInputAt` is set, else `tool_use` if any block is a tool_use, else
   * `end_turn`. `pause_turn` may not come with a tool_use (the API never pauses while a client tool waits).
   */
  stop_reason?: ScriptedStopReason;
  /** Echoed as `stop_sequence` (only meaningful with stop_reason `stop_sequence`). */
  stop_sequence?: string;
  /**
   * With stop_reason `refusal`: the `stop_details` sent (`{type: "refusal", category, explanation}`);
   * both default to null. Ignored for other stop reasons (their `stop_details` is null).
   */
  stop_details?: { category?: RefusalCategory | null; explanation?: string | null };
  /**
   * Stops in the middle of the last tool_use: its input JSON is cut after this many characters (clamped to
   * leave at least one out), the stream ends after the partial `input_json_delta`, and the stop reason is
   * `max_tokens`. Non-streaming, `input` is what a partial-JSON parse of the cut text gives.
   */
  cutToolInputAt?: number;
  /** Overrides the computed usage field by field (input/cache from the prompt cache, output ≈ chars / 4). */
  usage?: ScriptedUsage;
  /** Overrides the echoed request model. */
  model?: string;
  /** Delay before the first byte (status line and headers) is sent. */
  delayMs?: number;
  /** Delay between SSE events (streaming only). */
  chunkDelayMs?: number;
  /**
   * Streaming only: after `afterBlocks` complete content blocks (counted in the response as sent, so a
   * prepended thinking block counts), send `event: error` / `{"type":"error","error":{"type","message"}}`
   * and end the stream.
   */
  midStreamError?: { afterBlocks: number; type: string; message: string };
  /** Streaming only: the connection is dropped (the socket destroyed) after this many SSE frames. */
  dropAfterFrames?: number;
}

export type ScriptedErrorStatus = 400 | 401 | 403 | 404 | 408 | 409 | 413 | 429 | 500 | 502 | 503 | 504 | 529;

export interface ScriptedStatus {
  kind: 'status';
  status: ScriptedErrorStatus;
  /** Sent as the `retry-after` header (seconds; fractions are honoured by the SDK). */
  retryAfterSeconds?: number;
  /** Default derived from the status: rate_limit_error, overloaded_error, api_error, ... */
  errorType?: string;
  message?: string;
  /** Sent as `x-should-retry: true|false`, which the SDK obeys over its status-based policy. */
  shouldRetry?: boolean;
  /** The error's `details` (e.g. `{error_code: 'enforced_spend_limit_reached'}` on a tier spend cap's 429). */
  details?: Record<string, unknown>;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /** Delay before the response is sent. */
  delayMs?: number;
}

/** Accepts the request and never answers, until the client goes away or the server closes. */
export interface ScriptedHang {
  kind: 'hang';
}

/** Builders for common outcomes; each returns a plain script entry that can be spread and adjusted. */
export const script = {
  /** A plain text answer (`end_turn`). */
  text(text: string, extra: Partial<ScriptedMessage> = {}): ScriptedMessage {
    return { kind: 'message', content: [{ type: 'text', text }], ...extra };
  },
  /** One tool call (`tool_use`), optionally preceded by text (which 5.5 models turn into thinking). */
  toolUse(name: string, input: unknown, opts: { id?: string; before?: string } = {}): ScriptedMessage {
    const content: ScriptedBlock[] = opts.before ? [{ type: 'text', text: opts.before }] : [];
    content.push({ type: 'tool_use', name, input, ...(opts.id ? { id: opts.id } : {}) });
    return { kind: 'message', content };
  },
  /** HTTP 200 with `stop_reason: "refusal"` and `stop_details` naming the category. */
  refusal(
    category: RefusalCategory | null = null,
    explanation: string | null = null,
    content: ScriptedBlock[] = [],
  ): ScriptedMessage {
    return { kind: 'message', content, stop_reason: 'refusal', stop_details: { category, explanation } };
  },
  /** `max_tokens` in the middle of a tool call: the input JSON is cut after `keepChars` characters. */
  maxTokensInToolUse(name: string, input: unknown, keepChars?: number): ScriptedMessage {
    const json = JSON.stringify(input);
    return {
      kind: 'message',
      content: [{ type: 'tool_use', name, input }],
      cutToolInputAt: keepChars ?? Math.floor(json.length / 2),
    };
  },
  /** `pause_turn`: send the content back as the final assistant message to let the model continue. */
  pauseTurn(content: ScriptedBlock[] = [{ type: 'text', text: 'Still working on it.' }]): ScriptedMessage {
    return { kind: 'message', content, stop_reason: 'pause_turn' };
  },
  /** `model_context_window_exceeded`: the response filled the context window (treat it as truncated). */
  contextWindowExceeded(
    content: ScriptedBlock[] = [{ type: 'text', text: 'The answer was cut' }],
  ): ScriptedMessage {
    return { kind: 'message', content, stop_reason: 'model_context_window_exceeded' };
  },
  /** A 200 stream that ends with `event: error` (`overloaded_error`) after `afterBlocks` blocks. */
  overloadedMidStream(content: ScriptedBlock[], afterBlocks = 1): ScriptedMessage {
    return {
      kind: 'message',
      content,
      midStreamError: { afterBlocks, type: 'overloaded_error', message: 'Overloaded' },
    };
  },
  /** 429 `rate_limit_error` with a `retry-after` header. */
  rateLimited(retryAfterSeconds = 1): ScriptedStatus {
    return { kind: 'status', status: 429, retryAfterSeconds };
  },
  /** 529 `overloaded_error`. */
  overloaded(): ScriptedStatus {
    return { kind: 'status', status: 529 };
  },
  /**
   * 429 at the usage tier's monthly spend cap: `rate_limit_error` with `details.error_code`
   * `enforced_spend_limit_reached` and no retry-after (api/rate-limits).
   */
  spendLimitReached(resumesOn = '2027-01-01'): ScriptedStatus {
    return {
      kind: 'status',
      status: 429,
      errorType: 'rate_limit_error',
      message: tierSpendCapReached(resumesOn),
      details: { error_code: 'enforced_spend_limit_reached' },
    };
  },
  /** 400 once usage reaches a spend limit set on a workspace (api/errors: no details, a plain message). */
  workspaceSpendLimitReached(resumesOn = '2027-01-01'): ScriptedStatus {
    return {
      kind: 'status',
      status: 400,
      errorType: 'invalid_request_error',
      message: spendLimitSetReached('workspace', resumesOn),
    };
  },
  /** 401 `authentication_error`: a key the API does not know (malformed, revoked or expired). */
  keyRefused(): ScriptedStatus {
    return { kind: 'status', status: 401, errorType: 'authentication_error', message: INVALID_API_KEY };
  },
  /** 403 `permission_error`: the key may not use the resource. */
  permissionDenied(): ScriptedStatus {
    return { kind: 'status', status: 403, errorType: 'permission_error', message: PERMISSION_DENIED };
  },
};
