import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/load.js';
import { CronError } from '../../src/scheduler/cron.js';
import {
  approximateCron,
  type JitterOptions,
  jitterFraction,
  oneShotDue,
  recurringDue,
} from '../../src/scheduler/jitter.js';
import { jitterOptions } from '../../src/scheduler/job-request.js';

/** The configured defaults: 10 % of the period, at most 10 minutes; one-shots up to 90 s early. */
const DEFAULT_JITTER = jitterOptions(defaultConfig());
const at = (iso: string): number => Date.parse(iso);
const MIN = 60_000;
const HOUR = 60 * MIN;
const OFF: JitterOptions = { ...DEFAULT_JITTER, enabled: false };

describe('DEFAULT_JITTER', () => {
  it('has the documented defaults', () => {
    expect(DEFAULT_JITTER).toEqual({
      enabled: true,
      recurringFraction: 0.1,
      recurringCapMs: 10 * MIN,
      oneShotEarlyMs: 90_000,
    });
  });
});

describe('jitterFraction', () => {
  it('is the first 32 bits of sha256(id), big-endian, over 2^32', () => {
    for (const id of ['job-a', 'job-b', '01J9Z3K8', '', 'ünïcødé']) {
      const digest = createHash('sha256').update(id, 'utf8').digest('hex');
      expect(jitterFraction(id)).toBe(Number.parseInt(digest.slice(0, 8), 16) / 4294967296);
    }
    expect(jitterFraction('job-a')).toBe(3128052637 / 2 ** 32);
  });

  it('is deterministic and in [0, 1)', () => {
    expect(jitterFraction('job-a')).toBe(jitterFraction('job-a'));
    expect(jitterFraction('job-a')).not.toBe(jitterFraction('job-b'));
    for (let i = 0; i < 1000; i++) {
      const f = jitterFraction(`job-${i}`);
      expect(f).toBeGreaterThanOrEqual(0);
      expect(f).toBeLessThan(1);
    }
  });
});

describe('recurringDue', () => {
  const t1 = at('2026-01-05T09:00:00Z');

  it('spreads a daily job uniformly below the 10-minute cap (10% of a day would be 2.4 h)', () => {
    // The id's fraction scales the capped bound, so the delay is frac * 10 min: the median job is 5 min late,
    // not 10 (before, the fraction scaled 2.4 h and the cap cut nearly every job to the cap).
    expect(recurringDue(t1, t1 + 24 * HOUR, 0.5, DEFAULT_JITTER)).toBe(at('2026-01-05T09:05:00Z'));
    expect(recurringDue(t1, t1 + 24 * HOUR, 0.9, DEFAULT_JITTER)).toBe(at('2026-01-05T09:09:00Z'));
    expect(recurringDue(t1, t1 + 24 * HOUR, 0.1, DEFAULT_JITTER)).toBe(at('2026-01-05T09:01:00Z'));
    expect(recurringDue(t1, t1 + 24 * HOUR, 0.999, DEFAULT_JITTER)).toBe(at('2026-01-05T09:09:59.400Z'));
  });

  it('is uncapped below the cap: every 10 minutes delays up to 60 s', () => {
    expect(recurringDue(t1, t1 + 10 * MIN, 0.5, DEFAULT_JITTER)).toBe(at('2026-01-05T09:00:30Z'));
    expect(recurringDue(t1, t1 + 10 * MIN, 0.999, DEFAULT_JITTER)).toBe(at('2026-01-05T09:00:59.940Z'));
    expect(recurringDue(t1, t1 + 10 * MIN, 0, DEFAULT_JITTER)).toBe(t1);
  });

  it('switches at the cap: an hourly job is delayed up to 6 min, anything from 100 min apart up to 10 min', () => {
    expect(recurringDue(t1, t1 + HOUR, 0.5, DEFAULT_JITTER)).toBe(at('2026-01-05T09:03:00Z'));
    expect(recurringDue(t1, t1 + HOUR, 0.999, DEFAULT_JITTER)).toBe(at('2026-01-05T09:05:59.640Z'));
    expect(recurringDue(t1, t1 + 3 * HOUR, 0.5, DEFAULT_JITTER)).toBe(at('2026-01-05T09:05:00Z'));
    expect(recurringDue(t1, t1 + 6 * HOUR, 0.5, DEFAULT_JITTER)).toBe(at('2026-01-05T09:05:00Z'));
  });

  it('uses the configured fraction and cap, and the off switch', () => {
    const opts = { ...DEFAULT_JITTER, recurringFraction: 0.2, recurringCapMs: 5 * MIN };
    expect(recurringDue(t1, t1 + 10 * MIN, 0.5, opts)).toBe(t1 + MIN);
    expect(recurringDue(t1, t1 + HOUR, 0.5, opts)).toBe(t1 + 2.5 * MIN);
    expect(recurringDue(t1, t1 + 24 * HOUR, 0.5, OFF)).toBe(t1);
  });
});

describe('oneShotDue', () => {
  const t1 = at('2026-01-05T09:00:00Z');
  const created = at('2026-01-05T08:00:00Z');

  it('fires up to 90 s early when the minute is 0 or 30', () => {
    expect(oneShotDue(t1, created, 0.5, 0, DEFAULT_JITTER)).toBe(at('2026-01-05T08:59:15Z'));
    expect(oneShotDue(t1, created, 0.999, 30, DEFAULT_JITTER)).toBe(at('2026-01-05T08:58:30.090Z'));
    expect(oneShotDue(t1, created, 0, 0, DEFAULT_JITTER)).toBe(t1);
  });

  it('never fires before now (the creation time)', () => {
    const now = at('2026-01-05T08:59:50Z');
    expect(oneShotDue(t1, now, 0.5, 0, DEFAULT_JITTER)).toBe(now);
    expect(oneShotDue(t1, t1, 0.5, 0, DEFAULT_JITTER)).toBe(t1);
  });

  it('fires exactly on time for any other minute, or when disabled', () => {
    for (const minute of [1, 15, 29, 31, 45, 59]) {
      expect(oneShotDue(t1, created, 0.5, minute, DEFAULT_JITTER)).toBe(t1);
    }
    expect(oneShotDue(t1, created, 0.5, 0, OFF)).toBe(t1);
  });

  it('uses the configured early window', () => {
    expect(oneShotDue(t1, created, 0.5, 0, { ...DEFAULT_JITTER, oneShotEarlyMs: 10 * MIN })).toBe(
      t1 - 5 * MIN,
    );
  });
});

describe('approximateCron', () => {
  function expectedShift(id: string): number {
    const digest = createHash('sha256').update(id, 'utf8').digest('hex');
    return 1 + (Number.parseInt(digest.slice(8, 16), 16) % 6);
  }

  it('moves minute 0 or 30 forward by a deterministic 1-6 minutes from the job id', () => {
    expect(approximateCron('0 9 * * *', 'job-a')).toBe('2 9 * * *');
    expect(approximateCron('0 9 * * *', 'job-b')).toBe('4 9 * * *');
    expect(approximateCron('30 14 * * 1-5', 'job-2')).toBe('36 14 * * 1-5');
    expect(approximateCron('0 9 * * *', 'job-a')).toBe(approximateCron('0 9 * * *', 'job-a'));
  });

  it('takes the shift from bits 32-63 of the hash, independent of jitterFraction', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 600; i++) {
      const id = `job-${i}`;
      const shifted = Number(approximateCron('0 9 * * *', id).split(' ')[0]);
      expect(shifted).toBe(expectedShift(id));
      seen.add(shifted);
    }
    expect([...seen].sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('expands nicknames before deciding (@hourly is minute 0)', () => {
    expect(approximateCron('@hourly', 'job-1')).toBe('3 * * * *');
    expect(approximateCron('@daily', 'job-a')).toBe('2 0 * * *');
  });

  it('leaves every other minute field unchanged', () => {
    for (const expr of [
      '0,30 9 * * *',
      '15 9 * * *',
      '*/30 * * * *',
      '0-30 9 * * *',
      '* 9 * * *',
      '1 9 * * *',
    ]) {
      expect(approximateCron(expr, 'job-a')).toBe(expr);
    }
  });

  it('honours custom bounds and rejects bad ones', () => {
    expect(approximateCron('30 9 * * *', 'job-a', 3, 3)).toBe('33 9 * * *');
    expect(() => approximateCron('0 9 * * *', 'job-a', 5, 2)).toThrow(RangeError);
    expect(() => approximateCron('0 9 * * *', 'job-a', 1, 30)).toThrow(RangeError);
  });

  it('throws CronError for an invalid expression', () => {
    expect(() => approximateCron('0 0 9 * * *', 'job-a')).toThrow(CronError);
  });
});
