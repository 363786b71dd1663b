import { DomainError } from '../domain/errors.js';
import { type SpendDay, spendDayOf, spendDaysBetween } from '../domain/spend.js';
import type { UsageKey, UsageRow, UsageStore } from '../store/usage.js';

/** The most days one usage report covers. */
export const MAX_USAGE_DAYS = 366;
/** The days a report covers when no `from` is given: this many, ending with `to`. */
export const DEFAULT_USAGE_DAYS = 30;

export interface UsageTotals {
  runs: number;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
}

/** Where money went: per day and key (a trigger, a session or a model), each day's totals, and the whole. */
export interface UsageReport {
  by: UsageKey;
  timezone: string;
  from: string;
  to: string;
  rows: UsageRow[];
  /** Every day of the range, in order, with its totals (days without runs too: a chart's bars). */
  days: (UsageTotals & { day: string })[];
  totals: UsageTotals;
}

const zero = (): UsageTotals => ({ runs: 0, costUsd: 0, inputTokens: 0, outputTokens: 0 });

function add(into: UsageTotals, r: UsageTotals): void {
  into.runs += r.runs;
  into.costUsd += r.costUsd;
  into.inputTokens += r.inputTokens;
  into.outputTokens += r.outputTokens;
}

/** The ISO date `n` days before `date` (calendar days; no zone needed). */
function daysBefore(date: string, n: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d - n)).toISOString().slice(0, 10);
}

/**
 * The days a report covers: `to` (default: today in `zone`) and `from` (default: DEFAULT_USAGE_DAYS days
 * ending with `to`), both included. Refused (invalid_request): `from` after `to`, or more than
 * MAX_USAGE_DAYS days.
 */
export function usageRange(zone: string, now: number, from?: string, to?: string): SpendDay[] {
  const last = to ?? spendDayOf(now, zone).day;
  const first = from ?? daysBefore(last, DEFAULT_USAGE_DAYS - 1);
  if (first > last) throw new DomainError('invalid_request', `from (${first}) is after to (${last})`);
  if (first < daysBefore(last, MAX_USAGE_DAYS - 1)) {
    throw new DomainError('invalid_request', `from..to spans more than ${MAX_USAGE_DAYS} days`);
  }
  return spendDaysBetween(first, last, zone);
}

/** Runs and their receipts from `from` to `to` (ISO dates of `zone`, both included), by key. */
export async function usageReport(
  store: UsageStore,
  q: { by: UsageKey; zone: string; now: number; from?: string | undefined; to?: string | undefined },
): Promise<UsageReport> {
  const days = usageRange(q.zone, q.now, q.from, q.to);
  const rows = await store.usage(q.by, days);
  const perDay = new Map(days.map((d) => [d.day, { day: d.day, ...zero() }]));
  const totals = zero();
  for (const r of rows) {
    add(perDay.get(r.day)!, r);
    add(totals, r);
  }
  return {
    by: q.by,
    timezone: q.zone,
    from: days[0]!.day,
    to: days.at(-1)!.day,
    rows,
    days: [...perDay.values()],
    totals,
  };
}
