import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Run } from '../../src/domain/types.js';
import { createLogger, silentLogger } from '../../src/logger.js';
import { RunEvents } from '../../src/runs/events.js';
import { type RunHandler, type RunOutcome, RunQueue } from '../../src/runs/queue.js';
import { createHarness, type Harness } from '../support/harness.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => h.close());

/** An executor whose runs end only when the test says so. */
function heldExecutor() {
  const started: string[] = [];
  const release = new Map<string, (o: RunOutcome) => void>();
  const executor: RunHandler = {
    execute: (run) =>
      new Promise<RunOutcome>((resolve) => {
        started.push(run.id);
        release.set(run.id, resolve);
      }),
  };
  return { executor, started, finish: (id: string) => release.get(id)!({ status: 'completed' }) };
}

const flush = async () => {
  for (let i = 0; i < 30; i++) await new Promise((r) => setImmediate(r));
};

async function runs(sessions: number, perSession: number): Promise<Run[][]> {
  const out: Run[][] = [];
  for (let s = 0; s < sessions; s++) {
    const ses = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace, name: `s${s}` } });
    const list: Run[] = [];
    for (let i = 0; i < perSession; i++) {
      list.push(
        await h.store.createRun({
          id: `run_${s}_${i}`,
          sessionId: ses.body.id,
          jobId: null,
          slotAt: null,
          source: 'manual',
          prompt: 'p',
          requestedBy: 'x',
          createdAt: h.clock.now() + i,
        }),
      );
    }
    out.push(list);
  }
  return out;
}

it('runs at most max_concurrent at once, one per session, in fair order across sessions', async () => {
  const held = heldExecutor();
  const queue = new RunQueue({
    store: h.store,
    clock: h.clock,
    logger: silentLogger(),
    events: new RunEvents(h.store, h.clock),
    handler: held.executor,
    maxConcurrent: 2,
  });
  const [a, b, c] = await runs(3, 3);
  // Session a floods the queue first; b and c come after.
  for (const r of a!) queue.submit(r);
  for (const r of b!) queue.submit(r);
  for (const r of c!) queue.submit(r);
  await flush();
  // Two slots: one run of a, one of b (never two of a at once).
  expect(held.started).toEqual(['run_0_0', 'run_1_0']);
  expect(queue.activeCount).toBe(2);
  held.finish('run_0_0');
  await flush();
  // c has waited longest among sessions with work: it goes before a's second run.
  expect(held.started).toEqual(['run_0_0', 'run_1_0', 'run_2_0']);
  held.finish('run_1_0');
  await flush();
  expect(held.started.at(-1)).toBe('run_0_1');
  held.finish('run_2_0');
  await flush();
  expect(held.started.at(-1)).toBe('run_1_1');
  // Drain everything; each session's runs ran in its own order.
  for (let i = 0; i < 10; i++) {
    for (const id of held.started) held.finish(id);
    await flush();
  }
  expect(held.started).toHaveLength(9);
  for (const s of [0, 1, 2]) {
    expect(held.started.filter((id) => id.startsWith(`run_${s}_`))).toEqual([
      `run_${s}_0`,
      `run_${s}_1`,
      `run_${s}_2`,
    ]);
  }
  const done = await h.store.listRuns({ status: 'completed', limit: 50 });
  expect(done.items).toHaveLength(9);
  await queue.drain(100);
});

it('a parked run keeps its session: the next run of that session waits until it is resumed and ends', async () => {
  let calls = 0;
  const executor: RunHandler = {
    async execute() {
      calls += 1;
      return calls === 1 ? { status: 'awaiting_input' } : { status: 'completed' };
    },
  };
  const queue = new RunQueue({
    store: h.store,
    clock: h.clock,
    logger: silentLogger(),
    events: new RunEvents(h.store, h.clock),
    handler: executor,
    maxConcurrent: 4,
  });
  const [[first, second]] = (await runs(1, 2)) as [[Run, Run]];
  // A pending question keeps it parked.
  await h.store.createQuestion({
    id: 'qst_1',
    runId: first.id,
    sessionId: first.sessionId,
    toolUseId: 't',
    questions: {},
    priorResults: [],
    createdAt: 0,
    expiresAt: Number.MAX_SAFE_INTEGER,
  });
  queue.submit(first);
  queue.submit(second);
  await flush();
  expect((await h.store.getRun(first.id))!.status).toBe('awaiting_input');
  expect((await h.store.getRun(second.id))!.status).toBe('queued');
  await h.store.answerQuestion('qst_1', {}, 'me', 1);
  queue.submit((await h.store.getRun(first.id))!);
  await flush();
  expect((await h.store.getRun(first.id))!.status).toBe('completed');
  expect((await h.store.getRun(second.id))!.status).toBe('completed');
  await queue.drain(100);
});

it('logs a run that ends without success at warn, with its reason; a planned run at info', async () => {
  const lines: { level: number; msg: string; status?: string; reason?: string }[] = [];
  const logger = createLogger('info', { write: (line: string) => lines.push(JSON.parse(line)) });
  const outcomes: RunOutcome[] = [
    { status: 'refused', error: 'the model declined to continue' },
    { status: 'planned' },
  ];
  const queue = new RunQueue({
    store: h.store,
    clock: h.clock,
    logger,
    events: new RunEvents(h.store, h.clock),
    handler: { execute: async () => outcomes.shift()! },
    maxConcurrent: 1,
  });
  const [[a, b]] = (await runs(1, 2)) as [[Run, Run]];
  queue.submit(a);
  queue.submit(b);
  for (let i = 0; i < 10 && lines.filter((l) => /run finished/.test(l.msg)).length < 2; i++) await flush();
  const finished = lines.filter((l) => /run finished/.test(l.msg));
  expect(finished.map((l) => [l.level, l.msg, l.status, l.reason])).toEqual([
    [40, 'run finished without success', 'refused', 'the model declined to continue'],
    [30, 'run finished', 'planned', undefined],
  ]);
  await queue.drain(100);
});
