import type { Run, Trigger, WebhookDelivery } from '../../domain/types.js';
import type { NewJob } from '../jobs.js';
import {
  D_DELIVERY_COLUMNS,
  DELIVERY_COLUMNS,
  type RunRow,
  type TriggerFireRow,
  type TriggerRow,
  toRun,
  toTrigger,
  toTriggerFire,
  toWebhookDelivery,
  type WebhookDeliveryRow,
} from '../rows.js';
import type { NewSession } from '../sessions.js';
import * as sql from '../sql/triggers.js';
import type {
  TriggerFire,
  TriggerFireInput,
  TriggerStore,
  WebhookDeliveryFilter,
  WebhookDeliveryPatch,
} from '../triggers.js';
import type { SqliteDb } from './db.js';
import { insertJob } from './jobs.js';
import { insertRun } from './runs.js';
import { insertScopedSession } from './sessions.js';

/**
 * Triggers, the webhook delivery inbox and what triggers made of deliveries. A fire writes its session and
 * run in its own transaction; a scheduled trigger is written with its session and job.
 */
export class SqliteTriggers implements TriggerStore {
  constructor(private readonly db: SqliteDb) {}

  async createTrigger(t: Trigger): Promise<Trigger> {
    return toTrigger(insertTrigger(this.db, t));
  }

  async createScheduleTrigger(input: {
    trigger: Trigger;
    session: Omit<NewSession, 'createdAt'> & { scopeKey: string };
    job: NewJob;
  }): Promise<Trigger> {
    this.db.write(() => {
      insertTrigger(this.db, input.trigger);
      insertScopedSession(this.db, input.session, input.session.id, input.trigger.createdAt);
      insertJob(this.db, input.job, input.trigger.enabled ? 'active' : 'paused');
    });
    return (await this.getTrigger(input.trigger.id))!;
  }

  async getTrigger(id: string): Promise<Trigger | null> {
    const row = this.db.sql(sql.SELECT_TRIGGER).get(id) as TriggerRow | undefined;
    return row ? toTrigger(row) : null;
  }

  async findTriggerByToken(tokenId: string): Promise<Trigger | null> {
    const row = this.db.sql(sql.SELECT_TRIGGER_BY_TOKEN).get(tokenId) as TriggerRow | undefined;
    return row ? toTrigger(row) : null;
  }

  async listTriggers(f: { kind?: Trigger['kind']; enabled?: boolean }): Promise<Trigger[]> {
    const { text, values } = sql.listTriggersStatement(f);
    return (this.db.sql(text).all(...values) as TriggerRow[]).map(toTrigger);
  }

  async updateTrigger(
    id: string,
    patch: Partial<Omit<Trigger, 'id' | 'kind' | 'createdAt' | 'createdBy'>>,
    check?: (current: Trigger) => void,
  ): Promise<Trigger | null> {
    // Read, check, merge and write in one synchronous transaction: nothing runs between the check and the write.
    return this.db.write(() => {
      const row = this.db.sql(sql.SELECT_TRIGGER).get(id) as TriggerRow | undefined;
      if (!row) return null;
      const current = toTrigger(row);
      check?.(current);
      const { text, values } = sql.updateTriggerStatement({ ...current, ...patch });
      return toTrigger(this.db.sql(text).get(...values) as TriggerRow);
    });
  }

  async deleteTrigger(id: string): Promise<boolean> {
    return this.db.write(() => {
      this.db.sql(sql.DELETE_FIRE_COUNTS).run(id);
      return this.db.sql(sql.DELETE_TRIGGER).run(id).changes === 1;
    });
  }

  // ---- the webhook delivery inbox

  async recordWebhookDelivery(
    d: WebhookDelivery,
    payload?: string,
  ): Promise<{ delivery: WebhookDelivery; duplicate: boolean }> {
    return insertDelivery(this.db, d, payload);
  }

  async recordWebhookDeliveries(
    items: { delivery: WebhookDelivery; payload?: string | undefined }[],
  ): Promise<{ delivery: WebhookDelivery; duplicate: boolean }[]> {
    return this.db.write(() => items.map((i) => insertDelivery(this.db, i.delivery, i.payload)));
  }

  async updateWebhookDelivery(id: string, patch: WebhookDeliveryPatch): Promise<void> {
    const update = sql.updateWebhookDeliveryStatement(id, patch);
    if (update) this.db.sql(update.text).run(...update.values);
  }

  async getWebhookDelivery(id: string): Promise<WebhookDelivery | null> {
    const row = this.db.sql(sql.SELECT_DELIVERY).get(id) as WebhookDeliveryRow | undefined;
    return row ? toWebhookDelivery(row) : null;
  }

  async queuedWebhookDeliveries(limit: number, now: number): Promise<WebhookDelivery[]> {
    const rows = this.db
      .sql(
        `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE ${sql.DELIVERY_CLAIMABLE} ORDER BY rowid LIMIT ?`,
      )
      .all(now, limit) as WebhookDeliveryRow[];
    return rows.map(toWebhookDelivery);
  }

  async claimWebhookDelivery(id: string, until: number, now: number): Promise<string | null> {
    const row = this.db
      .sql(
        `UPDATE deliveries SET claimed_until = ? WHERE id = ? AND ${sql.DELIVERY_CLAIMABLE} RETURNING payload`,
      )
      .get(until, id, now) as { payload: string | null } | undefined;
    return row ? (row.payload ?? '') : null;
  }

  async requeueWebhookDelivery(id: string, payload: string): Promise<boolean> {
    const { text, values } = sql.requeueDeliveryStatement(id, payload);
    return this.db.sql(text).run(...values).changes === 1;
  }

  async nextWebhookClaimLapse(now: number): Promise<number | null> {
    return this.db.pluck(sql.NEXT_CLAIM_EXPIRY).get(now) as number | null;
  }

  async listTriggerFires(triggerId: string, limit: number): Promise<TriggerFire[]> {
    const rows = this.db
      .sql(
        `SELECT ${D_DELIVERY_COLUMNS}, f.outcome AS fire_outcome, f.run_id AS fire_run_id, f.at AS fire_at
       FROM trigger_fires f JOIN deliveries d ON d.id = f.delivery_id
       WHERE f.trigger_id = ? ORDER BY f.at DESC, d.id DESC LIMIT ?`,
      )
      .all(triggerId, limit) as TriggerFireRow[];
    return rows.map(toTriggerFire);
  }

  async listWebhookDeliveries(f: WebhookDeliveryFilter): Promise<WebhookDelivery[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    if (f.triggerId) {
      where.push(
        '(d.trigger_id = ? OR d.id IN (SELECT delivery_id FROM trigger_fires WHERE trigger_id = ?))',
      );
      args.push(f.triggerId, f.triggerId);
    }
    if (f.outcome) {
      where.push('d.outcome = ?');
      args.push(f.outcome);
    }
    if (f.before) {
      const seq = this.db.pluck('SELECT rowid FROM deliveries WHERE id = ?').get(f.before) as
        | number
        | undefined;
      if (seq === undefined) return [];
      where.push('d.rowid < ?');
      args.push(seq);
    }
    // Newest first in order of arrival (the rowid), which needs no index of its own.
    const rows = this.db
      .sql(
        `SELECT ${D_DELIVERY_COLUMNS} FROM deliveries d
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY d.rowid DESC LIMIT ?`,
      )
      .all(...args, f.limit) as WebhookDeliveryRow[];
    return rows.map(toWebhookDelivery);
  }

  // ---- fires

  async fireTrigger(input: TriggerFireInput): Promise<{ outcome: 'accepted' | 'capped'; run: Run | null }> {
    return this.db.write(() => {
      // Fires are counted by the minute: the current one and the 60 before it (an hour, rounded up), so
      // the cost is at most 61 rows however busy the trigger is.
      const minute = Math.floor(input.now / 60_000);
      const n = this.db
        .pluck('SELECT COALESCE(SUM(fires), 0) FROM trigger_fire_counts WHERE trigger_id = ? AND minute >= ?')
        .get(input.triggerId, minute - 60) as number;
      // A delivery processed again (redelivered after a failure) fires each trigger at most once.
      const earlier = this.db
        .sql(
          `SELECT outcome, run_id FROM trigger_fires WHERE trigger_id = ? AND delivery_id = ? AND outcome <> 'filtered'`,
        )
        .get(input.triggerId, input.deliveryId) as
        | { outcome: 'accepted' | 'capped'; run_id: string | null }
        | undefined;
      if (earlier) {
        const row = earlier.run_id
          ? (this.db.sql('SELECT * FROM runs WHERE id = ?').get(earlier.run_id) as RunRow)
          : null;
        return { outcome: earlier.outcome, run: row ? toRun(row) : null };
      }
      const fire = this.db.sql(
        `INSERT INTO trigger_fires (trigger_id, delivery_id, outcome, run_id, at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (trigger_id, delivery_id) DO NOTHING`,
      );
      if (n >= input.hourlyCap) {
        fire.run(input.triggerId, input.deliveryId, 'capped', null, input.now);
        return { outcome: 'capped' as const, run: null };
      }
      const s = input.session;
      let session = this.db.sql('SELECT id, status FROM sessions WHERE scope_key = ?').get(s.scopeKey) as
        | { id: string; status: string }
        | undefined;
      if (!session) {
        const id = input.run.id.replace(/^run_/, 'ses_');
        insertScopedSession(this.db, s, id, input.now);
        session = { id, status: 'open' };
      } else if (session.status !== 'open') {
        this.db.sql(`UPDATE sessions SET status = 'open', closed_at = NULL WHERE id = ?`).run(session.id);
      }
      const run = insertRun(this.db, { ...input.run, sessionId: session.id }, 0);
      fire.run(input.triggerId, input.deliveryId, 'accepted', run.id, input.now);
      this.db
        .sql(
          `INSERT INTO trigger_fire_counts (trigger_id, minute, fires) VALUES (?, ?, 1)
           ON CONFLICT (trigger_id, minute) DO UPDATE SET fires = fires + 1`,
        )
        .run(input.triggerId, minute);
      this.db
        .sql('DELETE FROM trigger_fire_counts WHERE trigger_id = ? AND minute < ?')
        .run(input.triggerId, minute - 60);
      return { outcome: 'accepted' as const, run };
    });
  }

  async recordTriggerFire(
    triggerId: string,
    deliveryId: string,
    outcome: 'filtered' | 'capped',
    now: number,
  ): Promise<void> {
    this.db
      .sql(
        `INSERT INTO trigger_fires (trigger_id, delivery_id, outcome, run_id, at) VALUES (?, ?, ?, NULL, ?)
       ON CONFLICT (trigger_id, delivery_id) DO NOTHING`,
      )
      .run(triggerId, deliveryId, outcome, now);
  }
}

function insertTrigger(db: SqliteDb, t: Trigger): TriggerRow {
  const { text, values } = sql.insertTriggerStatement(t);
  return db.sql(text).get(...values) as TriggerRow;
}

function insertDelivery(
  db: SqliteDb,
  d: WebhookDelivery,
  payload: string | undefined,
): { delivery: WebhookDelivery; duplicate: boolean } {
  const inserted = db
    .sql(
      `INSERT INTO deliveries (id, source, key, event, trigger_id, outcome, detail, subject, run_ids, received_at,
       payload, processed_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source, key) DO NOTHING`,
    )
    .run(...sql.deliveryValues(d, payload)).changes;
  if (inserted === 1) return { delivery: d, duplicate: false };
  const row = db
    .sql(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE source = ? AND key = ?`)
    .get(d.source, d.key) as WebhookDeliveryRow;
  return { delivery: toWebhookDelivery(row), duplicate: true };
}
