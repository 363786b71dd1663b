import { z } from 'zod';
import { OVERLAP_POLICIES, SLOT_OUTCOMES } from '../../domain/types.js';
import { cursor, limit, listOf, pageOf, runDefaults, runDefaultsSchema, time } from './common.js';

// Cron jobs of a session (/v1/sessions/:id/jobs, /v1/jobs).

/** A job's name: unique within its session, how `drydock apply` finds the job again. */
export const jobName = z.string().trim().min(1).max(200);

export const overlapSchema = z
  .enum(OVERLAP_POLICIES)
  .describe(
    'what a slot due while the session is busy becomes (docs/scheduling.md, Overlap policies); default buffer_one',
  );

/** A job's or schedule trigger's jitter as asked for; a field left out keeps its default (or current) value. */
export const jitterInputSchema = z.strictObject({
  max_seconds: z
    .int()
    .min(0)
    .max(86_400)
    .nullable()
    .optional()
    .describe('the longest delay (0: no jitter); null: scheduler.jitter.recurring_cap_ms'),
  approximate: z.boolean().optional().describe('move a minute of exactly 0 or 30 forward (as `approximate`)'),
});

export const jitterSchema = z.strictObject({
  max_seconds: z.number().nullable(),
  approximate: z.boolean(),
});

export const createJobSchema = z.strictObject({
  name: jobName.optional(),
  cron: z.string().min(1).max(200),
  timezone: z.string().min(1).max(100).optional(),
  prompt: z.string().min(1).max(65_536),
  recurring: z.boolean().default(true),
  approximate: z.boolean().optional().describe('the same as jitter.approximate (default false)'),
  overlap: overlapSchema.optional(),
  jitter: jitterInputSchema.optional(),
  options: runDefaultsSchema.optional(),
});

/**
 * PATCH /v1/jobs/:id: the fields given replace the job's, and the job is planned anew from now. Its name, and
 * which session it is in, do not change.
 */
export const patchJobSchema = createJobSchema
  .pick({ cron: true, timezone: true, prompt: true, options: true, overlap: true, jitter: true })
  .partial()
  .extend({ recurring: z.boolean().optional(), approximate: z.boolean().optional() });

/** POST /v1/jobs/:id/backfill */
export const backfillSchema = z.strictObject({
  from: z.iso.datetime({ offset: true }).describe('the range starts here (inclusive)'),
  to: z.iso.datetime({ offset: true }).describe('the range ends here (exclusive); not after now'),
});

export const backfillResultSchema = z.strictObject({
  job_id: z.string(),
  items: z.array(
    z.strictObject({
      slot_at: time,
      outcome: z
        .enum([...SLOT_OUTCOMES, 'pending', 'already_done'])
        .describe('what the slot became; already_done: it had a run or an outcome, and was not fired again'),
      run_id: z.string().nullable(),
    }),
  ),
});
export type BackfillResultJson = z.infer<typeof backfillResultSchema>;

export const jobSchema = z.strictObject({
  id: z.string(),
  session_id: z.string(),
  name: z.string().nullable().describe('unique within its session; null for a job made without one'),
  cron: z.string(),
  effective_cron: z.string(),
  timezone: z.string(),
  recurring: z.boolean(),
  approximate: z.boolean(),
  overlap: z.enum(OVERLAP_POLICIES),
  jitter: jitterSchema,
  prompt: z.string(),
  options: runDefaults,
  status: z.enum(['active', 'paused', 'missed']),
  created_by: z.string(),
  created_at: time,
  expires_at: time.nullable(),
  next_fire_at: time.nullable(),
  next_fire_jittered_at: time.nullable(),
  next_fire_final: z.boolean().nullable(),
  /** The next 3 nominal fire times (fewer when the job ends sooner). */
  next_fire_times: z.array(time),
  pending_slot_at: time.nullable(),
  pending_coalesced: z.number(),
  /** buffer_all: the slots waiting behind pending_slot_at, oldest first. */
  buffered_slots: z.array(time),
  last_slot_at: time.nullable(),
  fire_count: z.number(),
  trigger_id: z.string().nullable(),
  renewals: z.number(),
  renewed_at: time.nullable(),
  renewed_by: z.string().nullable(),
  renew: z.string().nullable().describe('how to keep a recurring job past its expiry; null when it has none'),
});
export type JobJson = z.infer<typeof jobSchema>;

export const jobListSchema = listOf(jobSchema);

/**
 * GET /v1/jobs: every session's jobs and every scheduled trigger's job, in the order they were made
 * (created_at, then id), in pages; each filter given narrows the list.
 */
export const listJobsQuery = z.strictObject({
  session_id: z.string().max(100).optional().describe("only this session's jobs"),
  trigger_id: z.string().max(100).optional().describe("only this scheduled trigger's job"),
  enabled: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .describe(
      "true: jobs that fire as things stand (status active, and a scheduled trigger's job only while its trigger is enabled); false: the others (paused, missed, or of a disabled trigger)",
    ),
  expiring_before: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('only jobs that expire before this time (ISO-8601); jobs that never expire are left out'),
  limit,
  cursor,
});

export const jobPageSchema = pageOf(jobSchema);

export const slotSchema = z.strictObject({
  slot_at: time,
  last_slot_at: time,
  slots: z.number(),
  outcome: z.enum(SLOT_OUTCOMES),
  run_id: z.string().nullable(),
  recorded_at: time,
});
export type SlotJson = z.infer<typeof slotSchema>;

export const slotListSchema = listOf(slotSchema);
