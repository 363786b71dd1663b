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
import { decodeCursor, encodeCursor } from '../paging.js';
import {
  type NotificationRow,
  PLAN_DELIVERY_COLUMNS,
  type PlanRow,
  toNotification,
  toPlan,
} from '../rows.js';
import { APPROVALS } from '../sql/plans.js';
import { InvalidCursorError } from '../store.js';
import { Params, type PgDb, whereSql } from './db.js';

/** Where the notifier is in the event log (a key of scheduler_state). */
const CURSOR_KEY = 'notifications.cursor';

/**
 * What goes out: executed plans delivered (pushed, a pull request opened; src/delivery/) and notifications
 * posted (src/notify/). Workers on several replicas claim with FOR UPDATE SKIP LOCKED: a row one worker is
 * claiming is left to it by the others, never waited for, and never claimed twice.
 */
export class PgDeliveries implements DeliveryStore {
  constructor(
    private readonly db: PgDb,
    /** What a plan made before network lists, with the network allowed, reads as (rows.ts, toPlan). */
    private readonly legacyNetwork: readonly string[] = DEFAULT_NETWORK_DOMAINS,
  ) {}

  // ---- delivering executed plans

  async listUndecidedPlanDeliveries(limit: number): Promise<Plan[]> {
    const rows = await this.db.rows<PlanRow>(
      `SELECT plans.*, ${APPROVALS} FROM plans WHERE status = 'executed' AND delivery_status IS NULL
       ORDER BY created_at, id LIMIT $1`,
      [limit],
    );
    return rows.map((r) => toPlan(r, this.legacyNetwork));
  }

  async duePlanDeliveries(now: number, limit: number): Promise<string[]> {
    const rows = await this.db.rows<{ id: string }>(
      `SELECT id FROM plans WHERE delivery_status IN ('pending', 'retrying') AND delivery_next_at <= $1
         AND (delivery_claimed_until IS NULL OR delivery_claimed_until <= $1)
       ORDER BY delivery_next_at, id LIMIT $2`,
      [now, limit],
    );
    return rows.map((r) => r.id);
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

  async claimPlanDelivery(planId: string, now: number, until: number): Promise<Plan | null> {
    const row = await this.db.row<PlanRow>(
      `UPDATE plans SET delivery_claimed_until = $3, delivery_attempts = delivery_attempts + 1
       WHERE id = (SELECT id FROM plans
                   WHERE id = $1 AND delivery_status IN ('pending', 'retrying') AND delivery_next_at <= $2
                     AND (delivery_claimed_until IS NULL OR delivery_claimed_until <= $2)
                   FOR UPDATE SKIP LOCKED)
       RETURNING plans.*, ${APPROVALS}`,
      [planId, now, until],
    );
    return row ? toPlan(row, this.legacyNetwork) : null;
  }

  async updatePlanDelivery(
    planId: string,
    from: readonly (PlanDeliveryStatus | null)[],
    patch: PlanDeliveryPatch,
  ): Promise<boolean> {
    const keys = (Object.keys(patch) as (keyof PlanDeliveryPatch)[]).filter((k) => patch[k] !== undefined);
    if (!keys.length) return false;
    const statuses = from.filter((s): s is PlanDeliveryStatus => s !== null);
    if (!statuses.length && !from.includes(null)) return false;
    const p = new Params();
    const set = keys.map((k) => `${PLAN_DELIVERY_COLUMNS[k]} = ${p.add(patch[k])}`).join(', ');
    const conditions = [
      ...(statuses.length ? [`delivery_status = ANY(${p.add(statuses)}::text[])`] : []),
      ...(from.includes(null) ? ['delivery_status IS NULL'] : []),
    ];
    return (
      (await this.db.exec(
        `UPDATE plans SET ${set} WHERE id = ${p.add(planId)} AND (${conditions.join(' OR ')})`,
        p.values,
      )) === 1
    );
  }

  // ---- the notification outbox

  async notificationCursor(): Promise<number | null> {
    const value = await this.db.value<string>('SELECT value FROM scheduler_state WHERE key = $1', [
      CURSOR_KEY,
    ]);
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
      await q.exec(
        `INSERT INTO scheduler_state (key, value) VALUES ($1, $2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value
         WHERE scheduler_state.value::bigint < excluded.value::bigint`,
        [CURSOR_KEY, String(cursor)],
      );
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
    return rows.map(toNotification).sort((a, b) => a.eventRowid - b.eventRowid);
  }

  async settleNotification(id: string, outcome: NotificationOutcome): Promise<void> {
    switch (outcome.status) {
      case 'delivered':
        await this.db.exec(
          `UPDATE notifications SET status = 'delivered', delivered_at = $2, next_attempt_at = NULL
           WHERE id = $1 AND status = 'pending'`,
          [id, outcome.at],
        );
        return;
      case 'pending':
        await this.db.exec(
          `UPDATE notifications SET next_attempt_at = $2, last_error = $3 WHERE id = $1 AND status = 'pending'`,
          [id, outcome.nextAttemptAt, outcome.error],
        );
        return;
      case 'failed':
        await this.db.exec(
          `UPDATE notifications SET status = 'failed', last_error = $2, next_attempt_at = NULL
           WHERE id = $1 AND status = 'pending'`,
          [id, outcome.error],
        );
        return;
    }
  }

  async nextNotificationDue(): Promise<number | null> {
    return (
      (await this.db.value<number | null>(
        `SELECT MIN(next_attempt_at) FROM notifications WHERE status = 'pending'`,
      )) ?? null
    );
  }

  async listNotifications(f: {
    status?: NotificationStatus | undefined;
    event?: string | undefined;
    limit: number;
    cursor?: string | undefined;
  }): Promise<Page<Notification>> {
    const p = new Params();
    const where: string[] = [];
    if (f.status) where.push(`status = ${p.add(f.status)}`);
    if (f.event) where.push(`event = ${p.add(f.event)}`);
    if (f.cursor) {
      const c = decodeCursor(f.cursor);
      if (!c) throw new InvalidCursorError();
      where.push(`(created_at, id) < (${p.add(c.createdAt)}::bigint, ${p.add(c.id)}::text)`);
    }
    const rows = await this.db.rows<NotificationRow>(
      `SELECT * FROM notifications ${whereSql(where)} ORDER BY created_at DESC, id DESC LIMIT ${p.add(f.limit + 1)}`,
      p.values,
    );
    const items = rows.slice(0, f.limit).map(toNotification);
    const last = items.at(-1);
    return {
      items,
      nextCursor: rows.length > f.limit && last ? encodeCursor(last.createdAt, last.id) : null,
    };
  }

  async countNotifications(): Promise<Record<NotificationStatus, number>> {
    const counts: Record<NotificationStatus, number> = { pending: 0, delivered: 0, failed: 0 };
    const rows = await this.db.rows<{ status: NotificationStatus; n: number }>(
      'SELECT status, COUNT(*) AS n FROM notifications GROUP BY status',
    );
    for (const r of rows) counts[r.status] = r.n;
    return counts;
  }
}
