import { Hono } from 'hono';
import type { Notification } from '../../domain/types.js';
import { requires } from '../auth.js';
import { query } from '../body.js';
import { notificationListQuery } from '../contract/index.js';
import type { AppDeps, Env } from '../deps.js';
import { iso } from '../present.js';

/** A notification as the API shows it: what it announced, to which receiver, and how sending it went. */
export function presentNotification(n: Notification, maxAttempts: number) {
  return {
    id: n.id,
    event: n.event,
    status: n.status,
    attempts: n.attempts,
    max_attempts: maxAttempts,
    last_error: n.lastError,
    next_attempt_at: n.status === 'pending' ? iso(n.nextAttemptAt) : null,
    delivered_at: iso(n.deliveredAt),
    created_at: iso(n.createdAt),
    // Never the configured URL itself: it may be a credential (see src/notify/webhooks.ts shownUrl).
    webhook: { id: n.webhook, url: n.webhookUrl },
    run_id: n.runId,
    plan_id: n.planId,
    data: n.data,
  };
}

/**
 * The outbound notifications outbox, newest first: for approvers and admins to see what was announced
 * and whether it arrived (the receiver's HTTP status or network error of the last failed attempt).
 */
export function notificationRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();

  app.get('/', requires('decide'), async (c) => {
    const q = query(c, notificationListQuery);
    const page = await deps.store.listNotifications({
      status: q.status,
      event: q.event,
      limit: q.limit,
      cursor: q.cursor,
    });
    const max = deps.config.notifications.max_attempts;
    return c.json({
      items: page.items.map((n) => presentNotification(n, max)),
      next_cursor: page.nextCursor,
    });
  });

  return app;
}
