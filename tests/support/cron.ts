import { nextMatch } from '../../src/scheduler/cron.js';

/** Slots of `expr` in (fromExclusive, toInclusive], oldest first, at most `limit` of them (by nextMatch). */
export function matchesBetween(
  expr: string,
  timezone: string,
  fromExclusive: number,
  toInclusive: number,
  limit: number,
): number[] {
  const slots: number[] = [];
  let cursor = fromExclusive;
  while (slots.length < limit) {
    const next = nextMatch(expr, timezone, cursor);
    if (next === null || next > toInclusive) break;
    slots.push(next);
    cursor = next;
  }
  return slots;
}
