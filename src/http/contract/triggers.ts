import { z } from 'zod';
import { OVERLAP_POLICIES, TRIGGER_KINDS, WEBHOOK_OUTCOMES } from '../../domain/types.js';
import { limit, limitsSchema, listOf, runDefaults, runDefaultsSchema, time } from './common.js';
import { jitterInputSchema, jitterSchema, overlapSchema } from './jobs.js';
import { runSchema } from './runs.js';

// /v1/triggers: GitHub, generic (fired with a token) and scheduled triggers, their deliveries, and the fire.

// Which events and actions drydock handles, and which filter fits which event, is checked by the trigger
// administration (src/triggers/match.ts `triggerMisfit`), which says what would fit; the shape is checked here.
const EVENT = /^[a-z_]{1,64}(\.[a-z_]{1,64})?$/;

/** GitHub's conclusions of a check suite or workflow run (https://docs.github.com/rest/checks/suites). */
export const CONCLUSIONS = [
  'success',
  'failure',
  'neutral',
  'cancelled',
  'skipped',
  'timed_out',
  'action_required',
  'stale',
  'startup_failure',
] as const;
/** GitHub's states of a deployment status (https://docs.github.com/rest/deployments/statuses). */
export const DEPLOYMENT_STATES = [
  'error',
  'failure',
  'inactive',
  'pending',
  'success',
  'queued',
  'in_progress',
] as const;

const filtersInput = z.strictObject({
  repositories: z
    .array(z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'expected owner/repo'))
    .max(100)
    .optional(),
  base_branches: z.array(z.string().min(1).max(255)).max(100).optional(),
  labels: z.array(z.string().min(1).max(100)).max(100).optional(),
  authors: z.array(z.string().min(1).max(100)).max(1000).optional(),
  draft: z.boolean().optional(),
  merged: z.boolean().optional(),
  branches: z.array(z.string().min(1).max(255)).max(100).optional(),
  environments: z.array(z.string().min(1).max(255)).max(100).optional(),
  conclusions: z.array(z.enum(CONCLUSIONS)).max(CONCLUSIONS.length).optional(),
  states: z.array(z.enum(DEPLOYMENT_STATES)).max(DEPLOYMENT_STATES.length).optional(),
});

const triggerFields = {
  name: z.string().trim().min(1).max(200),
  events: z
    .array(
      z
        .string()
        .regex(EVENT, 'expected <event> or <event>.<action>, e.g. pull_request.opened, issues.labeled, push'),
    )
    .max(20),
  filters: filtersInput,
  prompt: z.string().min(1).max(65_536),
  workspace: z.string().min(1).max(4096),
  options: runDefaultsSchema,
  hourly_cap: z.int().min(1).max(10_000),
  limits: limitsSchema,
  enabled: z.boolean(),
  // schedule
  cron: z.string().min(1).max(200),
  timezone: z.string().min(1).max(100),
  approximate: z.boolean(),
  overlap: overlapSchema,
  jitter: jitterInputSchema,
};

export const createTriggerSchema = z.strictObject({
  kind: z.enum(TRIGGER_KINDS),
  name: triggerFields.name,
  events: triggerFields.events.optional(),
  filters: triggerFields.filters.optional(),
  prompt: triggerFields.prompt,
  workspace: triggerFields.workspace.optional(),
  options: triggerFields.options.optional(),
  hourly_cap: triggerFields.hourly_cap.optional(),
  limits: triggerFields.limits.optional(),
  enabled: triggerFields.enabled.optional(),
  cron: triggerFields.cron.optional(),
  timezone: triggerFields.timezone.optional(),
  approximate: triggerFields.approximate.optional(),
  overlap: triggerFields.overlap.optional(),
  jitter: triggerFields.jitter.optional(),
});

export const patchTriggerSchema = z.strictObject({
  name: triggerFields.name.optional(),
  events: triggerFields.events.optional(),
  filters: triggerFields.filters.optional(),
  prompt: triggerFields.prompt.optional(),
  workspace: triggerFields.workspace.optional(),
  options: triggerFields.options.optional(),
  hourly_cap: triggerFields.hourly_cap.optional(),
  limits: triggerFields.limits.optional(),
  enabled: triggerFields.enabled.optional(),
  rotate_token: z.boolean().optional(),
  cron: triggerFields.cron.optional(),
  timezone: triggerFields.timezone.optional(),
  approximate: triggerFields.approximate.optional(),
  overlap: triggerFields.overlap.optional(),
  jitter: triggerFields.jitter.optional(),
});

export const fireSchema = z.strictObject({
  idempotency_key: z.string().min(1).max(200).optional(),
  text: z.string().optional(),
});

/** The largest `text` a fire may carry: it reaches the model as untrusted data. */
export const FIRE_TEXT_LIMIT = 65_536;

/** GET /v1/triggers/:id/deliveries */
export const triggerDeliveriesQuery = z.strictObject({ limit });

/** Filters as the API shows them. */
export const filtersSchema = z.strictObject({
  repositories: z.array(z.string()).optional(),
  base_branches: z.array(z.string()).optional(),
  labels: z.array(z.string()).optional(),
  authors: z.array(z.string()).optional(),
  draft: z.boolean().optional(),
  merged: z.boolean().optional(),
  branches: z.array(z.string()).optional(),
  environments: z.array(z.string()).optional(),
  conclusions: z.array(z.string()).optional(),
  states: z.array(z.string()).optional(),
});

export type FiltersJson = z.infer<typeof filtersSchema>;

/** A scheduled trigger's schedule, from the job it fires through (null if that job is gone). */
export const triggerScheduleSchema = z.strictObject({
  cron: z.string(),
  timezone: z.string(),
  approximate: z.boolean(),
  overlap: z.enum(OVERLAP_POLICIES),
  jitter: jitterSchema,
  job_id: z.string(),
  session_id: z.string(),
  status: z.enum(['active', 'paused', 'missed']),
  next_fire_at: time.nullable(),
  next_fire_jittered_at: time.nullable(),
  next_fire_times: z.array(time),
  last_slot_at: time.nullable(),
  fire_count: z.number(),
});

/** Where a trigger's hourly cap comes from (`hourly_cap_from`). */
export const HOURLY_CAP_FROM = ['trigger', 'default', 'none'] as const;

export const triggerSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  kind: z.enum(TRIGGER_KINDS),
  events: z.array(z.string()),
  filters: filtersSchema,
  prompt: z.string(),
  workspace: z.string().nullable(),
  options: runDefaults,
  hourly_cap: z.number(),
  hourly_cap_from: z
    .enum(HOURLY_CAP_FROM)
    .describe(
      'where the cap in effect comes from. trigger: set on the trigger; default: it equals github.trigger_hourly_cap, the cap a github or generic trigger created without hourly_cap gets; none: a schedule trigger, which fires on its cron and has no hourly cap (hourly_cap does not apply)',
    ),
  limits: limitsSchema,
  enabled: z.boolean(),
  created_by: z.string(),
  created_at: time,
  updated_at: time,
  /** Scheduled triggers only. */
  schedule: triggerScheduleSchema.nullable().optional(),
});
export type TriggerJson = z.infer<typeof triggerSchema>;

/** POST and PATCH: a generic trigger's token, shown this once (on creation, or when rotated). */
export const triggerWithTokenSchema = triggerSchema.extend({ token: z.string().optional() });
export type TriggerWithTokenJson = z.infer<typeof triggerWithTokenSchema>;

export const triggerListSchema = listOf(triggerSchema);

/** What one trigger made of a delivery, beside the delivery's overall outcome. */
export const triggerDeliverySchema = z.strictObject({
  id: z.string(),
  source: z.enum(['github', 'fire']),
  event: z.string(),
  outcome: z.enum(['accepted', 'filtered', 'capped']),
  run_id: z.string().nullable(),
  delivery_outcome: z.enum(WEBHOOK_OUTCOMES),
  detail: z.string().nullable(),
  subject: z.string().nullable(),
  received_at: time,
});
export type TriggerDeliveryJson = z.infer<typeof triggerDeliverySchema>;

export const triggerDeliveryListSchema = listOf(triggerDeliverySchema);

/** POST /v1/triggers/:id/fire: 201 with the run it started, 200 for a repeated idempotency key. */
export const fireResultSchema = z.strictObject({
  delivery_id: z.string(),
  duplicate: z.boolean(),
  run: runSchema.nullable(),
});
export type FireResultJson = z.infer<typeof fireResultSchema>;
