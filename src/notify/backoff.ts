/**
 * How long to wait before attempt `attempt + 1` after `attempt` failed (attempt counts from 1): `baseMs`
 * doubling with each attempt up to `maxMs`, of which a random half is taken off ("equal jitter", so that
 * receivers that come back are not hit by every sender at once). A receiver's Retry-After is honoured, up
 * to `maxMs`. `random` is in [0, 1).
 */
export function retryDelay(
  attempt: number,
  opts: { baseMs: number; maxMs: number; random: number; retryAfterMs?: number | null },
): number {
  const exp = Math.min(opts.maxMs, opts.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 40));
  const jittered = Math.round(exp / 2 + (exp / 2) * opts.random);
  const floor = Math.min(opts.maxMs, opts.retryAfterMs ?? 0);
  return Math.max(jittered, floor);
}

/** Retry-After as ms: delta-seconds or an HTTP date (https://www.rfc-editor.org/rfc/rfc9110#name-retry-after). */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
