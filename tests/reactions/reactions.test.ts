import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LoggedEvent } from '../../src/domain/types.js';
import { createLogger } from '../../src/logger.js';
import { PermanentReactionError, type Reaction, Reactions } from '../../src/reactions/reactions.js';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { FakeClock } from '../support/fake-clock.js';
import { T0, tempDir } from '../support/harness.js';
import { type FreshDatabase, freshDatabase, postgresAvailable } from '../support/postgres.js';

// The one mechanism every reaction runs on: the stored event log read after a durable cursor, effects at
// least once, a failing effect retried with backoff at the same event, a permanent one logged and passed,
// and of two replicas on one PostgreSQL database only the one holding the cursor reacting.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function sqliteFile(): string {
  const tmp = tempDir('drydock-reactions-');
  cleanups.push(() => tmp.remove());
  return join(tmp.path, 'drydock.db');
}

function openSqlite(file: string): SqliteStore {
  const store = new SqliteStore({ file });
  cleanups.push(() => store.close());
  return store;
}

/** A reaction that records the rowids it is handed and does what `effect` says with each. */
function recorder(effect: (e: LoggedEvent) => Promise<void> | void = () => {}) {
  const seen: number[] = [];
  const reaction: Reaction = {
    name: 'recorder',
    types: ['plan_proposed'],
    async react(e) {
      seen.push(e.rowid);
      await effect(e);
    },
  };
  return { seen, reaction };
}

function runner(store: Store, clock: FakeClock, reaction: Reaction, holder = 'r-a', lines: string[] = []) {
  const logger = createLogger('debug', { write: (l: string) => void lines.push(l) });
  return new Reactions({
    store,
    clock,
    logger,
    holder,
    reactions: [reaction],
    holdMs: 10_000,
    retryBaseMs: 1_000,
    random: () => 0,
  });
}

const propose = (store: Store, i: number) =>
  store.appendEvent(`run_${i}`, 'plan_proposed', { plan_id: `pln_${i}`, markdown: `## ${i}\n` }, T0 + i);

describe('Reactions on the SQLite store', () => {
  it('starts at the log end on its first start, hands events over in order, and a restart goes on from the cursor', async () => {
    const file = sqliteFile();
    const store = openSqlite(file);
    const clock = new FakeClock(T0);
    await propose(store, 0); // before the first start: not reacted to
    const r = recorder();
    const first = runner(store, clock, r.reaction);
    await first.init();
    for (let i = 1; i <= 3; i++) await propose(store, i);
    await store.appendEvent('run_1', 'text_delta', { text: 'x' }, T0 + 9); // not its type
    await first.runOnce();
    const { events } = await store.eventsAfter(0, ['plan_proposed'], 10);
    expect(r.seen).toEqual(events.slice(1).map((e) => e.rowid));
    expect(await store.reactionCursor('recorder')).toBe(await store.eventLogEnd());

    // A restart: the cursor is kept, nothing is handed over twice, what came meanwhile is.
    await propose(store, 4);
    const again = recorder();
    const second = runner(openSqlite(file), clock, again.reaction);
    await second.init();
    await second.runOnce();
    expect(again.seen).toEqual([await store.eventLogEnd()]);
  });

  it('an effect cut off before the cursor moved (the process died) is handed over again after the restart', async () => {
    const file = sqliteFile();
    const store = openSqlite(file);
    const clock = new FakeClock(T0);
    const never = new Promise<void>(() => {});
    const dying = recorder(() => never);
    const first = runner(store, clock, dying.reaction);
    await first.init();
    await propose(store, 1);
    void first.runOnce(); // hangs in the effect, as a process killed mid-effect would
    await expect.poll(() => dying.seen.length).toBe(1);
    const cursor = await store.reactionCursor('recorder');

    const next = recorder();
    const second = runner(openSqlite(file), clock, next.reaction); // the same replica name, restarted
    await second.init();
    await second.runOnce();
    expect(next.seen).toEqual(dying.seen);
    expect(await store.reactionCursor('recorder')).toBeGreaterThan(cursor!);
  });

  it('a failing effect keeps the cursor at its event and is retried after a growing backoff; later events wait', async () => {
    const store = openSqlite(sqliteFile());
    const clock = new FakeClock(T0);
    let failures = 2;
    const r = recorder(() => {
      if (failures-- > 0) throw new Error('GitHub: 502 Bad Gateway');
    });
    const lines: string[] = [];
    const reactions = runner(store, clock, r.reaction, 'r-a', lines);
    await reactions.init();
    await propose(store, 1);
    await propose(store, 2);
    const [e1, e2] = (await store.eventsAfter(0, ['plan_proposed'], 10)).events;
    const start = await store.reactionCursor('recorder');

    await reactions.runOnce();
    expect(r.seen).toEqual([e1!.rowid]);
    expect(await store.reactionCursor('recorder')).toBe(start);
    // Not due yet: the pass leaves it alone (random 0: half of 1 s, then half of 2 s).
    clock.advance(499);
    await reactions.runOnce();
    expect(r.seen).toEqual([e1!.rowid]);
    clock.advance(1);
    await reactions.runOnce();
    expect(r.seen).toEqual([e1!.rowid, e1!.rowid]);
    clock.advance(999);
    await reactions.runOnce();
    expect(r.seen).toHaveLength(2);
    clock.advance(1);
    await reactions.runOnce();
    expect(r.seen).toEqual([e1!.rowid, e1!.rowid, e1!.rowid, e2!.rowid]);
    expect(await store.reactionCursor('recorder')).toBe(await store.eventLogEnd());
    const retried = lines.filter((l) => l.includes('reaction failed; will retry'));
    expect(retried.map((l) => JSON.parse(l).retry_in_ms)).toEqual([500, 1_000]);
    expect(JSON.parse(retried[0]!)).toMatchObject({
      reaction: 'recorder',
      event_rowid: e1!.rowid,
      attempt: 1,
    });
  });

  it('a permanent failure is logged and passed: the next event goes on at once', async () => {
    const store = openSqlite(sqliteFile());
    const clock = new FakeClock(T0);
    const r = recorder((e) => {
      if ((e.data as { plan_id: string }).plan_id === 'pln_1') {
        throw new PermanentReactionError('POST comment on acme/widgets#2: 422 Validation Failed');
      }
    });
    const lines: string[] = [];
    const reactions = runner(store, clock, r.reaction, 'r-a', lines);
    await reactions.init();
    await propose(store, 1);
    await propose(store, 2);
    await reactions.runOnce();
    expect(r.seen).toHaveLength(2);
    expect(await store.reactionCursor('recorder')).toBe(await store.eventLogEnd());
    const passed = lines.filter((l) => l.includes('reaction failed for good'));
    expect(passed).toHaveLength(1);
    expect(JSON.parse(passed[0]!).err).toContain('422 Validation Failed');
  });
});

const pgUp = await postgresAvailable('Reactions on PostgreSQL');

describe.skipIf(!pgUp)('Reactions: two replicas on one PostgreSQL database', () => {
  async function database(): Promise<FreshDatabase> {
    const db = await freshDatabase();
    cleanups.push(() => db.drop());
    return db;
  }
  async function open(url: string): Promise<Store> {
    const store = await openPostgresStore({ url, now: () => T0 });
    cleanups.push(() => store.close());
    return store;
  }

  it('only the replica holding the cursor reacts; the other takes over when it stops, or when its hold lapses', async () => {
    const db = await database();
    const a = await open(db.url);
    const b = await open(db.url);
    const clock = new FakeClock(T0);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const onA = recorder(() => gate);
    const onB = recorder();
    const ra = runner(a, clock, onA.reaction, 'r-a');
    const rb = runner(b, clock, onB.reaction, 'r-b');
    await ra.init();
    await rb.init();
    await propose(a, 1);

    const passA = ra.runOnce(); // holds the cursor, and waits in its effect
    await expect.poll(() => onA.seen.length).toBe(1);
    await rb.runOnce();
    expect(onB.seen).toEqual([]);
    release();
    await passA;
    await rb.runOnce();
    expect(onB.seen).toEqual([]); // the cursor is past the event: nothing is handed over twice

    // A stops and lets go: B goes on at once.
    await ra.stop();
    await propose(a, 2);
    await rb.runOnce();
    expect(onB.seen).toHaveLength(1);

    // B dies holding it (no stop): A gets it back once B's hold has lapsed, not before.
    await propose(a, 3);
    const again = recorder();
    const ra2 = runner(a, clock, again.reaction, 'r-a');
    await ra2.runOnce();
    expect(again.seen).toEqual([]);
    clock.advance(10_000);
    await ra2.runOnce();
    expect(again.seen).toHaveLength(1);
    expect(onB.seen).toHaveLength(1);
  });
});
