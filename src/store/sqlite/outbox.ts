import type Database from 'better-sqlite3';
import type {
  LoggedEvent,
  NewNotification,
  Notification,
  NotificationOutcome,
  NotificationStatus,
  Page,
} from '../../domain/types.js';
import { InvalidCursorError } from '../store.js';
import { decodeCursor, encodeCursor } from './rows.js';
import { Statements } from './statements.js';

/** Where the notifier is in the event log (a key of scheduler_state). */
const CURSOR_KEY = 'notifications.cursor';

interface NotificationRow {
  id: string;
  event_rowid: number;
  webhook: string;
  webhook_url: string;
  event: string;
  run_id: string;
  plan_id: string | null;
  data: string;
  body: string;
  status: NotificationStatus;
  attempts: number;
  last_error: string | null;
  next_attempt_at: number | null;
  created_at: number;
  delivered_at: number | null;
}

const toNotification = (r: NotificationRow): Notification => ({
  id: r.id,
  eventRowid: r.event_rowid,
  webhook: r.webhook,
  webhookUrl: r.webhook_url,
  event: r.event,
  runId: r.run_id,
  planId: r.plan_id,
  data: JSON.parse(r.data),
  body: r.body,
  status: r.status,
  attempts: r.attempts,
  lastError: r.last_error,
  nextAttemptAt: r.next_attempt_at,
  createdAt: r.created_at,
  deliveredAt: r.delivered_at,
});

/**
 * The notification outbox's SQL (migration 000013). SqliteStore delegates to it; writes that must be atomic
 * are IMMEDIATE transactions, like the store's own.
 */
export class SqliteOutbox {
  private readonly statements: Statements;

  constructor(private readonly db: Database.Database) {
    this.statements = new Statements(db);
  }

  private sql(text: string): Database.Statement {
    return this.statements.get(text);
  }

  cursor(): number | null {
    const value = this.sql('SELECT value FROM scheduler_state WHERE key = ?').pluck().get(CURSOR_KEY) as
      | string
      | undefined;
    return value === undefined ? null : Number(value);
  }

  logEnd(): number {
    return (this.sql('SELECT COALESCE(MAX(rowid), 0) FROM run_events').pluck().get() as number) ?? 0;
  }

  eventsAfter(
    after: number,
    types: readonly string[],
    limit: number,
  ): { events: LoggedEvent[]; end: number } {
    // One read transaction: the end and the events come from the same snapshot, so nothing up to `end` can
    // be missed. Writers serialize on the file and rowids grow in commit order, so no event at or below
    // `end` can appear later.
    return this.db.transaction(() => {
      const end = this.logEnd();
      if (types.length === 0 || limit <= 0) return { events: [], end };
      const rows = this.sql(
        `SELECT rowid, run_id, seq, type, data, at FROM run_events
         WHERE rowid > ? AND rowid <= ? AND type IN (${types.map(() => '?').join(', ')})
         ORDER BY rowid LIMIT ?`,
      ).all(after, end, ...types, limit) as {
        rowid: number;
        run_id: string;
        seq: number;
        type: string;
        data: string;
        at: number;
      }[];
      const events = rows.map((r) => ({
        rowid: r.rowid,
        runId: r.run_id,
        seq: r.seq,
        type: r.type,
        data: JSON.parse(r.data) as Record<string, unknown>,
        at: r.at,
      }));
      return { events, end };
    })();
  }

  enqueue(rows: NewNotification[], cursor: number): number {
    return this.db
      .transaction(() => {
        let added = 0;
        for (const n of rows) {
          added += this.sql(
            `INSERT INTO notifications (id, event_rowid, webhook, webhook_url, event, run_id, plan_id, data, body,
                                        status, attempts, next_attempt_at, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)
             ON CONFLICT (event_rowid, webhook) DO NOTHING`,
          ).run(
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
        this.sql(
          `INSERT INTO scheduler_state (key, value) VALUES (?, ?)
           ON CONFLICT (key) DO UPDATE SET value = excluded.value
           WHERE CAST(scheduler_state.value AS INTEGER) < CAST(excluded.value AS INTEGER)`,
        ).run(CURSOR_KEY, String(cursor));
        return added;
      })
      .immediate();
  }

  claim(now: number, holdUntil: number, limit: number): Notification[] {
    return this.db
      .transaction(() => {
        const rows = this.sql(
          `UPDATE notifications SET attempts = attempts + 1, next_attempt_at = ?
           WHERE id IN (SELECT id FROM notifications WHERE status = 'pending' AND next_attempt_at <= ?
                        ORDER BY next_attempt_at, created_at LIMIT ?)
           RETURNING *`,
        ).all(holdUntil, now, limit) as NotificationRow[];
        return rows.map(toNotification).sort((a, b) => a.eventRowid - b.eventRowid);
      })
      .immediate();
  }

  settle(id: string, outcome: NotificationOutcome): void {
    switch (outcome.status) {
      case 'delivered':
        this.sql(
          `UPDATE notifications SET status = 'delivered', delivered_at = ?, next_attempt_at = NULL
           WHERE id = ? AND status = 'pending'`,
        ).run(outcome.at, id);
        return;
      case 'pending':
        this.sql(
          `UPDATE notifications SET next_attempt_at = ?, last_error = ? WHERE id = ? AND status = 'pending'`,
        ).run(outcome.nextAttemptAt, outcome.error, id);
        return;
      case 'failed':
        this.sql(
          `UPDATE notifications SET status = 'failed', last_error = ?, next_attempt_at = NULL
           WHERE id = ? AND status = 'pending'`,
        ).run(outcome.error, id);
        return;
    }
  }

  nextDue(): number | null {
    return (
      (this.sql(`SELECT MIN(next_attempt_at) FROM notifications WHERE status = 'pending'`).pluck().get() as
        | number
        | null) ?? null
    );
  }

  list(f: {
    status?: NotificationStatus | undefined;
    event?: string | undefined;
    limit: number;
    cursor?: string | undefined;
  }): Page<Notification> {
    const where: string[] = [];
    const args: unknown[] = [];
    if (f.status) {
      where.push('status = ?');
      args.push(f.status);
    }
    if (f.event) {
      where.push('event = ?');
      args.push(f.event);
    }
    if (f.cursor) {
      const c = decodeCursor(f.cursor);
      if (!c) throw new InvalidCursorError();
      where.push('(created_at, id) < (?, ?)');
      args.push(c.createdAt, c.id);
    }
    const rows = this.sql(
      `SELECT * FROM notifications ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY created_at DESC, id DESC LIMIT ?`,
    ).all(...args, f.limit + 1) as NotificationRow[];
    const items = rows.slice(0, f.limit).map(toNotification);
    const last = items.at(-1);
    return {
      items,
      nextCursor: rows.length > f.limit && last ? encodeCursor(last.createdAt, last.id) : null,
    };
  }

  counts(): Record<NotificationStatus, number> {
    const counts: Record<NotificationStatus, number> = { pending: 0, delivered: 0, failed: 0 };
    const rows = this.sql('SELECT status, COUNT(*) AS n FROM notifications GROUP BY status').all() as {
      status: NotificationStatus;
      n: number;
    }[];
    for (const r of rows) counts[r.status] = r.n;
    return counts;
  }
}
