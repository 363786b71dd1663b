import type { Delivery, DeliveryOutcome, Run, Trigger } from '../../domain/types.js';
import type { NewJob } from '../jobs.js';
import {
  D_DELIVERY_COLUMNS,
  DELIVERY_COLUMNS,
  type DeliveryRow,
  type RunRow,
  type TriggerFireRow,
  type TriggerRow,
  toDelivery,
  toRun,
  toTrigger,
  toTriggerFire,
} from '../rows.js';
import type { NewSession } from '../sessions.js';
import { equalities, whereSql } from '../sql/query.js';
import type { DeliveryPatch, TriggerFireInput, TriggerStore } from '../triggers.js';
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
    insertTrigger(this.db, t);
    return (await this.getTrigger(t.id))!;
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
    const row = this.db.sql('SELECT * FROM triggers WHERE id = ?').get(id) as TriggerRow | undefined;
    return row ? toTrigger(row) : null;
  }

  async findTriggerByToken(tokenId: string): Promise<Trigger | null> {
    const row = this.db.sql('SELECT * FROM triggers WHERE token_id = ?').get(tokenId) as
      | TriggerRow
      | undefined;
    return row ? toTrigger(row) : null;
  }

  async listTriggers(f: { kind?: Trigger['kind']; enabled?: boolean }): Promise<Trigger[]> {
    const { where, values: args } = equalities([
      ['kind', f.kind],
      ['enabled', f.enabled === undefined ? undefined : f.enabled ? 1 : 0],
    ]);
    const rows = this.db
      .sql(`SELECT * FROM triggers ${whereSql(where)} ORDER BY created_at, id`)
      .all(...args) as TriggerRow[];
    return rows.map(toTrigger);
  }

  async updateTrigger(
    id: string,
    patch: Partial<Omit<Trigger, 'id' | 'kind' | 'createdAt' | 'createdBy'>>,
    check?: (current: Trigger) => void,
  ): Promise<Trigger | null> {
    // Read, check, merge and write in one synchronous transaction: nothing runs between the check and the write.
    const written = this.db.write(() => {
      const row = this.db.sql('SELECT * FROM triggers WHERE id = ?').get(id) as TriggerRow | undefined;
      if (!row) return false;
      const current = toTrigger(row);
      check?.(current);
      const t = { ...current, ...patch };
      this.db
        .sql(
          `UPDATE triggers SET name = ?, events = ?, filters = ?, prompt = ?, workspace = ?, options = ?,
           hourly_cap = ?, token_id = ?, token_hash = ?, enabled = ?, updated_at = ? WHERE id = ?`,
        )
        .run(
          t.name,
          JSON.stringify(t.events),
          JSON.stringify(t.filters),
          t.prompt,
          t.workspace,
          JSON.stringify(t.options),
          t.hourlyCap,
          t.tokenId,
          t.tokenHash,
          t.enabled ? 1 : 0,
          t.updatedAt,
          id,
        );
      return true;
    });
    return written ? this.getTrigger(id) : null;
  }

  async deleteTrigger(id: string): Promise<boolean> {
    return this.db.write(() => {
      this.db.sql('DELETE FROM trigger_fire_counts WHERE trigger_id = ?').run(id);
      return this.db.sql('DELETE FROM triggers WHERE id = ?').run(id).changes === 1;
    });
  }

  // ---- the webhook delivery inbox

  async recordDelivery(d: Delivery, payload?: string): Promise<{ delivery: Delivery; duplicate: boolean }> {
    return insertDelivery(this.db, d, payload);
  }

  async recordDeliveries(
    items: { delivery: Delivery; payload?: string | undefined }[],
  ): Promise<{ delivery: Delivery; duplicate: boolean }[]> {
    return this.db.write(() => items.map((i) => insertDelivery(this.db, i.delivery, i.payload)));
  }

  async updateDelivery(id: string, patch: DeliveryPatch): Promise<void> {
    const columns: [keyof DeliveryPatch, string][] = [
      ['outcome', 'outcome'],
      ['detail', 'detail'],
      ['runIds', 'run_ids'],
      ['triggerId', 'trigger_id'],
      ['subject', 'subject'],
      ['payload', 'payload'],
      ['claimedUntil', 'claimed_until'],
      ['processedAt', 'processed_at'],
    ];
    const sets: string[] = [];
    const args: unknown[] = [];
    for (const [key, column] of columns) {
      const value = patch[key];
      if (value === undefined) continue;
      sets.push(`${column} = ?`);
      args.push(key === 'runIds' ? JSON.stringify(value) : value);
    }
    if (sets.length) this.db.sql(`UPDATE deliveries SET ${sets.join(', ')} WHERE id = ?`).run(...args, id);
  }

  async getDelivery(id: string): Promise<Delivery | null> {
    const row = this.db.sql(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE id = ?`).get(id) as
      | DeliveryRow
      | undefined;
    return row ? toDelivery(row) : null;
  }

  async queuedDeliveries(limit: number, now: number): Promise<Delivery[]> {
    const rows = this.db
      .sql(
        `SELECT ${DELIVERY_COLUMNS} FROM deliveries
       WHERE outcome = 'queued' AND (claimed_until IS NULL OR claimed_until <= ?) ORDER BY rowid LIMIT ?`,
      )
      .all(now, limit) as DeliveryRow[];
    return rows.map(toDelivery);
  }

  async claimDelivery(id: string, until: number, now: number): Promise<string | null> {
    const row = this.db
      .sql(
        `UPDATE deliveries SET claimed_until = ?
       WHERE id = ? AND outcome = 'queued' AND (claimed_until IS NULL OR claimed_until <= ?) RETURNING payload`,
      )
      .get(until, id, now) as { payload: string | null } | undefined;
    return row ? (row.payload ?? '') : null;
  }

  async requeueDelivery(id: string, payload: string): Promise<boolean> {
    return (
      this.db
        .sql(
          `UPDATE deliveries SET outcome = 'queued', detail = NULL, payload = ?, claimed_until = NULL,
           processed_at = NULL
         WHERE id = ? AND (outcome = 'failed' OR (outcome = 'accepted' AND processed_at IS NULL))`,
        )
        .run(payload, id).changes === 1
    );
  }

  async nextClaimExpiry(now: number): Promise<number | null> {
    return this.db
      .pluck(`SELECT MIN(claimed_until) FROM deliveries WHERE outcome = 'queued' AND claimed_until > ?`)
      .get(now) as number | null;
  }

  async listTriggerFires(
    triggerId: string,
    limit: number,
  ): Promise<
    { delivery: Delivery; outcome: 'accepted' | 'filtered' | 'capped'; runId: string | null; at: number }[]
  > {
    const rows = this.db
      .sql(
        `SELECT ${D_DELIVERY_COLUMNS}, f.outcome AS fire_outcome, f.run_id AS fire_run_id, f.at AS fire_at
       FROM trigger_fires f JOIN deliveries d ON d.id = f.delivery_id
       WHERE f.trigger_id = ? ORDER BY f.at DESC, d.id DESC LIMIT ?`,
      )
      .all(triggerId, limit) as TriggerFireRow[];
    return rows.map(toTriggerFire);
  }

  async listDeliveries(f: {
    triggerId?: string | undefined;
    outcome?: DeliveryOutcome | undefined;
    limit: number;
    before?: string | undefined;
  }): Promise<Delivery[]> {
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
      .all(...args, f.limit) as DeliveryRow[];
    return rows.map(toDelivery);
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
    outcome: 'filtered',
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

function insertTrigger(db: SqliteDb, t: Trigger): void {
  db.sql(
    `INSERT INTO triggers (id, name, kind, events, filters, prompt, workspace, options, hourly_cap, token_id,
       token_hash, enabled, created_by, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    t.id,
    t.name,
    t.kind,
    JSON.stringify(t.events),
    JSON.stringify(t.filters),
    t.prompt,
    t.workspace,
    JSON.stringify(t.options),
    t.hourlyCap,
    t.tokenId,
    t.tokenHash,
    t.enabled ? 1 : 0,
    t.createdBy,
    t.createdAt,
    t.updatedAt,
  );
}

function insertDelivery(
  db: SqliteDb,
  d: Delivery,
  payload: string | undefined,
): { delivery: Delivery; duplicate: boolean } {
  const inserted = db
    .sql(
      `INSERT INTO deliveries (id, source, key, event, trigger_id, outcome, detail, subject, run_ids, received_at,
       payload, processed_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source, key) DO NOTHING`,
    )
    .run(
      d.id,
      d.source,
      d.key,
      d.event,
      d.triggerId,
      d.outcome,
      d.detail,
      d.subject,
      JSON.stringify(d.runIds),
      d.receivedAt,
      payload ?? null,
      d.processedAt,
    ).changes;
  if (inserted === 1) return { delivery: d, duplicate: false };
  const row = db
    .sql(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE source = ? AND key = ?`)
    .get(d.source, d.key) as DeliveryRow;
  return { delivery: toDelivery(row), duplicate: true };
}
