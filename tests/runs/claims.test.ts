import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Run } from '../../src/domain/types.js';
import { silentLogger } from '../../src/logger.js';
import { RunEvents } from '../../src/runs/events.js';
import { RunAborted, type RunHandler, type RunOutcome, RunQueue } from '../../src/runs/queue.js';
import { StoreUnavailableError } from '../../src/store/store.js';
import { waitFor } from '../support/daemon.js';
import { createHarness, type Harness } from '../support/harness.js';

// The queue's side of run claims, on one store shared by two queues (two replicas of one process's view):
// the store's rules themselves are the contract suite's (tests/store/contract/runs.ts); the processes on
// PostgreSQL are tests/runs/replicas.test.ts.

const LEASE_MS = 3_000;

let h: Harness;
const queues: RunQueue[] = [];
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  for (const q of queues.splice(0)) await q.drain(50);
  await h.close();
});

/** An executor that holds each run until its signal is aborted, and says why it was. */
function holding() {
  const aborted: unknown[] = [];
  const started: string[] = [];
  const executor: RunHandler = {
    execute: (run, { signal }) =>
      new Promise<RunOutcome>((_, reject) => {
        started.push(run.id);
        signal.addEventListener('abort', () => {
          aborted.push(signal.reason);
          reject(signal.reason);
        });
      }),
  };
  return { executor, aborted, started };
}

function queue(replica: string, executor: RunHandler): RunQueue {
  const q = new RunQueue({
    store: h.store,
    clock: h.clock,
    logger: silentLogger(),
    events: new RunEvents(h.store, h.clock),
    handler: executor,
    maxConcurrent: 2,
    replica,
    leaseMs: LEASE_MS,
  });
  queues.push(q);
  return q;
}

async function oneRun(): Promise<Run> {
  const ses = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
  return h.store.createRun({
    id: 'run_1',
    sessionId: ses.body.id,
    jobId: null,
    slotAt: null,
    source: 'manual',
    prompt: 'p',
    requestedBy: 'me',
    createdAt: h.clock.now(),
  });
}

const types = async (id: string) => (await h.store.listEvents(id, 0, 100)).map((e) => [e.type, e.data]);

it('a run still going when the queue drains goes back to the queue, its attempt unchanged', async () => {
  const held = holding();
  const a = queue('a', held.executor);
  const run = await oneRun();
  a.submit(run);
  await waitFor(async () => held.started.length === 1, 2_000, 'the run to start');
  expect(await h.store.getRun(run.id)).toMatchObject({ status: 'running' });
  await a.drain(50);
  expect(held.aborted).toEqual([new RunAborted('shutdown')]);
  expect(await h.store.getRun(run.id)).toMatchObject({ status: 'queued', attempt: 1, finishedAt: null });
  expect(await types(run.id)).toEqual([['run_interrupted', { retrying: true, attempt: 1 }]]);
  // Nobody holds it: the next queue to look takes it.
  expect((await h.store.listClaimableRuns(10)).map((r) => r.id)).toEqual([run.id]);
});

it('a lapsed run is taken over by another queue; the first stops it once it finds its claim gone', async () => {
  const held = holding();
  const a = queue('a', held.executor);
  const run = await oneRun();
  a.submit(run);
  await waitFor(async () => held.started.length === 1, 2_000, 'the run to start on a');
  // While a's lease lives, b takes nothing over.
  const done: string[] = [];
  const b = queue('b', {
    execute: async (r) => {
      done.push(r.id);
      return { status: 'planned' };
    },
  });
  expect(await b.recover()).toMatchObject({ retried: 0, interrupted: 0 });
  // a stops renewing (its timer never started: it is "paused"); the lease runs out.
  h.clock.advance(LEASE_MS + 1);
  expect(await b.recover()).toMatchObject({ retried: 1 });
  await waitFor(async () => (await h.store.getRun(run.id))?.status === 'planned', 2_000, 'b to finish it');
  expect(done).toEqual([run.id]);
  expect(await h.store.getRun(run.id)).toMatchObject({ status: 'planned', attempt: 2 });
  // a wakes up: its first renewal finds the claim gone and stops its copy, which records nothing.
  a.start();
  await waitFor(async () => held.aborted.length === 1, 3_000, 'a to stop its copy');
  expect(held.aborted[0]).toEqual(new RunAborted('lease'));
  await new Promise((r) => setTimeout(r, 50));
  expect(await h.store.getRun(run.id)).toMatchObject({ status: 'planned', attempt: 2 });
  const finished = (await types(run.id)).filter(([t]) => t === 'run_finished');
  expect(finished).toHaveLength(1);
  expect(finished[0]![1]).toMatchObject({ status: 'planned' });
});

it('a queue that started looks at the store: a run queued by another process is picked up', async () => {
  const done: string[] = [];
  const a = queue('a', {
    execute: async (r) => {
      done.push(r.id);
      return { status: 'planned' };
    },
  });
  a.start();
  // Written to the store by someone else (another replica's API): never submitted to this queue.
  const run = await oneRun();
  await waitFor(async () => done.length === 1, 8_000, 'the sweep to find the run');
  expect(await h.store.getRun(run.id)).toMatchObject({ status: 'planned', attempt: 1 });
});

/** The harness's store, with transitionRun failing as a database outage does for the next `n` calls. */
function outage(n: number) {
  const real = h.store.transitionRun.bind(h.store);
  let left = n;
  const store = Object.create(h.store) as typeof h.store;
  store.transitionRun = (...args) => {
    if (left-- > 0) return Promise.reject(new StoreUnavailableError(new Error('connect ECONNREFUSED')));
    return real(...args);
  };
  return store;
}

function queueOn(store: typeof h.store, executor: RunHandler): RunQueue {
  const q = new RunQueue({
    store,
    clock: h.clock,
    logger: silentLogger(),
    events: new RunEvents(h.store, h.clock),
    handler: executor,
    maxConcurrent: 2,
    replica: 'a',
    leaseMs: LEASE_MS,
  });
  queues.push(q);
  return q;
}

it("a run's end that meets a database outage is written once the database answers, not done again", async () => {
  let calls = 0;
  const q = queueOn(outage(2), {
    execute: async () => {
      calls += 1;
      return { status: 'completed' };
    },
  });
  const run = await oneRun();
  q.submit(run);
  const done = await waitFor(
    async () => {
      const r = await h.store.getRun(run.id);
      return r?.status === 'completed' ? r : undefined;
    },
    5_000,
    'the run to complete',
  );
  expect(done).toMatchObject({ attempt: 1, error: null });
  expect(calls).toBe(1);
});

it('a run whose own writes meet a database outage is not ended: its replica takes it over once it answers', async () => {
  let calls = 0;
  const q = queueOn(h.store, {
    execute: async () => {
      calls += 1;
      if (calls === 1)
        throw new StoreUnavailableError(new Error('terminating connection due to administrator command'));
      return { status: 'completed' };
    },
  });
  const run = await oneRun();
  await q.recover();
  q.start();
  q.submit(run);
  // Cut off, the run is no longer renewed: once its lease lapsed, the replica's next look takes it over (a
  // process takes over the runs claimed under its own name only at its start, or once their lease lapsed).
  await waitFor(async () => calls === 1, 5_000, 'the run to meet the outage');
  h.clock.advance(LEASE_MS + 1);
  const done = await waitFor(
    async () => {
      const r = await h.store.getRun(run.id);
      return r?.status === 'completed' ? r : undefined;
    },
    10_000,
    'the run to be taken over and complete',
  );
  // Taken over (its one retry) rather than ended failed by the outage.
  expect(done).toMatchObject({ attempt: 2, error: null });
  expect(calls).toBe(2);
  const events = await types(run.id);
  expect(events).toContainEqual(['run_interrupted', { retrying: true, attempt: 1 }]);
  expect(events.filter(([type]) => type === 'run_finished')).toHaveLength(1);
}, 15_000);
