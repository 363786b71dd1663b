import type { Config } from '../config/schema.js';
import { DEFAULT_OVERLAP, type OverlapPolicy, type RunDefaults } from '../domain/types.js';
import type { NewJob } from '../store/store.js';
import { CronError, validateCron } from './cron.js';
import { approximateCron, type JitterOptions } from './jitter.js';
import { nextFire } from './next-fire.js';

export interface JobRequest {
  id: string;
  sessionId: string;
  /** Unique within the session (the store checks); none by default. */
  name?: string | null | undefined;
  cron: string;
  timezone: string;
  prompt: string;
  recurring: boolean;
  approximate: boolean;
  options: RunDefaults;
  createdBy: string;
  /** False for a job that never expires (a scheduled trigger's); default true for recurring jobs. */
  expires?: boolean;
  /** What a slot due while the session is busy becomes; default buffer_one. */
  overlap?: OverlapPolicy | undefined;
  /** The job's own jitter bound in seconds (0: none); null or absent: the configured cap. */
  jitterMaxSeconds?: number | null | undefined;
}

export function jitterOptions(config: Config): JitterOptions {
  const j = config.scheduler.jitter;
  return {
    enabled: j.enabled,
    recurringFraction: j.recurring_fraction,
    recurringCapMs: j.recurring_cap_ms,
    oneShotEarlyMs: j.one_shot_early_ms,
  };
}

/**
 * Turns a job request into the record to store: validated cron, the approximate-minute shift, expiry and the
 * first slot with its jitter. Throws CronError (for a 422) when the expression or time zone is unusable.
 */
export function jobFromRequest(req: JobRequest, now: number, config: Config): NewJob {
  const cron = validateCron(req.cron, req.timezone, now);
  const { min, max } = config.scheduler.approximate_shift_minutes;
  const effectiveCron = req.approximate ? approximateCron(cron, req.id, min, max) : cron;
  const expiresAt =
    req.recurring && req.expires !== false ? now + config.scheduler.recurring_expiry_ms : null;
  const next = nextFire(
    {
      id: req.id,
      expr: effectiveCron,
      timezone: req.timezone,
      recurring: req.recurring,
      createdAt: now,
      expiresAt,
      jitterMaxSeconds: req.jitterMaxSeconds ?? null,
    },
    now,
    now,
    jitterOptions(config),
  );
  if (!next) throw new CronError(`cron: "${cron}" matches no date in the next 4 years`);
  return {
    id: req.id,
    sessionId: req.sessionId,
    name: req.name ?? null,
    cron,
    effectiveCron,
    timezone: req.timezone,
    prompt: req.prompt,
    recurring: req.recurring,
    approximate: req.approximate,
    options: req.options,
    createdBy: req.createdBy,
    createdAt: now,
    expiresAt,
    nextNominalAt: next.nominalAt,
    nextDueAt: next.dueAt,
    nextFinal: next.final,
    overlap: req.overlap ?? DEFAULT_OVERLAP,
    jitterMaxSeconds: req.jitterMaxSeconds ?? null,
  };
}
