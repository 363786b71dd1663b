import { z } from 'zod';
import { thinkingOptionSchema } from '../config/schema.js';
import { EFFORTS, EXECUTE_MODES, RUN_STATUSES } from '../domain/types.js';
import { fromLegacyThinking } from '../models/catalogue.js';

// The API contract: request schemas validate input; the serializers in present.ts produce the responses.

/** The shape before thinking became off | adaptive | {budget_tokens}: still accepted, stored in the new one. */
const legacyThinkingSchema = z
  .strictObject({ enabled: z.boolean(), budget_tokens: z.int().min(1024).max(128_000).optional() })
  .transform(fromLegacyThinking);

export const runDefaultsSchema = z.strictObject({
  model: z.string().min(1).max(200).optional(),
  thinking: z.union([thinkingOptionSchema, legacyThinkingSchema]).optional(),
  effort: z.enum(EFFORTS).optional(),
  budget_usd: z.number().positive().max(10_000).optional(),
  max_turns: z.int().min(1).max(500).optional(),
  approvals_required: z.int().min(1).max(10).optional(),
  allow_self_approval: z.boolean().optional(),
  execute_mode: z.enum(EXECUTE_MODES).optional(),
  network: z.boolean().optional(),
  deliver: z.boolean().optional(),
});

export const createSessionSchema = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  workspace: z.string().min(1).max(4096),
  defaults: runDefaultsSchema.optional(),
});

export const createJobSchema = z.strictObject({
  cron: z.string().min(1).max(200),
  timezone: z.string().min(1).max(100).optional(),
  prompt: z.string().min(1).max(65_536),
  recurring: z.boolean().default(true),
  approximate: z.boolean().default(false),
  options: runDefaultsSchema.optional(),
});

const limit = z.coerce.number().int().min(1).max(200).default(50);

export const listSessionsQuery = z.strictObject({
  status: z.enum(['open', 'closed']).optional(),
  limit,
  cursor: z.string().max(500).optional(),
});

export const listRunsQuery = z.strictObject({
  session_id: z.string().max(100).optional(),
  job_id: z.string().max(100).optional(),
  status: z.enum(RUN_STATUSES).optional(),
  limit,
  cursor: z.string().max(500).optional(),
});
