import { afterEach, beforeEach, expect, it } from 'vitest';
import { deliver, prPayload, type TriggerWorld, triggerWorld } from './helpers.js';

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

it('a delivery a dead process recorded but never settled is processed when GitHub redelivers it', async () => {
  const store = w.d.daemon.store;
  // What a SIGKILL between recording the delivery and starting its run leaves behind.
  await store.recordDelivery({
    id: 'dlv_abandoned',
    source: 'github',
    key: 'redelivered-1',
    event: 'pull_request.opened',
    triggerId: null,
    outcome: 'accepted',
    detail: null,
    subject: null,
    runIds: [],
    receivedAt: Date.now() - 60_000,
  });
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
