import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/load.js';
import type { JitterOptions } from '../../src/scheduler/jitter.js';
import { jitterOptions } from '../../src/scheduler/job-request.js';
import { type NextFire, nextFire, type ScheduleSpec } from '../../src/scheduler/next-fire.js';

const at = (iso: string): number => Date.parse(iso);
const MIN = 60_000;
const DAY = 24 * 60 * MIN;
/** The configured defaults: 10 % of the period, at most 10 minutes; one-shots up to 90 s early. */
const DEFAULT_JITTER = jitterOptions(defaultConfig());
const OFF: JitterOptions = { ...DEFAULT_JITTER, enabled: false };

// Computed here from the documented formula, not from the code under test.
function frac(id: string): number {
  return createHash('sha256').update(id).digest().readUInt32BE(0) / 2 ** 32;
}

function spec(overrides: Partial<ScheduleSpec>): ScheduleSpec {
  return {
    id: 'job-a', // frac ≈ 0.7283
    expr: '0 9 * * *',
    timezone: 'UTC',
    recurring: true,
    createdAt: at('2026-01-05T10:00:00Z'),
    expiresAt: null,
    ...overrides,
  };
}

function show(fire: NextFire | null): { nominalAt: string; dueAt: string; final: boolean } | null {
  return (
    fire && {
      nominalAt: new Date(fire.nominalAt).toISOString(),
      dueAt: new Date(fire.dueAt).toISOString(),
      final: fire.final,
    }
  );
}

describe('nextFire, recurring', () => {
  it('a daily job is delayed by frac of the 10-minute cap', () => {
    const s = spec({});
    expect(show(nextFire(s, s.createdAt, s.createdAt, DEFAULT_JITTER))).toEqual({
      nominalAt: '2026-01-06T09:00:00.000Z',
      // frac('job-a') = 0.7283 of 10 min
      dueAt: '2026-01-06T09:07:16.983Z',
      final: false,
    });
  });

  it('a 10-minute job is delayed by frac * 10% of 10 minutes', () => {
    const s = spec({ expr: '*/10 * * * *' });
    const fire = nextFire(s, s.createdAt, s.createdAt, DEFAULT_JITTER)!;
    expect(fire.nominalAt).toBe(at('2026-01-05T10:10:00Z'));
    expect(fire.dueAt - fire.nominalAt).toBe(Math.floor(frac('job-a') * 0.1 * 10 * MIN));
    expect(fire.dueAt - fire.nominalAt).toBe(43_698);
  });

  it('uses the gap to the following slot, which varies for irregular expressions', () => {
    // 9:00 is followed by 9:05 (a 5-minute gap), 9:05 by 9:00 the next day (capped).
    const s = spec({ expr: '0,5 9 * * *', id: 'job-b' });
    const first = nextFire(s, s.createdAt, s.createdAt, DEFAULT_JITTER)!;
    expect(first.nominalAt).toBe(at('2026-01-06T09:00:00Z'));
    expect(first.dueAt - first.nominalAt).toBe(Math.floor(frac('job-b') * 0.1 * 5 * MIN));
    const second = nextFire(s, first.nominalAt, first.nominalAt, DEFAULT_JITTER)!;
    expect(second.nominalAt).toBe(at('2026-01-06T09:05:00Z'));
    expect(second.dueAt - second.nominalAt).toBe(Math.floor(frac('job-b') * 10 * MIN));
  });

  it('fires on the nominal slot when jitter is off', () => {
    const s = spec({});
    expect(show(nextFire(s, s.createdAt, s.createdAt, OFF))).toEqual({
      nominalAt: '2026-01-06T09:00:00.000Z',
      dueAt: '2026-01-06T09:00:00.000Z',
      final: false,
    });
  });

  it('expiry: fires one final time at the first slot at or after expiry', () => {
    const s = spec({ expiresAt: at('2026-01-05T10:00:00Z') + 7 * DAY });
    const fires: Array<{ nominalAt: string; final: boolean }> = [];
    let after = s.createdAt;
    for (let i = 0; i < 20; i++) {
      const fire = nextFire(s, after, after, DEFAULT_JITTER)!;
      fires.push({ nominalAt: new Date(fire.nominalAt).toISOString(), final: fire.final });
      if (fire.final) break;
      after = fire.nominalAt;
    }
    expect(fires).toEqual([
      { nominalAt: '2026-01-06T09:00:00.000Z', final: false },
      { nominalAt: '2026-01-07T09:00:00.000Z', final: false },
      { nominalAt: '2026-01-08T09:00:00.000Z', final: false },
      { nominalAt: '2026-01-09T09:00:00.000Z', final: false },
      { nominalAt: '2026-01-10T09:00:00.000Z', final: false },
      { nominalAt: '2026-01-11T09:00:00.000Z', final: false },
      { nominalAt: '2026-01-12T09:00:00.000Z', final: false }, // before expiry (10:00)
      { nominalAt: '2026-01-13T09:00:00.000Z', final: true }, // first slot after expiry
    ]);
  });

  it('expiry: a slot exactly at expiry is the final one', () => {
    const s = spec({ createdAt: at('2026-01-05T09:00:00Z'), expiresAt: at('2026-01-12T09:00:00Z') });
    const before = nextFire(s, at('2026-01-10T09:00:00Z'), at('2026-01-10T09:00:00Z'), DEFAULT_JITTER)!;
    expect(before.nominalAt).toBe(at('2026-01-11T09:00:00Z'));
    expect(before.final).toBe(false);
    const last = nextFire(s, before.nominalAt, before.nominalAt, DEFAULT_JITTER)!;
    expect(last.nominalAt).toBe(at('2026-01-12T09:00:00Z'));
    expect(last.final).toBe(true);
  });

  it('is null when the expression has no further slot', () => {
    const s = spec({ expr: '0 0 31 2 *' });
    expect(nextFire(s, s.createdAt, s.createdAt, DEFAULT_JITTER)).toBeNull();
  });
});

describe('nextFire, one-shot', () => {
  const created = at('2026-01-05T08:00:00Z');

  it('fires up to 90 s early at minute 0, and is final', () => {
    const s = spec({ recurring: false, createdAt: created });
    const fire = nextFire(s, created, created, DEFAULT_JITTER)!;
    expect(fire.nominalAt).toBe(at('2026-01-05T09:00:00Z'));
    expect(fire.dueAt).toBe(fire.nominalAt - Math.floor(frac('job-a') * 90_000));
    expect(show(fire)).toEqual({
      nominalAt: '2026-01-05T09:00:00.000Z',
      dueAt: '2026-01-05T08:58:54.453Z',
      final: true,
    });
  });

  it('is never due before its creation', () => {
    const late = at('2026-01-05T08:59:30Z');
    const s = spec({ recurring: false, createdAt: late });
    expect(show(nextFire(s, late, late, DEFAULT_JITTER))).toEqual({
      nominalAt: '2026-01-05T09:00:00.000Z',
      dueAt: '2026-01-05T08:59:30.000Z',
      final: true,
    });
  });

  it('fires on time when the minute is not 0 or 30', () => {
    const s = spec({ recurring: false, createdAt: created, expr: '15 9 * * *' });
    expect(show(nextFire(s, created, created, DEFAULT_JITTER))).toEqual({
      nominalAt: '2026-01-05T09:15:00.000Z',
      dueAt: '2026-01-05T09:15:00.000Z',
      final: true,
    });
  });

  it('judges the minute on the wall clock of the job zone', () => {
    // 09:00 in Kathmandu (+05:45) is 03:15Z: minute 0 locally, so it gets early jitter.
    const s = spec({ recurring: false, createdAt: created, expr: '0 9 * * *', timezone: 'Asia/Kathmandu' });
    const fire = nextFire(s, created, created, DEFAULT_JITTER)!;
    expect(fire.nominalAt).toBe(at('2026-01-06T03:15:00Z'));
    expect(fire.dueAt).toBe(at('2026-01-06T03:13:54.453Z'));
    // 08:45 in Kolkata (+05:30) is 03:15Z: minute 45 locally, so it does not, though its UTC minute is 15.
    const k = spec({ recurring: false, createdAt: created, expr: '45 8 * * *', timezone: 'Asia/Kolkata' });
    const kFire = nextFire(k, created, created, DEFAULT_JITTER)!;
    expect(kFire.nominalAt).toBe(at('2026-01-06T03:15:00Z'));
    expect(kFire.dueAt).toBe(kFire.nominalAt);
  });

  it('ignores expiresAt', () => {
    const s = spec({ recurring: false, createdAt: created, expiresAt: created + DAY });
    expect(nextFire(s, created, created, OFF)).toEqual({
      nominalAt: at('2026-01-05T09:00:00Z'),
      dueAt: at('2026-01-05T09:00:00Z'),
      final: true,
    });
  });
});

describe('how late jobs fire, over many ids (README, "Jitter")', () => {
  /** Each id's delay of its first slot after creation, sorted, in minutes. */
  function delays(expr: string, maxSeconds?: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < 2001; i++) {
      const s = spec({ id: `job_${i}`, expr, jitterMaxSeconds: maxSeconds ?? null });
      const fire = nextFire(s, s.createdAt, s.createdAt, DEFAULT_JITTER)!;
      out.push((fire.dueAt - fire.nominalAt) / MIN);
    }
    return out.sort((a, b) => a - b);
  }
  const quantile = (xs: number[], q: number) => xs[Math.round(q * (xs.length - 1))]!;

  it('a daily job: median about 5 minutes, 90% within 9, none at or past the 10-minute cap', () => {
    const d = delays('0 9 * * *');
    expect(quantile(d, 0.5)).toBeGreaterThan(4.5);
    expect(quantile(d, 0.5)).toBeLessThan(5.5);
    expect(quantile(d, 0.9)).toBeGreaterThan(8.5);
    expect(quantile(d, 0.9)).toBeLessThan(9.5);
    expect(d.at(-1)!).toBeLessThan(10);
    // Before, almost every daily job landed on the cap; now only as many as land in its last percent.
    expect(d.filter((x) => x >= 9.9).length).toBeLessThan(0.02 * d.length);
  });

  it('an hourly job: median about 3 minutes, never 6', () => {
    const d = delays('0 * * * *');
    expect(quantile(d, 0.5)).toBeGreaterThan(2.7);
    expect(quantile(d, 0.5)).toBeLessThan(3.3);
    expect(d.at(-1)!).toBeLessThan(6);
  });

  it("a job's own max_seconds replaces the cap; 0 fires every job at its minute", () => {
    expect(delays('0 9 * * *', 0).every((x) => x === 0)).toBe(true);
    const d = delays('0 9 * * *', 120);
    expect(d.at(-1)!).toBeLessThan(2);
    expect(quantile(d, 0.5)).toBeGreaterThan(0.9);
    expect(quantile(d, 0.5)).toBeLessThan(1.1);
    // A one-shot's early start is bounded by it too.
    const once = spec({ recurring: false, expr: '0 11 5 1 *', jitterMaxSeconds: 0 });
    const fire = nextFire(once, once.createdAt, once.createdAt, DEFAULT_JITTER)!;
    expect(fire.dueAt).toBe(fire.nominalAt);
  });
});
