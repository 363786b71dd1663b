// Times from the API as a terminal shows them: how long ago, how far from now.

function span(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** How long ago an ISO time was ("5m"), or '-'. */
export function age(iso: unknown, now = Date.now()): string {
  if (typeof iso !== 'string') return '-';
  const t = Date.parse(iso);
  return Number.isNaN(t) ? '-' : span(now - t);
}

/** How far an ISO time is from now: "5m ago" or "in 2h"; '-' when absent. */
export function relative(iso: unknown, now = Date.now()): string {
  if (typeof iso !== 'string') return '-';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '-';
  return t <= now ? `${span(now - t)} ago` : `in ${span(t - now)}`;
}

/** An ISO time with how far it is from now: "2025-01-02T03:04:05.000Z (5m ago)" or "(in 2h)". */
export function when(iso: unknown, now = Date.now()): string | null {
  if (typeof iso !== 'string') return null;
  return Number.isNaN(Date.parse(iso)) ? iso : `${iso} (${relative(iso, now)})`;
}
