import { createHash } from 'node:crypto';
import { normalizeCron } from './cron.js';

/**
 * Deterministic spreading of fire times, so that many jobs asking for "9:00"
 * do not all start at the same second. Everything is derived from the job id:
 * the same job always gets the same offset, across restarts and processes.
 */

export interface JitterOptions {
  /** Off switch: when false every due time is the nominal slot. Default true. */
  enabled: boolean;
  /** Share of the gap to the following slot a recurring job may be delayed by. Default 0.1. */
  recurringFraction: number;
  /** Upper bound of a recurring job's delay, in ms. Default 10 min (a daily job's median delay is 5 min). */
  recurringCapMs: number;
  /** How far before its slot a one-shot at minute 0 or 30 may fire, in ms. Default 90 s. */
  oneShotEarlyMs: number;
}

function jobHash(jobId: string): Buffer {
  return createHash('sha256').update(jobId, 'utf8').digest();
}

/** First 32 bits of sha256(jobId), big-endian, divided by 2^32: in [0, 1). */
export function jitterFraction(jobId: string): number {
  return jobHash(jobId).readUInt32BE(0) / 2 ** 32;
}

/**
 * For `approximate: true` jobs whose minute field is exactly 0 or 30: move the
 * minute forward by minShift..maxShift (default 1..6), chosen from bits 32-63 of
 * sha256(jobId) so it is independent of jitterFraction. Any other minute field
 * (lists, steps, other values) is returned unchanged. Nicknames are expanded
 * first ("@daily" is minute 0). Throws CronError for an invalid expression.
 */
export function approximateCron(expr: string, jobId: string, minShift = 1, maxShift = 6): string {
  if (
    !Number.isInteger(minShift) ||
    !Number.isInteger(maxShift) ||
    minShift < 0 ||
    minShift > maxShift ||
    maxShift > 29
  ) {
    // 30 + 29 = 59 is the last minute the shifted field can hold.
    throw new RangeError(
      `approximateCron: expected integers 0 <= minShift <= maxShift <= 29, got ${minShift}..${maxShift}`,
    );
  }
  const fields = normalizeCron(expr).split(' ');
  const minuteField = fields[0]!;
  if (!/^\d+$/.test(minuteField)) return expr;
  const minute = Number(minuteField);
  if (minute !== 0 && minute !== 30) return expr;
  const shift = minShift + (jobHash(jobId).readUInt32BE(4) % (maxShift - minShift + 1));
  fields[0] = String(minute + shift);
  return fields.join(' ');
}

/**
 * Due time of a recurring slot t1 whose following slot is t2: delayed by `frac` (uniform over job ids) of a
 * bound, the smaller of `recurringFraction` of the gap and `recurringCapMs`. So the delay is uniform over
 * [0, bound): a daily job's median is half the cap, not the cap (scaling the gap first and capping after made
 * nearly every daily job land on the cap). Whole ms.
 */
export function recurringDue(t1: number, t2: number, frac: number, opts: JitterOptions): number {
  if (!opts.enabled) return t1;
  const bound = Math.min(opts.recurringFraction * (t2 - t1), opts.recurringCapMs);
  return t1 + Math.max(0, Math.floor(frac * bound));
}

/**
 * A job's own jitter bound (`jitter.max_seconds`) in place of the configured cap: it bounds a recurring job's
 * delay and a one-shot's early start alike; 0 turns jitter off for the job. Null keeps the configured options.
 */
export function jobJitter(opts: JitterOptions, maxSeconds: number | null | undefined): JitterOptions {
  if (maxSeconds === null || maxSeconds === undefined) return opts;
  const ms = maxSeconds * 1000;
  return { ...opts, recurringCapMs: ms, oneShotEarlyMs: Math.min(opts.oneShotEarlyMs, ms) };
}

/**
 * Due time of a one-shot slot t1: only a slot on the hour or half hour (the
 * times people pick) fires up to `oneShotEarlyMs` early, and never before `now`
 * (the job's creation), so a job created at 8:59:30 for 9:00 does not fire in the past.
 */
export function oneShotDue(
  t1: number,
  now: number,
  frac: number,
  minuteOfT1: number,
  opts: JitterOptions,
): number {
  if (!opts.enabled || (minuteOfT1 !== 0 && minuteOfT1 !== 30)) return t1;
  return Math.max(t1 - Math.floor(frac * opts.oneShotEarlyMs), now);
}
