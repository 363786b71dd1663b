import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { defaultConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/logger.js';
import { Notifier } from '../../src/notify/notifier.js';
import { Reactions } from '../../src/reactions/reactions.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../support/harness.js';

const dirs: { remove(): void }[] = [];
const stores: SqliteStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) d.remove();
});

function setup() {
  const tmp = tempDir('drydock-notifier-');
  dirs.push(tmp);
  const file = join(tmp.path, 'drydock.db');
  const config = defaultConfig();
  config.notifications.webhooks = [
    { url: 'http://127.0.0.1:9/a', events: ['plan.pending'], secret: 's', format: 'json' },
    { url: 'http://127.0.0.1:9/b', events: ['plan.executed'], secret: null, format: 'slack' },
  ];
  // Two daemons on one database file; the notifier's collect step is its reaction to the event log.
  const open = (holder = 'a') => {
    const store = new SqliteStore({ file });
    stores.push(store);
    const notifier = new Notifier({ store, clock: systemClock, logger: silentLogger(), config });
    const reactions = new Reactions({
      store,
      clock: systemClock,
      logger: silentLogger(),
      holder,
      reactions: [notifier.reaction],
    });
    /** One pass of the reaction; how many outbox rows it added. */
    const collect = async () => {
      const before = await store.countNotifications();
      await reactions.runOnce();
      const after = await store.countNotifications();
      return (
        after.pending + after.delivered + after.failed - before.pending - before.delivered - before.failed
      );
    };
    return { store, notifier, reactions, collect };
  };
  return { open };
}

const proposed = (i: number) => ({ plan_id: `pln_${i}`, markdown: `## Plan ${i}\n` });

it('the first start begins at the end of the log; later events make one row per (event, webhook) that wants it', async () => {
  const { open } = setup();
  const a = open();
  await a.store.appendEvent('run_old', 'plan_proposed', proposed(0), 1);
  await a.reactions.init();
  const start = await a.store.eventLogEnd();
  expect(await a.store.reactionCursor('notifications')).toBe(start);
  await a.store.appendEvent('run_1', 'plan_proposed', proposed(1), 2);
  await a.store.appendEvent('run_1', 'text_delta', { text: 'x' }, 3);
  await a.store.appendEvent('run_1', 'run_finished', { status: 'planned' }, 4); // not an execution: nothing
  expect(await a.collect()).toBe(1);
  expect(await a.collect()).toBe(0);
  const page = await a.store.listNotifications({ limit: 10 });
  expect(page.items).toHaveLength(1);
  expect(page.items[0]).toMatchObject({
    event: 'plan.pending',
    planId: 'pln_1',
    status: 'pending',
    attempts: 0,
    webhookUrl: 'http://127.0.0.1:9/a',
    data: { title: 'Plan 1' },
  });
  expect(await a.store.reactionCursor('notifications')).toBe(await a.store.eventLogEnd());
  // A second init (a restart) leaves the cursor where it is.
  await a.store.appendEvent('run_2', 'plan_proposed', proposed(2), 5);
  await a.reactions.init();
  expect(await a.collect()).toBe(1);
  // An event handed over again (a crash before the cursor moved) writes nothing new.
  const { events } = await a.store.eventsAfter(start, ['plan_proposed'], 10);
  expect(events).toHaveLength(2);
  for (const event of events) expect(await a.notifier.collect(event)).toBe(0);
  expect(await a.store.countNotifications()).toEqual({ pending: 2, delivered: 0, failed: 0 });
});

it('two daemons collecting the same events write each row once, and claim disjoint rows', async () => {
  const { open } = setup();
  const a = open('a');
  const b = open('b');
  await a.reactions.init();
  await b.reactions.init();
  for (let i = 1; i <= 5; i++) await a.store.appendEvent(`run_${i}`, 'plan_proposed', proposed(i), i);
  await Promise.all([a.reactions.runOnce(), b.reactions.runOnce()]);
  expect(await a.store.countNotifications()).toEqual({ pending: 5, delivered: 0, failed: 0 });
  const end = await a.store.eventLogEnd();
  expect(await b.store.reactionCursor('notifications')).toBe(end);
  // Either daemon collecting an event again writes no second row.
  const { events } = await b.store.eventsAfter(0, ['plan_proposed'], 10);
  for (const event of events) expect(await b.notifier.collect(event)).toBe(0);
  expect(await a.store.countNotifications()).toEqual({ pending: 5, delivered: 0, failed: 0 });

  const now = Date.now() + 1;
  const first = await a.store.claimNotifications(now, now + 60_000, 3);
  const second = await b.store.claimNotifications(now, now + 60_000, 3);
  expect(first).toHaveLength(3);
  expect(second).toHaveLength(2);
  const ids = new Set([...first, ...second].map((n) => n.id));
  expect(ids.size).toBe(5);
  expect([...first, ...second].every((n) => n.attempts === 1)).toBe(true);
  // Held: not due again until the hold runs out.
  expect(await a.store.claimNotifications(now + 1, now + 60_000, 10)).toEqual([]);
  expect(await a.store.nextNotificationDue()).toBe(now + 60_000);

  await a.store.settleNotification(first[0]!.id, { status: 'delivered', at: now });
  await a.store.settleNotification(first[1]!.id, { status: 'failed', error: 'HTTP 500' });
  await a.store.settleNotification(first[2]!.id, {
    status: 'pending',
    nextAttemptAt: now + 5,
    error: 'HTTP 503',
  });
  // A late outcome for a settled row changes nothing.
  await b.store.settleNotification(first[0]!.id, { status: 'failed', error: 'late' });
  expect(await a.store.countNotifications()).toEqual({ pending: 3, delivered: 1, failed: 1 });
  const again = await b.store.claimNotifications(now + 5, now + 60_000, 10);
  expect(again.map((n) => [n.id, n.attempts, n.lastError])).toEqual([[first[2]!.id, 2, 'HTTP 503']]);
  expect((await a.store.listNotifications({ status: 'delivered', limit: 10 })).items[0]!.deliveredAt).toBe(
    now,
  );
});
