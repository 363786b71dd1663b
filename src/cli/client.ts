// A tiny client for the daemon's HTTP API: one base URL, one bearer token, JSON in and out. It never puts
// the token in an error message.

/** The API answered with an error status: `{"error": {"code", "message"}}`, or something unexpected. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** No HTTP answer at all: connection refused, unknown host, timeout. */
export class UnreachableError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`cannot reach the drydock daemon at ${url} (${reason}); is it running? (set DRYDOCK_URL or --url)`);
  }
}

export interface ApiResponse {
  status: number;
  /** The parsed JSON body (null for an empty one). */
  body: unknown;
  /** The body exactly as received. */
  text: string;
}

export class ApiClient {
  readonly baseUrl: string;

  constructor(
    baseUrl: string,
    private readonly token: string,
    private readonly timeoutMs = 30_000,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  /**
   * Opens a long-lived GET (Server-Sent Events): resolves with the response once its headers came, 2xx
   * only; its body is the caller's to read (and `signal`'s to end). Errors as for `request`.
   */
  async stream(path: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response> {
    let res: Response;
    // The timeout covers the wait for the headers only: the body may rightly stream for hours.
    const connect = new AbortController();
    const timer = setTimeout(
      () => connect.abort(new DOMException('no headers in time', 'TimeoutError')),
      this.timeoutMs,
    );
    const cancel = () => connect.abort(signal.reason);
    if (signal.aborted) cancel();
    else signal.addEventListener('abort', cancel, { once: true });
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        headers: { ...headers, authorization: `Bearer ${this.token}`, accept: 'text/event-stream' },
        signal: connect.signal,
        redirect: 'manual',
      });
    } catch (err) {
      throw new UnreachableError(displayUrl(this.baseUrl), reasonOf(err, this.timeoutMs));
    } finally {
      clearTimeout(timer);
    }
    if (res.ok && res.body) return res;
    // An error answer is JSON like any other: read it the usual way.
    const text = await res.text().catch(() => '');
    throw errorOf(res, text, this.baseUrl);
  }

  /** Sends one request; resolves for 2xx, throws ApiError for any other status, UnreachableError without one. */
  async request(method: string, path: string, body?: unknown): Promise<ApiResponse> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.token}`,
      accept: 'application/json',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'manual',
      });
      text = await res.text();
    } catch (err) {
      throw new UnreachableError(displayUrl(this.baseUrl), reasonOf(err, this.timeoutMs));
    }
    let parsed: unknown = null;
    let json = text === '';
    if (!json) {
      try {
        parsed = JSON.parse(text);
        json = true;
      } catch {
        // handled below
      }
    }
    if (res.status >= 200 && res.status < 300) {
      if (!json)
        throw new ApiError(res.status, 'bad_response', `expected JSON from ${displayUrl(this.baseUrl)}`);
      return { status: res.status, body: parsed, text };
    }
    throw errorOf(res, text, this.baseUrl);
  }
}

/** The API's `{"error": {"code", "message"}}` of a non-2xx answer, or its status line. */
function errorOf(res: Response, text: string, baseUrl: string): ApiError {
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: the status line below
  }
  const error = (parsed as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (error && typeof error.code === 'string' && typeof error.message === 'string') {
    return new ApiError(res.status, error.code, error.message);
  }
  return new ApiError(
    res.status,
    'http_error',
    res.statusText || `unexpected answer from ${displayUrl(baseUrl)}`,
  );
}

/** The URL without user information, safe to print. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}

function reasonOf(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no answer within ${timeoutMs / 1000}s`;
  const code = e.cause?.code;
  if (typeof code === 'string') return code;
  return e.cause?.message ?? (err as Error).message ?? 'request failed';
}
