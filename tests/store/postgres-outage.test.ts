import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { PgDb } from '../../src/store/postgres/db.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/index.js';
import { LISTEN_APPLICATION_NAME, listenerOf } from '../../src/store/postgres/listen.js';
import { logOutages, type OutageEvent, OutageTracker } from '../../src/store/postgres/outage.js';
import { StoreUnavailableError } from '../../src/store/store.js';
import { until } from '../support/daemon.js';
import { type FreshDatabase, freshDatabase, postgresAvailable, withClient } from '../support/postgres.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { T0 } from './contract/fixtures.js';

// Outages of the PostgreSQL database as the store meets them: logged once each (outage.ts), and the wake-up
// listener back as soon as the pool is answered again (listen.ts poolAnswered). The database goes away
// behind a TCP proxy on loopback (tests/support/tcp-proxy.ts); the shared server keeps running.

const SUITE = 'PostgreSQL store (outages)';

const up = await postgresAvailable(SUITE);

describe('the outage tracker', () => {
  it('reports the first failure and the first answer after it; failures between are only counted', () => {
    const seen: OutageEvent[] = [];
    let now = T0;
    const t = new OutageTracker(
      (e) => seen.push(e),
      () => now,
    );
    t.answered(t.begin());
    expect(seen).toEqual([]);
    t.begin();
    const cause = new Error('connect ECONNREFUSED');
    t.failed(cause);
    t.failed(new Error('again'));
    now += 1_500;
    t.failed(new Error('and again'));
    t.answered(t.begin());
    expect(seen).toEqual([
      { kind: 'down', at: T0, cause },
      { kind: 'back', start: T0, end: T0 + 1_500, durationMs: 1_500, failed: 3 },
    ]);
    expect(t.down).toBe(false);
  });

  it('an operation begun before the outage, answered during it, does not end it', () => {
    const seen: OutageEvent['kind'][] = [];
    const t = new OutageTracker((e) => seen.push(e.kind));
    const early = t.begin();
    t.begin();
    t.failed(new Error('terminating connection due to administrator command'));
    t.answered(early);
    expect(t.down).toBe(true);
    expect(seen).toEqual(['down']);
    t.answered(t.begin());
    expect(seen).toEqual(['down', 'back']);
  });
});

describe.skipIf(!up)('PostgreSQL store: database outages', () => {
  let template: FreshDatabase | null = null;
  const cleanup: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    template = await freshDatabase();
    await (await openPostgresStore({ url: template.url, now: () => T0 })).close();
  });
  afterAll(async () => {
    await template?.drop();
  });
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  async function database(): Promise<FreshDatabase> {
    const db = await freshDatabase({ template: template!.name });
    cleanup.push(() => db.drop());
    return db;
  }

  async function proxy(db: FreshDatabase): Promise<TcpProxy> {
    const p = await TcpProxy.start(db.url);
    cleanup.push(() => p.close());
    return p;
  }

  it('logs one warning for an outage, however many calls fail, and one line with its counts when it ends', async () => {
    const db = await database();
    const p = await proxy(db);
    const lines: { level: number; msg: string; [key: string]: unknown }[] = [];
    const logger = createLogger('debug', { write: (line: string) => void lines.push(JSON.parse(line)) });
    const store: PostgresStore = await openPostgresStore({
      url: p.url(db.url),
      migrate: false,
      onOutage: logOutages(logger),
    });
    cleanup.push(() => store.close());
    await store.getSession('ses_x');

    p.cut();
    const calls = 12;
    const failures = await Promise.all([
      ...Array.from({ length: calls / 2 }, () => store.getSession('ses_x').catch((e: unknown) => e)),
      ...Array.from({ length: calls / 2 }, () => store.countJobs().catch((e: unknown) => e)),
    ]);
    for (const err of failures) expect(err).toBeInstanceOf(StoreUnavailableError);
    expect(lines.map((l) => l.msg)).toEqual([expect.stringMatching(/^database unreachable: /)]);
    expect(lines[0]!.level).toBe(40);

    p.restore();
    expect(await store.getSession('ses_x')).toBeNull();
    await store.countJobs();
    expect(lines).toHaveLength(2);
    const back = lines[1]!;
    expect(back).toMatchObject({ level: 30, msg: 'database reachable again', failed_operations: calls });
    expect(Date.parse(back.end as string)).toBeGreaterThanOrEqual(Date.parse(back.start as string));
    expect(back.duration_ms).toBe(Date.parse(back.end as string) - Date.parse(back.start as string));

    // The next outage is reported again, on its own.
    p.cut();
    await expect(store.countJobs()).rejects.toBeInstanceOf(StoreUnavailableError);
    p.restore();
    await store.countJobs();
    expect(lines.slice(2).map((l) => [l.msg.replace(/:.*/, ''), l.failed_operations])).toEqual([
      ['database unreachable', undefined],
      ['database reachable again', 1],
    ]);
  });

  it('a statement answered after an outage makes the wake-up listener listen again at once, not at its next retry', async () => {
    const db = await database();
    const p = await proxy(db);
    const pool = new PgDb({ url: p.url(db.url) });
    cleanup.push(() => pool.close());
    const errors: Error[] = [];
    // Waits of a minute between attempts: only the pool's answer can bring the listener back within the test.
    const listener = listenerOf(pool, {
      firstRetryMs: 60_000,
      maxRetryMs: 60_000,
      onError: (e) => errors.push(e),
    });
    const woken: string[] = [];
    listener.onWake('events', (payload) => woken.push(payload));
    await until(async () => (await listening(db)) === 1, 'the listener listens');

    p.cut();
    await until(() => errors.length > 0, 'the listener lost its connection');
    await expect(pool.value('SELECT 1')).rejects.toBeInstanceOf(StoreUnavailableError);
    // A failed statement is no sign of the database: the listener waits out its retry.
    expect(p.dropped.filter((name) => name === LISTEN_APPLICATION_NAME)).toEqual([]);

    p.restore();
    expect(await pool.value('SELECT 1')).toBe(1);
    // Listening again, it wakes everyone with '' (what was notified meanwhile is lost), then hears NOTIFYs.
    // The bound is generous (10 s, against the 60 s retry): on a loaded machine the reconnect takes longer
    // than the second it takes here.
    await until(() => woken.includes(''), 'the listener listens again', 10_000);
    await withClient(db.url, (c) => c.query(`SELECT pg_notify('drydock_events', 'run_after')`));
    await until(() => woken.includes('run_after'), 'a later NOTIFY arrived');
    expect(woken).toEqual(['', 'run_after']);
  });
});

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
