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
import type { SqliteDb } from './db.js';
import { planRow } from './plans.js';

// Delivering executed plans (src/delivery/): the delivery columns of `plans` (migration 000012). The
// notification outbox (src/notify/): the `notifications` table (migration 000013) and the notifier's cursor.
// The statements both backends share: sql/outbox.ts.

export class SqliteOutbox implements OutboxStore {
  constructor(
    private readonly db: SqliteDb,
    /** What a plan made before network lists, with the network allowed, reads as (rows.ts, toPlan). */
    private readonly legacyNetwork: readonly string[] = DEFAULT_NETWORK_DOMAINS,
  ) {}

  // ---- delivering executed plans

  async listUndecidedPlanDeliveries(limit: number): Promise<Plan[]> {
    const rows = this.db.sql(sql.UNDECIDED_PLAN_DELIVERIES).all(limit) as PlanRow[];
    return rows.map((r) => toPlan(r, this.legacyNetwork));
  }

  async duePlanDeliveries(now: number, limit: number): Promise<string[]> {
    const { text, values } = sql.duePlanDeliveriesStatement(now, limit);
    return this.db.pluck(text).all(...values) as string[];
  }

  /** The earliest time something is due: a pending delivery, or a held one whose holder may have died. */
  async nextPlanDeliveryAt(): Promise<number | null> {
    const v = this.db
      .pluck(
        `SELECT MIN(MAX(delivery_next_at, COALESCE(delivery_claimed_until, 0))) FROM plans
         WHERE delivery_status IN ('pending', 'retrying')`,
      )
      .get() as number | null;
    return v ?? null;
  }

  async claimPlanDelivery(planId: string, now: number, until: number, holder: string): Promise<Plan | null> {
    return this.db.write(() => {
      const taken = this.db
        .sql(
          `UPDATE plans SET delivery_claimed_until = ?, delivery_claimed_by = ?,
                            delivery_attempts = delivery_attempts + 1
           WHERE id = ? AND ${sql.DELIVERY_DUE}`,
        )
        .run(until, holder, planId, now, now).changes;
      if (taken !== 1) return null;
      return toPlan(planRow(this.db, planId)!, this.legacyNetwork);
    });
  }

  async releasePlanDeliveryClaims(holder: string): Promise<number> {
    return this.db.sql(sql.RELEASE_DELIVERY_CLAIMS).run(holder).changes;
  }

  async updatePlanDelivery(
    planId: string,
    from: readonly (PlanDeliveryStatus | null)[],
    patch: PlanDeliveryPatch,
  ): Promise<boolean> {
    const update = sql.updatePlanDeliveryStatement(planId, from, patch);
    return update !== null && this.db.sql(update.text).run(...update.values).changes === 1;
  }

  // ---- the notification outbox

  async notificationCursor(): Promise<number | null> {
    const { text, values } = sql.NOTIFICATION_CURSOR;
    const value = this.db.pluck(text).get(...values) as string | undefined;
    return value === undefined ? null : Number(value);
  }

  async enqueueNotifications(rows: NewNotification[], cursor: number): Promise<number> {
    return this.db.write(() => {
      let added = 0;
      for (const n of rows) {
        added += this.db
          .sql(
            `INSERT INTO notifications (id, event_rowid, webhook, webhook_url, event, run_id, plan_id, data, body,
                                        status, attempts, next_attempt_at, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)
             ON CONFLICT (event_rowid, webhook) DO NOTHING`,
          )
          .run(
            n.id,
            n.eventRowid,
            n.webhook,
            n.webhookUrl,
            n.event,
            n.runId,
            n.planId,
            JSON.stringify(n.data),
            n.body,
            n.nextAttemptAt,
            n.createdAt,
          ).changes;
      }
      const advance = sql.advanceCursorStatement(cursor);
      this.db.sql(advance.text).run(...advance.values);
      return added;
    });
  }

  async claimNotifications(now: number, holdUntil: number, limit: number): Promise<Notification[]> {
    return this.db.write(() => {
      const rows = this.db
        .sql(
          `UPDATE notifications SET attempts = attempts + 1, next_attempt_at = ?
           WHERE id IN (SELECT id FROM notifications WHERE status = 'pending' AND next_attempt_at <= ?
                        ORDER BY next_attempt_at, created_at LIMIT ?)
           RETURNING *`,
        )
        .all(holdUntil, now, limit) as NotificationRow[];
      return rows.map(toNotification).sort(notificationOrder);
    });
  }

  async settleNotification(id: string, outcome: NotificationOutcome): Promise<void> {
    const { text, values } = sql.settleNotificationStatement(id, outcome);
    this.db.sql(text).run(...values);
  }

  async nextNotificationDue(): Promise<number | null> {
    return (this.db.pluck(sql.NEXT_NOTIFICATION_DUE).get() as number | null) ?? null;
  }

  async listNotifications(f: Parameters<OutboxStore['listNotifications']>[0]): Promise<Page<Notification>> {
    const { text, values } = sql.listNotificationsStatement(f);
    return page((this.db.sql(text).all(...values) as NotificationRow[]).map(toNotification), f.limit);
  }

  async countNotifications(): Promise<Record<NotificationStatus, number>> {
    return sql.notificationCounts(
      this.db.sql(sql.COUNT_NOTIFICATIONS).all() as { status: NotificationStatus; n: number }[],
    );
  }
}
