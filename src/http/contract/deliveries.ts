import { z } from 'zod';
import { WEBHOOK_OUTCOMES } from '../../domain/types.js';
import { limit, time } from './common.js';

// /v1/deliveries: webhook deliveries and fires, and what became of them.

export const webhookDeliveryListQuery = z.strictObject({
  outcome: z.enum(WEBHOOK_OUTCOMES).optional(),
  trigger_id: z.string().max(100).optional(),
  /** A delivery id: the page continues with older ones. */
  before: z.string().max(100).optional(),
  limit,
});

export const webhookDeliverySchema = z.strictObject({
  id: z.string(),
  source: z.enum(['github', 'fire']),
  key: z.string(),
  event: z.string(),
  trigger_id: z
    .string()
    .nullable()
    .describe(
      'a fire: the trigger it was sent to; a GitHub delivery: the trigger it fired when it fired exactly one, else null (see trigger_ids)',
    ),
  trigger_ids: z
    .array(z.string())
    .describe(
      'the triggers that started a run for it (those of run_ids), in order; a GitHub delivery can fire several',
    ),
  outcome: z.enum(WEBHOOK_OUTCOMES),
  detail: z.string().nullable(),
  subject: z.string().nullable(),
  run_ids: z.array(z.string()),
  received_at: time,
  processed_at: time.nullable(),
});
export type WebhookDeliveryJson = z.infer<typeof webhookDeliverySchema>;

export const webhookDeliveryListSchema = z.strictObject({
  items: z.array(webhookDeliverySchema),
  next_before: z.string().nullable().describe('pass as ?before= for the next (older) page'),
});
