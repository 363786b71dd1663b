// One HTTP call to the daemon. A call that fails on the wire (refused while the daemon is down, reset by a
// SIGKILL, timed out) is an error, never an acknowledgement: the caller decides whether to retry it.

export type Reply = { ok: true; status: number; body: any } | { ok: false; error: string };

export interface CallOptions {
  token?: string;
  body?: string | object;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

export async function call(base: string, method: string, path: string, o: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  let body: string | undefined;
  if (o.body !== undefined) {
    body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    headers['content-type'] ??= 'application/json';
  }
  try {
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(o.timeoutMs ?? 15_000),
    });
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { ok: true, status: res.status, body: parsed };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return { ok: false, error: e.cause?.code ?? e.cause?.message ?? e.name ?? String(err) };
  }
}
