import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Run } from '../../../src/domain/types.js';
import { silentLogger } from '../../../src/logger.js';
import { jitterOptions } from '../../../src/scheduler/job-request.js';
import { Scheduler } from '../../../src/scheduler/loop.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../../src/store/store.js';
import { createHarness, type Harness, T0 } from '../../support/harness.js';
import { postgresAvailable } from '../../support/postgres.js';

// Each overlap policy at the minute edges: a slot that comes due at the very millisecond its minute starts
// while the job's run is still going, or just after that run finished. What each slot became is read from the
// job's history (listSlots), as `drydock jobs slots` shows it. Then across a restart (a new store and
// scheduler on the same SQLite file) and across two replicas (two schedulers on one database).

const MIN = 60_000;
const postgres = await postgresAvailable('overlap policies on PostgreSQL');

let h: Harness<Store>;
const extra: { stop(): Promise<void> }[] = [];

async function harness(store: 'sqlite' | 'postgres' = 'sqlite', maxBuffered = 100): Promise<Harness<Store>> {
  h = await createHarness({
    store,
    patch: (c) => {
      // Jitter off: a slot is due at its minute, so the edges are exact.
      c.scheduler.jitter.enabled = false;
      c.scheduler.max_buffered_slots = maxBuffered;
    },
  });
  return h;
}

afterEach(async () => {
  for (const x of extra.splice(0)) await x.stop();
  await h?.close();
});

async function jobWith(overlap: string | undefined, cron = '*/10 * * * *'): Promise<string> {
  const s = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
  expect(s.status).toBe(201);
  const j = await h.call('POST', `/v1/sessions/${s.body.id}/jobs`, {
    body: { cron, prompt: 'review', ...(overlap ? { overlap } : {}) },
  });
  expect(j.status, JSON.stringify(j.body)).toBe(201);
  expect(j.body.overlap).toBe(overlap ?? 'buffer_one');
  return j.body.id;
}

/** The run ends at the clock's now (as the run queue would record it). */
const finish = (runId: string) =>
  h.store.transitionRun(runId, ['queued', 'running'], 'completed', { finishedAt: h.clock.now() });

/** The job's history as [minutes after T0, outcome, index of its run in h.runs (or null)]. */
async function history(jobId: string, store: Store = h.store, runs: Run[] = h.runs) {
  return (await store.listSlots(jobId)).map((s) => [
    (s.slotAt - T0) / MIN,
    s.outcome,
    s.runId === null ? null : runs.findIndex((r) => r.id === s.runId),
  ]);
}

/** The clock at exactly the start of minute `m` after T0, and one pass. */
async function at(m: number) {
  h.clock.set(T0 + m * MIN);
  return h.scheduler.tick();
}

describe('skip', () => {
  it('drops a slot due at its minute while the run goes on; one due just after the run finished fires', async () => {
    await harness();
    const job = await jobWith('skip');
    expect((await at(10)).fired).toBe(1);
    // 08:20:00.000 exactly, the 08:10 run still queued: dropped.
    expect(await at(20)).toMatchObject({ fired: 0, pending: 0, skipped: 1 });
    expect(await h.store.getJob(job)).toMatchObject({ pendingSlotAt: null, nextNominalAt: T0 + 30 * MIN });
    // It ends a millisecond before 08:30: the 08:30 slot fires at its minute.
    h.clock.set(T0 + 30 * MIN - 1);
    await finish(h.runs[0]!.id);
    expect((await at(30)).fired).toBe(1);
    expect(h.runs.map((r) => (r.slotAt! - T0) / MIN)).toEqual([10, 30]);
    expect(await history(job)).toEqual([
      [10, 'fired', 0],
      [20, 'skipped', null],
      [30, 'fired', 1],
    ]);
  });
});

describe('buffer_one (the default)', () => {
  it('keeps only the newest waiting slot and fires it once the run ends at the next minute edge', async () => {
    await harness();
    const job = await jobWith(undefined);
    await at(10);
    expect(await at(20)).toMatchObject({ fired: 0, pending: 1 });
    expect(await at(30)).toMatchObject({ fired: 0, pending: 1, coalesced: 1 });
    // The run ends exactly at 08:40:00.000, when 08:40 comes due: 08:40 replaces 08:30 and fires.
    h.clock.set(T0 + 40 * MIN);
    await finish(h.runs[0]!.id);
    expect(await at(40)).toMatchObject({ fired: 1, coalesced: 1 });
    expect(h.runs[1]).toMatchObject({ slotAt: T0 + 40 * MIN, coalescedSlots: 2 });
    expect(await history(job)).toEqual([
      [10, 'fired', 0],
      [20, 'coalesced', 1],
      [30, 'coalesced', 1],
      [40, 'fired', 1],
    ]);
  });
});

describe('buffer_all', () => {
  it('holds every slot due while busy and fires them oldest first, one per idle session', async () => {
    await harness();
    const job = await jobWith('buffer_all');
    await at(10);
    expect(await at(20)).toMatchObject({ fired: 0, pending: 1 });
    expect(await at(30)).toMatchObject({ fired: 0, pending: 1, coalesced: 0 });
    expect(await h.store.getJob(job)).toMatchObject({
      pendingSlotAt: T0 + 20 * MIN,
      bufferedSlots: [T0 + 30 * MIN],
    });
    const shown = await h.call('GET', `/v1/jobs/${job}`);
    expect(shown.body).toMatchObject({
      pending_slot_at: '2026-06-01T08:20:00.000Z',
      buffered_slots: ['2026-06-01T08:30:00.000Z'],
    });
    expect(await history(job)).toEqual([
      [10, 'fired', 0],
      [20, 'buffered', null],
      [30, 'buffered', null],
    ]);
    // The run ends at 08:40:00.000 exactly: the oldest waiting slot (08:20) fires; 08:30 and 08:40 wait.
    h.clock.set(T0 + 40 * MIN);
    await finish(h.runs[0]!.id);
    expect((await at(40)).fired).toBe(1);
    expect(h.runs[1]).toMatchObject({ slotAt: T0 + 20 * MIN, coalescedSlots: 0 });
    await finish(h.runs[1]!.id);
    expect((await h.scheduler.tick()).fired).toBe(1);
    await finish(h.runs[2]!.id);
    expect((await h.scheduler.tick()).fired).toBe(1);
    expect((await h.scheduler.tick()).fired).toBe(0);
    expect(h.runs.map((r) => (r.slotAt! - T0) / MIN)).toEqual([10, 20, 30, 40]);
    expect(await history(job)).toEqual([
      [10, 'fired', 0],
      [20, 'fired', 1],
      [30, 'fired', 2],
      [40, 'fired', 3],
    ]);
    expect(await h.store.getJob(job)).toMatchObject({ pendingSlotAt: null, bufferedSlots: [], fireCount: 4 });
  });

  it('past max_buffered_slots drops the oldest waiting slot', async () => {
    await harness('sqlite', 2);
    const job = await jobWith('buffer_all');
    await at(10);
    for (const m of [20, 30]) await at(m);
    expect(await at(40)).toMatchObject({ skipped: 1 });
    expect(await h.store.getJob(job)).toMatchObject({
      pendingSlotAt: T0 + 30 * MIN,
      bufferedSlots: [T0 + 40 * MIN],
    });
    expect(await history(job)).toEqual([
      [10, 'fired', 0],
      [20, 'skipped', null],
      [30, 'buffered', null],
      [40, 'buffered', null],
    ]);
  });

  it('keeps what waits across a restart: a new store and scheduler on the same file fire it in order', async () => {
    await harness();
    const job = await jobWith('buffer_all');
    await at(10);
    await at(20);
    await at(30);
    await finish(h.runs[0]!.id);
    await h.scheduler.stop();

    const store = new SqliteStore({ file: join(h.config.data_dir, 'drydock.db'), now: () => h.clock.now() });
    const runs: Run[] = [];
    const scheduler = new Scheduler({
      store,
      clock: h.clock,
      logger: silentLogger(),
      onRun: (run) => runs.push(run),
      catchupWindowMs: h.config.scheduler.catchup_window_ms,
      maxWaitMs: h.config.scheduler.max_wait_ms,
      batchSize: 10,
      jitter: jitterOptions(h.config),
      maxBuffered: 100,
      cancelRun: async () => false,
    });
    extra.push({
      stop: async () => {
        await scheduler.stop();
        await store.close();
      },
    });
    h.clock.set(T0 + 35 * MIN);
    expect((await scheduler.tick()).fired).toBe(1);
    await store.transitionRun(runs[0]!.id, ['queued'], 'completed', { finishedAt: h.clock.now() });
    expect((await scheduler.tick()).fired).toBe(1);
    expect(runs.map((r) => (r.slotAt! - T0) / MIN)).toEqual([20, 30]);
    expect(await history(job, store, [...h.runs, ...runs])).toEqual([
      [10, 'fired', 0],
      [20, 'fired', 1],
      [30, 'fired', 2],
    ]);
  });
});

describe('cancel_other', () => {
  it("cancels the job's own run when a slot comes due at its minute, and fires the new one", async () => {
    await harness();
    const job = await jobWith('cancel_other');
    await at(10);
    const first = h.runs[0]!;
    expect(await at(20)).toMatchObject({ fired: 1, canceled: 1 });
    // Through the runs' own cancel path: the run is canceled, as `drydock runs cancel` leaves it.
    expect(await h.store.getRun(first.id)).toMatchObject({ status: 'canceled', error: 'canceled' });
    expect(h.runs[1]).toMatchObject({ slotAt: T0 + 20 * MIN, status: 'queued' });
    expect(await history(job)).toEqual([
      [10, 'canceled', 0],
      [20, 'fired', 1],
    ]);
  });

  it("does not cancel a run the job did not start: a person's run makes the slot wait as buffer_one", async () => {
    await harness();
    const job = await jobWith('cancel_other');
    const manual = await h.call('POST', `/v1/jobs/${job}/run`);
    expect(manual.status).toBe(201);
    expect(await at(10)).toMatchObject({ fired: 0, pending: 1, canceled: 0 });
    expect(await h.store.getRun(manual.body.id)).toMatchObject({ status: 'queued' });
    // The person's run ends exactly at 08:20:00.000: 08:20 replaces 08:10 and fires.
    h.clock.set(T0 + 20 * MIN);
    await finish(manual.body.id);
    expect(await at(20)).toMatchObject({ fired: 1, coalesced: 1 });
    expect(await history(job)).toEqual([
      [10, 'coalesced', 1],
      [20, 'fired', 1],
    ]);
  });
});

describe("cancel_other and a person's decision", () => {
  it("never cancels the execution of an approved plan (the job's, from its schedule, but holding no slot): the slot waits", async () => {
    await harness();
    const job = await jobWith('cancel_other');
    const { sessionId } = (await h.store.getJob(job))!;
    // What an approval starts for a scheduled plan: the job's id and source carried over, no slot.
    const execution = await h.store.createRun({
      id: 'run_execution',
      sessionId,
      jobId: job,
      slotAt: null,
      source: 'schedule',
      prompt: 'Execute the approved plan.',
      requestedBy: 'alice',
      createdAt: h.clock.now(),
    });
    expect(await at(10)).toMatchObject({ fired: 0, pending: 1, canceled: 0 });
    expect(await h.store.getRun(execution.id)).toMatchObject({ status: 'queued' });
    h.clock.set(T0 + 20 * MIN);
    await finish(execution.id);
    expect(await at(20)).toMatchObject({ fired: 1, canceled: 0 });
    expect(await h.store.getRun(execution.id)).toMatchObject({ status: 'completed' });
  });
});

describe('allow_all', () => {
  it('fires each slot at its minute while the session is busy; the runs queue behind each other', async () => {
    await harness();
    const job = await jobWith('allow_all');
    for (const m of [10, 20, 30]) expect((await at(m)).fired).toBe(1);
    const stored = await Promise.all(h.runs.map((r) => h.store.getRun(r.id)));
    expect(stored.map((r) => r!.status)).toEqual(['queued', 'queued', 'queued']);
    expect(await history(job)).toEqual([
      [10, 'fired', 0],
      [20, 'fired', 1],
      [30, 'fired', 2],
    ]);
  });
});

describe('across a restart', () => {
  it('every policy decides the same after a new store and scheduler take over the file', async () => {
    await harness();
    const policies = ['skip', 'buffer_one', 'buffer_all', 'cancel_other', 'allow_all'] as const;
    const jobs = new Map<string, string>();
    for (const p of policies) jobs.set(p, await jobWith(p));
    expect((await at(10)).fired).toBe(5);
    await h.scheduler.stop();

    const store = new SqliteStore({ file: join(h.config.data_dir, 'drydock.db'), now: () => h.clock.now() });
    const runs: Run[] = [];
    const scheduler = new Scheduler({
      store,
      clock: h.clock,
      logger: silentLogger(),
      onRun: (run) => runs.push(run),
      catchupWindowMs: h.config.scheduler.catchup_window_ms,
      maxWaitMs: h.config.scheduler.max_wait_ms,
      batchSize: 10,
      jitter: jitterOptions(h.config),
      maxBuffered: 100,
      cancelRun: (id) => h.services.runs.cancel(id),
    });
    extra.push({
      stop: async () => {
        await scheduler.stop();
        await store.close();
      },
    });
    for (const m of [20, 30]) {
      h.clock.set(T0 + m * MIN);
      await scheduler.tick();
    }
    const all = [...h.runs, ...runs];
    const outcomes = async (p: string) =>
      (await history(jobs.get(p)!, store, all)).map(([m, outcome]) => `${m} ${outcome}`).join(', ');
    expect(await outcomes('skip')).toBe('10 fired, 20 skipped, 30 skipped');
    expect(await outcomes('buffer_one')).toBe('10 fired, 20 coalesced');
    expect(await outcomes('buffer_all')).toBe('10 fired, 20 buffered, 30 buffered');
    expect(await outcomes('cancel_other')).toBe('10 canceled, 20 canceled, 30 fired');
    expect(await outcomes('allow_all')).toBe('10 fired, 20 fired, 30 fired');
    expect(await store.getJob(jobs.get('buffer_one')!)).toMatchObject({ pendingSlotAt: T0 + 30 * MIN });
  });
});

/**
 * Two schedulers on one database, each with its own store, ticking the same minutes (at once on
 * PostgreSQL, where their transactions overlap): each slot is handled once, whatever the policy.
 */
async function twoReplicas(store: 'sqlite' | 'postgres', open: () => Promise<Store>): Promise<void> {
  await harness(store);
  const jobs = {
    skip: await jobWith('skip'),
    buffer_one: await jobWith('buffer_one'),
    buffer_all: await jobWith('buffer_all'),
    cancel_other: await jobWith('cancel_other'),
    allow_all: await jobWith('allow_all'),
  };
  const other = await open();
  const runs: Run[] = [];
  const scheduler = new Scheduler({
    store: other,
    clock: h.clock,
    logger: silentLogger(),
    onRun: (run) => runs.push(run),
    catchupWindowMs: h.config.scheduler.catchup_window_ms,
    maxWaitMs: h.config.scheduler.max_wait_ms,
    batchSize: 2,
    jitter: jitterOptions(h.config),
    maxBuffered: 100,
    cancelRun: (id) => h.services.runs.cancel(id),
  });
  extra.push({
    stop: async () => {
      await scheduler.stop();
      await other.close();
    },
  });
  for (const m of [10, 20, 30]) {
    h.clock.set(T0 + m * MIN);
    await Promise.all([h.scheduler.tick(), scheduler.tick(), h.scheduler.tick(), scheduler.tick()]);
  }
  const all = [...h.runs, ...runs];
  // One run per (job, slot), whichever replica made it.
  expect(new Set(all.map((r) => `${r.jobId} ${r.slotAt}`)).size).toBe(all.length);
  expect(await history(jobs.skip, h.store, all)).toEqual([
    [10, 'fired', expect.any(Number)],
    [20, 'skipped', null],
    [30, 'skipped', null],
  ]);
  expect((await history(jobs.buffer_all, h.store, all)).map((x) => x.slice(0, 2))).toEqual([
    [10, 'fired'],
    [20, 'buffered'],
    [30, 'buffered'],
  ]);
  expect((await history(jobs.buffer_one, h.store, all)).map((x) => x.slice(0, 2))).toEqual([
    [10, 'fired'],
    [20, 'coalesced'],
  ]);
  expect(await h.store.getJob(jobs.buffer_one)).toMatchObject({ pendingSlotAt: T0 + 30 * MIN });
  expect((await history(jobs.cancel_other, h.store, all)).map((x) => x.slice(0, 2))).toEqual([
    [10, 'canceled'],
    [20, 'canceled'],
    [30, 'fired'],
  ]);
  expect((await history(jobs.allow_all, h.store, all)).map((x) => x.slice(0, 2))).toEqual([
    [10, 'fired'],
    [20, 'fired'],
    [30, 'fired'],
  ]);
  // skip 1, buffer_one 1 and buffer_all 1 (their first runs never end here), cancel_other 3, allow_all 3.
  expect(all).toHaveLength(1 + 1 + 1 + 3 + 3);
}

describe('across two replicas', () => {
  it('SQLite: two schedulers on one file handle each slot once', async () => {
    await twoReplicas('sqlite', async () => {
      return new SqliteStore({ file: join(h.config.data_dir, 'drydock.db'), now: () => h.clock.now() });
    });
  });

  it.skipIf(!postgres)('PostgreSQL: two schedulers on one database handle each slot once', async () => {
    const { openPostgresStore } = await import('../../../src/store/postgres/index.js');
    await twoReplicas('postgres', () => openPostgresStore({ url: h.database!.url, migrate: false }));
  });
});
