import { z } from 'zod';
import { EXECUTE_MODES, RUN_STATUSES, RUN_WAITS } from '../../domain/types.js';
import { cursor, limit, pageOf, runSourceSchema, time, usage } from './common.js';

// /v1/runs: plan and execute runs, what they wait for, their results and event logs.

export const listRunsQuery = z.strictObject({
  session_id: z.string().max(100).optional(),
  job_id: z.string().max(100).optional(),
  status: z.enum(RUN_STATUSES).optional(),
  limit,
  cursor,
});

/** GET /v1/runs/:id/events: replay after this sequence number (Last-Event-ID wins when both are given). */
export const eventsQuery = z.strictObject({ after: z.coerce.number().int().min(0).optional() });

export const runSchema = z.strictObject({
  id: z.string(),
  session_id: z.string(),
  job_id: z.string().nullable(),
  slot_at: time.nullable(),
  source: runSourceSchema,
  phase: z.enum(['plan', 'execute']),
  status: z.enum(RUN_STATUSES),
  prompt: z.string(),
  requested_by: z.string(),
  coalesced_slots: z.number(),
  created_at: time,
  started_at: time.nullable(),
  finished_at: time.nullable(),
  error: z.string().nullable(),
  model: z.string().nullable(),
  turns: z.number(),
  usage,
  cost_usd: z.number(),
  plan_id: z.string().nullable(),
  attempt: z.number(),
  duration_ms: z.number().nullable().describe('from the first start to the end'),
  active_ms: z.number().describe('of it, executing'),
  waiting_ms: z.number().nullable().describe('of it, waiting for people or parked'),
  revises_plan_id: z.string().nullable(),
  executes_plan_id: z.string().nullable(),
  execute_mode: z.enum(EXECUTE_MODES).nullable(),
  result_commit: z.string().nullable(),
  diff_stat: z.string().nullable(),
  changed_files: z.array(z.string()).nullable(),
  waiting: z
    .strictObject({ on: z.enum(RUN_WAITS), until: time })
    .nullable()
    .describe(
      'awaiting_input on the account (spend_limit) or a spend cap (spend_cap) until an admin resumes it, or until this time',
    ),
});
export type RunJson = z.infer<typeof runSchema>;

export const runListSchema = pageOf(runSchema);

/** What a run that has not ended waits for. */
export const waitingOnSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('question'), id: z.string(), detail: z.string() }),
  z.strictObject({ kind: z.literal('tool_approval'), id: z.string(), detail: z.string() }),
  z.strictObject({ kind: z.literal('spend_limit'), until: time, detail: z.string() }),
  z.strictObject({ kind: z.literal('spend_cap'), until: time, detail: z.string() }),
  z.strictObject({ kind: z.literal('session'), run_id: z.string(), detail: z.string() }),
  z.strictObject({ kind: z.literal('concurrency'), limit: z.number(), detail: z.string() }),
  z.strictObject({ kind: z.literal('queue'), detail: z.string() }),
]);

/** POST /v1/runs/resume: the runs that waited on the spend limit or a spend cap and are queued again. */
export const resumedRunsSchema = z.strictObject({ resumed: z.array(runSchema) });

/** GET /v1/runs/:id: the run and what it waits for (null once it ended or while it runs). */
export const runDetailSchema = runSchema.extend({ waiting_on: waitingOnSchema.nullable() });
export type RunDetailJson = z.infer<typeof runDetailSchema>;

export const DIFF_STATES = ['ready', 'no_changes', 'pending', 'not_git', 'unavailable'] as const;

/** GET /v1/runs/:id/diff: an execute run's result as a unified diff; `state` says why there is none. */
export const diffSchema = z.strictObject({
  run_id: z.string(),
  plan_id: z.string().nullable(),
  state: z.enum(DIFF_STATES),
  reason: z.string().nullable(),
  branch: z.string().nullable(),
  base_commit: z.string().nullable(),
  commit: z.string().nullable(),
  files: z.array(
    z.strictObject({
      path: z.string(),
      old_path: z.string().nullable(),
      additions: z.number().nullable(),
      deletions: z.number().nullable(),
      binary: z.boolean(),
    }),
  ),
  shown_files: z.number(),
  truncated: z.string().nullable().describe('why the text was cut, when it was'),
  diff: z.string().nullable(),
});
export type DiffJson = z.infer<typeof diffSchema>;
