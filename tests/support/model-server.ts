/**
 * A scripted stand-in for the Anthropic Messages API: a real `node:http` server on 127.0.0.1 that speaks
 * `POST /v1/messages` (JSON and SSE) the way the real API does, so tests can drive the unmodified
 * `@anthropic-ai/sdk` through `baseURL` and exercise its parsing, retries, timeouts and error mapping.
 *
 * Every request is recorded. Each request that passes authentication and validation consumes one entry of
 * the FIFO script (`enqueue`); when the script is empty the fallback answers (by default a loud,
 * non-retryable 500 saying the script ran out). Requests rejected with 401/400/404 by the server itself
 * are recorded but do not consume a scripted response.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type ScriptedBlock =
  | { type: 'text'; text: string }
  /** Streamed as `thinking_delta` chunks, then one `signature_delta`. A signature is generated when omitted. */
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
  | 'refusal';

export interface ScriptedMessage {
  kind: 'message';
  content: ScriptedBlock[];
  /** Default: `tool_use` if any block is a tool_use, else `end_turn`. */
  stop_reason?: ScriptedStopReason;
  /** Echoed as `stop_sequence` (only meaningful with stop_reason `stop_sequence`). */
  stop_sequence?: string;
  /** Merged over the defaults: input ≈ request JSON length / 4, output ≈ output length / 4, cache 0. */
  usage?: ScriptedUsage;
  /** Overrides the echoed request model. */
  model?: string;
  /** Delay before the first byte (status line and headers) is sent. */
  delayMs?: number;
  /** Delay between SSE events (streaming only). */
  chunkDelayMs?: number;
  /**
   * Streaming only: after `afterBlocks` complete content blocks, send
   * `event: error` / `{"type":"error","error":{"type","message"}}` and end the stream.
   */
  midStreamError?: { afterBlocks: number; type: string; message: string };
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
  /** Extra response headers. */
  headers?: Record<string, string>;
  /** Delay before the response is sent. */
  delayMs?: number;
}

/** Accepts the request and never answers, until the client goes away or the server closes. */
export interface ScriptedHang {
  kind: 'hang';
}

export type ScriptedResponse =
  | ScriptedMessage
  | ScriptedStatus
  | ScriptedHang
  | ((req: RecordedRequest) => ScriptedResponse | Promise<ScriptedResponse>);

export interface RecordedRequest {
  /** Parsed JSON body (undefined when the body was not valid JSON). */
  body: any;
  rawBody: string;
  headers: Record<string, string | string[] | undefined>;
  /** `Date.now()` when the request arrived. */
  receivedAt: number;
  method: string;
  /** Path without the query string, e.g. `/v1/messages`. */
  path: string;
  /** Status code the server answered with (set once the status line is sent; undefined while pending/hanging). */
  status?: number;
  /** True once the client disconnected before the response was complete. */
  clientAborted: boolean;
}

export interface ModelServer {
  /** e.g. `http://127.0.0.1:43123`; pass as `baseURL` (the SDK appends `/v1/messages`). */
  url: string;
  /** Every request received, in order (including retried and rejected ones). */
  requests: RecordedRequest[];
  /** Appends to the FIFO script; each accepted `/v1/messages` request consumes one. */
  enqueue(...responses: ScriptedResponse[]): void;
  /** Used when the script is empty; `null` restores the default "script ran out" 500 (x-should-retry: false). */
  setFallback(r: ScriptedResponse | null): void;
  /** Scripted responses not yet consumed. */
  remaining(): number;
  /** Resolves once at least `count` requests were recorded (rejects after `timeoutMs`). */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Closes the server and destroys every open socket, hanging ones included. Idempotent. */
  close(): Promise<void>;
}

export interface ModelServerOptions {
  /** Default true: 401 unless `x-api-key` or `Authorization: Bearer <token>` is present. */
  requireAuth?: boolean;
}

const DEFAULT_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  409: 'conflict_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  502: 'api_error',
  503: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

const DEFAULT_ERROR_MESSAGES: Record<number, string> = {
  400: 'Invalid request',
  401: 'invalid x-api-key',
  403: 'Your API key does not have permission to use the specified resource.',
  404: 'Not found',
  408: 'Request timed out',
  409: 'Conflict',
  413: 'Request exceeds the maximum allowed number of bytes.',
  429: 'Number of request tokens has exceeded your per-minute rate limit',
  500: 'Internal server error',
  502: 'Bad gateway',
  503: 'Service unavailable',
  504: 'Gateway timeout',
  529: 'Overloaded',
};

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomId(prefix: string, length: number): string {
  let out = prefix;
  for (const byte of randomBytes(length)) out += BASE62[byte % 62];
  return out;
}

function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Splits `text` into `count` non-empty chunks at pseudo-random positions (deterministic for a given text and
 * seed). Cuts fall anywhere — mid-word, mid-number, inside a JSON escape — but never inside a code point.
 */
export function splitIntoChunks(text: string, count: number, seed: number = hashString(text)): string[] {
  const codePoints = Array.from(text);
  const n = Math.max(1, Math.min(Math.floor(count), codePoints.length));
  if (n <= 1) return [text];
  const rand = mulberry32(seed);
  const cuts = new Set<number>();
  while (cuts.size < n - 1) cuts.add(1 + Math.floor(rand() * (codePoints.length - 1)));
  const out: string[] = [];
  let prev = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    out.push(codePoints.slice(prev, cut).join(''));
    prev = cut;
  }
  out.push(codePoints.slice(prev).join(''));
  return out;
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, n));
}

/** Text and thinking: a chunk per ~24 characters, like a token stream in miniature. */
function textChunks(text: string): string[] {
  if (text === '') return [];
  return splitIntoChunks(text, clamp(Math.ceil(text.length / 24), 1, 64));
}

/** Tool input JSON: at least 3 chunks once the JSON has 3 characters. */
function jsonChunks(json: string): string[] {
  if (json.length < 3) return [json];
  return splitIntoChunks(json, clamp(Math.ceil(json.length / 16), 3, 64));
}

function sleep(ms: number | undefined, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (!ms || ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let done = false;
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      done = true;
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', (err) => {
      if (!done) reject(err);
    });
    req.on('close', () => {
      if (!done) reject(new Error('request closed before its body was read'));
    });
  });
}

function isEmptyContent(content: unknown): boolean {
  return content === '' || (Array.isArray(content) && content.length === 0);
}

function blocksOf(content: unknown): any[] {
  return Array.isArray(content) ? content : [];
}

/** Loose request validation in the spirit of the real API; returns the 400 message, or null when valid. */
export function validateMessagesRequest(body: any): string | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return 'Request body must be a JSON object';
  }
  if (body.model === undefined) return 'model: Field required';
  if (typeof body.model !== 'string' || body.model === '') return 'model: Input should be a non-empty string';
  if (body.max_tokens === undefined) return 'max_tokens: Field required';
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) {
    return 'max_tokens: Input should be a valid integer greater than or equal to 1';
  }
  if (body.messages === undefined) return 'messages: Field required';
  if (!Array.isArray(body.messages)) return 'messages: Input should be a valid list';
  if (body.stream !== undefined && typeof body.stream !== 'boolean') {
    return 'stream: Input should be a valid boolean';
  }

  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return 'tools: Input should be a valid list';
    const names = new Set<string>();
    for (const [i, tool] of body.tools.entries()) {
      if (!tool || typeof tool !== 'object' || typeof tool.name !== 'string')
        return `tools.${i}.name: Field required`;
      if (names.has(tool.name)) return `tools: Tool names must be unique. Duplicate: ${tool.name}`;
      names.add(tool.name);
    }
  }

  if (body.thinking?.type === 'enabled') {
    const budget = body.thinking.budget_tokens;
    if (budget === undefined) return 'thinking.enabled.budget_tokens: Field required';
    if (!Number.isInteger(budget)) return 'thinking.enabled.budget_tokens: Input should be a valid integer';
    if (budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if (budget >= body.max_tokens) {
      return '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';
    }
  }

  for (const [i, m] of body.messages.entries()) {
    if (!m || typeof m !== 'object' || Array.isArray(m))
      return `messages.${i}: Input should be a valid dictionary`;
    if (m.role !== 'user' && m.role !== 'assistant' && m.role !== 'system') {
      return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    }
    if (m.content === undefined) return `messages.${i}.content: Field required`;
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) {
      return `messages.${i}.content: Input should be a valid string or a valid list`;
    }
    for (const [j, block] of blocksOf(m.content).entries()) {
      if (!block || typeof block !== 'object' || typeof block.type !== 'string') {
        return `messages.${i}.content.${j}.type: Field required`;
      }
    }
  }

  // `system`-role entries (allowed by the SDK's types) do not take part in the user/assistant alternation.
  const turns: Array<{ m: any; i: number }> = [];
  for (const [i, m] of body.messages.entries()) if (m.role !== 'system') turns.push({ m, i });
  if (turns.length === 0) return 'messages: at least one message is required';
  if (turns[0]!.m.role !== 'user') return 'messages: first message must use the "user" role';

  let prevToolUseIds: string[] = [];
  // The API refuses a tool_use id that any earlier block of the request used, in this message or another.
  const seenToolUseIds = new Set<string>();
  for (const [k, { m, i }] of turns.entries()) {
    const prev = k > 0 ? turns[k - 1]! : null;
    if (prev && prev.m.role === m.role) {
      return `messages: roles must alternate between "user" and "assistant", but found multiple "${m.role}" roles in a row`;
    }
    const isFinal = k === turns.length - 1;
    if (isEmptyContent(m.content) && !(isFinal && m.role === 'assistant')) {
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    }
    const blocks = blocksOf(m.content);
    if (m.role === 'assistant') {
      const ids: string[] = [];
      for (const [j, block] of blocks.entries()) {
        if (block.type === 'tool_result') {
          return `messages.${i}.content.${j}: \`tool_result\` blocks can only be in \`user\` messages`;
        }
        if (block.type !== 'tool_use') continue;
        if (typeof block.id !== 'string' || block.id === '')
          return `messages.${i}.content.${j}.id: Field required`;
        if (typeof block.name !== 'string') return `messages.${i}.content.${j}.name: Field required`;
        if (seenToolUseIds.has(block.id))
          return `messages.${i}.content.${j}: \`tool_use\` ids must be unique`;
        seenToolUseIds.add(block.id);
        ids.push(block.id);
      }
      prevToolUseIds = ids;
      continue;
    }
    const answered = new Set<string>();
    for (const [j, block] of blocks.entries()) {
      if (block.type === 'tool_use') {
        return `messages.${i}.content.${j}: \`tool_use\` blocks can only be in \`assistant\` messages`;
      }
      if (block.type !== 'tool_result') continue;
      if (!prevToolUseIds.includes(block.tool_use_id)) {
        return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      }
      answered.add(block.tool_use_id);
    }
    const missing = prevToolUseIds.filter((id) => !answered.has(id));
    if (prev && missing.length > 0) {
      return `messages.${prev.i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
    prevToolUseIds = [];
  }
  return null;
}

function errorBody(type: string, message: string, requestId: string): string {
  return JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId });
}

interface BuiltMessage {
  message: Record<string, any>;
  content: Array<Record<string, any>>;
  usage: Required<Omit<ScriptedUsage, 'cache_creation'>> & {
    cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  };
}

function buildMessage(scripted: ScriptedMessage, req: RecordedRequest): BuiltMessage {
  const content = scripted.content.map((block): Record<string, any> => {
    switch (block.type) {
      case 'text':
        return { type: 'text', text: block.text };
      case 'thinking':
        return {
          type: 'thinking',
          thinking: block.thinking,
          signature: block.signature ?? randomBytes(48).toString('base64'),
        };
      case 'tool_use':
        return {
          type: 'tool_use',
          id: block.id ?? randomId('toolu_01', 22),
          name: block.name,
          input: block.input === undefined ? {} : block.input,
        };
      default:
        throw new Error(`model-server: unknown scripted block type ${JSON.stringify((block as any).type)}`);
    }
  });
  let outputChars = 0;
  for (const b of content) {
    if (b.type === 'text') outputChars += b.text.length;
    else if (b.type === 'thinking') outputChars += b.thinking.length;
    else outputChars += b.name.length + JSON.stringify(b.input).length;
  }
  const u = scripted.usage ?? {};
  const cacheCreationTokens = u.cache_creation_input_tokens ?? 0;
  const usage = {
    input_tokens: u.input_tokens ?? Math.max(1, Math.ceil(req.rawBody.length / 4)),
    output_tokens: u.output_tokens ?? Math.max(1, Math.ceil(outputChars / 4)),
    cache_creation_input_tokens: cacheCreationTokens,
    cache_read_input_tokens: u.cache_read_input_tokens ?? 0,
    cache_creation: u.cache_creation ?? {
      ephemeral_5m_input_tokens: cacheCreationTokens,
      ephemeral_1h_input_tokens: 0,
    },
  };
  const stopReason =
    scripted.stop_reason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const message = {
    id: randomId('msg_01', 22),
    type: 'message',
    role: 'assistant',
    model: scripted.model ?? req.body?.model,
    content,
    stop_reason: stopReason,
    stop_sequence: scripted.stop_sequence ?? null,
    stop_details: null,
    usage: {
      input_tokens: usage.input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens,
      cache_read_input_tokens: usage.cache_read_input_tokens,
      cache_creation: usage.cache_creation,
      output_tokens: usage.output_tokens,
      service_tier: 'standard',
    },
  };
  return { message, content, usage };
}

interface Frame {
  event: string;
  data: unknown;
}

/** The SSE frames of a streamed message, in the real API's order; cut short by `midStreamError`. */
function streamFrames(built: BuiltMessage, scripted: ScriptedMessage): Frame[] {
  const { message, content, usage } = built;
  const frames: Frame[] = [];
  frames.push({
    event: 'message_start',
    data: {
      type: 'message_start',
      message: {
        ...message,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...message.usage, output_tokens: Math.min(1, usage.output_tokens) },
      },
    },
  });
  const errorAfter = scripted.midStreamError
    ? clamp(Math.floor(scripted.midStreamError.afterBlocks), 0, content.length)
    : -1;
  const pushError = (): void => {
    const e = scripted.midStreamError!;
    frames.push({ event: 'error', data: { type: 'error', error: { type: e.type, message: e.message } } });
  };
  if (errorAfter === 0) {
    frames.push({ event: 'ping', data: { type: 'ping' } });
    pushError();
    return frames;
  }
  if (content.length === 0) frames.push({ event: 'ping', data: { type: 'ping' } });
  for (const [index, block] of content.entries()) {
    const delta = (d: Record<string, unknown>): void => {
      frames.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: d } });
    };
    if (block.type === 'text') {
      frames.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
      });
      if (index === 0) frames.push({ event: 'ping', data: { type: 'ping' } });
      for (const text of textChunks(block.text)) delta({ type: 'text_delta', text });
    } else if (block.type === 'thinking') {
      frames.push({
        event: 'content_block_start',
        data: {
          type: 'content_block_start',
          index,
          content_block: { type: 'thinking', thinking: '', signature: '' },
        },
      });
      if (index === 0) frames.push({ event: 'ping', data: { type: 'ping' } });
      for (const thinking of textChunks(block.thinking)) delta({ type: 'thinking_delta', thinking });
      delta({ type: 'signature_delta', signature: block.signature });
    } else {
      frames.push({
        event: 'content_block_start',
        data: {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        },
      });
      if (index === 0) frames.push({ event: 'ping', data: { type: 'ping' } });
      // The real API opens every tool input with an empty partial_json.
      delta({ type: 'input_json_delta', partial_json: '' });
      for (const partial_json of jsonChunks(JSON.stringify(block.input)))
        delta({ type: 'input_json_delta', partial_json });
    }
    frames.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    if (index + 1 === errorAfter) {
      pushError();
      return frames;
    }
  }
  frames.push({
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence, stop_details: null },
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
        output_tokens: usage.output_tokens,
      },
    },
  });
  frames.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return frames;
}

function serializeFrame(frame: Frame): string {
  return `event: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n\n`;
}

function scriptRanOut(): ScriptedStatus {
  return {
    kind: 'status',
    status: 500,
    errorType: 'api_error',
    message: 'model-server: the script ran out (no scripted response left for this request)',
    shouldRetry: false,
  };
}

function hasAuth(headers: IncomingMessage['headers']): boolean {
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim() !== '') return true;
  const authorization = headers.authorization;
  return typeof authorization === 'string' && /^Bearer\s+\S+/i.test(authorization);
}

export async function startModelServer(opts: ModelServerOptions = {}): Promise<ModelServer> {
  const requireAuth = opts.requireAuth ?? true;
  const requests: RecordedRequest[] = [];
  const queue: ScriptedResponse[] = [];
  let fallback: ScriptedResponse | null = null;
  const sockets = new Set<Socket>();
  const inflight = new Set<AbortController>();
  const waiters = new Set<() => void>();
  let closing: Promise<void> | null = null;

  const notify = (): void => {
    for (const w of [...waiters]) w();
  };

  async function resolveScript(
    rec: RecordedRequest,
  ): Promise<ScriptedMessage | ScriptedStatus | ScriptedHang> {
    let next: ScriptedResponse = queue.length > 0 ? queue.shift()! : (fallback ?? scriptRanOut());
    for (let depth = 0; typeof next === 'function'; depth++) {
      if (depth > 16) throw new Error('model-server: dynamic responses nested too deeply');
      next = await next(rec);
    }
    return next;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedAt = Date.now();
    const ac = new AbortController();
    inflight.add(ac);
    let rec: RecordedRequest | null = null;
    res.on('error', () => {});
    res.on('close', () => {
      if (!res.writableFinished && rec) rec.clientAborted = true;
      ac.abort();
      inflight.delete(ac);
    });
    const requestId = randomId('req_011C', 22);

    const sendJson = (status: number, payload: string, extra: Record<string, string> = {}): void => {
      if (ac.signal.aborted) return;
      if (rec) rec.status = status;
      res.writeHead(status, {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(payload)),
        'request-id': requestId,
        ...extra,
      });
      res.end(payload);
    };
    const sendError = (
      status: number,
      type: string,
      message: string,
      extra: Record<string, string> = {},
    ): void => {
      sendJson(status, errorBody(type, message, requestId), extra);
    };

    let rawBody: string;
    try {
      rawBody = await readBody(req);
    } catch {
      return;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    let body: any;
    let parseFailed = false;
    try {
      body = rawBody === '' ? undefined : JSON.parse(rawBody);
    } catch {
      parseFailed = true;
    }
    rec = {
      body,
      rawBody,
      headers: { ...req.headers },
      receivedAt,
      method: req.method ?? 'GET',
      path: url.pathname,
      clientAborted: ac.signal.aborted,
    };
    requests.push(rec);
    notify();

    const isMessages = url.pathname === '/v1/messages';
    const isCountTokens = url.pathname === '/v1/messages/count_tokens';
    if (req.method !== 'POST' || !(isMessages || isCountTokens)) {
      sendError(404, 'not_found_error', `Not found: ${req.method} ${url.pathname}`);
      return;
    }
    if (requireAuth && !hasAuth(req.headers)) {
      sendError(401, 'authentication_error', 'x-api-key header is required');
      return;
    }
    if (parseFailed || body === undefined) {
      sendError(
        400,
        'invalid_request_error',
        'There was an issue with the request body: it is not valid JSON',
      );
      return;
    }
    if (isCountTokens) {
      if (body === null || typeof body !== 'object' || !Array.isArray(body.messages)) {
        sendError(400, 'invalid_request_error', 'messages: Field required');
        return;
      }
      sendJson(200, JSON.stringify({ input_tokens: Math.max(1, Math.ceil(rawBody.length / 4)) }));
      return;
    }
    const invalid = validateMessagesRequest(body);
    if (invalid !== null) {
      sendError(400, 'invalid_request_error', invalid);
      return;
    }

    const scripted = await resolveScript(rec);
    if (scripted.kind === 'hang') {
      await new Promise<void>((resolve) => {
        if (ac.signal.aborted) resolve();
        else ac.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      return;
    }
    if (!(await sleep(scripted.delayMs, ac.signal))) return;

    if (scripted.kind === 'status') {
      const extra: Record<string, string> = { ...scripted.headers };
      if (scripted.retryAfterSeconds !== undefined) extra['retry-after'] = String(scripted.retryAfterSeconds);
      if (scripted.shouldRetry !== undefined) extra['x-should-retry'] = String(scripted.shouldRetry);
      sendError(
        scripted.status,
        scripted.errorType ?? DEFAULT_ERROR_TYPES[scripted.status] ?? 'api_error',
        scripted.message ?? DEFAULT_ERROR_MESSAGES[scripted.status] ?? 'Error',
        extra,
      );
      return;
    }

    const built = buildMessage(scripted, rec);
    if (body.stream !== true) {
      sendJson(200, JSON.stringify(built.message));
      return;
    }
    rec.status = 200;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'request-id': requestId,
    });
    const frames = streamFrames(built, scripted);
    for (const [i, frame] of frames.entries()) {
      if (i > 0 && !(await sleep(scripted.chunkDelayMs, ac.signal))) return;
      if (ac.signal.aborted) return;
      res.write(serializeFrame(frame));
    }
    if (!ac.signal.aborted) res.end();
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // Never take the test process down: answer 500 if still possible, else drop the connection.
      const message = `model-server: internal failure: ${err instanceof Error ? err.message : String(err)}`;
      if (!res.headersSent && !res.destroyed) {
        const payload = errorBody('api_error', message, randomId('req_011C', 22));
        res.writeHead(500, { 'content-type': 'application/json', 'x-should-retry': 'false' });
        res.end(payload);
      } else {
        res.destroy();
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_err, socket) => {
    socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue(...responses) {
      queue.push(...responses);
    },
    setFallback(r) {
      fallback = r;
    },
    remaining() {
      return queue.length;
    },
    waitForRequests(count, timeoutMs = 5000) {
      if (requests.length >= count) return Promise.resolve(requests.slice());
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (requests.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(requests.slice());
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `model-server: expected ${count} requests within ${timeoutMs} ms, got ${requests.length}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
      });
    },
    close() {
      if (closing) return closing;
      closing = new Promise<void>((resolve) => {
        for (const ac of inflight) ac.abort();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
