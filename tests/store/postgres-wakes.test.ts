import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { NewNotification } from '../../src/domain/types.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/index.js';
import { LISTEN_APPLICATION_NAME, PgListener, retryDelay } from '../../src/store/postgres/listen.js';
import type { WakeChannel } from '../../src/store/store.js';
import { type FreshDatabase, freshDatabase, postgresAvailable, withClient } from '../support/postgres.js';
import { givenPlan, givenRun, HOUR, T0, webhookDeliveryInput } from './contract/fixtures.js';

// Wake-ups between processes on one PostgreSQL database (WakeStore.onWake: migrations/postgres/000003_wakeups.sql
// NOTIFYs, src/store/postgres/listen.ts LISTENs): two stores on one database stand for two replicas. Changes
// made through store A wake the listeners of both; the listening connection is found in pg_stat_activity by
// its application_name (and the test's database) to cut it. Notifications of different transactions reach a
// listener in commit order, so a change's wake is known not to have come once a later change's has.

const SUITE = 'PostgreSQL store (wake-ups)';

const up = await postgresAvailable(SUITE);

const CHANNELS: readonly WakeChannel[] = ['runs', 'events', 'inbox', 'outbox'];

let template: FreshDatabase | null = null;
const databases: FreshDatabase[] = [];
const stores: PostgresStore[] = [];

async function database(): Promise<FreshDatabase> {
  const db = await freshDatabase({ template: template!.name });
  databases.push(db);
  return db;
}

async function open(url: string, onConnectionError?: (err: Error) => void): Promise<PostgresStore> {
  const store = await openPostgresStore({
    url,
    now: () => T0,
    ...(onConnectionError ? { onConnectionError } : {}),
  });
  stores.push(store);
  return store;
}

/** Every wake of a store, by channel, in order. */
class Wakes {
  readonly seen: Record<WakeChannel, string[]> = { runs: [], events: [], inbox: [], outbox: [] };
  readonly unsubscribe: (() => void)[] = [];

  constructor(store: PostgresStore) {
    for (const channel of CHANNELS) {
      this.unsubscribe.push(store.onWake(channel, (payload) => this.seen[channel].push(payload)));
    }
  }

  clear(): void {
    for (const channel of CHANNELS) this.seen[channel].length = 0;
  }
}

/** Waits (at most `ms`) until `cond` holds. */
async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The listening connections on `db` (those that have run their LISTEN). */
async function listening(db: FreshDatabase): Promise<number> {
  return withClient(db.url, async (c) => {
    const { rows } = await c.query<{ n: string }>(
      `SELECT COUNT(*) AS n FROM pg_stat_activity
       WHERE datname = $1 AND application_name = $2 AND query LIKE 'LISTEN%'`,
      [db.name, LISTEN_APPLICATION_NAME],
    );
    return Number(rows[0]!.n);
  });
}

/** Connections of the listener's application_name on `db`, listening or not. */
async function listenerConnections(db: FreshDatabase): Promise<number> {
  return withClient(db.url, async (c) => {
    const { rows } = await c.query<{ n: string }>(
      'SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
      [db.name, LISTEN_APPLICATION_NAME],
    );
    return Number(rows[0]!.n);
  });
}

/** Ends the listening connections on `db`, as a server restart or a proxy would. */
async function cutListeners(db: FreshDatabase): Promise<number> {
  return withClient(db.url, async (c) => {
    const { rows } = await c.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = $2`,
      [db.name, LISTEN_APPLICATION_NAME],
    );
    return rows.length;
  });
}

let sentinels = 0;

/**
 * Appends an event to a run of its own through `store` and waits until `wakes` saw it: every change committed
 * before it has been delivered by then.
 */
async function settled(store: PostgresStore, wakes: Wakes[]): Promise<void> {
  const runId = `run_sentinel_${++sentinels}`;
  await givenRun(store, runId);
  await store.appendEvent(runId, 'sentinel', {}, T0);
  await until(() => wakes.every((w) => w.seen.events.includes(runId)), `the sentinel ${runId} arrived`);
}

const notification = (id: string, eventRowid: number): NewNotification => ({
  id,
  eventRowid,
  webhook: 'wh_slack',
  webhookUrl: 'https://hooks.example.com/services',
  event: 'plan.pending',
  runId: 'run_1',
  planId: null,
  data: { title: id },
  body: `{"id":"${id}"}`,
  nextAttemptAt: T0,
  createdAt: T0,
});

describe.skipIf(!up)('PostgreSQL store: wake-ups', () => {
  beforeAll(async () => {
    template = await freshDatabase();
    await (await openPostgresStore({ url: template.url, now: () => T0 })).close();
  });
  afterAll(async () => {
    await template?.drop();
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const db of databases.splice(0)) await db.drop();
  });

  it('wakes the listeners of both stores on the channel of each change, events with the run id', async () => {
    const db = await database();
    const a = await open(db.url);
    const b = await open(db.url);
    const wa = new Wakes(a);
    const wb = new Wakes(b);
    await until(async () => (await listening(db)) === 2, 'both stores listen');
    const both = [wa, wb];
    const expectWoken = async (channel: WakeChannel, payload: string, what: string) => {
      await until(() => both.every((w) => w.seen[channel].includes(payload)), `${what} woke ${channel}`);
    };

    // runs: a run created, a run transitioned.
    await givenRun(a, 'run_1');
    await expectWoken('runs', '', 'a run created');
    for (const w of both) w.clear();
    expect(await a.transitionRun('run_1', ['queued'], 'running', { startedAt: T0 })).toBe(true);
    await expectWoken('runs', '', 'a run transitioned');

    // events: the run id.
    for (const w of both) w.clear();
    await a.appendEvent('run_1', 'run.started', {}, T0);
    await expectWoken('events', 'run_1', 'an event appended');

    // A question asked wakes no one; answered, it wakes runs.
    for (const w of both) w.clear();
    await a.createQuestion({
      id: 'q_1',
      runId: 'run_1',
      sessionId: 'ses_1',
      toolUseId: 'toolu_q_1',
      questions: [{ question: 'Which?', header: 'Which', multiSelect: false, options: [{ label: 'this' }] }],
      priorResults: [],
      createdAt: T0,
      expiresAt: T0 + HOUR,
    });
    await settled(a, both);
    expect(wb.seen.runs).toEqual(['']); // the sentinel's own run, nothing for the question
    for (const w of both) w.clear();
    expect(await a.answerQuestion('q_1', { 'Which?': 'this' }, 'alice', T0)).toBe(true);
    await expectWoken('runs', '', 'a question answered');

    // inbox: a delivery queued wakes it; one recorded as rejected does not.
    for (const w of both) w.clear();
    await a.recordWebhookDelivery(webhookDeliveryInput('dlv_rejected', { outcome: 'rejected' }));
    await settled(a, both);
    expect(wb.seen.inbox).toEqual([]);
    await a.recordWebhookDelivery(webhookDeliveryInput('dlv_1'), '{"action":"opened"}');
    await expectWoken('inbox', '', 'a delivery queued');

    // outbox: a notification queued; a plan's delivery made pending.
    for (const w of both) w.clear();
    await a.enqueueNotifications([notification('ntf_1', await a.eventLogEnd())], await a.eventLogEnd());
    await expectWoken('outbox', '', 'a notification queued');
    const plan = await givenPlan(a, 'pln_1');
    for (const w of both) w.clear();
    expect(await a.transitionPlan(plan.id, ['pending_approval'], 'executed')).toBe(true);
    await expectWoken('outbox', '', 'a plan executed (its delivery undecided)');
    for (const w of both) w.clear();
    expect(await a.updatePlanDelivery(plan.id, [null], { status: 'pending', nextAttemptAt: T0 })).toBe(true);
    await expectWoken('outbox', '', 'a plan delivery queued');

    // Each channel's listeners only: nothing of the above reached another channel with a payload of its own.
    expect(wb.seen.events.every((p) => p === 'run_1' || p.startsWith('run_sentinel_'))).toBe(true);
  });

  it('a transaction that appends 20 events to one run wakes a listener once for that run', async () => {
    const db = await database();
    const a = await open(db.url);
    const b = await open(db.url);
    const wb = new Wakes(b);
    await until(async () => (await listening(db)) === 1, 'b listens');
    await givenRun(a, 'run_1');
    await withClient(db.url, async (c) => {
      await c.query('BEGIN');
      for (let seq = 1; seq <= 20; seq++) {
        await c.query(
          `INSERT INTO run_events (run_id, seq, type, data, at) VALUES ('run_1', $1, 'tick', '{}', $2)`,
          [seq, T0],
        );
      }
      await c.query('COMMIT');
    });
    await settled(a, [wb]);
    expect(wb.seen.events.filter((p) => p === 'run_1')).toEqual(['run_1']);
    expect((await a.listEvents('run_1', 0, 100)).length).toBe(20);
  });

  it('after its connection is cut the listener connects again, wakes every listener with "", and hears later changes', async () => {
    const db = await database();
    const a = await open(db.url);
    const errors: Error[] = [];
    const b = await open(db.url, (err) => errors.push(err));
    const wb = new Wakes(b);
    await until(async () => (await listening(db)) === 1, 'b listens');
    wb.clear();

    expect(await cutListeners(db)).toBe(1);
    // Woken once on every channel with '' when listening again (after the first wait, 1 s).
    await until(() => CHANNELS.every((c) => wb.seen[c].length > 0), 'every listener was woken', 10_000);
    for (const channel of CHANNELS) expect(wb.seen[channel]).toEqual(['']);
    expect(errors.length).toBeGreaterThan(0);
    expect(await listening(db)).toBe(1);

    wb.clear();
    await givenRun(a, 'run_after');
    await a.appendEvent('run_after', 'run.started', {}, T0);
    await until(() => wb.seen.events.includes('run_after'), 'a later event arrived');
    expect(wb.seen.runs.length).toBeGreaterThan(0);
  }, 15_000);

  it('close() while waiting to connect again leaves no connection and no retry behind', async () => {
    const db = await database();
    const errors: Error[] = [];
    const b = await openPostgresStore({
      url: db.url,
      now: () => T0,
      onConnectionError: (e) => errors.push(e),
    });
    const wb = new Wakes(b);
    await until(async () => (await listening(db)) === 1, 'b listens');
    await cutListeners(db);
    await until(() => errors.length > 0, 'the listener saw its connection go');
    await b.close();
    // Past the first wait (1 s): a retry left behind would have connected by now.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await listenerConnections(db)).toBe(0);
    for (const channel of CHANNELS) expect(wb.seen[channel]).toEqual([]);
  }, 15_000);

  it('close() while the listener is still connecting ends that connection', async () => {
    const db = await database();
    const b = await openPostgresStore({ url: db.url, now: () => T0 });
    b.onWake('runs', () => {});
    await b.close();
    await until(async () => (await listenerConnections(db)) === 0, 'no listener connection is left', 3_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(await listenerConnections(db)).toBe(0);
  });

  it('an unsubscribed listener is not called; the store connects to listen only once subscribed', async () => {
    const db = await database();
    const a = await open(db.url);
    const b = await open(db.url);
    expect(await listenerConnections(db)).toBe(0);
    const gone: string[] = [];
    const off = b.onWake('runs', (p) => gone.push(p));
    const wb = new Wakes(b);
    await until(async () => (await listening(db)) === 1, 'b listens');
    off();
    off();
    await settled(a, [wb]);
    expect(wb.seen.runs.length).toBeGreaterThan(0);
    expect(gone).toEqual([]);
  });
});

describe('PostgreSQL wake-up listener without a server', () => {
  it('waits 1 s, 2 s, 4 s ... at most 30 s before connecting again', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 40].map((n) => retryDelay(n))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });

  it('keeps trying a server that refuses, never throwing, and stops at close()', async () => {
    const errors: Error[] = [];
    const listener = new PgListener({
      // Nothing listens on port 1; the password must appear in no error.
      connection: {
        connectionString: 'postgres://drydock:s3cret-pw@127.0.0.1:1/none',
        connectionTimeoutMillis: 1_000,
      },
      onError: (err) => errors.push(err),
      firstRetryMs: 10,
      maxRetryMs: 20,
    });
    const calls: string[] = [];
    listener.onWake('runs', (p) => calls.push(p));
    await until(() => errors.length >= 3, 'three attempts failed');
    await listener.close();
    const seen = errors.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(errors.length).toBe(seen);
    expect(calls).toEqual([]);
    expect(errors.map((e) => `${e.message} ${e.stack}`).join('\n')).not.toContain('s3cret-pw');
  });
});
