/**
 * A scripted stand-in for the Anthropic Messages API: a real `node:http` server on 127.0.0.1 that speaks
 * `POST /v1/messages` (JSON and SSE) the way the real API does, so tests can drive the unmodified
 * `@anthropic-ai/sdk` through `baseURL` and exercise its parsing, retries, timeouts and error mapping.
 *
 * STRICT about the per-model request contract. Every request is checked as the real API would check it, for
 * the model it names (rules: model-rules.ts, texts: model-errors.ts, checks: model-contract.ts): unknown and
 * retired models (retired by the server's clock: a model's retirement date) get 404 `model: <id>`; thinking types, budgets, display, effort, sampling parameters,
 * max_tokens caps, forced tool_choice, prefill, mid-conversation system messages and cache_control markers
 * get 400 `invalid_request_error` with the API's text. Thinking blocks sent back must carry a signature this
 * server made and unchanged text; on the models with preserved thinking (5.5 family, Fable/Mythos 5.1/5.2)
 * the whole prefix before each block (tools, system, earlier messages and blocks) must be what it was when
 * the block was produced. Signatures are stateless: an HMAC (key per test process) over the model, the
 * prefix hash and the block's own text.
 *
 * Every request is recorded. Each request that passes authentication and validation consumes one entry of
 * the FIFO script (`enqueue`); when the script is empty the fallback answers (by default a loud,
 * non-retryable 500 saying the script ran out). Requests rejected with 401/400/404 by the server itself are
 * recorded (with `error`) but do not consume a scripted response.
 *
 * How the answer is shaped from the script and the request:
 * - Thinking on (adaptive, enabled; adaptive is the default on the 5.x models) and the script has no
 *   thinking block: one is prepended, with a signature. Its text is `DEFAULT_THINKING_SUMMARY` when the
 *   display is `summarized` (default on 4.6 and older) and "" when `omitted` (default on 4.7+ and 5.x).
 * - Thinking off (disabled, or omitted on models where that means off) or suppressed by a forced
 *   tool_choice: scripted thinking blocks are DROPPED (the script says what the model would think; the
 *   request decides whether it thinks). `between_tools` drops the leading (up-front) thinking blocks.
 * - Models that return text between tool calls as thinking (Sonnet 5.5, Opus 5.5, Fable 5.x), thinking on:
 *   scripted text blocks before a later tool_use come back as thinking blocks, text "" unless the display
 *   is `summarized` / `updates` or thinking is `between_tools` (whose progress updates are readable).
 * - usage: input, cache reads and cache writes come from a prompt cache kept by the server (model-cache.ts;
 *   tokens = ceil(canonical JSON chars / 4)); `usage` in the script overrides field by field.
 * - A final assistant message is prefill (refused on 4.6+ models) unless it is exactly the content of an
 *   earlier `pause_turn` response of this server sent back; the response then continues that message:
 *   append its blocks to that same assistant message.
 *
 * Scripting each outcome (builders in `script`, or the plain objects they return):
 * - text / tool call: `script.text('hi')`, `script.toolUse('bash', {cmd: 'ls'}, {before: 'Checking.'})`
 * - refusal (HTTP 200): `script.refusal('cyber', 'why')` → stop_reason `refusal`, stop_details
 *   `{type: 'refusal', category, explanation}`
 * - max_tokens inside a tool call: `script.maxTokensInToolUse('write', {path, text}, keepChars)` (or
 *   `cutToolInputAt`) → the stream ends after a partial input_json_delta, then stop_reason `max_tokens`
 * - `script.pauseTurn(content)`, `script.contextWindowExceeded(content)` → those stop reasons
 * - mid-stream error: `script.overloadedMidStream(content, afterBlocks)` (or `midStreamError`)
 * - 429 with retry-after: `script.rateLimited(seconds)`; any status: `{kind: 'status', status, ...}`
 * - no answer: `{kind: 'hang'}`; dynamic: a function of the recorded request
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { breakpointsOf, PromptCache } from './model-cache.js';
import { checkRequest, type Headers, type Refusal } from './model-contract.js';
import { type Prompt, tokensOf } from './model-prompt.js';
import { buildMessage, randomId, serializeFrame, streamFrames } from './model-response.js';
import type { ScriptedHang, ScriptedMessage, ScriptedStatus } from './model-script.js';

export { checkRequest, validateMessagesRequest, validateShape } from './model-contract.js';
export { promptTokens } from './model-prompt.js';
export { DEFAULT_THINKING_SUMMARY, splitIntoChunks } from './model-response.js';
export type {
  RefusalCategory,
  ScriptedBlock,
  ScriptedErrorStatus,
  ScriptedHang,
  ScriptedMessage,
  ScriptedStatus,
  ScriptedStopReason,
  ScriptedUsage,
} from './model-script.js';
export { script } from './model-script.js';

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
  /** The error body's `error` when the server answered with an error (its own refusal or a scripted status). */
  error?: { type: string; message: string };
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
  /**
   * Time for prompt-cache TTLs and model retirement dates. Default: `clock.now()` when a clock is given, else
   * `Date.now()`.
   */
  now?: () => number;
  /** An injected clock (anything with `now()`, e.g. tests' FakeClock); `now` wins when both are given. */
  clock?: { now(): number };
  /** The port on 127.0.0.1 to listen on; default 0, a free one. */
  port?: number;
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

/** The API's error shape (api/errors): `details` only where the API sends it (a tier spend cap's 429). */
function errorBody(
  type: string,
  message: string,
  requestId: string,
  details?: Record<string, unknown>,
): string {
  const error = details ? { type, message, details } : { type, message };
  return JSON.stringify({ type: 'error', error, request_id: requestId });
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

function tokensOfPrompt(prompt: Prompt): number {
  return Math.max(1, tokensOf(prompt.ends.at(-1) ?? 0));
}

function hasAuth(headers: IncomingMessage['headers']): boolean {
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim() !== '') return true;
  const authorization = headers.authorization;
  return typeof authorization === 'string' && /^Bearer\s+\S+/i.test(authorization);
}

export async function startModelServer(opts: ModelServerOptions = {}): Promise<ModelServer> {
  const requireAuth = opts.requireAuth ?? true;
  const clock = opts.clock;
  const now = opts.now ?? (clock ? () => clock.now() : Date.now);
  const cache = new PromptCache();
  // Prompt hashes (per model) at the end of each pause_turn response: a final assistant message ending
  // exactly there is the continuation, not prefill.
  const pauseEnds = new Set<string>();
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
      details?: Record<string, unknown>,
    ): void => {
      if (rec) rec.error = { type, message };
      sendJson(status, errorBody(type, message, requestId, details), extra);
    };
    const refuse = (r: Refusal): void => sendError(r.status, r.type, r.message);

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
      // count_tokens takes no max_tokens and generates nothing (so a final assistant message is no prefill);
      // the model's other checks, tool_choice included, apply.
      const counted = checkRequest(
        { max_tokens: 1, ...body },
        { headers: req.headers as Headers, isPauseContinuation: () => true, now: now() },
      );
      if (!counted.ok) {
        refuse(counted.refusal);
        return;
      }
      sendJson(200, JSON.stringify({ input_tokens: tokensOfPrompt(counted.request.billedPrompt) }));
      return;
    }
    const checked = checkRequest(body, {
      headers: req.headers as Headers,
      isPauseContinuation: (model, hash) => pauseEnds.has(`${model}\n${hash}`),
      now: now(),
    });
    if (!checked.ok) {
      refuse(checked.refusal);
      return;
    }
    const accepted = checked.request;

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
        scripted.details,
      );
      return;
    }

    const billed = accepted.billedPrompt;
    const cacheUsage = cache.account(
      accepted.rules.id,
      billed,
      breakpointsOf(billed, body),
      accepted.rules.minCacheTokens,
      now(),
    );
    const built = buildMessage(scripted, accepted, body, cacheUsage);
    if (built.message.stop_reason === 'pause_turn') pauseEnds.add(`${accepted.rules.id}\n${built.endHash}`);
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
      if (i === scripted.dropAfterFrames) {
        // The connection is lost in the middle of the reply.
        await new Promise<void>((resolve) => res.write('', () => resolve()));
        res.socket?.destroy();
        return;
      }
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
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
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
