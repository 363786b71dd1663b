import type { NotificationOutcome, NotificationStatus, PlanDeliveryStatus } from '../../domain/types.js';
import type { PlanDeliveryPatch } from '../outbox.js';
import { PLAN_DELIVERY_COLUMNS } from '../rows.js';
import { marks, type Statement } from './dialect.js';
import { APPROVALS } from './plans.js';
import { addCursor, equalities, whereSql } from './query.js';

// The SQL of plan deliveries (src/delivery/: the delivery columns of `plans`) and of the notification outbox
// (src/notify/: the `notifications` table and the notifier's cursor) that both backends run as written here
// (`?` placeholders, see dialect.ts). How a worker claims rows (SKIP LOCKED on PostgreSQL) stays with each
// backend.

/** Where the notifier is in the event log (a key of scheduler_state). */
const CURSOR_KEY = 'notifications.cursor';

/** Executed plans the delivery worker has not looked at yet, oldest first. Values: limit. */
export const UNDECIDED_PLAN_DELIVERIES = `SELECT plans.*, ${APPROVALS} FROM plans
  WHERE status = 'executed' AND delivery_status IS NULL ORDER BY created_at, id LIMIT ?`;

/** A delivery due at `now` that no worker holds (values: now, now). */
export const DELIVERY_DUE = `delivery_status IN ('pending', 'retrying') AND delivery_next_at <= ?
  AND (delivery_claimed_until IS NULL OR delivery_claimed_until <= ?)`;

export function duePlanDeliveriesStatement(now: number, limit: number): Statement {
  return {
    text: `SELECT id FROM plans WHERE ${DELIVERY_DUE} ORDER BY delivery_next_at, id LIMIT ?`,
    values: [now, now, limit],
  };
}

/** Claims by `holder` on deliveries still to make: ended, so they are due again (values: holder). */
export const RELEASE_DELIVERY_CLAIMS = `UPDATE plans SET delivery_claimed_until = NULL, delivery_claimed_by = NULL
  WHERE delivery_claimed_by = ? AND delivery_claimed_until IS NOT NULL
    AND delivery_status IN ('pending', 'retrying')`;

/** Writes delivery fields if the delivery's status is one of `from`; null when there is nothing to write. */
export function updatePlanDeliveryStatement(
  planId: string,
  from: readonly (PlanDeliveryStatus | null)[],
  patch: PlanDeliveryPatch,
): Statement | null {
  const keys = (Object.keys(patch) as (keyof PlanDeliveryPatch)[]).filter((k) => patch[k] !== undefined);
  const statuses = from.filter((s): s is PlanDeliveryStatus => s !== null);
  const conditions = [
    ...(statuses.length ? [`delivery_status IN (${marks(statuses)})`] : []),
    ...(from.includes(null) ? ['delivery_status IS NULL'] : []),
  ];
  if (!keys.length || !conditions.length) return null;
  return {
    text: `UPDATE plans SET ${keys.map((k) => `${PLAN_DELIVERY_COLUMNS[k]} = ?`).join(', ')}
           WHERE id = ? AND (${conditions.join(' OR ')})`,
    values: [...keys.map((k) => patch[k]), planId, ...statuses],
  };
}

// ---- the notification outbox

export const NOTIFICATION_CURSOR: Statement = {
  text: 'SELECT value FROM scheduler_state WHERE key = ?',
  values: [CURSOR_KEY],
};

/** Moves the notifier's cursor forward only: a second daemon on the database may have gone further already. */
export function advanceCursorStatement(cursor: number): Statement {
  return {
    text: `INSERT INTO scheduler_state (key, value) VALUES (?, ?)
           ON CONFLICT (key) DO UPDATE SET value = excluded.value
           WHERE CAST(scheduler_state.value AS BIGINT) < CAST(excluded.value AS BIGINT)`,
    values: [CURSOR_KEY, String(cursor)],
  };
}

/** Records an attempt's outcome on a row still pending. */
export function settleNotificationStatement(id: string, outcome: NotificationOutcome): Statement {
  switch (outcome.status) {
    case 'delivered':
      return {
        text: `UPDATE notifications SET status = 'delivered', delivered_at = ?, next_attempt_at = NULL
               WHERE id = ? AND status = 'pending'`,
        values: [outcome.at, id],
      };
    case 'pending':
      return {
        text: `UPDATE notifications SET next_attempt_at = ?, last_error = ? WHERE id = ? AND status = 'pending'`,
        values: [outcome.nextAttemptAt, outcome.error, id],
      };
    case 'failed':
      return {
        text: `UPDATE notifications SET status = 'failed', last_error = ?, next_attempt_at = NULL
               WHERE id = ? AND status = 'pending'`,
        values: [outcome.error, id],
      };
  }
}

export const NEXT_NOTIFICATION_DUE = `SELECT MIN(next_attempt_at) FROM notifications WHERE status = 'pending'`;

/** Newest first, keyset-paginated (one row more than the page, to tell whether another follows). */
export function listNotificationsStatement(f: {
  status?: NotificationStatus | undefined;
  event?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}): Statement {
  const { where, values } = equalities([
    ['status', f.status || undefined],
    ['event', f.event || undefined],
  ]);
  addCursor(f.cursor, where, values, 'desc');
  return {
    text: `SELECT * FROM notifications ${whereSql(where)} ORDER BY created_at DESC, id DESC LIMIT ?`,
    values: [...values, f.limit + 1],
  };
}

export const COUNT_NOTIFICATIONS = 'SELECT status, COUNT(*) AS n FROM notifications GROUP BY status';

/** Counts by status, every status present. */
export function notificationCounts(
  rows: readonly { status: NotificationStatus; n: number }[],
): Record<NotificationStatus, number> {
  const counts: Record<NotificationStatus, number> = { pending: 0, delivered: 0, failed: 0 };
  for (const r of rows) counts[r.status] = r.n;
  return counts;
}
