import type { Config } from '../config/schema.js';
import type { CronJob, JobStatus, OverlapPolicy, Trigger } from '../domain/types.js';
import { newId } from '../ids.js';
import { specOf } from '../scheduler/decide.js';
import { jitterOptions, jobFromRequest } from '../scheduler/job-request.js';
import { nextFire } from '../scheduler/next-fire.js';
import type { NewJob } from '../store/store.js';

// A scheduled trigger (kind `schedule`) is a cron schedule that belongs to no person's session and never
// expires: how a team keeps a nightly review. The scheduler fires it through a job of its own (the job's
// trigger_id), so every rule of jobs holds for it unchanged: jitter, approximate minutes, the overlap policy,
// exactly once per slot, catch-up after downtime, firing only when its session is idle. The trigger's runs share one session
// (scope `schedule:<trigger id>`), so they run one at a time.

export interface ScheduleDefinition {
  cron: string;
  timezone: string;
  approximate: boolean;
  overlap: OverlapPolicy;
  /** The job's own jitter bound in seconds; null: the configured cap. */
  jitterMaxSeconds: number | null;
}

/** Who a scheduled trigger's runs are requested by (as for the other triggers). */
export const scheduleRequester = (trigger: Pick<Trigger, 'name'>) => `trigger:${trigger.name}`;

export const scheduleScope = (triggerId: string) => `schedule:${triggerId}`;

/** The job a scheduled trigger fires through, planned from now. Throws CronError for a bad expression. */
export function planScheduleJob(
  trigger: Pick<Trigger, 'id' | 'name' | 'prompt' | 'options'>,
  schedule: ScheduleDefinition,
  where: { jobId?: string; sessionId: string },
  now: number,
  config: Config,
): NewJob {
  const job = jobFromRequest(
    {
      id: where.jobId ?? newId('job'),
      sessionId: where.sessionId,
      cron: schedule.cron,
      timezone: schedule.timezone,
      prompt: trigger.prompt,
      recurring: true,
      approximate: schedule.approximate,
      overlap: schedule.overlap,
      jitterMaxSeconds: schedule.jitterMaxSeconds,
      options: trigger.options,
      createdBy: scheduleRequester(trigger),
      expires: false,
    },
    now,
    config,
  );
  return { ...job, triggerId: trigger.id };
}

/**
 * The job's status and next slot when its trigger is switched on or off: off pauses it; on schedules the
 * next slot from now (slots that passed while it was off are skipped, as when a paused job resumes).
 */
export function switchedSchedule(
  job: CronJob,
  enabled: boolean,
  now: number,
  config: Config,
): { status: JobStatus; next: { nominalAt: number; dueAt: number; final: boolean } | null } {
  if (!enabled) return { status: 'paused', next: null };
  return { status: 'active', next: nextFire(specOf(job), now, now, jitterOptions(config)) };
}
