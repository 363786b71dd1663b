import { Cron } from 'croner';
import { DomainError } from '../domain/errors.js';
import { isValidTimezone } from '../domain/zone.js';

/**
 * Cron expressions: parse and validate the 5-field grammar ourselves (so every
 * error names the field and what is expected), and leave the calendar and DST
 * walk to croner. Every function takes its reference time as an argument.
 */

/** An expression or time zone the scheduler cannot use: the caller's mistake, in the scheduler's words. */
export class CronError extends DomainError<'invalid_cron'> {
  override name = 'CronError';
  constructor(message: string) {
    super('invalid_cron', message);
  }
}

// cronie's shortcuts (src/entry.c): @midnight is @daily, @annually is @yearly.
const NICKNAMES: Readonly<Record<string, string>> = {
  '@hourly': '0 * * * *',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@weekly': '0 0 * * 0',
  '@monthly': '0 0 1 * *',
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
};
const NICKNAME_LIST = Object.keys(NICKNAMES).join(', ');

const EXPECTED_SHAPE = `expected 5 fields "minute hour day-of-month month day-of-week" or a nickname (${NICKNAME_LIST})`;

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  /** Largest useful step: one full cycle of distinct values (day-of-week has 7, not 8). */
  maxStep: number;
  /** Names standing for values, index = value (month: 1 = JAN; day-of-week: 0 = SUN). */
  names?: readonly string[];
  /** How the names are described in errors. */
  nameRange?: string;
}

const MONTH_NAMES = ['', 'JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59, maxStep: 60 },
  { name: 'hour', min: 0, max: 23, maxStep: 24 },
  { name: 'day-of-month', min: 1, max: 31, maxStep: 31 },
  { name: 'month', min: 1, max: 12, maxStep: 12, names: MONTH_NAMES, nameRange: 'JAN-DEC' },
  // 0 and 7 are both Sunday.
  { name: 'day-of-week', min: 0, max: 7, maxStep: 7, names: WEEKDAY_NAMES, nameRange: 'SUN-SAT' },
];
const DAY_OF_MONTH = 2;
const DAY_OF_WEEK = 4;

// One list item: "*", "*/n", "a", "a-b" or "a-b/n", where a and b are numbers or (month and day-of-week
// only) three-letter names in any case. "?", L, W and # are croner extensions outside our documented
// grammar, so they fail here on purpose.
const ITEM = /^(?:(\*)|(\d+|[A-Za-z]+)(?:-(\d+|[A-Za-z]+))?)(?:\/(\d+))?$/;

function assertTimezone(tz: string): void {
  if (!isValidTimezone(tz)) throw new CronError(`timezone: unknown IANA time zone "${tz}"`);
}

function itemError(item: string, field: FieldSpec): CronError {
  const names = field.names ? `, a name ${field.nameRange}` : '';
  return new CronError(
    `cron: ${field.name} field item "${item}" is not valid, expected "*", a number ${field.min}-${field.max}${names}, ` +
      'a range "a-b", a step "*/n" or "a-b/n", or a comma-separated list of these',
  );
}

const isName = (text: string): boolean => /^[A-Za-z]/.test(text);
const ALL_NAMES = new Set([...MONTH_NAMES.slice(1), ...WEEKDAY_NAMES]);

/**
 * The value of one end of an item, a number or a name. `highEnd`: SUN closing a range means 7, so that
 * "FRI-SUN" is Friday to Sunday rather than a backwards 5-0.
 */
function endValue(text: string, item: string, field: FieldSpec, highEnd: boolean): number {
  if (!isName(text)) {
    const value = Number(text);
    if (value < field.min || value > field.max) {
      throw new CronError(`cron: ${field.name} value ${text} is out of range ${field.min}-${field.max}`);
    }
    return value;
  }
  const upper = text.toUpperCase();
  if (field.names === undefined) {
    if (!ALL_NAMES.has(upper)) throw itemError(item, field);
    throw new CronError(
      `cron: ${field.name} field takes no names, got "${text}"; names are for month (JAN-DEC) and day-of-week (SUN-SAT)`,
    );
  }
  const value = field.names.indexOf(upper);
  if (value === -1) {
    throw new CronError(
      `cron: ${field.name} name "${text}" is not known, expected one of ${field.nameRange} (any case)`,
    );
  }
  return highEnd && field.name === 'day-of-week' && value === 0 ? 7 : value;
}

/** One checked list item: `numeric` spells it with numbers only (what croner is given). */
function checkItem(item: string, field: FieldSpec): { text: string; numeric: string } {
  const m = ITEM.exec(item);
  if (m === null) throw itemError(item, field);
  const [, star, lowText, highText, stepText] = m;
  const low = lowText === undefined ? undefined : endValue(lowText, item, field, false);
  let high = highText === undefined ? undefined : endValue(highText, item, field, true);
  // "SUN-SUN" is Sunday alone, not the whole week.
  if (low === 0 && high === 7 && highText !== undefined && isName(highText)) high = 0;
  if (low !== undefined && high !== undefined && low > high) {
    throw new CronError(`cron: ${field.name} range ${lowText}-${highText} is backwards, expected low-high`);
  }
  if (stepText !== undefined) {
    if (star === undefined && highText === undefined) {
      // croner (without sloppyRanges) and POSIX both reject "5/10"; say what works instead.
      const last = lowText !== undefined && isName(lowText) ? field.names!.at(-1)! : String(field.max);
      throw new CronError(
        `cron: ${field.name} step "${item}" needs "*" or a range before the slash, e.g. "*/${stepText}" or "${lowText}-${last}/${stepText}"`,
      );
    }
    const step = Number(stepText);
    if (step < 1 || step > field.maxStep) {
      throw new CronError(`cron: ${field.name} step ${stepText} is out of range 1-${field.maxStep}`);
    }
  }
  const step = stepText === undefined ? '' : `/${Number(stepText)}`;
  const range = star !== undefined ? '*' : high === undefined ? `${low}` : `${low}-${high}`;
  return { text: item.toUpperCase(), numeric: `${range}${step}` };
}

interface ParsedCron {
  /** As the caller wrote it: whitespace collapsed, nickname expanded, names upper-cased. */
  normalized: string;
  /** The same schedule with numbers only, and cronie's day rule spelled the way croner reads it. */
  croner: string;
}

function parseCron(expr: string): ParsedCron {
  const parts = expr
    .trim()
    .split(/\s+/)
    .filter((p) => p !== '');
  if (parts.length === 1 && parts[0]!.startsWith('@')) {
    const expanded = NICKNAMES[parts[0]!.toLowerCase()];
    if (expanded === undefined) {
      throw new CronError(`cron: unknown nickname "${parts[0]}", expected one of ${NICKNAME_LIST}`);
    }
    return parseCron(expanded);
  }
  if (parts.length !== FIELDS.length) {
    throw new CronError(`cron: ${EXPECTED_SHAPE}, got ${parts.length} field${parts.length === 1 ? '' : 's'}`);
  }
  const checked = parts.map((part, i) => part.split(',').map((item) => checkItem(item, FIELDS[i]!)));
  const normalized = checked.map((items) => items.map((x) => x.text).join(',')).join(' ');
  const numeric = checked.map((items) => items.map((x) => x.numeric).join(','));
  return { normalized, croner: cronerDayRule(parts, numeric).join(' ') };
}

// The day fields follow cronie exactly. cronie's load_entry() (src/entry.c) sets DOM_STAR / DOW_STAR
// when the field's FIRST CHARACTER is '*' (`if (ch == '*') e->flags |= DOM_STAR;`), before the list is
// parsed, and find_jobs() (src/cron.c) matches a day with
//   (flags & (DOM_STAR | DOW_STAR)) ? (dom && dow) : (dom || dow)
// So "0 0 13 * 5" is the 13th OR any Friday, but "0 0 */2 * 1" is odd days that are Mondays, and
// "*,10" counts as a star while "10,*" does not.
//
// croner (domAndDow: false) ORs the two fields unless one of them is exactly "*"; its "+" prefix on
// day-of-week forces AND. So whenever cronie would AND and croner would not, add the "+".
function cronerDayRule(raw: readonly string[], numeric: string[]): string[] {
  const domStar = raw[DAY_OF_MONTH]!.startsWith('*');
  const dowStar = raw[DAY_OF_WEEK]!.startsWith('*');
  const cronerAnds = raw[DAY_OF_MONTH] === '*' || raw[DAY_OF_WEEK] === '*';
  if ((domStar || dowStar) && !cronerAnds) numeric[DAY_OF_WEEK] = `+${numeric[DAY_OF_WEEK]}`;
  return numeric;
}

/**
 * Trim, collapse whitespace, upper-case names and expand a nickname to its 5 fields, checking the
 * grammar and each field's range. Pure syntax: calendar reachability and the time zone are checked by
 * validateCron.
 */
export function normalizeCron(expr: string): string {
  return parseCron(expr).normalized;
}

/**
 * How far ahead an expression must have a date to be accepted: 4 years and 2 days, so that a leap-day
 * job ("0 0 29 2 *") is reachable from any `now` (Feb 29 comes every 4 years until 2100; the 2 days
 * cover a zone's offset changing between one Feb 29 and the next). croner searches far beyond this, so
 * an expression that never matches ("0 0 30 2 *") comes back as null and is refused.
 */
export const HORIZON_MS = (4 * 365 + 1 + 2) * 24 * 60 * 60 * 1000;

/** Normalize and check that the expression fires at least once in the 4 years after `now`, in `timezone`. */
export function validateCron(expr: string, timezone: string, now: number): string {
  const normalized = normalizeCron(expr);
  assertTimezone(timezone);
  const first = nextMatch(normalized, timezone, now);
  if (first === null || first - now > HORIZON_MS) {
    throw new CronError(`cron: "${normalized}" matches no date in the next 4 years`);
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
  const parsed = parseCron(expr);
  assertTimezone(timezone);
  let cron: Cron;
  try {
    cron = new Cron(parsed.croner, {
      timezone,
      // No callback is passed, so no timer is started; `paused` makes that explicit.
      paused: true,
      mode: '5-part',
      // Vixie/cronie rule: when both day fields are restricted, a date matching either fires
      // (parseCron adds croner's "+" where cronie would require both; see cronerDayRule).
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
