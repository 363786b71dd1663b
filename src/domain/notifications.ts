// What outbound notifications announce (config `notifications.webhooks[].events`, the outbox, the API).

export const NOTIFICATION_EVENTS = [
  'plan.pending',
  'question.pending',
  'tool_approval.pending',
  'plan.executed',
  'plan.execution_failed',
  'delivery.failed',
  'limit.reached',
  'plan.approved',
  'plan.rejected',
  'delivery.succeeded',
] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];
