import { DEFAULT_NETWORK_DOMAINS } from '../../domain/network.js';
import type {
  NewNotification,
  Notification,
  NotificationOutcome,
  NotificationStatus,
  Page,
  Plan,
  PlanDeliveryStatus,
} from '../../domain/types.js';
import type { OutboxStore, PlanDeliveryPatch } from '../outbox.js';
import { page } from '../paging.js';
import { type NotificationRow, notificationOrder, type PlanRow, toNotification, toPlan } from '../rows.js';
import * as sql from '../sql/outbox.js';
import { APPROVALS } from '../sql/plans.js';
import type { PgDb } from './db.js';

/**
 * What goes out: executed plans delivered (pushed, a pull request opened; src/delivery/) and notifications
 * posted (src/notify/). Workers on several replicas claim with FOR UPDATE SKIP LOCKED: a row one worker is
 * claiming is left to it by the others, never waited for, and never claimed twice.
 */
export class PgOutbox implements OutboxStore {
  constructor(
    private readonly db: PgDb,
    /** What a plan made before network lists, with the network allowed, reads as (rows.ts, toPlan). */
    private readonly legacyNetwork: readonly string[] = DEFAULT_NETWORK_DOMAINS,
  ) {}

  // ---- delivering executed plans

  async listUndecidedPlanDeliveries(limit: number): Promise<Plan[]> {
    const rows = await this.db.rows<PlanRow>(sql.UNDECIDED_PLAN_DELIVERIES, [limit]);
    return rows.map((r) => toPlan(r, this.legacyNetwork));
  }

  async duePlanDeliveries(now: number, limit: number): Promise<string[]> {
    const { text, values } = sql.duePlanDeliveriesStatement(now, limit);
    return (await this.db.rows<{ id: string }>(text, values)).map((r) => r.id);
  }

  async nextPlanDeliveryAt(): Promise<number | null> {
    // The earliest time something is due: a pending delivery, or a held one whose holder may have died. A
    // delivery without a due time is never due (SQLite's max() of a NULL is NULL; GREATEST would skip it).
    return (
      (await this.db.value<number | null>(
        `SELECT MIN(CASE WHEN delivery_next_at IS NULL THEN NULL
                         ELSE GREATEST(delivery_next_at, COALESCE(delivery_claimed_until, 0)) END)
         FROM plans WHERE delivery_status IN ('pending', 'retrying')`,
      )) ?? null
    );
  }

  async claimPlanDelivery(planId: string, now: number, until: number, holder: string): Promise<Plan | null> {
    const row = await this.db.row<PlanRow>(
      `UPDATE plans SET delivery_claimed_until = ?, delivery_claimed_by = ?,
                        delivery_attempts = delivery_attempts + 1
       WHERE id = (SELECT id FROM plans WHERE id = ? AND ${sql.DELIVERY_DUE} FOR UPDATE SKIP LOCKED)
       RETURNING plans.*, ${APPROVALS}`,
      [until, holder, planId, now, now],
    );
    return row ? toPlan(row, this.legacyNetwork) : null;
  }

  async releasePlanDeliveryClaims(holder: string): Promise<number> {
    return this.db.exec(sql.RELEASE_DELIVERY_CLAIMS, [holder]);
  }

  async updatePlanDelivery(
    planId: string,
    from: readonly (PlanDeliveryStatus | null)[],
    patch: PlanDeliveryPatch,
  ): Promise<boolean> {
    const update = sql.updatePlanDeliveryStatement(planId, from, patch);
    return update !== null && (await this.db.exec(update.text, update.values)) === 1;
  }

  // ---- the notification outbox

  async notificationCursor(): Promise<number | null> {
    const { text, values } = sql.NOTIFICATION_CURSOR;
    const value = await this.db.value<string>(text, values);
    return value === undefined ? null : Number(value);
  }

  async enqueueNotifications(rows: NewNotification[], cursor: number): Promise<number> {
    return this.db.tx(async (q) => {
      let added = 0;
      if (rows.length) {
        added = await q.exec(
          `INSERT INTO notifications (id, event_rowid, webhook, webhook_url, event, run_id, plan_id, data, body,
                                      status, attempts, next_attempt_at, created_at)
           SELECT id, event_rowid, webhook, webhook_url, event, run_id, plan_id, data, body, 'pending', 0,
                  next_attempt_at, created_at
           FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                       $8::json[], $9::text[], $10::bigint[], $11::bigint[])
             AS n (id, event_rowid, webhook, webhook_url, event, run_id, plan_id, data, body, next_attempt_at,
                   created_at)
           ON CONFLICT (event_rowid, webhook) DO NOTHING`,
          [
            rows.map((n) => n.id),
            rows.map((n) => n.eventRowid),
            rows.map((n) => n.webhook),
            rows.map((n) => n.webhookUrl),
            rows.map((n) => n.event),
            rows.map((n) => n.runId),
            rows.map((n) => n.planId),
            rows.map((n) => JSON.stringify(n.data)),
            rows.map((n) => n.body),
            rows.map((n) => n.nextAttemptAt),
            rows.map((n) => n.createdAt),
          ],
        );
      }
      // Forward only: another replica's notifier may have gone further already.
      const advance = sql.advanceCursorStatement(cursor);
      await q.exec(advance.text, advance.values);
      return added;
    });
  }

  async claimNotifications(now: number, holdUntil: number, limit: number): Promise<Notification[]> {
    const rows = await this.db.rows<NotificationRow>(
      // The due rows are picked once (a materialized CTE), locked as picked; rows another replica is
      // claiming are skipped.
      `WITH due AS MATERIALIZED (
         SELECT id FROM notifications WHERE status = 'pending' AND next_attempt_at <= $1
         ORDER BY next_attempt_at, created_at LIMIT $3 FOR UPDATE SKIP LOCKED)
       UPDATE notifications n SET attempts = n.attempts + 1, next_attempt_at = $2
       FROM due WHERE n.id = due.id
       RETURNING n.*`,
      [now, holdUntil, limit],
    );
    return rows.map(toNotification).sort(notificationOrder);
  }

  async settleNotification(id: string, outcome: NotificationOutcome): Promise<void> {
    const { text, values } = sql.settleNotificationStatement(id, outcome);
    await this.db.exec(text, values);
  }

  async nextNotificationDue(): Promise<number | null> {
    return (await this.db.value<number | null>(sql.NEXT_NOTIFICATION_DUE)) ?? null;
  }

  async listNotifications(f: Parameters<OutboxStore['listNotifications']>[0]): Promise<Page<Notification>> {
    const { text, values } = sql.listNotificationsStatement(f);
    return page((await this.db.rows<NotificationRow>(text, values)).map(toNotification), f.limit);
  }

  async countNotifications(): Promise<Record<NotificationStatus, number>> {
    return sql.notificationCounts(
      await this.db.rows<{ status: NotificationStatus; n: number }>(sql.COUNT_NOTIFICATIONS),
    );
  }
}
