import { minuteOf, nextMatch } from './cron.js';
import { type JitterOptions, jitterFraction, jobJitter, oneShotDue, recurringDue } from './jitter.js';

/** What the scheduler needs to know about a job to place its next fire. */
export interface ScheduleSpec {
  id: string;
  /** Effective expression: normalized and, for approximate jobs, already shifted. */
  expr: string;
  timezone: string;
  recurring: boolean;
  createdAt: number;
  /** Recurring jobs only: from this instant on, the next slot is the last one. */
  expiresAt: number | null;
  /** The job's own jitter bound in seconds (`jitter.max_seconds`); null or absent: the configured cap. */
  jitterMaxSeconds?: number | null;
}

export interface NextFire {
  /** The cron slot: the run's identity (job id, nominal time) for exactly-once. */
  nominalAt: number;
  /** When to actually start it, after jitter. */
  dueAt: number;
  /** True when the job is deleted after this fire (one-shot, or recurring past expiry). */
  final: boolean;
}

/**
 * Next fire of a job strictly after `after` (for a recurring job, its last
 * nominal slot; for a one-shot, its creation time). `now` is only used to keep
 * a one-shot's early jitter from landing before it was created. Null when the
 * expression has no further slot.
 */
export function nextFire(
  spec: ScheduleSpec,
  after: number,
  now: number,
  configured: JitterOptions,
): NextFire | null {
  const opts = jobJitter(configured, spec.jitterMaxSeconds);
  const t1 = nextMatch(spec.expr, spec.timezone, after);
  if (t1 === null) return null;
  const frac = jitterFraction(spec.id);
  if (!spec.recurring) {
    return {
      nominalAt: t1,
      dueAt: oneShotDue(t1, now, frac, minuteOf(t1, spec.timezone), opts),
      final: true,
    };
  }
  // The delay is a share of the gap to the following slot; with no following slot there is no gap to share.
  const t2 = nextMatch(spec.expr, spec.timezone, t1);
  return {
    nominalAt: t1,
    dueAt: t2 === null ? t1 : recurringDue(t1, t2, frac, opts),
    // Expiry does not cut a job off mid-interval: it fires once more at its first slot at or after expiry.
    final: spec.expiresAt !== null && t1 >= spec.expiresAt,
  };
}

/**
 * A job's next `count` nominal fire times: the stored next one, then the schedule's after it, stopping at the
 * last (a one-shot's only slot; a recurring job's first slot at or after its expiry, as nextFire decides).
 */
export function upcomingSlots(
  job: {
    nextNominalAt: number | null;
    nextFinal: boolean;
    effectiveCron: string;
    timezone: string;
    expiresAt: number | null;
  },
  count: number,
): number[] {
  if (job.nextNominalAt === null) return [];
  const slots = [job.nextNominalAt];
  let final = job.nextFinal;
  while (slots.length < count && !final) {
    const t = nextMatch(job.effectiveCron, job.timezone, slots.at(-1)!);
    if (t === null) break;
    slots.push(t);
    final = job.expiresAt !== null && t >= job.expiresAt;
  }
  return slots;
}
