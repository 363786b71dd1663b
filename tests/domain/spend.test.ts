import { describe, expect, it } from 'vitest';
import { reachedCap, spendDayNamed, spendDayOf, spendDaysBetween } from '../../src/domain/spend.js';

const H = 3_600_000;
const at = (iso: string) => Date.parse(iso);

describe('the day of a spend cap', () => {
  it('runs from midnight to midnight of the zone', () => {
    expect(spendDayOf(at('2026-06-01T14:59:59.999Z'), 'Asia/Tokyo')).toEqual({
      day: '2026-06-01',
      start: at('2026-05-31T15:00:00Z'),
      end: at('2026-06-01T15:00:00Z'),
    });
    expect(spendDayOf(at('2026-06-01T15:00:00Z'), 'Asia/Tokyo').day).toBe('2026-06-02');
    expect(spendDayOf(at('2026-06-01T23:30:00Z'), 'UTC')).toEqual({
      day: '2026-06-01',
      start: at('2026-06-01T00:00:00Z'),
      end: at('2026-06-02T00:00:00Z'),
    });
  });

  it('is 23 or 25 hours long when the clocks change', () => {
    const spring = spendDayNamed('2026-03-08', 'America/New_York');
    expect(spring.start).toBe(at('2026-03-08T05:00:00Z'));
    expect(spring.end - spring.start).toBe(23 * H);
    const autumn = spendDayNamed('2026-11-01', 'America/New_York');
    expect(autumn.start).toBe(at('2026-11-01T04:00:00Z'));
    expect(autumn.end - autumn.start).toBe(25 * H);
  });

  it('starts when the clock jumps where it skips midnight', () => {
    // Santiago moved its clocks from 00:00 to 01:00 on 2026-09-06: that day starts at 01:00 local (04:00 UTC).
    const day = spendDayNamed('2026-09-06', 'America/Santiago');
    expect(day.start).toBe(at('2026-09-06T04:00:00Z'));
    expect(spendDayOf(day.start - 1, 'America/Santiago').day).toBe('2026-09-05');
    expect(spendDayOf(day.start, 'America/Santiago').day).toBe('2026-09-06');
  });

  it('lists the days of a range in order, both ends included', () => {
    const days = spendDaysBetween('2026-10-31', '2026-11-02', 'America/New_York');
    expect(days.map((d) => d.day)).toEqual(['2026-10-31', '2026-11-01', '2026-11-02']);
    expect(days[1]!.start).toBe(days[0]!.end);
    expect(days[2]!.start).toBe(days[1]!.end);
  });
});

describe('which cap a tally reached', () => {
  it('daily_usd at or past it, daily_runs once that many started; an absent key is no cap', () => {
    expect(reachedCap({ daily_usd: 1 }, { runs: 9, costUsd: 0.99 })).toBeNull();
    expect(reachedCap({ daily_usd: 1 }, { runs: 0, costUsd: 1 })).toEqual({
      cap: 'daily_usd',
      limit: 1,
      spent: 1,
    });
    expect(reachedCap({ daily_runs: 2 }, { runs: 1, costUsd: 50 })).toBeNull();
    expect(reachedCap({ daily_runs: 2 }, { runs: 2, costUsd: 0 })).toEqual({
      cap: 'daily_runs',
      limit: 2,
      spent: 2,
    });
    expect(reachedCap({}, { runs: 1000, costUsd: 1000 })).toBeNull();
  });
});
