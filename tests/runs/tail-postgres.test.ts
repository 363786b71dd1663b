import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import type { RunEvent } from '../../src/domain/types.js';
import { RunEvents } from '../../src/runs/events.js';
import { type TailSink, tailEvents } from '../../src/runs/tail.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/index.js';
import { LISTEN_APPLICATION_NAME } from '../../src/store/postgres/listen.js';
import { givenRun, T0 } from '../store/contract/fixtures.js';
import { until } from '../support/daemon.js';
import { type FreshDatabase, freshDatabase, postgresAvailable, withClient } from '../support/postgres.js';
import { applicationName, TcpProxy } from '../support/tcp-proxy.js';

// A run's event stream on one replica while another replica appends the events, with the first replica's
// wake-up listener cut off (its backend terminated, and every attempt to connect again refused by a proxy
// in front of the database that lets only the pool through): the stream reads the log without wake-ups.

const SUITE = 'run event stream on PostgreSQL';

const up = await postgresAvailable(SUITE);

/** The wake-up listeners' backends on `db` that have run their LISTEN: counted, or terminated. */
async function listeners(db: FreshDatabase, what: 'count' | 'terminate'): Promise<number> {
  return withClient(db.url, async (c) => {
    const { rows } = await c.query(
      `SELECT ${what === 'terminate' ? 'pg_terminate_backend(pid)' : 'pid'} FROM pg_stat_activity
       WHERE datname = $1 AND application_name = $2 AND query LIKE 'LISTEN%'`,
      [db.name, LISTEN_APPLICATION_NAME],
    );
    return rows.length;
  });
}

const receipt = {
  status: 'planned',
  error: null,
  turns: 1,
  usage: {},
  cost_usd: 0,
  duration_ms: 1,
  active_ms: 1,
  plan_id: 'pln_1',
} as const;

describe.skipIf(!up)('a run event stream on PostgreSQL', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  it('delivers every event through run_finished of a run executing elsewhere while its LISTEN connection is cut', async () => {
    const db = await freshDatabase();
    cleanup.push(() => db.drop());
    const writer: PostgresStore = await openPostgresStore({ url: db.url, now: () => T0 });
    cleanup.push(() => writer.close());
    const proxy = await TcpProxy.start(db.url);
    cleanup.push(() => proxy.close());
    const reader: PostgresStore = await openPostgresStore({ url: proxy.url(db.url), migrate: false });
    cleanup.push(() => reader.close());

    await givenRun(writer, 'run_1');
    const elsewhere = new RunEvents(writer, systemClock);
    await elsewhere.emit('run_1', 'text_delta', { text: 'before the cut' });

    const written: string[] = [];
    const sink: TailSink = {
      event: async (e: RunEvent) => void written.push(`${e.seq}:${e.type}`),
      keepAlive: async () => {},
      ended: async () => void written.push('end'),
      onAbort: () => {},
    };
    // The reader's own RunEvents: nothing the writer emits is pushed to it.
    const done = tailEvents(
      { store: reader, events: new RunEvents(reader, systemClock) },
      'run_1',
      0,
      sink,
      'stop',
    );
    await until(() => written.includes('1:text_delta'), 'the stored event was replayed');
    await until(async () => (await listeners(db, 'count')) === 1, 'the reader listens');

    // Cut: the listening backend is terminated, and no listener may connect again.
    proxy.refuse((startup) => applicationName(startup) === LISTEN_APPLICATION_NAME);
    expect(await listeners(db, 'terminate')).toBe(1);
    await until(
      () => proxy.dropped.includes(LISTEN_APPLICATION_NAME),
      'the listener tried again and was refused',
    );

    await elsewhere.emit('run_1', 'text_delta', { text: 'after the cut' });
    await until(() => written.includes('2:text_delta'), 'an event appended elsewhere arrived');
    await elsewhere.emit('run_1', 'text_delta', { text: 'last' });
    await elsewhere.emit('run_1', 'run_finished', receipt);
    await writer.transitionRun('run_1', ['queued'], 'planned', { finishedAt: T0 });
    await done;
    expect(written).toEqual(['1:text_delta', '2:text_delta', '3:text_delta', '4:run_finished']);
    // The stream never had its wake-ups back.
    expect(await listeners(db, 'count')).toBe(0);
  });
});
