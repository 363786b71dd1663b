import { z } from 'zod';
import { NOTIFICATION_EVENTS } from '../../domain/notifications.js';
import { NOTIFICATION_STATUSES } from '../../domain/types.js';
import { cursor, limit, pageOf, time } from './common.js';

// /v1/notifications: the outbound notifications outbox.

export const notificationListQuery = z.strictObject({
  status: z.enum(NOTIFICATION_STATUSES).optional(),
  event: z.enum(NOTIFICATION_EVENTS).optional(),
  limit,
  cursor,
});

export const notificationSchema = z.strictObject({
  id: z.string(),
  event: z.enum(NOTIFICATION_EVENTS),
  status: z.enum(NOTIFICATION_STATUSES),
  attempts: z.number(),
  max_attempts: z.number(),
  last_error: z.string().nullable(),
  next_attempt_at: time.nullable(),
  delivered_at: time.nullable(),
  created_at: time,
  /** Never the configured URL itself: it may be a credential. */
  webhook: z.strictObject({ id: z.string(), url: z.string() }),
  run_id: z.string().nullable().describe('null: not about a run (limit.reached)'),
  plan_id: z.string().nullable(),
  data: z.record(z.string(), z.unknown()).describe('what was announced (title, links, ids)'),
});
export type NotificationJson = z.infer<typeof notificationSchema>;

export const notificationListSchema = pageOf(notificationSchema);
