import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WebhookDelivery } from '../../src/domain/types.js';
import { loadMigrations } from '../../src/store/migrations.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { TriggerFireInput } from '../../src/store/store.js';
import { tempDir } from '../support/harness.js';
import { storedWebhookDelivery } from './helpers.js';

// The store's side of the inbox and of the hourly cap, on a real SQLite file.

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const MINUTE = 60_000;

let tmp: ReturnType<typeof tempDir>;
let store: SqliteStore;
beforeEach(() => {
  tmp = tempDir('drydock-inbox-store-');
  store = new SqliteStore({ file: join(tmp.path, 'drydock.db'), now: () => T0 });
});
afterEach(async () => {
  await store.close();
  tmp.remove();
});

const delivery = (key: string, over: Partial<WebhookDelivery> = {}): WebhookDelivery =>
  storedWebhookDelivery(key, { receivedAt: T0, ...over });

async function trigger(hourlyCap: number): Promise<string> {
  const t = await store.createTrigger({
    id: 'trg_cap',
    name: 'cap',
    kind: 'github',
    events: ['pull_request.opened'],
    filters: {},
    prompt: 'p',
    workspace: null,
    options: {},
    hourlyCap,
    limits: {},
    tokenId: null,
    tokenHash: null,
    enabled: true,
    createdBy: 'admin',
    createdAt: T0,
    updatedAt: T0,
  });
  return t.id;
}

let fired = 0;
const fire = (triggerId: string, now: number, hourlyCap: number): Promise<{ outcome: string }> => {
  fired += 1;
  const input: TriggerFireInput = {
    triggerId,
    deliveryId: `dlv_f${fired}`,
    hourlyCap,
    now,
    session: { name: 's', workspace: '.', owner: 'o', defaults: {}, scopeKey: `k${fired}` },
    run: {
      id: `run_f${fired}`,
      jobId: null,
      slotAt: null,
      source: 'delivery',
      prompt: 'p',
      requestedBy: 'o',
      createdAt: now,
      triggerId,
      deliveryId: `dlv_f${fired}`,
    },
  };
  return store.fireTrigger(input);
};

describe('deliveries', () => {
  it('records a batch in one call: a key seen twice in it is one delivery, the second a duplicate', async () => {
    const out = await store.recordWebhookDeliveries([
      { delivery: delivery('a'), payload: '{"n":1}' },
      { delivery: delivery('b'), payload: '{"n":2}' },
      { delivery: delivery('a', { id: 'dlv_a2' }), payload: '{"n":3}' },
    ]);
    expect(out.map((o) => [o.delivery.id, o.duplicate])).toEqual([
      ['dlv_a', false],
      ['dlv_b', false],
      ['dlv_a', true],
    ]);
    // The inbox gives the queued ones in arrival order with their first body.
    expect((await store.queuedWebhookDeliveries(10, T0)).map((q) => q.id)).toEqual(['dlv_a', 'dlv_b']);
    // Settling drops the body and takes it out of the inbox.
    await store.updateWebhookDelivery('dlv_a', {
      outcome: 'accepted',
      runIds: ['run_x'],
      payload: null,
      processedAt: T0 + 5,
    });
    expect((await store.queuedWebhookDeliveries(10, T0)).map((q) => q.id)).toEqual(['dlv_b']);
    // A claim hands over the body and hides the delivery from other inboxes until it runs out; only one
    // claim holds at a time.
    expect(await store.claimWebhookDelivery('dlv_b', T0 + 1_000, T0)).toBe('{"n":2}');
    expect(await store.claimWebhookDelivery('dlv_b', T0 + 2_000, T0 + 500)).toBeNull();
    expect(await store.queuedWebhookDeliveries(10, T0 + 999)).toEqual([]);
    expect(await store.nextWebhookClaimLapse(T0 + 999)).toBe(T0 + 1_000);
    expect((await store.queuedWebhookDeliveries(10, T0 + 1_000)).map((q) => q.id)).toEqual(['dlv_b']);
    expect(await store.claimWebhookDelivery('dlv_b', T0 + 61_000, T0 + 1_000)).toBe('{"n":2}');
    // A settled delivery cannot be claimed, nor requeued; a failed one can, once.
    expect(await store.claimWebhookDelivery('dlv_a', T0 + 1_000, T0)).toBeNull();
    expect(await store.requeueWebhookDelivery('dlv_a', '{"n":9}')).toBe(false);
    await store.updateWebhookDelivery('dlv_b', {
      outcome: 'failed',
      detail: 'processing failed: x',
      processedAt: T0 + 2,
    });
    expect(await store.requeueWebhookDelivery('dlv_b', '{"n":8}')).toBe(true);
    expect(await store.requeueWebhookDelivery('dlv_b', '{"n":7}')).toBe(false);
    expect(await store.getWebhookDelivery('dlv_b')).toMatchObject({
      outcome: 'queued',
      detail: null,
      processedAt: null,
    });
    expect(await store.claimWebhookDelivery('dlv_b', T0 + 62_000, T0 + 1)).toBe('{"n":8}');
    expect(await store.nextWebhookClaimLapse(T0 + 61_000)).toBe(T0 + 62_000);
    expect(await store.nextWebhookClaimLapse(T0 + 62_000)).toBeNull();
    expect(await store.getWebhookDelivery('dlv_a')).toMatchObject({
      outcome: 'accepted',
      runIds: ['run_x'],
      processedAt: T0 + 5,
    });
    expect(store.db.prepare(`SELECT payload FROM deliveries WHERE id = 'dlv_a'`).pluck().get()).toBeNull();
  });

  it('lists newest first, filtered by outcome, in pages continued with `before`', async () => {
    for (const k of ['a', 'b', 'c', 'd']) await store.recordWebhookDelivery(delivery(k), '{}');
    await store.updateWebhookDelivery('dlv_b', { outcome: 'ignored' });
    const ids = async (f: Parameters<SqliteStore['listWebhookDeliveries']>[0]) =>
      (await store.listWebhookDeliveries(f)).map((d) => d.id);
    expect(await ids({ limit: 10 })).toEqual(['dlv_d', 'dlv_c', 'dlv_b', 'dlv_a']);
    expect(await ids({ limit: 2 })).toEqual(['dlv_d', 'dlv_c']);
    expect(await ids({ limit: 2, before: 'dlv_c' })).toEqual(['dlv_b', 'dlv_a']);
    expect(await ids({ limit: 10, outcome: 'queued' })).toEqual(['dlv_d', 'dlv_c', 'dlv_a']);
    expect(await ids({ limit: 10, before: 'dlv_nope' })).toEqual([]);
  });
});

describe('hourly cap', () => {
  it('counts accepted fires of the last 60 to 61 minutes, by the minute', async () => {
    const id = await trigger(2);
    expect((await fire(id, T0, 2)).outcome).toBe('accepted');
    expect((await fire(id, T0 + 30 * MINUTE, 2)).outcome).toBe('accepted');
    expect((await fire(id, T0 + 59 * MINUTE, 2)).outcome).toBe('capped');
    // Capped fires do not count: once the first fire is more than 61 minutes old there is room again.
    expect((await fire(id, T0 + 60 * MINUTE + 59_000, 2)).outcome).toBe('capped');
    expect((await fire(id, T0 + 61 * MINUTE, 2)).outcome).toBe('accepted');
    expect((await fire(id, T0 + 61 * MINUTE + 1, 2)).outcome).toBe('capped');
    // Minutes older than the window are dropped as fires come in.
    const minutes = store.db
      .prepare('SELECT minute FROM trigger_fire_counts WHERE trigger_id = ? ORDER BY minute')
      .pluck()
      .all(id);
    expect(minutes).toEqual([(T0 + 30 * MINUTE) / MINUTE, (T0 + 61 * MINUTE) / MINUTE]);
    // Deleting the trigger deletes its counts.
    await store.deleteTrigger(id);
    expect(store.db.prepare('SELECT COUNT(*) FROM trigger_fire_counts').pluck().get()).toBe(0);
  });
});

describe('migration 7', () => {
  it('keeps every delivery, marks the settled ones processed, and counts recent fires by the minute', async () => {
    const file = join(tmp.path, 'old.db');
    const now = Date.now();
    const old = new SqliteStore({ file, migrations: loadMigrations().slice(0, 6), now: () => now });
    const insert = old.db.prepare(
      `INSERT INTO deliveries (id, source, key, event, trigger_id, outcome, detail, subject, run_ids, received_at)
       VALUES (?, 'github', ?, 'pull_request.opened', NULL, ?, ?, NULL, ?, ?)`,
    );
    insert.run('dlv_settled', 'k1', 'accepted', null, '["run_1"]', now - 3_000);
    insert.run('dlv_unsettled', 'k2', 'accepted', null, '[]', now - 2_000);
    insert.run('dlv_filtered', 'k3', 'filtered', 'no trigger matched', '[]', now - 1_000);
    const fires = old.db.prepare(
      `INSERT INTO trigger_fires (trigger_id, delivery_id, outcome, run_id, at) VALUES ('trg_1', ?, ?, NULL, ?)`,
    );
    fires.run('d1', 'accepted', now - 10 * MINUTE);
    fires.run('d2', 'accepted', now - 10 * MINUTE);
    fires.run('d3', 'capped', now - 10 * MINUTE);
    fires.run('d4', 'accepted', now - 5 * 60 * MINUTE);
    await old.close();

    const upgraded = new SqliteStore({ file, migrations: loadMigrations().slice(0, 7), now: () => now });
    try {
      expect(await upgraded.schemaVersion()).toEqual({ current: 7, latest: 7 });
      const all = await upgraded.listWebhookDeliveries({ limit: 10 });
      expect(all.map((d) => [d.id, d.outcome, d.processedAt])).toEqual([
        ['dlv_filtered', 'filtered', now - 1_000],
        ['dlv_unsettled', 'accepted', null],
        ['dlv_settled', 'accepted', now - 3_000],
      ]);
      expect(upgraded.db.prepare('SELECT trigger_id, minute, fires FROM trigger_fire_counts').all()).toEqual([
        { trigger_id: 'trg_1', minute: Math.floor((now - 10 * MINUTE) / MINUTE), fires: 2 },
      ]);
    } finally {
      await upgraded.close();
    }
  });
});
