import { describe, expect, it } from 'vitest';
import { isValidTimezone } from '../../src/domain/zone.js';
import {
  CRON_CACHE_SIZE,
  CronError,
  minuteOf,
  nextMatch,
  normalizeCron,
  validateCron,
} from '../../src/scheduler/cron.js';
import { matchesBetween } from '../support/cron.js';

const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const isos = (ms: number[]): string[] => ms.map((m) => new Date(m).toISOString());

function cronError(fn: () => unknown): CronError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CronError);
    return err as CronError;
  }
  throw new Error('expected a CronError, nothing was thrown');
}

const NOW = at('2026-01-05T12:00:00Z');

describe('normalizeCron', () => {
  it('trims and collapses whitespace, including tabs', () => {
    expect(normalizeCron('  0   9 *\t*   1-5 ')).toBe('0 9 * * 1-5');
  });

  it('expands the seven nicknames, case-insensitively', () => {
    expect(normalizeCron('@hourly')).toBe('0 * * * *');
    expect(normalizeCron('@daily')).toBe('0 0 * * *');
    expect(normalizeCron('@midnight')).toBe('0 0 * * *');
    expect(normalizeCron('@Annually')).toBe('0 0 1 1 *');
    expect(normalizeCron('@weekly')).toBe('0 0 * * 0');
    expect(normalizeCron('@monthly')).toBe('0 0 1 * *');
    expect(normalizeCron(' @YEARLY ')).toBe('0 0 1 1 *');
  });

  it('accepts values, ranges, steps and lists in every field', () => {
    expect(normalizeCron('0,15,30-45/5 */2 1-31/10 1,6-12 0-7')).toBe('0,15,30-45/5 */2 1-31/10 1,6-12 0-7');
    expect(normalizeCron('05 09 * * *')).toBe('05 09 * * *');
  });

  it('accepts month and weekday names in any case, in values, ranges, lists and steps, upper-casing them', () => {
    expect(normalizeCron('0 9 * * mon-fri')).toBe('0 9 * * MON-FRI');
    expect(normalizeCron('0 9 * jan-Mar,oct *')).toBe('0 9 * JAN-MAR,OCT *');
    expect(normalizeCron('0 9 * * MON-FRI/2,sun')).toBe('0 9 * * MON-FRI/2,SUN');
    expect(normalizeCron('0 9 1 Jan-Dec/3 *')).toBe('0 9 1 JAN-DEC/3 *');
    expect(normalizeCron('0 9 * 1-JUN 1-fri')).toBe('0 9 * 1-JUN 1-FRI');
  });

  it('rejects the wrong number of fields and says what is expected', () => {
    expect(cronError(() => normalizeCron('0 0 9 * * *')).message).toBe(
      'cron: expected 5 fields "minute hour day-of-month month day-of-week" or a nickname (@hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually), got 6 fields',
    );
    expect(cronError(() => normalizeCron('0 0 9 * * * 2026')).message).toMatch(
      /expected 5 fields.*got 7 fields$/,
    );
    expect(cronError(() => normalizeCron('0 9 * *')).message).toMatch(/got 4 fields$/);
    expect(cronError(() => normalizeCron('   ')).message).toMatch(/got 0 fields$/);
  });

  it('rejects unknown nicknames', () => {
    expect(cronError(() => normalizeCron('@reboot')).message).toBe(
      'cron: unknown nickname "@reboot", expected one of @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually',
    );
    expect(cronError(() => normalizeCron('@every')).message).toMatch(/unknown nickname "@every"/);
  });

  it.each([
    ['61 * * * *', 'cron: minute value 61 is out of range 0-59'],
    ['0 24 * * *', 'cron: hour value 24 is out of range 0-23'],
    ['0 0 0 * *', 'cron: day-of-month value 0 is out of range 1-31'],
    ['0 0 32 * *', 'cron: day-of-month value 32 is out of range 1-31'],
    ['0 0 * 0 *', 'cron: month value 0 is out of range 1-12'],
    ['0 0 * 13 *', 'cron: month value 13 is out of range 1-12'],
    ['0 0 * * 8', 'cron: day-of-week value 8 is out of range 0-7'],
    ['0-60 * * * *', 'cron: minute value 60 is out of range 0-59'],
    ['0 9,25 * * *', 'cron: hour value 25 is out of range 0-23'],
  ])('rejects out-of-range %s', (expr, message) => {
    expect(cronError(() => normalizeCron(expr)).message).toBe(message);
  });

  it.each([
    ['*/0 * * * *', 'cron: minute step 0 is out of range 1-60'],
    ['*/61 * * * *', 'cron: minute step 61 is out of range 1-60'],
    ['0 0 * * */8', 'cron: day-of-week step 8 is out of range 1-7'],
    [
      '5/10 * * * *',
      'cron: minute step "5/10" needs "*" or a range before the slash, e.g. "*/10" or "5-59/10"',
    ],
    [
      '0 0 * * MON/2',
      'cron: day-of-week step "MON/2" needs "*" or a range before the slash, e.g. "*/2" or "MON-SAT/2"',
    ],
    ['0 0 * jan-dec/13 *', 'cron: month step 13 is out of range 1-12'],
  ])('rejects bad step %s', (expr, message) => {
    expect(cronError(() => normalizeCron(expr)).message).toBe(message);
  });

  it.each([
    ['*/x * * * *', 'minute', '*/x'],
    ['a * * * *', 'minute', 'a'],
    ['1,,2 * * * *', 'minute', ''],
    ['0 0 L * *', 'day-of-month', 'L'],
    ['0 0 * * MON-', 'day-of-week', 'MON-'],
    ['0 0 ? * *', 'day-of-month', '?'],
    ['0 0 * * 5#2', 'day-of-week', '5#2'],
    ['0 0 * * +1', 'day-of-week', '+1'],
    ['-1 * * * *', 'minute', '-1'],
  ])('rejects bad syntax %s, naming the field', (expr, field, item) => {
    const message = cronError(() => normalizeCron(expr)).message;
    expect(message).toContain(`cron: ${field} field item "${item}" is not valid, expected "*", a number`);
    expect(message).toContain('a range "a-b", a step "*/n" or "a-b/n"');
  });

  it('rejects backwards ranges, names included', () => {
    expect(cronError(() => normalizeCron('0 5-1 * * *')).message).toBe(
      'cron: hour range 5-1 is backwards, expected low-high',
    );
    expect(cronError(() => normalizeCron('0 0 * dec-jan *')).message).toBe(
      'cron: month range dec-jan is backwards, expected low-high',
    );
    expect(cronError(() => normalizeCron('0 0 * * SAT-MON')).message).toBe(
      'cron: day-of-week range SAT-MON is backwards, expected low-high',
    );
  });

  it('reads SUN closing a range as 7, so FRI-SUN is Friday to Sunday', () => {
    expect(normalizeCron('0 0 * * FRI-SUN')).toBe('0 0 * * FRI-SUN');
    expect(normalizeCron('0 0 * * sun-sun')).toBe('0 0 * * SUN-SUN');
  });

  it.each([
    ['0 0 * * MO', 'cron: day-of-week name "MO" is not known, expected one of SUN-SAT (any case)'],
    ['0 0 * * monday', 'cron: day-of-week name "monday" is not known, expected one of SUN-SAT (any case)'],
    ['0 0 * * L', 'cron: day-of-week name "L" is not known, expected one of SUN-SAT (any case)'],
    ['0 0 * MON *', 'cron: month name "MON" is not known, expected one of JAN-DEC (any case)'],
    ['0 0 * January *', 'cron: month name "January" is not known, expected one of JAN-DEC (any case)'],
  ])('rejects an unknown name %s, saying which names the field takes', (expr, message) => {
    expect(cronError(() => normalizeCron(expr)).message).toBe(message);
  });

  it.each([
    [
      '0 0 JAN * *',
      'cron: day-of-month field takes no names, got "JAN"; names are for month (JAN-DEC) and day-of-week (SUN-SAT)',
    ],
    [
      'mon * * * *',
      'cron: minute field takes no names, got "mon"; names are for month (JAN-DEC) and day-of-week (SUN-SAT)',
    ],
  ])('rejects a name in a field that takes none: %s', (expr, message) => {
    expect(cronError(() => normalizeCron(expr)).message).toBe(message);
  });
});

describe('isValidTimezone', () => {
  it('accepts IANA names and rejects everything else', () => {
    for (const tz of ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Asia/Kathmandu']) {
      expect(isValidTimezone(tz)).toBe(true);
    }
    for (const tz of ['', 'Mars/Olympus', 'Local', '+05:30', '-0800', ' UTC']) {
      expect(isValidTimezone(tz)).toBe(false);
    }
  });
});

describe('validateCron', () => {
  it('returns the normalized expression', () => {
    expect(validateCron(' 0  9 * * 1-5 ', 'Europe/Berlin', NOW)).toBe('0 9 * * 1-5');
    expect(validateCron('@weekly', 'UTC', NOW)).toBe('0 0 * * 0');
  });

  it('rejects an unknown time zone', () => {
    expect(cronError(() => validateCron('0 9 * * *', 'Mars/Olympus', NOW)).message).toBe(
      'timezone: unknown IANA time zone "Mars/Olympus"',
    );
  });

  it('rejects expressions that match no date', () => {
    expect(cronError(() => validateCron('0 0 31 2 *', 'UTC', NOW)).message).toBe(
      'cron: "0 0 31 2 *" matches no date in the next 4 years',
    );
    expect(cronError(() => validateCron('0 0 30 2 *', 'Europe/Berlin', NOW)).message).toBe(
      'cron: "0 0 30 2 *" matches no date in the next 4 years',
    );
    expect(cronError(() => validateCron('0 0 30 feb *', 'UTC', NOW)).message).toBe(
      'cron: "0 0 30 FEB *" matches no date in the next 4 years',
    );
    expect(cronError(() => validateCron('0 0 31 4,6,9,11 *', 'UTC', NOW)).message).toMatch(/matches no date/);
  });

  it('accepts a leap-day job from any day: Feb 29 comes within 4 years', () => {
    expect(validateCron('0 0 29 2 *', 'UTC', NOW)).toBe('0 0 29 2 *');
    expect(iso(nextMatch('0 0 29 2 *', 'UTC', NOW))).toBe('2028-02-29T00:00:00.000Z');
    // The worst case: just after one leap day, the next is 4 years away.
    const justAfter = at('2028-02-29T00:00:00.001Z');
    expect(validateCron('0 0 29 FEB *', 'Pacific/Chatham', justAfter)).toBe('0 0 29 FEB *');
    expect(iso(nextMatch('0 0 29 2 *', 'UTC', justAfter))).toBe('2032-02-29T00:00:00.000Z');
    expect(validateCron('30 12 29 2 *', 'America/New_York', at('2028-03-01T00:00:00Z'))).toBe('30 12 29 2 *');
  });

  it('accepts Feb 31 when a restricted day-of-week also matches (vixie OR)', () => {
    expect(validateCron('0 0 31 2 1', 'UTC', NOW)).toBe('0 0 31 2 1');
    expect(iso(nextMatch('0 0 31 2 1', 'UTC', NOW))).toBe('2026-02-02T00:00:00.000Z');
  });

  it('accepts a yearly job whose only date is almost a year away', () => {
    expect(validateCron('@yearly', 'UTC', at('2026-01-01T00:00:01Z'))).toBe('0 0 1 1 *');
  });
});

describe('nextMatch', () => {
  it('returns the first slot strictly after the reference', () => {
    expect(iso(nextMatch('0 9 * * *', 'UTC', at('2026-01-05T08:59:59.999Z')))).toBe(
      '2026-01-05T09:00:00.000Z',
    );
    expect(iso(nextMatch('0 9 * * *', 'UTC', at('2026-01-05T09:00:00.000Z')))).toBe(
      '2026-01-06T09:00:00.000Z',
    );
    expect(iso(nextMatch('* * * * *', 'UTC', at('2026-01-05T09:00:00.500Z')))).toBe(
      '2026-01-05T09:01:00.000Z',
    );
  });

  it('reads the expression in the given zone', () => {
    expect(iso(nextMatch('0 9 * * *', 'Asia/Kolkata', NOW))).toBe('2026-01-06T03:30:00.000Z');
    expect(iso(nextMatch('0 9 * * *', 'America/New_York', NOW))).toBe('2026-01-05T14:00:00.000Z');
  });

  it('returns null when nothing ever matches', () => {
    expect(nextMatch('0 0 31 2 *', 'UTC', NOW)).toBeNull();
  });

  it('throws CronError for a bad expression or zone', () => {
    expect(cronError(() => nextMatch('0 0 9 * * *', 'UTC', NOW)).message).toMatch(/got 6 fields/);
    expect(cronError(() => nextMatch('0 9 * * *', 'Nowhere/Town', NOW)).message).toBe(
      'timezone: unknown IANA time zone "Nowhere/Town"',
    );
  });

  it('stays correct when more expressions are used than the cache holds', () => {
    const exprs = Array.from(
      { length: CRON_CACHE_SIZE * 2 },
      (_, i) => `${i % 60} ${Math.floor(i / 60)} * * *`,
    );
    const first = exprs.map((e) => nextMatch(e, 'UTC', NOW));
    const second = exprs.map((e) => nextMatch(e, 'UTC', NOW));
    expect(second).toEqual(first);
    expect(iso(first[75]!)).toBe('2026-01-06T01:15:00.000Z');
  });
});

describe('month and weekday names', () => {
  const from = at('2026-04-01T00:00:00Z'); // a Wednesday

  it('match like their numbers', () => {
    expect(isos(matchesBetween('0 9 * * mon-fri/2', 'UTC', from, at('2026-04-12T00:00:00Z'), 10))).toEqual(
      isos(matchesBetween('0 9 * * 1-5/2', 'UTC', from, at('2026-04-12T00:00:00Z'), 10)),
    );
    expect(isos(matchesBetween('0 0 * * FRI-SUN', 'UTC', from, at('2026-04-06T00:00:00Z'), 10))).toEqual([
      '2026-04-03T00:00:00.000Z',
      '2026-04-04T00:00:00.000Z',
      '2026-04-05T00:00:00.000Z',
    ]);
    expect(isos(matchesBetween('0 0 1 jan-dec/4 *', 'UTC', from, at('2027-04-02T00:00:00Z'), 10))).toEqual([
      '2026-05-01T00:00:00.000Z',
      '2026-09-01T00:00:00.000Z',
      '2027-01-01T00:00:00.000Z',
    ]);
  });

  it('and the nicknames match like their expansions', () => {
    expect(nextMatch('@midnight', 'UTC', NOW)).toBe(nextMatch('0 0 * * *', 'UTC', NOW));
    expect(iso(nextMatch('@annually', 'Europe/Berlin', NOW))).toBe('2026-12-31T23:00:00.000Z');
  });
});

describe('day-of-month and day-of-week (vixie rule)', () => {
  // 2026-04-01 is a Wednesday; April 13 is a Monday, May 13 a Wednesday.
  const from = at('2026-04-01T00:00:00Z');
  const to = at('2026-05-31T00:00:00Z');

  it('matches the 13th OR a Friday when both are restricted', () => {
    expect(isos(matchesBetween('0 0 13 * 5', 'UTC', from, to, 50))).toEqual([
      '2026-04-03T00:00:00.000Z',
      '2026-04-10T00:00:00.000Z',
      '2026-04-13T00:00:00.000Z',
      '2026-04-17T00:00:00.000Z',
      '2026-04-24T00:00:00.000Z',
      '2026-05-01T00:00:00.000Z',
      '2026-05-08T00:00:00.000Z',
      '2026-05-13T00:00:00.000Z',
      '2026-05-15T00:00:00.000Z',
      '2026-05-22T00:00:00.000Z',
      '2026-05-29T00:00:00.000Z',
    ]);
  });

  it('matches only the day of month when only it is restricted', () => {
    expect(isos(matchesBetween('0 0 13 * *', 'UTC', from, to, 50))).toEqual([
      '2026-04-13T00:00:00.000Z',
      '2026-05-13T00:00:00.000Z',
    ]);
  });

  it('matches only the weekday when only it is restricted', () => {
    expect(isos(matchesBetween('0 0 * * 5', 'UTC', from, at('2026-04-20T00:00:00Z'), 50))).toEqual([
      '2026-04-03T00:00:00.000Z',
      '2026-04-10T00:00:00.000Z',
      '2026-04-17T00:00:00.000Z',
    ]);
  });

  it('requires both when either field starts with "*" (cronie: DOM_STAR / DOW_STAR)', () => {
    // 2026-04-13 and 2026-05-11: Mondays on odd days in April-May.
    const oddMondays = ['2026-04-13T00:00:00.000Z', '2026-04-27T00:00:00.000Z', '2026-05-11T00:00:00.000Z'];
    expect(isos(matchesBetween('0 0 */2 * 1', 'UTC', from, to, 50))).toEqual([
      ...oddMondays,
      '2026-05-25T00:00:00.000Z',
    ]);
    // The 13th when it is a Sunday, Tuesday, Thursday or Saturday (*/2 = 0,2,4,6): none in April-May 2026...
    expect(matchesBetween('0 0 13 * */2', 'UTC', from, to, 50)).toEqual([]);
    // "*,3" starts with "*": the 13th AND any weekday (the list covers them all), so every 13th...
    expect(isos(matchesBetween('0 0 13 * *,3', 'UTC', from, to, 50))).toEqual([
      '2026-04-13T00:00:00.000Z',
      '2026-05-13T00:00:00.000Z',
    ]);
    // ...while "3,*" does not start with "*": the 13th OR any weekday, so every day.
    expect(matchesBetween('0 0 13 * 3,*', 'UTC', from, to, 100)).toHaveLength(60);
  });

  it('treats day-of-week 7 as Sunday, like 0', () => {
    const sundays = ['2026-04-05T00:00:00.000Z', '2026-04-12T00:00:00.000Z', '2026-04-19T00:00:00.000Z'];
    expect(isos(matchesBetween('0 0 * * 7', 'UTC', from, to, 3))).toEqual(sundays);
    expect(isos(matchesBetween('0 0 * * 0', 'UTC', from, to, 3))).toEqual(sundays);
    expect(isos(matchesBetween('0 0 * * 5-7', 'UTC', from, to, 4))).toEqual([
      '2026-04-03T00:00:00.000Z',
      '2026-04-04T00:00:00.000Z',
      '2026-04-05T00:00:00.000Z',
      '2026-04-10T00:00:00.000Z',
    ]);
  });
});

describe('matchesBetween', () => {
  const from = at('2026-01-05T10:00:00Z');
  const to = at('2026-01-05T11:00:00Z');

  it('excludes the lower bound and includes the upper bound', () => {
    expect(isos(matchesBetween('*/15 * * * *', 'UTC', from, to, 10))).toEqual([
      '2026-01-05T10:15:00.000Z',
      '2026-01-05T10:30:00.000Z',
      '2026-01-05T10:45:00.000Z',
      '2026-01-05T11:00:00.000Z',
    ]);
  });

  it('returns at most `limit` slots, the earliest ones', () => {
    expect(isos(matchesBetween('*/15 * * * *', 'UTC', from, to, 2))).toEqual([
      '2026-01-05T10:15:00.000Z',
      '2026-01-05T10:30:00.000Z',
    ]);
    expect(matchesBetween('*/15 * * * *', 'UTC', from, to, 0)).toEqual([]);
  });

  it('returns nothing for an empty window or an expression that never matches', () => {
    expect(matchesBetween('0 9 * * *', 'UTC', from, to, 10)).toEqual([]);
    expect(matchesBetween('*/15 * * * *', 'UTC', to, from, 10)).toEqual([]);
    expect(matchesBetween('0 0 31 2 *', 'UTC', from, to + 5 * 365 * 86_400_000, 10)).toEqual([]);
  });
});

describe('minuteOf', () => {
  const t = at('2026-01-05T03:15:00Z');

  it('gives the wall-clock minute in the zone, not the UTC minute', () => {
    expect(minuteOf(t, 'UTC')).toBe(15);
    expect(minuteOf(t, 'Asia/Kolkata')).toBe(45); // 08:45 at +05:30
    expect(minuteOf(t, 'Asia/Kathmandu')).toBe(0); // 09:00 at +05:45
    expect(minuteOf(t, 'America/New_York')).toBe(15);
  });

  it('throws CronError for an unknown zone', () => {
    expect(cronError(() => minuteOf(t, 'Mars/Olympus')).message).toBe(
      'timezone: unknown IANA time zone "Mars/Olympus"',
    );
  });
});
