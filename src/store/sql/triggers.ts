import type { Trigger, WebhookDelivery } from '../../domain/types.js';
import { DELIVERY_COLUMNS } from '../rows.js';
import type { WebhookDeliveryPatch } from '../triggers.js';
import { flag, marks, type Statement } from './dialect.js';
import { equalities, whereSql } from './query.js';

// The SQL of triggers and the webhook delivery inbox that both backends run as written here (`?`
// placeholders, see dialect.ts). Locks (a trigger's row, its advisory lock, SKIP LOCKED claims), the inbox's
// arrival order (rowid on SQLite, a sequence on PostgreSQL) and the fires stay with each backend.

export const SELECT_TRIGGER = 'SELECT * FROM triggers WHERE id = ?';
export const SELECT_TRIGGER_BY_TOKEN = 'SELECT * FROM triggers WHERE token_id = ?';
export const DELETE_FIRE_COUNTS = 'DELETE FROM trigger_fire_counts WHERE trigger_id = ?';
export const DELETE_TRIGGER = 'DELETE FROM triggers WHERE id = ?';

/** What a trigger is defined by, the values of the columns both an insert and an update write, in order. */
const DEFINITION =
  'name, events, filters, prompt, workspace, options, hourly_cap, limits, token_id, token_hash, enabled, updated_at';

function definition(t: Trigger): unknown[] {
  return [
    t.name,
    JSON.stringify(t.events),
    JSON.stringify(t.filters),
    t.prompt,
    t.workspace,
    JSON.stringify(t.options),
    t.hourlyCap,
    JSON.stringify(t.limits ?? {}),
    t.tokenId,
    t.tokenHash,
    flag(t.enabled),
    t.updatedAt,
  ];
}

/** Inserts a trigger, returning its row. */
export function insertTriggerStatement(t: Trigger): Statement {
  return {
    text: `INSERT INTO triggers (id, kind, created_by, created_at, ${DEFINITION})
           VALUES (?, ?, ?, ?, ${marks(definition(t))}) RETURNING *`,
    values: [t.id, t.kind, t.createdBy, t.createdAt, ...definition(t)],
  };
}

export function listTriggersStatement(f: { kind?: Trigger['kind']; enabled?: boolean }): Statement {
  const { where, values } = equalities([
    ['kind', f.kind],
    ['enabled', f.enabled === undefined ? undefined : flag(f.enabled)],
  ]);
  return { text: `SELECT * FROM triggers ${whereSql(where)} ORDER BY created_at, id`, values };
}

/** Writes a trigger as merged (its stored row and a patch); returns its row. */
export function updateTriggerStatement(t: Trigger): Statement {
  const sets = DEFINITION.split(', ').map((column) => `${column} = ?`);
  return {
    text: `UPDATE triggers SET ${sets.join(', ')} WHERE id = ? RETURNING *`,
    values: [...definition(t), t.id],
  };
}

// ---- the webhook delivery inbox

/** The columns updateWebhookDelivery writes, by patch field. */
const DELIVERY_PATCH: [keyof WebhookDeliveryPatch, string][] = [
  ['outcome', 'outcome'],
  ['detail', 'detail'],
  ['runIds', 'run_ids'],
  ['triggerId', 'trigger_id'],
  ['subject', 'subject'],
  ['payload', 'payload'],
  ['claimedUntil', 'claimed_until'],
  ['processedAt', 'processed_at'],
];

/** Writes the fields of `patch` that are set; null when none is. */
export function updateWebhookDeliveryStatement(id: string, patch: WebhookDeliveryPatch): Statement | null {
  const set = DELIVERY_PATCH.filter(([key]) => patch[key] !== undefined);
  if (!set.length) return null;
  return {
    text: `UPDATE deliveries SET ${set.map(([, column]) => `${column} = ?`).join(', ')} WHERE id = ?`,
    values: [...set.map(([key]) => (key === 'runIds' ? JSON.stringify(patch[key]) : patch[key])), id],
  };
}

export const SELECT_DELIVERY = `SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE id = ?`;

/** A queued delivery no one holds a claim on at `now` (values: now). */
export const DELIVERY_CLAIMABLE = `outcome = 'queued' AND (claimed_until IS NULL OR claimed_until <= ?)`;

/** Queues a failed (or unsettled) delivery again with a redelivered body; writes one row when it did. */
export function requeueDeliveryStatement(id: string, payload: string): Statement {
  return {
    text: `UPDATE deliveries SET outcome = 'queued', detail = NULL, payload = ?, claimed_until = NULL,
           processed_at = NULL
         WHERE id = ? AND (outcome = 'failed' OR (outcome = 'accepted' AND processed_at IS NULL))`,
    values: [payload, id],
  };
}

/** When the first claim on a queued delivery that still holds at `now` runs out. Values: now. */
export const NEXT_CLAIM_EXPIRY = `SELECT MIN(claimed_until) FROM deliveries WHERE outcome = 'queued' AND claimed_until > ?`;

/** A delivery's values in the order its INSERT names the columns (id … payload, processed_at). */
export function deliveryValues(d: WebhookDelivery, payload: string | undefined): unknown[] {
  return [
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
  ];
}
