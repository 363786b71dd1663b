import type { Notification } from '../domain/types.js';
import { packageVersion } from '../paths.js';
import { parseRetryAfter } from './backoff.js';
import { SIGNATURE_HEADER, signBody } from './signature.js';

/** The result of one POST: delivered, or why not (never the URL, never a secret). */
export type Attempt =
  | { ok: true; status: number }
  | { ok: false; error: string; retryAfterMs: number | null; permanent: boolean };

/**
 * POSTs a notification's stored body to `url`, signed with `secret` when there is one. 2xx is delivered;
 * anything else is a failed attempt. Redirects are not followed (the signed body goes where it was
 * configured to, or nowhere). 410 Gone is final (Slack answers it for an archived channel).
 */
export async function postNotification(
  n: Notification,
  target: { url: string; secret: string | null; timeoutMs: number },
  now: number,
): Promise<Attempt> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': userAgent(),
    'x-drydock-event': n.event,
    'x-drydock-delivery': n.id,
  };
  if (target.secret) headers[SIGNATURE_HEADER] = signBody(target.secret, n.body);
  // fetch refuses a URL with userinfo: send it as what it means over HTTP, Basic authentication.
  const url = new URL(target.url);
  if (url.username || url.password) {
    const user = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(user, 'utf8').toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers,
      body: n.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(target.timeoutMs),
    });
  } catch (err) {
    return { ok: false, error: networkError(err, target.timeoutMs), retryAfterMs: null, permanent: false };
  }
  // The answer's body is not needed: let the connection go.
  await res.body?.cancel().catch(() => {});
  if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
  const redirect = res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : '';
  return {
    ok: false,
    error: `HTTP ${res.status}${redirect}`,
    retryAfterMs: parseRetryAfter(res.headers.get('retry-after'), now),
    permanent: res.status === 410,
  };
}

let agent: string | undefined;
function userAgent(): string {
  agent ??= `drydock/${packageVersion()}`;
  return agent;
}

/** A network failure in a few words: its code (ECONNREFUSED, ...), never its message (it may hold the URL). */
function networkError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; cause?: { code?: unknown; name?: unknown } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `timed out after ${timeoutMs} ms`;
  const code = typeof e?.cause?.code === 'string' ? e.cause.code : null;
  const name = typeof e?.cause?.name === 'string' ? e.cause.name : (e?.name ?? 'Error');
  return `network error: ${code ?? name}`;
}
