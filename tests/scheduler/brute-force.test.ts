import { describe, expect, it } from 'vitest';
import { nextMatch, normalizeCron } from '../../src/scheduler/cron.js';
import { mulberry32 } from '../support/prng.js';

// src's next-fire search (croner plus our parser) against a matcher that is obviously correct: it steps
// through real time one minute at a time and asks, for each minute, whether the job fires then. The
// expression is parsed here, independently of src, with names, nicknames and cronie's day rule.
//
// What "fires" means (README, "Scheduling semantics"; DESIGN.md; tests/scheduler/dst.test.ts):
// - Wall time is the zone's local date and time. A minute of wall time matches when every field matches,
//   the two day fields combined by cronie's rule (see `dayMatches`).
// - An interval job (minute or hour field contains "*" or a step) fires at every real minute whose wall
//   time matches: twice in a repeated hour, never for wall times a spring-forward gap skips.
// - A fixed-time job (minute and hour fields without "*" or "/") fires once per wall time: at the first
//   real minute showing it, not again when a fall-back repeats it; a matching wall time skipped by a gap
//   fires at the first real minute after the gap (once, however many matching times the gap swallowed).
//   Put as one rule: at each real minute whose wall time w is later than every wall time shown before,
//   the job fires if any wall time in (latest shown before, w] matches.

const MIN = 60_000;
const DAY_MIN = 24 * 60;

// --- the reference parser -----------------------------------------------------------------------------

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const NICK: Record<string, string> = {
  '@hourly': '0 * * * *',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@weekly': '0 0 * * 0',
  '@monthly': '0 0 1 * *',
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
};

interface RefCron {
  minute: boolean[];
  hour: boolean[];
  dom: boolean[];
  month: boolean[];
  dow: boolean[];
  /** cronie: DOM_STAR or DOW_STAR (the field's first character is "*") makes the day rule AND. */
  dayAnd: boolean;
  fixed: boolean;
}

function refField(text: string, min: number, max: number, names: string[] | null, nameBase: number) {
  const set = new Array<boolean>(max + 1).fill(false);
  const num = (s: string, high: boolean): number => {
    if (/^\d+$/.test(s)) return Number(s);
    const i = names!.indexOf(s.toUpperCase());
    if (i < 0) throw new Error(`bad name ${s}`);
    // SUN closing a range is 7 ("FRI-SUN"), except in "SUN-SUN".
    return high && names === DAYS && i === 0 ? 7 : i + nameBase;
  };
  for (const item of text.split(',')) {
    const [range, stepText] = item.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    let lo: number;
    let hi: number;
    if (range === '*') [lo, hi] = [min, max];
    else if (range!.includes('-')) {
      const [a, b] = range!.split('-');
      lo = num(a!, false);
      hi = num(b!, true);
      if (lo === 0 && hi === 7 && /^sun$/i.test(b!)) hi = 0;
    } else [lo, hi] = [num(range!, false), num(range!, false)];
    for (let v = lo; v <= hi; v += step) set[v] = true;
  }
  return set;
}

function refParse(expr: string): RefCron {
  const text = NICK[expr.trim().toLowerCase()] ?? expr.trim();
  const [mi, h, dom, mon, dow] = text.split(/\s+/) as [string, string, string, string, string];
  const dowSet = refField(dow, 0, 7, DAYS, 0);
  // 0 and 7 are both Sunday.
  dowSet[0] = dowSet[0] || dowSet[7]!;
  return {
    minute: refField(mi, 0, 59, null, 0),
    hour: refField(h, 0, 23, null, 0),
    dom: refField(dom, 1, 31, null, 0),
    month: refField(mon, 1, 12, MONTHS, 1),
    dow: dowSet,
    dayAnd: dom.startsWith('*') || dow.startsWith('*'),
    fixed: !/[*/]/.test(mi) && !/[*/]/.test(h),
  };
}

// --- wall time: the zone's offset, from Intl, sampled hourly and bisected to the minute at changes ------

const partsFormat = new Map<string, Intl.DateTimeFormat>();
function offsetMin(zone: string, t: number): number {
  let f = partsFormat.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    partsFormat.set(zone, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(new Date(t))) p[part.type] = Number(part.value);
  const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!);
  return Math.round((wall - Math.floor(t / MIN) * MIN) / MIN);
}

interface Transition {
  at: number;
  offset: number;
}
const RANGE_FROM = Date.parse('2025-10-01T00:00:00Z');
const RANGE_TO = Date.parse('2028-04-01T00:00:00Z');

const transitionCache = new Map<string, { initial: number; list: Transition[] }>();
function transitions(zone: string): { initial: number; list: Transition[] } {
  const known = transitionCache.get(zone);
  if (known) return known;
  const list: Transition[] = [];
  const initial = offsetMin(zone, RANGE_FROM);
  let prev = initial;
  for (let t = RANGE_FROM + 60 * MIN; t <= RANGE_TO; t += 60 * MIN) {
    const off = offsetMin(zone, t);
    if (off === prev) continue;
    let [lo, hi] = [t - 60 * MIN, t]; // offset(lo) = prev, offset(hi) = off
    while (hi - lo > MIN) {
      const mid = lo + Math.floor((hi - lo) / MIN / 2) * MIN;
      if (offsetMin(zone, mid) === prev) lo = mid;
      else hi = mid;
    }
    list.push({ at: hi, offset: off });
    prev = off;
  }
  transitionCache.set(zone, { initial, list });
  return { initial, list };
}

// --- the brute-force walk ------------------------------------------------------------------------------

function dayMatches(c: RefCron, dayNumber: number): boolean {
  const d = new Date(dayNumber * DAY_MIN * MIN);
  if (!c.month[d.getUTCMonth() + 1]) return false;
  const dom = c.dom[d.getUTCDate()]!;
  const dow = c.dow[d.getUTCDay()]!;
  // cronie, src/cron.c find_jobs(): (DOM_STAR || DOW_STAR) ? (dom && dow) : (dom || dow).
  return c.dayAnd ? dom && dow : dom || dow;
}

/** Up to `limit` fire instants in (after, until], by stepping through every real minute. */
function bruteForce(
  c: RefCron,
  tz: { initial: number; list: Transition[] },
  after: number,
  until: number,
  limit: number,
): number[] {
  let ti = 0;
  let off = tz.initial;
  const offsetAt = (t: number): number => {
    // Only ever asked for increasing t (after the look-back below restarts it).
    while (ti < tz.list.length && tz.list[ti]!.at <= t) off = tz.list[ti++]!.offset;
    return off;
  };
  const days = new Map<number, boolean>();
  const wallMatches = (w: number): boolean => {
    if (!c.minute[w % 60] || !c.hour[Math.floor(w / 60) % 24]) return false;
    const day = Math.floor(w / DAY_MIN);
    let ok = days.get(day);
    if (ok === undefined) {
      ok = dayMatches(c, day);
      days.set(day, ok);
    }
    return ok;
  };
  const first = Math.floor(after / MIN) * MIN + MIN;
  // The latest wall time shown before `first`: a day's look-back covers any repeated hour.
  let latest = Number.NEGATIVE_INFINITY;
  for (let t = first - DAY_MIN * MIN; t < first; t += MIN) latest = Math.max(latest, t / MIN + offsetAt(t));
  const fires: number[] = [];
  for (let t = first; t <= until && fires.length < limit; t += MIN) {
    const w = t / MIN + offsetAt(t);
    if (!c.fixed) {
      if (wallMatches(w)) fires.push(t);
    } else if (w > latest) {
      for (let x = latest + 1; x <= w; x++) {
        if (wallMatches(x)) {
          fires.push(t);
          break;
        }
      }
      latest = w;
    }
  }
  return fires;
}

function srcFires(expr: string, zone: string, after: number, until: number, limit: number): number[] {
  const fires: number[] = [];
  let cursor = after;
  while (fires.length < limit) {
    const next = nextMatch(expr, zone, cursor);
    if (next === null || next > until) break;
    fires.push(next);
    cursor = next;
  }
  return fires;
}

// --- random expressions ----------------------------------------------------------------------------------

function randomExpr(rand: () => number): string {
  const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const anyCase = (s: string): string => pick([s, s.toLowerCase(), s[0] + s.slice(1).toLowerCase()]);
  if (rand() < 0.05) return pick(Object.keys(NICK));
  // Values near the zones' transitions (local 00:00-04:00) and the times people pick (0, 15, 30, 45).
  const minuteValue = (): number => (rand() < 0.6 ? pick([0, 15, 30, 45]) : int(0, 59));
  const hourValue = (): number => (rand() < 0.6 ? int(0, 4) : int(0, 23));
  const numeric = (value: () => number, lo: number, hi: number, max: number): string => {
    const r = rand();
    if (r < 0.3) return String(value());
    if (r < 0.45) return `*/${int(1, max)}`;
    if (r < 0.55) return '*';
    if (r < 0.7) {
      const a = value();
      return `${a}-${int(a, hi)}`;
    }
    if (r < 0.8) {
      const a = int(lo, hi);
      return `${a}-${int(a, hi)}/${int(1, max)}`;
    }
    if (r < 0.9) return `${value()},${value()}`;
    return `${value()},${int(lo, hi)}-${hi}/${int(2, max)}`;
  };
  const minute = numeric(minuteValue, 0, 59, 30);
  const hour = numeric(hourValue, 0, 23, 12);
  const dom = pick([
    '*',
    '*',
    '*',
    `*/${int(2, 5)}`,
    `${int(1, 31)}`,
    `${int(1, 28)}-${int(28, 31)}`,
    `1-31/${int(2, 4)}`,
    `${int(1, 15)},${int(16, 31)}`,
    `*,${int(1, 31)}`,
    `${int(1, 31)},*`,
  ]);
  const monthName = (): string => anyCase(pick(MONTHS));
  const month = pick(['*', '*', '*', '*', `${monthName()}-DEC`, `JAN-${monthName()}`, '*/2', 'jan-dec/3']);
  const dayName = (): string => anyCase(pick(DAYS));
  const dow = pick([
    '*',
    '*',
    '*',
    'MON-FRI',
    'mon-fri/2',
    dayName(),
    `${dayName()},${dayName()}`,
    'FRI-SUN',
    '*/2',
    '1-7/3',
    String(int(0, 7)),
    `${int(0, 3)}-${int(4, 7)}`,
    `*,${dayName()}`,
  ]);
  return [minute, hour, dom, month, dow].join(' ');
}

const ZONES = ['Australia/Lord_Howe', 'Pacific/Chatham', 'Antarctica/Troll', 'UTC', 'America/New_York'];

describe('next fire against a minute-by-minute brute force', () => {
  it('the zones really have the transitions this test is about', () => {
    const steps = (zone: string) =>
      new Set(transitions(zone).list.map((x, i, l) => Math.abs(x.offset - (l[i - 1]?.offset ?? 0))));
    expect(transitions('Australia/Lord_Howe').list.map((x) => x.offset)).toContain(660); // +11:00
    expect(transitions('Australia/Lord_Howe').list.map((x) => x.offset)).toContain(630); // +10:30
    expect(transitions('Pacific/Chatham').list.map((x) => x.offset)).toContain(825); // +13:45
    expect(transitions('Antarctica/Troll').list.map((x) => x.offset)).toContain(120); // +02:00
    expect(steps('Antarctica/Troll').has(120)).toBe(true);
    expect(transitions('UTC').list).toEqual([]);
  });

  it('agrees on a few hundred random expressions in five zones, names, nicknames and DST included', () => {
    const rand = mulberry32(20260412);
    const tables = new Map(ZONES.map((z) => [z, transitions(z)]));
    const exprs = Array.from({ length: 300 }, () => randomExpr(rand));
    const disagreements: string[] = [];
    let compared = 0;
    let fires = 0;
    for (const expr of exprs) {
      const ref = refParse(expr);
      const normalized = normalizeCron(expr);
      for (const zone of ZONES) {
        const tz = tables.get(zone)!;
        // Mostly just before one of the zone's transitions, else anywhere in 2026-2027; any ms.
        const near = tz.list.filter(
          (x) => x.at > Date.parse('2026-01-01') && x.at < Date.parse('2027-12-01'),
        );
        const base =
          near.length > 0 && rand() < 0.7
            ? near[Math.floor(rand() * near.length)]!.at - Math.floor(rand() * 2 * DAY_MIN) * MIN
            : Date.parse('2026-01-01') + Math.floor(rand() * 700 * DAY_MIN) * MIN;
        const after = base - Math.floor(rand() * MIN);
        const until = after + 45 * DAY_MIN * MIN;
        const want = bruteForce(ref, tz, after, until, 15);
        const got = srcFires(normalized, zone, after, until, 15);
        compared += 1;
        fires += want.length;
        if (want.join() !== got.join()) {
          const i = want.findIndex((w, k) => w !== got[k]);
          disagreements.push(
            `${expr} in ${zone} after ${new Date(after).toISOString()}: fire #${i} ` +
              `want ${want[i] === undefined ? 'none' : new Date(want[i]!).toISOString()} ` +
              `got ${got[i] === undefined ? 'none' : new Date(got[i]!).toISOString()}`,
          );
        }
      }
    }
    expect(disagreements.slice(0, 20)).toEqual([]);
    expect(compared).toBe(300 * ZONES.length);
    // Not vacuous: most cases fire, many of them 15 times. (Breaking the reference's day rule or its
    // fixed-time rule makes this test fail on a few dozen cases.)
    expect(fires).toBeGreaterThan(compared * 5);
  });
});
