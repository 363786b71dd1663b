import { Cron } from 'croner';

/**
 * Cron expressions: parse and validate the 5-field grammar ourselves (so every
 * error names the field and what is expected), and leave the calendar and DST
 * walk to croner. Every function takes its reference time as an argument.
 */

export class CronError extends Error {
  override name = 'CronError';
}

const NICKNAMES: Readonly<Record<string, string>> = {
  '@hourly': '0 * * * *',
  '@daily': '0 0 * * *',
  '@weekly': '0 0 * * 0',
  '@monthly': '0 0 1 * *',
  '@yearly': '0 0 1 1 *',
};

const EXPECTED_SHAPE =
  'expected 5 fields "minute hour day-of-month month day-of-week" or a nickname (@hourly, @daily, @weekly, @monthly, @yearly)';

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  /** Largest useful step: one full cycle of distinct values (day-of-week has 7, not 8). */
  maxStep: number;
}

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59, maxStep: 60 },
  { name: 'hour', min: 0, max: 23, maxStep: 24 },
  { name: 'day-of-month', min: 1, max: 31, maxStep: 31 },
  { name: 'month', min: 1, max: 12, maxStep: 12 },
  // 0 and 7 are both Sunday.
  { name: 'day-of-week', min: 0, max: 7, maxStep: 7 },
];

// One list item: "*", "*/n", "a", "a-b" or "a-b/n". Names (MON, JAN), "?", L, W and # are
// croner extensions outside our documented grammar, so they fail here on purpose.
const ITEM = /^(?:(\*)|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/;

/** A valid IANA zone name as the runtime's Intl knows it. UTC offsets ("+05:30") are not zone names. */
export function isValidTimezone(tz: string): boolean {
  if (validZones.has(tz)) return true;
  if (tz === '' || /^[+-]/.test(tz)) return false;
  try {
    // Building a formatter costs ~50 µs; the zones in use are few, so remember the good ones.
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    if (validZones.size < 1_000) validZones.add(tz);
    return true;
  } catch {
    return false;
  }
}
const validZones = new Set<string>();

function assertTimezone(tz: string): void {
  if (!isValidTimezone(tz)) throw new CronError(`timezone: unknown IANA time zone "${tz}"`);
}

function checkItem(item: string, field: FieldSpec): void {
  const m = ITEM.exec(item);
  if (m === null) {
    throw new CronError(
      `cron: ${field.name} field item "${item}" is not valid, expected "*", a number ${field.min}-${field.max}, ` +
        'a range "a-b", a step "*/n" or "a-b/n", or a comma-separated list of these',
    );
  }
  const [, star, lowText, highText, stepText] = m;
  for (const text of [lowText, highText]) {
    if (text === undefined) continue;
    const value = Number(text);
    if (value < field.min || value > field.max) {
      throw new CronError(`cron: ${field.name} value ${text} is out of range ${field.min}-${field.max}`);
    }
  }
  if (lowText !== undefined && highText !== undefined && Number(lowText) > Number(highText)) {
    throw new CronError(`cron: ${field.name} range ${lowText}-${highText} is backwards, expected low-high`);
  }
  if (stepText !== undefined) {
    if (star === undefined && highText === undefined) {
      // croner (without sloppyRanges) and POSIX both reject "5/10"; say what works instead.
      throw new CronError(
        `cron: ${field.name} step "${item}" needs "*" or a range before the slash, e.g. "*/${stepText}" or "${lowText}-${field.max}/${stepText}"`,
      );
    }
    const step = Number(stepText);
    if (step < 1 || step > field.maxStep) {
      throw new CronError(`cron: ${field.name} step ${stepText} is out of range 1-${field.maxStep}`);
    }
  }
}

/**
 * Trim, collapse whitespace and expand a nickname to its 5 fields, checking the
 * grammar and each field's range. Pure syntax: calendar reachability and the
 * time zone are checked by validateCron.
 */
export function normalizeCron(expr: string): string {
  const parts = expr
    .trim()
    .split(/\s+/)
    .filter((p) => p !== '');
  if (parts.length === 1 && parts[0]!.startsWith('@')) {
    const expanded = NICKNAMES[parts[0]!.toLowerCase()];
    if (expanded === undefined) {
      throw new CronError(
        `cron: unknown nickname "${parts[0]}", expected one of @hourly, @daily, @weekly, @monthly, @yearly`,
      );
    }
    return expanded;
  }
  if (parts.length !== FIELDS.length) {
    throw new CronError(`cron: ${EXPECTED_SHAPE}, got ${parts.length} field${parts.length === 1 ? '' : 's'}`);
  }
  parts.forEach((part, i) => {
    const field = FIELDS[i]!;
    for (const item of part.split(',')) checkItem(item, field);
  });
  return parts.join(' ');
}

// 366 days, so an expression that fires once a year (e.g. "0 0 29 2 *" in the
// year before a leap day, or "@yearly") is reachable from any `now`.
const ONE_YEAR_MS = 366 * 24 * 60 * 60 * 1000;

/** Normalize and check that the expression fires at least once in the year after `now`, in `timezone`. */
export function validateCron(expr: string, timezone: string, now: number): string {
  const normalized = normalizeCron(expr);
  assertTimezone(timezone);
  const first = nextMatch(normalized, timezone, now);
  if (first === null || first - now > ONE_YEAR_MS) {
    throw new CronError(`cron: "${normalized}" matches no date in the next year`);
  }
  return normalized;
}

/**
 * A croner instance holds ~80 KB (mostly a 10,000-entry year table), so we never
 * keep one per job. Instances are built on demand and the most recently used ones
 * are kept in this bounded LRU (expression + zone), at most CRON_CACHE_SIZE * 80 KB
 * (≈5 MB). Constructing costs ~0.1 ms; a cached nextRun ~0.03 ms.
 */
export const CRON_CACHE_SIZE = 64;
const cronCache = new Map<string, Cron>();

function cronFor(expr: string, timezone: string): Cron {
  const key = `${timezone}\u0000${expr}`;
  const hit = cronCache.get(key);
  if (hit !== undefined) {
    // Map keeps insertion order: re-inserting marks the entry most recently used.
    cronCache.delete(key);
    cronCache.set(key, hit);
    return hit;
  }
  const normalized = normalizeCron(expr);
  assertTimezone(timezone);
  let cron: Cron;
  try {
    cron = new Cron(normalized, {
      timezone,
      // No callback is passed, so no timer is started; `paused` makes that explicit.
      paused: true,
      mode: '5-part',
      // Vixie rule: when both day fields are restricted, a date matching either fires.
      domAndDow: false,
      // DESIGN.md: a fixed-time job fires once in a repeated hour and at the end of a
      // skipped one. croner's default ('single-value') treats lists and ranges such as
      // "30 1,13 * * *" as interval jobs, which fire twice on fall-back day and not at
      // all in a spring-forward gap. 'no-wildcard' makes every job without "*" or a
      // step in minute and hour a fixed-time job, as Vixie cron does.
      fixedTimeRule: 'no-wildcard',
    });
  } catch (err) {
    // Our grammar check should have caught everything croner rejects; keep the error type stable anyway.
    throw new CronError(`cron: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (cronCache.size >= CRON_CACHE_SIZE) cronCache.delete(cronCache.keys().next().value!);
  cronCache.set(key, cron);
  return cron;
}

/**
 * First slot strictly after `after` (epoch ms), or null if there is none. In a
 * repeated hour a fixed-time job yields only the first occurrence and an interval
 * job both; a fixed-time slot inside a skipped hour moves to the end of the gap.
 */
export function nextMatch(expr: string, timezone: string, after: number): number | null {
  // Pure in its arguments, so results are memoized: a burst of jobs sharing a schedule asks the same
  // question many times (the same slot, the same next slot). Bounded: the oldest answers are dropped.
  const key = `${timezone}\u0000${expr}\u0000${after}`;
  const known = matchMemo.get(key);
  if (known !== undefined) return known;
  // croner passes a given reference straight through; it reads the clock only when none is given.
  const next = cronFor(expr, timezone).nextRun(new Date(after));
  const result = next === null ? null : next.getTime();
  if (matchMemo.size >= MATCH_MEMO_SIZE) matchMemo.delete(matchMemo.keys().next().value!);
  matchMemo.set(key, result);
  return result;
}
const MATCH_MEMO_SIZE = 20_000;
const matchMemo = new Map<string, number | null>();

/** Slots in (fromExclusive, toInclusive], oldest first, at most `limit` of them. */
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

const minuteFormats = new Map<string, Intl.DateTimeFormat>();

/** Wall-clock minute (0-59) of `at` in `timezone`: differs from the UTC minute in zones such as Asia/Kolkata. */
export function minuteOf(at: number, timezone: string): number {
  let format = minuteFormats.get(timezone);
  if (format === undefined) {
    assertTimezone(timezone);
    format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, minute: 'numeric' });
    // Zone spellings are unbounded ("utc", "UTC", "Utc"…): cap the cache instead of trusting input.
    if (minuteFormats.size >= CRON_CACHE_SIZE) minuteFormats.clear();
    minuteFormats.set(timezone, format);
  }
  const minute = format.formatToParts(new Date(at)).find((p) => p.type === 'minute');
  return Number(minute?.value);
}
