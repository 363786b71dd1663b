import { expect, it } from 'vitest';
import type { WebhookDelivery } from '../../src/domain/types.js';
import { silentLogger } from '../../src/logger.js';
import type { Store } from '../../src/store/store.js';
import { WebhookInbox } from '../../src/triggers/inbox.js';

// The inbox worker on its own, over a store that holds queued deliveries in memory: order, giving way while
// webhooks are answered without stopping, failures, and the stop's grace.

function world(n: number, opts: { busy?: () => boolean; failOn?: string } = {}) {
  const queued: { delivery: WebhookDelivery; payload: string }[] = Array.from({ length: n }, (_, i) => ({
    delivery: { id: `dlv_${i}` } as WebhookDelivery,
    payload: `{"n":${i}}`,
  }));
  const done: string[] = [];
  const failed: string[] = [];
  const store = {
    async queuedWebhookDeliveries(limit: number) {
      return queued.slice(0, limit).map((q) => q.delivery);
    },
    async claimWebhookDelivery(id: string) {
      return queued.find((q) => q.delivery.id === id)?.payload ?? null;
    },
    async nextWebhookClaimLapse() {
      return null;
    },
    async updateWebhookDelivery() {},
  } as unknown as Store;
  const settle = (id: string) =>
    queued.splice(
      queued.findIndex((q) => q.delivery.id === id),
      1,
    );
  const inbox = new WebhookInbox({
    store,
    logger: silentLogger(),
    batch: 4,
    ...(opts.busy ? { busy: opts.busy } : {}),
    async process(d, payload) {
      if (d.id === opts.failOn) throw new Error('boom');
      expect(JSON.parse(payload).n).toBe(Number(d.id.slice(4)));
      done.push(d.id);
      settle(d.id);
    },
    async fail(d) {
      failed.push(d.id);
      settle(d.id);
    },
  });
  return { inbox, queued, done, failed };
}

const until = async (cond: () => boolean, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

it('processes every queued delivery once, in arrival order, across batches; a failure is handed to fail()', async () => {
  const w = world(10, { failOn: 'dlv_3' });
  w.inbox.notify();
  w.inbox.notify(); // a second notice while it runs starts no second worker
  await until(() => w.queued.length === 0);
  expect(w.done).toEqual(['dlv_0', 'dlv_1', 'dlv_2', 'dlv_4', 'dlv_5', 'dlv_6', 'dlv_7', 'dlv_8', 'dlv_9']);
  expect(w.failed).toEqual(['dlv_3']);
});

it('while webhooks are being answered it slows to one delivery per 10 ms, and still gets through', async () => {
  const w = world(20, { busy: () => true });
  const started = performance.now();
  w.inbox.notify();
  await until(() => w.queued.length === 0);
  const ms = performance.now() - started;
  expect(w.done).toHaveLength(20);
  // 19 pauses of 10 ms at least between the 20 deliveries.
  expect(ms).toBeGreaterThanOrEqual(180);

  const idle = world(20, { busy: () => false });
  const t0 = performance.now();
  idle.inbox.notify();
  await until(() => idle.queued.length === 0);
  expect(idle.done).toHaveLength(20);
  expect(performance.now() - t0).toBeLessThan(ms);
});

it('a stop lets it go on within the grace period, then stops between two deliveries', async () => {
  const w = world(1_000, { busy: () => true });
  w.inbox.notify();
  await w.inbox.stop(50);
  const after = w.done.length;
  expect(after).toBeGreaterThan(0);
  expect(after).toBeLessThan(1_000);
  await new Promise((r) => setTimeout(r, 50));
  expect(w.done.length).toBe(after);
  // Stopped: a notice starts nothing.
  w.inbox.notify();
  await new Promise((r) => setTimeout(r, 30));
  expect(w.done.length).toBe(after);
});

it('a store that fails is looked at again after its retry wait, not at every notice meanwhile', async () => {
  let reads = 0;
  let down = true;
  const done: string[] = [];
  const queued = [{ id: 'dlv_0' } as WebhookDelivery];
  const store = {
    async queuedWebhookDeliveries() {
      reads += 1;
      if (down) throw new Error('database is locked');
      return queued.splice(0);
    },
    async claimWebhookDelivery() {
      return '{}';
    },
    async nextWebhookClaimLapse() {
      return null;
    },
  } as unknown as Store;
  const inbox = new WebhookInbox({
    store,
    logger: silentLogger(),
    async process(d) {
      done.push(d.id);
    },
    async fail() {},
  });
  inbox.notify();
  await until(() => reads === 1);
  // Notices during the backoff do not hit the failing store again.
  for (let i = 0; i < 20; i++) inbox.notify();
  await new Promise((r) => setImmediate(r));
  expect(reads).toBe(1);
  down = false;
  await until(() => done.length === 1);
  expect(done).toEqual(['dlv_0']);
  await inbox.stop(0);
});

it("with nothing it may take, it looks again when another process's claim lapses", async () => {
  let now = 1_000_000;
  const claimedUntil = now + 40;
  const done: string[] = [];
  let left = true;
  const store = {
    // As the stores do: a delivery someone holds a live claim on is not listed as queued.
    async queuedWebhookDeliveries(_limit: number, at: number) {
      return left && at >= claimedUntil ? [{ id: 'dlv_0' } as WebhookDelivery] : [];
    },
    async claimWebhookDelivery() {
      // Claimed elsewhere until its claim lapses.
      return now >= claimedUntil ? '{}' : null;
    },
    async nextWebhookClaimLapse(at: number) {
      return left && at < claimedUntil ? claimedUntil : null;
    },
  } as unknown as Store;
  const inbox = new WebhookInbox({
    store,
    logger: silentLogger(),
    now: () => now,
    async process(d) {
      done.push(d.id);
      left = false;
    },
    async fail() {},
  });
  inbox.notify();
  await new Promise((r) => setTimeout(r, 10));
  expect(done).toEqual([]);
  // The claim lapses: the wake-up the inbox asked for takes the delivery, with no notice.
  now = claimedUntil;
  await until(() => done.length === 1);
  await inbox.stop(0);
});
