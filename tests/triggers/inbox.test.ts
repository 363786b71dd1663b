import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestDaemon } from '../support/daemon.js';
import {
  allRuns,
  deliver,
  PR_NUMBER,
  processed,
  prPayload,
  REPO,
  storedWebhookDelivery,
  type TriggerWorld,
  triggerWorld,
} from './helpers.js';

let w: TriggerWorld;
beforeEach(async () => {
  w = await triggerWorld();
  await w.trigger({
    name: 'review',
    events: ['pull_request.opened'],
    prompt: 'Review {{repository}}#{{number}}.',
  });
});
afterEach(async () => w.close());

it('answers once the delivery is recorded; the inbox then starts the run and GET /v1/deliveries/:id tells', async () => {
  const r = await deliver(w.d, 'pull_request', prPayload('opened', { sha: w.repo.base }), { wait: false });
  expect(r.status).toBe(202);
  expect(r.answer).toMatchObject({ outcome: 'queued', detail: null, run_ids: [] });
  const d = await processed(w.d, r.answer.delivery_id);
  expect(d).toMatchObject({
    id: r.answer.delivery_id,
    source: 'github',
    key: r.delivery,
    event: 'pull_request.opened',
    outcome: 'accepted',
    subject: `${REPO}#${PR_NUMBER}`,
  });
  expect(d.run_ids).toHaveLength(1);
  expect(Date.parse(d.processed_at)).toBeGreaterThanOrEqual(Date.parse(d.received_at));
  // The stored body is dropped once processed.
  const db = (w.d.daemon.store as any).db;
  expect(db.prepare('SELECT payload FROM deliveries WHERE id = ?').pluck().get(d.id)).toBeNull();
  // The list, filtered by outcome.
  const accepted = await w.d.api('GET', '/v1/deliveries?outcome=accepted');
  expect(accepted.body.items.map((x: any) => x.id)).toEqual([d.id]);
  expect((await w.d.api('GET', '/v1/deliveries?outcome=queued')).body.items).toEqual([]);
  expect((await w.d.api('GET', '/v1/deliveries/dlv_nope')).status).toBe(404);
  // Metrics: the inbox's depth and how long the delivery waited in it.
  const metrics = await fetch(`${w.d.daemon.url}/metrics`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  const text = await metrics.text();
  expect(text).toMatch(/^drydock_delivery_wait_seconds_count 1$/m);
  expect(text).toMatch(/^drydock_deliveries\{outcome="accepted"\} 1$/m);
  expect(text).not.toMatch(/^drydock_deliveries\{outcome="queued"\} [1-9]/m);
  expect((await w.d.api('GET', '/v1/deliveries?outcome=lost')).status).toBe(422);
  const unknown = await w.d.api('GET', '/v1/deliveries?before=dlv_nope');
  expect(unknown.status).toBe(400);
  expect(unknown.body.error.code).toBe('bad_cursor');
});

it('a redelivery, whether the first is still queued or processed, is a duplicate and starts nothing', async () => {
  const payload = prPayload('opened', { sha: w.repo.base });
  const first = await deliver(w.d, 'pull_request', payload, { wait: false });
  const again = await deliver(w.d, 'pull_request', payload, { delivery: first.delivery, wait: false });
  expect(again.status).toBe(200);
  expect(again.body).toMatchObject({ duplicate: true, delivery_id: first.answer.delivery_id });
  await processed(w.d, first.answer.delivery_id);
  expect(await allRuns(w.d)).toHaveLength(1);
});

it('deliveries a stopped daemon left queued are processed, in arrival order, at the next start', async () => {
  const store = w.d.daemon.store;
  // Recorded straight into the store (no worker is told): what a process that died after answering leaves.
  const queued = (key: string, action: 'opened' | 'closed', at: number) =>
    store.recordWebhookDelivery(
      storedWebhookDelivery(key, { event: `pull_request.${action}`, receivedAt: at }),
      JSON.stringify(prPayload(action, { sha: w.repo.base })),
    );
  await queued('left-1', 'opened', Date.now() - 2_000);
  await queued('left-2', 'closed', Date.now() - 1_000);
  await w.d.halt();
  const again = await startTestDaemon({
    dir: w.d.dir,
    modelUrl: w.model.url,
    patch: (c) => Object.assign(c, w.d.config),
  });
  try {
    const opened = await processed(again, 'dlv_left-1');
    const closed = await processed(again, 'dlv_left-2');
    expect(opened).toMatchObject({ outcome: 'accepted' });
    expect(opened.run_ids).toHaveLength(1);
    // The close came after the open: it found the open's run to cancel (plan runs of a closed PR stop).
    expect(closed.outcome).toBe('filtered');
    const run = (await again.api('GET', `/v1/runs/${opened.run_ids[0]}`)).body;
    expect(run.status).toBe('canceled');
    expect(Date.parse(closed.processed_at)).toBeGreaterThanOrEqual(Date.parse(opened.processed_at));
  } finally {
    await again.halt();
  }
});

it('a delivery an older version recorded but never settled is processed when GitHub redelivers it', async () => {
  const store = w.d.daemon.store;
  // Before the inbox, a delivery was recorded `accepted` and settled in the same request; a SIGKILL in
  // between left it unsettled.
  await store.recordWebhookDelivery(
    storedWebhookDelivery('redelivered-1', {
      id: 'dlv_abandoned',
      outcome: 'accepted',
      receivedAt: Date.now() - 60_000,
    }),
  );
  const r = await deliver(w.d, 'pull_request', prPayload('opened', { sha: w.repo.base }), {
    delivery: 'redelivered-1',
  });
  expect(r.status).toBe(202);
  expect(r.body.duplicate ?? false).toBe(false);
  expect(r.body.run_ids).toHaveLength(1);
  // Once settled, a further redelivery is a plain duplicate naming the same run.
  const again = await deliver(w.d, 'pull_request', prPayload('opened', { sha: w.repo.base }), {
    delivery: 'redelivered-1',
  });
  expect(again.body).toMatchObject({ duplicate: true, run_ids: r.body.run_ids });
});

it('a graceful stop processes what is queued before it closes the store', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) {
    const p = prPayload('opened', { sha: w.repo.base });
    p.number = 100 + i;
    p.pull_request.number = 100 + i;
    ids.push((await deliver(w.d, 'pull_request', p, { wait: false })).answer.delivery_id);
  }
  await w.d.halt();
  const db = new Database(join(w.d.config.data_dir, 'drydock.db'), { readonly: true });
  try {
    const rows = db
      .prepare(`SELECT id, outcome, payload FROM deliveries WHERE source = 'github' ORDER BY rowid`)
      .all() as { id: string; outcome: string; payload: string | null }[];
    expect(rows.map((r) => r.id)).toEqual(ids);
    expect(rows.filter((r) => r.outcome !== 'accepted' || r.payload !== null)).toEqual([]);
  } finally {
    db.close();
  }
});

it('a delivery claimed by a process that died is processed once its claim runs out', async () => {
  const store = w.d.daemon.store;
  const claimedUntil = Date.now() + 400;
  await store.recordWebhookDelivery(
    storedWebhookDelivery('claimed-1', { id: 'dlv_claimed' }),
    JSON.stringify(prPayload('opened', { sha: w.repo.base })),
  );
  await store.updateWebhookDelivery('dlv_claimed', { claimedUntil });
  w.d.daemon.triggers.startInbox();
  const d = await processed(w.d, 'dlv_claimed');
  expect(d.outcome).toBe('accepted');
  expect(Date.parse(d.processed_at)).toBeGreaterThanOrEqual(claimedUntil);
});

it('two daemons on one store never both process a delivery', async () => {
  const other = await startTestDaemon({
    dir: w.d.dir,
    modelUrl: w.model.url,
    patch: (c) => Object.assign(c, w.d.config),
  });
  try {
    let fires = 0;
    for (const d of [w.d, other]) {
      const store = d.daemon.store;
      const fire = store.fireTrigger.bind(store);
      store.fireTrigger = async (input) => {
        fires += 1;
        return fire(input);
      };
    }
    // Both inboxes start on the same queued deliveries at once (as two daemons starting on one file).
    const ids = Array.from({ length: 24 }, (_, i) => `dlv_both${i}`);
    await w.d.daemon.store.recordWebhookDeliveries(
      ids.map((id, i) => {
        const p = prPayload('opened', { sha: w.repo.base });
        p.number = 500 + i;
        p.pull_request.number = 500 + i;
        return {
          delivery: storedWebhookDelivery(id, { id }),
          payload: JSON.stringify(p),
        };
      }),
    );
    w.d.daemon.triggers.startInbox();
    other.daemon.triggers.startInbox();
    for (const id of ids) {
      const d = await processed(w.d, id);
      expect(d.outcome, d.detail ?? '').toBe('accepted');
      expect(d.run_ids).toHaveLength(1);
    }
    expect(fires).toBe(24);
    expect(await allRuns(w.d)).toHaveLength(24);
  } finally {
    await other.halt();
  }
});

it('a synchronize processed again (after a crash or a failure) keeps the run it started itself', async () => {
  await w.trigger({
    name: 'replan',
    events: ['pull_request.synchronize'],
    prompt: 'Plan {{repository}}#{{number}} again.',
  });
  const payload = prPayload('synchronize', { sha: w.repo.base });
  const r = await deliver(w.d, 'pull_request', payload);
  expect(r.body.outcome, r.body.detail).toBe('accepted');
  const [own] = r.body.run_ids;
  await w.d.daemon.store.updateWebhookDelivery(r.body.delivery_id, {
    outcome: 'queued',
    payload: JSON.stringify(payload),
    runIds: [],
    claimedUntil: null,
    processedAt: null,
  });
  w.d.daemon.triggers.startInbox();
  const again = await processed(w.d, r.body.delivery_id);
  expect(again.outcome).toBe('accepted');
  expect(again.run_ids).toEqual([own]);
  const run = (await w.d.api('GET', `/v1/runs/${own}`)).body;
  expect(run.status).not.toBe('canceled');
  if (run.plan_id)
    expect((await w.d.api('GET', `/v1/plans/${run.plan_id}`)).body.status).toBe('pending_approval');
});
