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
import type { DeliveryStore, PlanDeliveryPatch } from '../deliveries.js';
import { page } from '../paging.js';
import {
  type NotificationRow,
  PLAN_DELIVERY_COLUMNS,
  type PlanRow,
  toNotification,
  toPlan,
} from '../rows.js';
import { APPROVALS } from '../sql/plans.js';
import { addCursor, equalities, type SqliteDb, whereSql } from './db.js';
import { planRow } from './plans.js';

// Delivering executed plans (src/delivery/): the delivery columns of `plans` (migration 000012). The
// notification outbox (src/notify/): the `notifications` table (migration 000013) and the notifier's cursor.

/** Where the notifier is in the event log (a key of scheduler_state). */
const CURSOR_KEY = 'notifications.cursor';

export class SqliteDeliveries implements DeliveryStore {
  constructor(
    private readonly db: SqliteDb,
    /** What a plan made before network lists, with the network allowed, reads as (rows.ts, toPlan). */
    private readonly legacyNetwork: readonly string[] = DEFAULT_NETWORK_DOMAINS,
  ) {}

  // ---- delivering executed plans

  async listUndecidedPlanDeliveries(limit: number): Promise<Plan[]> {
    const rows = this.db
      .sql(
        `SELECT plans.*, ${APPROVALS} FROM plans WHERE status = 'executed' AND delivery_status IS NULL
         ORDER BY created_at, id LIMIT ?`,
      )
      .all(limit) as PlanRow[];
    return rows.map((r) => toPlan(r, this.legacyNetwork));
  }

  async duePlanDeliveries(now: number, limit: number): Promise<string[]> {
    return this.db
      .pluck(
        `SELECT id FROM plans WHERE delivery_status IN ('pending', 'retrying') AND delivery_next_at <= ?
           AND (delivery_claimed_until IS NULL OR delivery_claimed_until <= ?)
         ORDER BY delivery_next_at, id LIMIT ?`,
      )
      .all(now, now, limit) as string[];
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

  async claimPlanDelivery(planId: string, now: number, until: number): Promise<Plan | null> {
    return this.db.write(() => {
      const taken = this.db
        .sql(
          `UPDATE plans SET delivery_claimed_until = ?, delivery_attempts = delivery_attempts + 1
           WHERE id = ? AND delivery_status IN ('pending', 'retrying') AND delivery_next_at <= ?
             AND (delivery_claimed_until IS NULL OR delivery_claimed_until <= ?)`,
        )
        .run(until, planId, now, now).changes;
      if (taken !== 1) return null;
      return toPlan(planRow(this.db, planId)!, this.legacyNetwork);
    });
  }

  async updatePlanDelivery(
    planId: string,
    from: readonly (PlanDeliveryStatus | null)[],
    patch: PlanDeliveryPatch,
  ): Promise<boolean> {
    const keys = (Object.keys(patch) as (keyof PlanDeliveryPatch)[]).filter((k) => patch[k] !== undefined);
    if (!keys.length) return false;
    const set = keys.map((k) => `${PLAN_DELIVERY_COLUMNS[k]} = ?`).join(', ');
    const statuses = from.filter((s): s is PlanDeliveryStatus => s !== null);
    const conditions = [
      ...(statuses.length ? [`delivery_status IN (${statuses.map(() => '?').join(', ')})`] : []),
      ...(from.includes(null) ? ['delivery_status IS NULL'] : []),
    ];
    if (!conditions.length) return false;
    return (
      this.db
        .sql(`UPDATE plans SET ${set} WHERE id = ? AND (${conditions.join(' OR ')})`)
        .run(...keys.map((k) => patch[k] as string | number | null), planId, ...statuses).changes === 1
    );
  }

  // ---- the notification outbox

  async notificationCursor(): Promise<number | null> {
    const value = this.db.pluck('SELECT value FROM scheduler_state WHERE key = ?').get(CURSOR_KEY) as
      | string
      | undefined;
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
      // Forward only: a second daemon on the file may have gone further already.
      this.db
        .sql(
          `INSERT INTO scheduler_state (key, value) VALUES (?, ?)
           ON CONFLICT (key) DO UPDATE SET value = excluded.value
           WHERE CAST(scheduler_state.value AS INTEGER) < CAST(excluded.value AS INTEGER)`,
        )
        .run(CURSOR_KEY, String(cursor));
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
      return rows.map(toNotification).sort((a, b) => a.eventRowid - b.eventRowid);
    });
  }

  async settleNotification(id: string, outcome: NotificationOutcome): Promise<void> {
    switch (outcome.status) {
      case 'delivered':
        this.db
          .sql(
            `UPDATE notifications SET status = 'delivered', delivered_at = ?, next_attempt_at = NULL
             WHERE id = ? AND status = 'pending'`,
          )
          .run(outcome.at, id);
        return;
      case 'pending':
        this.db
          .sql(
            `UPDATE notifications SET next_attempt_at = ?, last_error = ? WHERE id = ? AND status = 'pending'`,
          )
          .run(outcome.nextAttemptAt, outcome.error, id);
        return;
      case 'failed':
        this.db
          .sql(
            `UPDATE notifications SET status = 'failed', last_error = ?, next_attempt_at = NULL
             WHERE id = ? AND status = 'pending'`,
          )
          .run(outcome.error, id);
        return;
    }
  }

  async nextNotificationDue(): Promise<number | null> {
    return (
      (this.db.pluck(`SELECT MIN(next_attempt_at) FROM notifications WHERE status = 'pending'`).get() as
        | number
        | null) ?? null
    );
  }

  async listNotifications(f: {
    status?: NotificationStatus | undefined;
    event?: string | undefined;
    limit: number;
    cursor?: string | undefined;
  }): Promise<Page<Notification>> {
    const { where, args } = equalities([
      ['status', f.status || undefined],
      ['event', f.event || undefined],
    ]);
    addCursor(f.cursor, where, args, 'desc');
    const rows = this.db
      .sql(`SELECT * FROM notifications ${whereSql(where)} ORDER BY created_at DESC, id DESC LIMIT ?`)
      .all(...args, f.limit + 1) as NotificationRow[];
    return page(rows.map(toNotification), f.limit);
  }

  async countNotifications(): Promise<Record<NotificationStatus, number>> {
    const counts: Record<NotificationStatus, number> = { pending: 0, delivered: 0, failed: 0 };
    const rows = this.db.sql('SELECT status, COUNT(*) AS n FROM notifications GROUP BY status').all() as {
      status: NotificationStatus;
      n: number;
    }[];
    for (const r of rows) counts[r.status] = r.n;
    return counts;
  }
}
