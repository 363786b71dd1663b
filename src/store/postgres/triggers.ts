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
import { whereSql } from '../sql/query.js';
import * as sql from '../sql/triggers.js';
import type {
  TriggerFire,
  TriggerFireInput,
  TriggerStore,
  WebhookDeliveryFilter,
  WebhookDeliveryPatch,
} from '../triggers.js';
import { json, LOCK, Params, type PgDb, type Queries } from './db.js';
import { insertJob } from './jobs.js';
import { insertRun } from './runs.js';
import { insertScopedSession } from './sessions.js';

/**
 * Triggers, the webhook delivery inbox and what triggers made of deliveries. A fire writes its session and
 * run in its own transaction, holding its trigger's advisory lock; a scheduled trigger is written with its
 * session and job.
 */
export class PgTriggers implements TriggerStore {
  constructor(private readonly db: PgDb) {}

  async createTrigger(t: Trigger): Promise<Trigger> {
    return toTrigger(await insertTrigger(this.db, t));
  }

  async createScheduleTrigger(input: {
    trigger: Trigger;
    session: Omit<NewSession, 'createdAt'> & { scopeKey: string };
    job: NewJob;
  }): Promise<Trigger> {
    return this.db.tx(async (q) => {
      const row = await insertTrigger(q, input.trigger);
      await insertScopedSession(q, input.session, input.session.id, input.trigger.createdAt);
      await insertJob(q, input.job, input.trigger.enabled ? 'active' : 'paused');
      return toTrigger(row);
    });
  }

  async getTrigger(id: string): Promise<Trigger | null> {
    const row = await this.db.row<TriggerRow>(sql.SELECT_TRIGGER, [id]);
    return row ? toTrigger(row) : null;
  }

  async findTriggerByToken(tokenId: string): Promise<Trigger | null> {
    const row = await this.db.row<TriggerRow>(sql.SELECT_TRIGGER_BY_TOKEN, [tokenId]);
    return row ? toTrigger(row) : null;
  }

  async listTriggers(f: { kind?: Trigger['kind']; enabled?: boolean }): Promise<Trigger[]> {
    const { text, values } = sql.listTriggersStatement(f);
    return (await this.db.rows<TriggerRow>(text, values)).map(toTrigger);
  }

  async updateTrigger(
    id: string,
    patch: Partial<Omit<Trigger, 'id' | 'kind' | 'createdAt' | 'createdBy'>>,
    check?: (current: Trigger) => void,
  ): Promise<Trigger | null> {
    return this.db.tx(async (q) => {
      // Read, check, merge and write under the row's lock: two changes at once apply one after the other,
      // and each is checked against what the other left.
      const current = await q.row<TriggerRow>('SELECT * FROM triggers WHERE id = $1 FOR NO KEY UPDATE', [id]);
      if (!current) return null;
      const fresh = toTrigger(current);
      check?.(fresh);
      const { text, values } = sql.updateTriggerStatement({ ...fresh, ...patch });
      return toTrigger((await q.row<TriggerRow>(text, values))!);
    });
  }

  async deleteTrigger(id: string): Promise<boolean> {
    return this.db.tx(async (q) => {
      await q.value('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [LOCK.triggerFires, id]);
      await q.exec(sql.DELETE_FIRE_COUNTS, [id]);
      return (await q.exec(sql.DELETE_TRIGGER, [id])) === 1;
    });
  }

  // ---- the webhook delivery inbox

  async recordWebhookDelivery(
    d: WebhookDelivery,
    payload?: string,
  ): Promise<{ delivery: WebhookDelivery; duplicate: boolean }> {
    return (await insertDeliveries(this.db, [{ delivery: d, payload }]))[0]!;
  }

  async recordWebhookDeliveries(
    items: { delivery: WebhookDelivery; payload?: string | undefined }[],
  ): Promise<{ delivery: WebhookDelivery; duplicate: boolean }[]> {
    if (!items.length) return [];
    // No transaction: see insertDeliveries.
    return insertDeliveries(this.db, items);
  }

  async updateWebhookDelivery(id: string, patch: WebhookDeliveryPatch): Promise<void> {
    const update = sql.updateWebhookDeliveryStatement(id, patch);
    if (update) await this.db.exec(update.text, update.values);
  }

  async getWebhookDelivery(id: string): Promise<WebhookDelivery | null> {
    const row = await this.db.row<WebhookDeliveryRow>(sql.SELECT_DELIVERY, [id]);
    return row ? toWebhookDelivery(row) : null;
  }

  async queuedWebhookDeliveries(limit: number, now: number): Promise<WebhookDelivery[]> {
    const rows = await this.db.rows<WebhookDeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE ${sql.DELIVERY_CLAIMABLE} ORDER BY seq LIMIT ?`,
      [now, limit],
    );
    return rows.map(toWebhookDelivery);
  }

  async claimWebhookDelivery(id: string, until: number, now: number): Promise<string | null> {
    // The row is taken with SKIP LOCKED: while another replica is claiming it (or writing it), this claim is
    // refused at once instead of waiting; once that claim is committed, the delivery is no longer claimable
    // at `now` anyway.
    const row = await this.db.row<{ payload: string | null }>(
      `UPDATE deliveries SET claimed_until = ?
       WHERE id = (SELECT id FROM deliveries WHERE id = ? AND ${sql.DELIVERY_CLAIMABLE} FOR UPDATE SKIP LOCKED)
       RETURNING payload`,
      [until, id, now],
    );
    return row ? (row.payload ?? '') : null;
  }

  async requeueWebhookDelivery(id: string, payload: string): Promise<boolean> {
    const { text, values } = sql.requeueDeliveryStatement(id, payload);
    return (await this.db.exec(text, values)) === 1;
  }

  async nextWebhookClaimLapse(now: number): Promise<number | null> {
    return (await this.db.value<number | null>(sql.NEXT_CLAIM_EXPIRY, [now])) ?? null;
  }

  async listTriggerFires(triggerId: string, limit: number): Promise<TriggerFire[]> {
    const rows = await this.db.rows<TriggerFireRow>(
      `SELECT ${D_DELIVERY_COLUMNS}, f.outcome AS fire_outcome, f.run_id AS fire_run_id, f.at AS fire_at
       FROM trigger_fires f JOIN deliveries d ON d.id = f.delivery_id
       WHERE f.trigger_id = $1 ORDER BY f.at DESC, d.id DESC LIMIT $2`,
      [triggerId, limit],
    );
    return rows.map(toTriggerFire);
  }

  async listWebhookDeliveries(f: WebhookDeliveryFilter): Promise<WebhookDelivery[]> {
    const p = new Params();
    const where: string[] = [];
    if (f.triggerId) {
      const t = p.add(f.triggerId);
      where.push(
        `(d.trigger_id = ${t} OR d.id IN (SELECT delivery_id FROM trigger_fires WHERE trigger_id = ${t}))`,
      );
    }
    if (f.outcome) where.push(`d.outcome = ${p.add(f.outcome)}`);
    // An unknown `before` compares with NULL: nothing follows it.
    if (f.before) where.push(`d.seq < (SELECT seq FROM deliveries WHERE id = ${p.add(f.before)})`);
    // Newest first in order of arrival.
    const rows = await this.db.rows<WebhookDeliveryRow>(
      `SELECT ${D_DELIVERY_COLUMNS} FROM deliveries d ${whereSql(where)} ORDER BY d.seq DESC LIMIT ${p.add(f.limit)}`,
      p.values,
    );
    return rows.map(toWebhookDelivery);
  }

  // ---- fires

  async fireTrigger(input: TriggerFireInput): Promise<{ outcome: 'accepted' | 'capped'; run: Run | null }> {
    return this.db.tx(async (q) => {
      // LOUD: a trigger's fires take turns, across replicas: its advisory lock is held from before the cap
      // is counted until the fire is committed, so the count every fire checks includes all fires before it,
      // and a delivery processed twice at once (two replicas) fires the trigger once.
      await q.value('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [
        LOCK.triggerFires,
        input.triggerId,
      ]);
      const minute = Math.floor(input.now / 60_000);
      const seen = await firesSoFar(q, input, minute);
      if (seen.outcome) {
        const row = seen.run_id
          ? await q.row<RunRow>('SELECT * FROM runs WHERE id = $1', [seen.run_id])
          : undefined;
        return { outcome: seen.outcome, run: row ? toRun(row) : null };
      }
      if (seen.fires >= input.hourlyCap) {
        await recordFire(q, input.triggerId, input.deliveryId, 'capped', null, input.now);
        return { outcome: 'capped' as const, run: null };
      }
      const sessionId = await openScopedSession(q, input);
      const run = await insertRun(q, { ...input.run, sessionId }, 0);
      await recordAcceptedFire(q, input, run.id, minute);
      return { outcome: 'accepted' as const, run };
    });
  }

  async recordTriggerFire(
    triggerId: string,
    deliveryId: string,
    outcome: 'filtered' | 'capped',
    now: number,
  ): Promise<void> {
    await recordFire(this.db, triggerId, deliveryId, outcome, null, now);
  }
}

/** Inserts a trigger; also inside createScheduleTrigger's transaction. */
async function insertTrigger(q: Queries, t: Trigger): Promise<TriggerRow> {
  const { text, values } = sql.insertTriggerStatement(t);
  return (await q.row<TriggerRow>(text, values))!;
}

/** The columns a delivery is recorded with, in the order `deliveryValues` gives them. */
const DELIVERY_INSERT_COLUMNS =
  'id, source, key, event, trigger_id, outcome, detail, subject, run_ids, received_at, payload, processed_at';
const DELIVERY_INSERT_WIDTH = DELIVERY_INSERT_COLUMNS.split(', ').length;

/**
 * Deliveries one INSERT records at most. A statement's text depends on its number of rows and is prepared once
 * per text and connection, so the texts are kept few; a larger batch takes several statements.
 */
const DELIVERY_INSERT_ROWS = 64;

/** The texts of insertDeliveriesText by number of rows. */
const insertDeliveriesTexts: string[] = [];

/** `INSERT ... VALUES` of `rows` deliveries, skipping those whose (source, key) is recorded; returns the ids written. */
function insertDeliveriesText(rows: number): string {
  const known = insertDeliveriesTexts[rows];
  if (known !== undefined) return known;
  const tuples: string[] = [];
  for (let r = 0; r < rows; r++) {
    const first = r * DELIVERY_INSERT_WIDTH;
    const marks = Array.from({ length: DELIVERY_INSERT_WIDTH }, (_, c) => `$${first + c + 1}`);
    tuples.push(`(${marks.join(', ')})`);
  }
  const text = `INSERT INTO deliveries (${DELIVERY_INSERT_COLUMNS}) VALUES ${tuples.join(', ')}
    ON CONFLICT (source, key) DO NOTHING RETURNING id`;
  insertDeliveriesTexts[rows] = text;
  return text;
}

/**
 * Records deliveries unless one with the same (source, key) exists; results in the order given. Each INSERT
 * is one statement, atomic on its own: a delivery is durable once its statement returns, and no transaction
 * around it is needed (each delivery's result is its own). The rows go as plain parameters, one per value,
 * rather than as arrays: a body in an array parameter would be escaped character by character on the way
 * out and parsed again by the server. A delivery being recorded by another transaction at the same time
 * makes the insert wait for it and then skip (ON CONFLICT DO NOTHING); the select after it, a new statement,
 * reads the one that won. Without a duplicate that select is not run: one statement, one round trip.
 */
async function insertDeliveries(
  q: Queries,
  items: { delivery: WebhookDelivery; payload?: string | undefined }[],
): Promise<{ delivery: WebhookDelivery; duplicate: boolean }[]> {
  const ds = items.map((i) => i.delivery);
  const inserted = new Set<string>();
  for (let at = 0; at < items.length; at += DELIVERY_INSERT_ROWS) {
    const some = items.slice(at, at + DELIVERY_INSERT_ROWS);
    const rows = await q.rows<{ id: string }>(
      insertDeliveriesText(some.length),
      some.flatMap((i) => sql.deliveryValues(i.delivery, i.payload)),
    );
    for (const r of rows) inserted.add(r.id);
  }
  // Of two items with one key in the same batch, the first is recorded and the second is its duplicate.
  const recorded = new Set<string>();
  const first = ds.map((d) => {
    const k = keyOf(d);
    const isFirst = inserted.has(d.id) && !recorded.has(k);
    if (isFirst) recorded.add(k);
    return isFirst;
  });
  const others = ds.filter((_, i) => !first[i]);
  const existing = new Map<string, WebhookDelivery>();
  if (others.length) {
    const rows = await q.rows<WebhookDeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries
       WHERE (source, key) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
      [others.map((d) => d.source), others.map((d) => d.key)],
    );
    for (const r of rows) existing.set(keyOf(toWebhookDelivery(r)), toWebhookDelivery(r));
  }
  return ds.map((d, i) =>
    first[i] ? { delivery: d, duplicate: false } : { delivery: existing.get(keyOf(d))!, duplicate: true },
  );
}

const keyOf = (d: Pick<WebhookDelivery, 'source' | 'key'>): string => `${d.source}\n${d.key}`;

/** One fire per (trigger, delivery): the first recorded stays. */
async function recordFire(
  q: Queries,
  triggerId: string,
  deliveryId: string,
  outcome: 'accepted' | 'filtered' | 'capped',
  runId: string | null,
  at: number,
): Promise<void> {
  await q.exec(
    `INSERT INTO trigger_fires (trigger_id, delivery_id, outcome, run_id, at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (trigger_id, delivery_id) DO NOTHING`,
    [triggerId, deliveryId, outcome, runId, at],
  );
}

/** What a fire is decided on: the trigger's fires of the last hour, and this delivery's earlier fire of it. */
interface FiresSoFar {
  fires: number;
  outcome: 'accepted' | 'capped' | null;
  run_id: string | null;
}

/**
 * Fires are counted by the minute: the current one and the 60 before it (an hour, rounded up), so the cost is
 * at most 61 rows however busy the trigger is. A delivery processed again (redelivered after a failure) fires
 * each trigger at most once: its earlier fire, if any, is read in the same statement.
 */
async function firesSoFar(q: Queries, input: TriggerFireInput, minute: number): Promise<FiresSoFar> {
  const row = await q.row<FiresSoFar>(
    `SELECT (SELECT COALESCE(SUM(fires), 0) FROM trigger_fire_counts WHERE trigger_id = $1 AND minute >= $2)
              AS fires,
            f.outcome, f.run_id
     FROM (SELECT 1) AS one
     LEFT JOIN trigger_fires f ON f.trigger_id = $1 AND f.delivery_id = $3 AND f.outcome <> 'filtered'`,
    [input.triggerId, minute - 60, input.deliveryId],
  );
  return row!;
}

/**
 * An accepted fire, the minute's count and the end of the counts older than the hour, in one statement (its
 * parts write different rows).
 */
async function recordAcceptedFire(
  q: Queries,
  input: TriggerFireInput,
  runId: string,
  minute: number,
): Promise<void> {
  await q.exec(
    `WITH fire AS (
       INSERT INTO trigger_fires (trigger_id, delivery_id, outcome, run_id, at) VALUES ($1, $2, 'accepted', $3, $4)
       ON CONFLICT (trigger_id, delivery_id) DO NOTHING),
     counted AS (
       INSERT INTO trigger_fire_counts (trigger_id, minute, fires) VALUES ($1, $5, 1)
       ON CONFLICT (trigger_id, minute) DO UPDATE SET fires = trigger_fire_counts.fires + 1)
     DELETE FROM trigger_fire_counts WHERE trigger_id = $1 AND minute < $6`,
    [input.triggerId, input.deliveryId, runId, input.now, minute, minute - 60],
  );
}

/**
 * The session of a fire's subject, found by its scope key (reopened if it was closed) or made, locked until
 * the fire commits: a close meanwhile waits, and two fires for one new subject (two triggers) make one
 * session between them. Found or made in one statement; when another fire is making it at the same time, the
 * insert waits for that one and skips, and a second statement (a new snapshot) finds the session it made.
 */
async function openScopedSession(q: Queries, input: TriggerFireInput): Promise<string> {
  const s = input.session;
  const id = input.run.id.replace(/^run_/, 'ses_');
  let session = await q.row<{ id: string; status: string }>(
    `WITH found AS (SELECT id, status FROM sessions WHERE scope_key = $8 FOR NO KEY UPDATE),
     made AS (
       INSERT INTO sessions (id, name, workspace, workspace_kind, owner, defaults, status, created_at, scope_key)
       SELECT $1, $2, $3, $4, $5, $6, 'open', $7, $8 WHERE NOT EXISTS (SELECT FROM found)
       ON CONFLICT (scope_key) WHERE scope_key IS NOT NULL DO NOTHING RETURNING id, status)
     SELECT id, status FROM found UNION ALL SELECT id, status FROM made`,
    [id, s.name, s.workspace, s.workspaceKind ?? null, s.owner, json(s.defaults), input.now, s.scopeKey],
  );
  if (!session) {
    // Another fire made it first (and committed: the insert waited for it).
    session = await q.row<{ id: string; status: string }>(
      'SELECT id, status FROM sessions WHERE scope_key = $1 FOR NO KEY UPDATE',
      [s.scopeKey],
    );
    if (!session) throw new Error(`postgres store: session of scope ${s.scopeKey} vanished`);
  }
  if (session.status !== 'open') {
    await q.exec(`UPDATE sessions SET status = 'open', closed_at = NULL WHERE id = $1`, [session.id]);
  }
  return session.id;
}
