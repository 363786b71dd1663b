import { DomainError } from './errors.js';

/**
 * Spend caps (docs/spend-caps.md): how many runs, and how many US dollars of receipts, a trigger, a session
 * or the whole daemon may start in one day of the configured zone. Pure: the day's window is computed from
 * the time given, the tally comes from the store (runs whose creation falls in the window, summed there so
 * that every replica sees the same figure).
 */

/** A scope's caps; an absent key is no cap. */
export interface SpendLimits {
  daily_usd?: number | undefined;
  daily_runs?: number | undefined;
}

export const SPEND_SCOPES = ['trigger', 'session', 'global'] as const;
export type SpendScope = (typeof SPEND_SCOPES)[number];
export const SPEND_CAPS = ['daily_usd', 'daily_runs'] as const;
export type SpendCap = (typeof SPEND_CAPS)[number];

/** What usage is grouped by (GET /v1/usage?by=). */
export const USAGE_KEYS = ['trigger', 'session', 'model'] as const;
export type UsageKey = (typeof USAGE_KEYS)[number];

/** What a scope started in one day: runs created and the cost of their receipts so far. */
export interface SpendTally {
  runs: number;
  costUsd: number;
}

export const NO_SPEND: SpendTally = { runs: 0, costUsd: 0 };

/** One day of a zone: its date, and the instants it starts and ends (ms; `end` is the next day's start). */
export interface SpendDay {
  day: string;
  start: number;
  end: number;
}

/** A cap a scope reached: which, its value, what was spent and when the count starts again. */
export interface SpendCapHit {
  scope: SpendScope;
  /** The trigger's or session's id; null for the global cap. */
  id: string | null;
  cap: SpendCap;
  limit: number;
  spent: number;
  resetsAt: number;
}

/**
 * The cap `tally` reached, if any. `daily_runs` is reached when that many runs started (no more may start);
 * `daily_usd` when the receipts are at or past it.
 */
export function reachedCap(
  limits: SpendLimits,
  tally: SpendTally,
): { cap: SpendCap; limit: number; spent: number } | null {
  if (limits.daily_usd !== undefined && tally.costUsd >= limits.daily_usd) {
    return { cap: 'daily_usd', limit: limits.daily_usd, spent: tally.costUsd };
  }
  if (limits.daily_runs !== undefined && tally.runs >= limits.daily_runs) {
    return { cap: 'daily_runs', limit: limits.daily_runs, spent: tally.runs };
  }
  return null;
}

/** Whether `to` allows more than `from`: a cap removed, or raised. */
export function loosensLimits(from: SpendLimits, to: SpendLimits): boolean {
  return SPEND_CAPS.some((cap) => {
    const was = from[cap];
    const now = to[cap];
    return was !== undefined && (now === undefined || now > was);
  });
}

/** Whether limits name any cap. */
export const hasLimits = (l: SpendLimits | null | undefined): l is SpendLimits =>
  !!l && (l.daily_usd !== undefined || l.daily_runs !== undefined);

/** The wall-clock date of `at` in `zone`, as numbers. */
function dateIn(at: number, zone: string): { y: number; m: number; d: number } {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(at);
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return { y: n('year'), m: n('month'), d: n('day') };
}

/** How far `zone`'s wall clock is ahead of UTC at `at` (ms). */
function offsetAt(at: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(at);
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const wall = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return wall - Math.floor(at / 1000) * 1000;
}

/**
 * The first instant of a date in `zone`: its local midnight, or, where the clocks skip midnight (a change to
 * summer time at 00:00), the first instant whose local date is that date.
 */
function startOfDate(y: number, m: number, d: number, zone: string): number {
  const utcMidnight = Date.UTC(y, m - 1, d);
  let guess = utcMidnight - offsetAt(utcMidnight, zone);
  guess = utcMidnight - offsetAt(guess, zone);
  const local = dateIn(guess, zone);
  // Midnight skipped: the guess fell on the day before; the day starts when its clock jumps (whole hours).
  if (Date.UTC(local.y, local.m - 1, local.d) < utcMidnight) {
    while (dateIn(guess, zone).d !== d) guess += 15 * 60_000;
  }
  return guess;
}

const isoDate = (y: number, m: number, d: number) =>
  `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;

/** The day of `zone` that `at` falls in. */
export function spendDayOf(at: number, zone: string): SpendDay {
  const { y, m, d } = dateIn(at, zone);
  const next = new Date(Date.UTC(y, m - 1, d + 1));
  return {
    day: isoDate(y, m, d),
    start: startOfDate(y, m, d, zone),
    end: startOfDate(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), zone),
  };
}

/** The day of `zone` named by an ISO date (`2026-12-05`). */
export function spendDayNamed(date: string, zone: string): SpendDay {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const next = new Date(Date.UTC(y, m - 1, d + 1));
  return {
    day: isoDate(y, m, d),
    start: startOfDate(y, m, d, zone),
    end: startOfDate(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), zone),
  };
}

/** The days of `zone` from `from` to `to` (ISO dates, both included), in order. */
export function spendDaysBetween(from: string, to: string, zone: string): SpendDay[] {
  const days: SpendDay[] = [];
  for (let day = spendDayNamed(from, zone); day.day <= to; day = spendDayOf(day.end, zone)) days.push(day);
  return days;
}

/** A run refused because a spend cap was reached: API status 429, with the cap in `details`. */
export class SpendCapError extends DomainError<'spend_cap'> {
  constructor(readonly hit: SpendCapHit) {
    super('spend_cap', spendCapMessage(hit), spendCapDetails(hit));
  }
}

/** The cap as the API shows it (the details of a 429 `spend_cap`). */
export function spendCapDetails(hit: SpendCapHit) {
  return {
    scope: hit.scope,
    id: hit.id,
    cap: hit.cap,
    limit: hit.limit,
    spent: hit.spent,
    resets_at: new Date(hit.resetsAt).toISOString(),
  };
}

export function spendCapMessage(hit: SpendCapHit): string {
  const whose = hit.scope === 'global' ? 'the daily' : `${hit.scope} ${hit.id}'s daily`;
  const spent =
    hit.cap === 'daily_usd'
      ? `$${hit.spent.toFixed(2)} of $${hit.limit}`
      : `${hit.spent} of ${hit.limit} runs`;
  return `spend cap reached: ${whose} ${hit.cap} (${spent}); it resets at ${new Date(hit.resetsAt).toISOString()}`;
}
