import { fork } from 'node:child_process';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, expect, it } from 'vitest';
import { packageRoot } from '../../../src/paths.js';
import type { Store } from '../../../src/store/store.js';
import { createHarness, type Harness, T0, type TestStore } from '../../support/harness.js';
import { postgresAvailable } from '../../support/postgres.js';
import type {
  SchedulerWorkerData,
  SchedulerWorkerReply,
  SchedulerWorkerRequest,
} from '../../support/scheduler-worker.js';

// Two schedulers on one store, each with its own connection, ticking the same minutes at the same time:
// every slot must become exactly one run. The scenario is written once (`everySlotOnce`) and run on SQLite
// (two worker threads on one file) and on PostgreSQL (two child processes, each with a pool of its own, on
// one database).

const MIN = 60_000;
const JOBS = 120;
const STEPS = 8;
const SCRIPT = join(packageRoot(), 'dist/tests/support/scheduler-worker.js');

const postgres = await postgresAvailable('two scheduler processes on PostgreSQL');

let harness: Harness<Store> | undefined;
const peers: Peer[] = [];

afterEach(async () => {
  for (const p of peers.splice(0)) await p.kill();
  await harness?.close();
  harness = undefined;
});

type Fired = { id: string; jobId: string; slotAt: number };

/** A scheduler in another thread or process, driven by messages. */
interface Peer {
  tick(now: number): Promise<Fired[]>;
  /** Closes its store, then ends it. */
  close(): Promise<void>;
  /** Ends it at once (cleanup). */
  kill(): Promise<void>;
}

/** The next reply from a worker, or its failure. */
type Next = () => Promise<SchedulerWorkerReply>;

function peer(post: (msg: SchedulerWorkerRequest) => void, next: Next, kill: () => Promise<void>): Peer {
  return {
    async tick(now) {
      post({ type: 'tick', now });
      const reply = await next();
      if (reply.type !== 'ticked') throw new Error(`expected ticked, got ${reply.type}`);
      return reply.fired as Fired[];
    },
    async close() {
      post({ type: 'close' });
      await next();
      await kill();
    },
    kill,
  };
}

/** Replies in order, as a queue of promises over an emitter's 'message', 'error' and 'exit' events. */
function replies(on: (event: 'message' | 'error' | 'exit', f: (x: any) => void) => void): Next {
  const waiting: { resolve(m: SchedulerWorkerReply): void; reject(e: Error): void }[] = [];
  const early: SchedulerWorkerReply[] = [];
  let failed: Error | null = null;
  on('message', (m: SchedulerWorkerReply) => {
    const w = waiting.shift();
    if (w) w.resolve(m);
    else early.push(m);
  });
  const fail = (e: Error) => {
    failed = e;
    for (const w of waiting.splice(0)) w.reject(e);
  };
  on('error', (e: Error) => fail(e));
  on('exit', (code: number | null) => fail(new Error(`scheduler worker exited (${code})`)));
  return () => {
    const m = early.shift();
    if (m) return Promise.resolve(m);
    if (failed) return Promise.reject(failed);
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  };
}

/** A scheduler in a worker thread of this process. */
async function schedulerThread(data: SchedulerWorkerData): Promise<Peer> {
  const w = new Worker(SCRIPT, { workerData: data });
  const next = replies((event, f) => w.on(event, f));
  const p = peer(
    (msg) => w.postMessage(msg),
    next,
    async () => {
      await w.terminate();
    },
  );
  peers.push(p);
  expect((await next()).type).toBe('ready');
  return p;
}

/** A scheduler in a child process of its own. */
async function schedulerProcess(data: SchedulerWorkerData): Promise<Peer> {
  // fork() passes this process's execArgv by default (the test runner's flags); the worker is plain built
  // JavaScript and needs none of them (nodejs.org/api/child_process.html, options.execArgv).
  const child = fork(SCRIPT, [JSON.stringify(data)], {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = replies((event, f) => child.on(event, f));
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const p = peer(
    (msg) => child.send(msg),
    next,
    async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  );
  peers.push(p);
  expect((await next()).type).toBe('ready');
  return p;
}

/**
 * 120 minute-level jobs on the harness's store, then two schedulers (made by `start` with different batch
 * sizes) tick the same 8 minutes at once: each slot has exactly one run, as the schedulers report them and
 * as the store holds them.
 */
async function everySlotOnce(
  store: TestStore,
  start: (data: SchedulerWorkerData) => Promise<Peer>,
): Promise<void> {
  const h = await createHarness({
    store,
    patch: (c) => {
      c.scheduler.jitter.enabled = false;
    },
  });
  harness = h;
  const jobIds: string[] = [];
  for (let i = 0; i < JOBS; i++) {
    const s = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
    const j = await h.call('POST', `/v1/sessions/${s.body.id}/jobs`, {
      body: { cron: '* * * * *', prompt: 'p' },
    });
    expect(j.status).toBe(201);
    jobIds.push(j.body.id);
  }
  const where = h.database ? { url: h.database.url } : { file: join(h.config.data_dir, 'drydock.db') };
  const schedulers = [
    await start({ store: where, batchSize: 10 }),
    await start({ store: where, batchSize: 17 }),
  ];

  const fired: Fired[] = [];
  const slots: number[] = [];
  for (let step = 1; step <= STEPS; step++) {
    const now = T0 + step * MIN;
    slots.push(now);
    for (const f of await Promise.all(schedulers.map((s) => s.tick(now)))) fired.push(...f);
  }
  for (const s of schedulers) await s.close();

  const keys = fired.map((r) => `${r.jobId}@${r.slotAt}`);
  expect(new Set(keys).size).toBe(keys.length);
  expect(fired).toHaveLength(JOBS * STEPS);
  // What the store holds: for every job, one run for each of the 8 slots, the very runs reported.
  const reported = new Set(fired.map((r) => r.id));
  for (const jobId of jobIds) {
    const runs = (await h.store.listRuns({ jobId, limit: 100 })).items;
    expect(runs.map((r) => r.slotAt).sort((a, b) => a! - b!)).toEqual(slots);
    for (const r of runs) expect(reported.has(r.id)).toBe(true);
  }
  // Which scheduler wins each slot depends on timing (on a loaded machine one can win them all); what may
  // never vary is the count above: every slot exactly once.
}

it('two schedulers in parallel threads on one SQLite file never create two runs for one slot', async () => {
  await everySlotOnce('sqlite', schedulerThread);
});

it.skipIf(!postgres)(
  'two scheduler processes on one PostgreSQL database, each with its own pool, never create two runs for one slot',
  async () => {
    await everySlotOnce('postgres', schedulerProcess);
  },
  60_000,
);
