import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import type { Store } from '../../src/store/store.js';
import { ADMIN_TOKEN, readSse } from '../support/daemon.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { postgresAvailable } from '../support/postgres.js';
import { type DaemonProcess, serveProcess } from '../support/process-daemon.js';
import {
  type ApiClient,
  calls,
  jobIn,
  planned,
  plannedJob,
  proposes,
  runUntil,
  says,
  tokenIn,
  type World,
  world,
} from './helpers.js';

const postgres = await postgresAvailable('50 concurrent approvals on PostgreSQL');

let model: ModelServer;
let w: World;
const processes: DaemonProcess[] = [];
const children: ChildProcess[] = [];
const stores: Store[] = [];
const dirs: { remove(): void }[] = [];
beforeEach(async () => {
  model = await startModelServer();
});
afterEach(async () => {
  await w?.d.stop();
  for (const s of stores.splice(0)) await s.close();
  // The last first: the first made the database the others share, and drops it.
  for (const p of processes.splice(0).reverse()) await p.close();
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) d.remove();
  await model.close();
});

describe('who may decide', () => {
  it('the requester cannot approve their own plan, but may reject or revise it', async () => {
    w = await world(model);
    model.enqueue(proposes(), proposes('p2'));
    const { plan } = await planned(w);
    // The admin created the session and fired the job: the admin is the requester.
    const self = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {});
    expect(self.status).toBe(403);
    expect(self.body.error.code).toBe('self_approval');
    expect((await w.d.api('GET', `/v1/plans/${plan.id}`)).body).toMatchObject({
      status: 'pending_approval',
      decisions: [],
    });
    const revise = await w.d.api('POST', `/v1/plans/${plan.id}/revise`, { feedback: 'smaller please' });
    expect(revise.status).toBe(200);
  });

  it('self-approval is allowed when the session says so (a lone maintainer)', async () => {
    w = await world(model, { allow_self_approval: true, execute_mode: 'edits' });
    model.enqueue(proposes(), says('nothing to change'));
    const { plan } = await planned(w);
    const self = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {});
    expect(self.status).toBe(200);
    expect(self.body.plan.status).toBe('approved');
  });

  it('viewers cannot decide; reject needs a comment; a wrong sha256 is refused', async () => {
    w = await world(model);
    model.enqueue(proposes());
    const { plan } = await planned(w);
    const viewer = await w.token('vera', 'viewer');
    const alice = await w.token('alice');
    expect((await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, viewer)).status).toBe(403);
    expect((await w.d.api('POST', `/v1/plans/${plan.id}/reject`, {}, alice)).status).toBe(422);
    const wrong = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: 'a'.repeat(64) }, alice);
    expect(wrong.status).toBe(409);
    expect(wrong.body.error.code).toBe('sha256_mismatch');
    const rejected = await w.d.api('POST', `/v1/plans/${plan.id}/reject`, { comment: 'not now' }, alice);
    expect(rejected.body.plan.status).toBe('rejected');
    expect((await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, alice)).status).toBe(409);
  });
});

it('a quorum of 2 needs two distinct approvers', async () => {
  w = await world(model, { approvals_required: 2, execute_mode: 'edits' });
  model.enqueue(proposes(), says('done'));
  const { plan } = await planned(w);
  const alice = await w.token('alice');
  const bob = await w.token('bob');
  const one = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, alice);
  expect(one.status).toBe(200);
  expect(one.body).toMatchObject({ plan: { status: 'pending_approval' }, run: null });
  const twice = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, alice);
  expect(twice.status).toBe(409);
  expect(twice.body.error.code).toBe('already_approved');
  const two = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, bob);
  expect(two.body.plan.status).toBe('approved');
  expect(two.body.run.phase).toBe('execute');
  const detail = (await w.d.api('GET', `/v1/plans/${plan.id}`)).body;
  expect(detail.approvals).toBe(2);
});

it('an expired plan answers 410 to any decision', async () => {
  w = await world(model, {}, (c) => {
    c.plans.ttl_ms = 200;
  });
  model.enqueue(proposes());
  const { plan } = await planned(w);
  await new Promise((r) => setTimeout(r, 250));
  const alice = await w.token('alice');
  const res = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, alice);
  expect(res.status).toBe(410);
  expect((await w.d.api('GET', `/v1/plans/${plan.id}`)).body.status).toBe('expired');
  expect((await w.d.api('POST', `/v1/plans/${plan.id}/reject`, { comment: 'x' }, alice)).status).toBe(410);
});

describe('stale base', () => {
  it('a plan whose base moved in a file its text names is refused at approval (409)', async () => {
    w = await world(model);
    model.enqueue(proposes());
    const { plan } = await planned(w);
    // PLAN_MD says it creates hello.txt: a commit that adds it touches the plan (src/plans/staleness.ts).
    writeFileSync(join(w.repo, 'hello.txt'), 'x');
    git(w.repo, 'add', '-A');
    git(w.repo, 'commit', '-q', '-m', 'someone else');
    const alice = await w.token('alice');
    const res = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, alice);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('stale');
  });

  it('found stale when execution starts: execution_failed with reason stale', async () => {
    w = await world(model, { approvals_required: 1 });
    model.enqueue(proposes());
    const { plan } = await planned(w);
    const alice = await w.token('alice');
    // Hold the queue: a run of the same session keeps it busy until released.
    const blocker = await w.d.daemon.store.createRun({
      id: 'run_blocker',
      sessionId: w.sessionId,
      jobId: null,
      slotAt: null,
      source: 'manual',
      prompt: 'x',
      requestedBy: 'x',
      createdAt: Date.now(),
    });
    // Parked on a question nobody answers: it holds the session (on every replica) until canceled.
    await w.d.daemon.store.transitionRun(blocker.id, ['queued'], 'awaiting_input');
    await w.d.daemon.store.createQuestion({
      id: 'qst_blocker',
      runId: blocker.id,
      sessionId: w.sessionId,
      toolUseId: 't',
      questions: {},
      priorResults: [],
      createdAt: Date.now(),
      expiresAt: Number.MAX_SAFE_INTEGER,
    });
    (w.d.daemon.queue as any).parked.set(w.sessionId, blocker.id);
    const approved = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, alice);
    expect(approved.body.plan.status).toBe('approved');
    writeFileSync(join(w.repo, 'other.txt'), 'x');
    git(w.repo, 'add', '-A');
    git(w.repo, 'commit', '-q', '-m', 'moved meanwhile');
    await w.d.api('POST', `/v1/runs/${blocker.id}/cancel`);
    const exec = await runUntil(w.d, approved.body.run.id, ['failed', 'completed']);
    expect(exec.status).toBe('failed');
    expect(exec.error).toMatch(/^stale:/);
    const after = (await w.d.api('GET', `/v1/plans/${plan.id}`)).body;
    expect(after).toMatchObject({ status: 'execution_failed' });
    expect(after.failure_reason).toMatch(/^stale:/);
  });
});

/**
 * 50 approvers approve one plan at once, their calls spread over `daemons` (every one on the same store):
 * exactly one call wins (200) and the other 49 are refused (409); the plan has exactly one execute run, as
 * each daemon's API and the store tell, and it is carried out. `jobId`'s session executes in `edits` mode.
 */
async function fiftyConcurrentApprovals(daemons: ApiClient[], store: Store, jobId: string): Promise<void> {
  model.enqueue(proposes(), says('done'));
  model.setFallback(says('done'));
  const { plan } = await plannedJob(daemons[0]!, jobId);
  const tokens = await Promise.all(Array.from({ length: 50 }, (_, i) => tokenIn(store, `approver-${i}`)));
  const results = await Promise.all(
    tokens.map((t, i) => daemons[i % daemons.length]!.api('POST', `/v1/plans/${plan.id}/approve`, {}, t)),
  );
  const won = results.findIndex((r) => r.status === 200);
  expect(results.filter((r) => r.status === 200)).toHaveLength(1);
  const refused = results.filter((r) => r.status === 409);
  expect(refused).toHaveLength(49);
  // Refused because the plan was decided meanwhile, not for any other reason.
  expect(new Set(refused.map((r) => r.body.error.code))).toEqual(new Set(['conflict']));
  const run = results[won]!.body.run;
  expect(run.phase).toBe('execute');
  for (const d of daemons) {
    const runs = (await d.api('GET', `/v1/plans/${plan.id}`)).body.runs.filter(
      (r: any) => r.phase === 'execute',
    );
    expect(runs.map((r: any) => r.id)).toEqual([run.id]);
  }
  const stored = await store.listPlanRuns((await store.getPlan(plan.id))!);
  expect(stored.filter((r) => r.executesPlanId === plan.id).map((r) => r.id)).toEqual([run.id]);
  // The daemon that took the winning call runs it.
  const done = await runUntil(daemons[won % daemons.length]!, run.id, ['completed', 'failed']);
  expect(done.status, done.error).toBe('completed');
}

describe('50 concurrent approve calls on one plan start exactly one execute run', () => {
  it('on SQLite: one daemon', async () => {
    w = await world(model, { execute_mode: 'edits' });
    await fiftyConcurrentApprovals([w.d], w.d.daemon.store, w.jobId);
  });

  it.skipIf(!postgres)(
    'on PostgreSQL: two daemon processes on one database, the calls split between them',
    async () => {
      const tmp = tempDir('drydock-approvals-');
      dirs.push(tmp);
      const repo = join(tmp.path, 'repo');
      makeRepo(repo, { 'README.md': '# demo\n' });
      // The first makes the database (and migrates it); the second shares it.
      const a = await serveProcess(join(tmp.path, 'a'), model.url, children, {}, { store: 'postgres' });
      processes.push(a);
      const b = await serveProcess(join(tmp.path, 'b'), model.url, children, {}, { store: a.database! });
      processes.push(b);
      // The test's own view of the database: tokens go in, runs are counted out.
      const store = await openPostgresStore({ url: a.database!.url, migrate: false });
      stores.push(store);
      const { jobId } = await jobIn(a, repo, { execute_mode: 'edits' }, 'Add a greeting file');
      await fiftyConcurrentApprovals([a, b], store, jobId);
    },
    60_000,
  );
});

describe('circuit breaker', () => {
  it('the admin switch off: an auto execution falls back to manual and says so', async () => {
    w = await world(model, { execute_mode: 'auto' });
    model.enqueue(proposes(), calls('w1', 'Write', { file_path: 'x.txt', content: 'x' }), says('done'));
    const { plan } = await planned(w);
    const off = await w.d.api('POST', '/v1/admin/auto-mode', { enabled: false });
    expect(off.body).toMatchObject({ enabled: false, breaker: { closed: false } });
    const alice = await w.token('alice');
    expect((await w.d.api('POST', '/v1/admin/auto-mode', { enabled: true }, alice)).status).toBe(403);
    const exec = (await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, alice)).body.run;
    const parked = await runUntil(w.d, exec.id, ['awaiting_input', 'completed', 'failed']);
    expect(parked.status).toBe('awaiting_input');
    expect(parked.execute_mode).toBe('manual');
    const events = (await w.d.daemon.store.listEvents(exec.id, 0, 100)).map((e) => [e.type, e.data]);
    expect(events).toContainEqual([
      'mode_fallback',
      { from: 'auto', to: 'manual', reason: 'unattended execution is switched off by an admin' },
    ]);
  });

  it('too many recent failed executions: falls back to manual', async () => {
    w = await world(model, { execute_mode: 'edits' }, (c) => {
      c.execute.breaker.min_executions = 2;
    });
    const store = w.d.daemon.store;
    // Two failed executions in the window.
    for (const id of ['run_f1', 'run_f2']) {
      await store.createRun({
        id,
        sessionId: w.sessionId,
        jobId: null,
        slotAt: null,
        source: 'manual',
        prompt: 'x',
        requestedBy: 'x',
        createdAt: Date.now(),
        phase: 'execute',
      });
      await store.transitionRun(id, ['queued'], 'failed', { finishedAt: Date.now() });
    }
    model.enqueue(proposes(), calls('w1', 'Write', { file_path: 'x.txt', content: 'x' }));
    const { plan } = await planned(w);
    const alice = await w.token('alice');
    const exec = (await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, alice)).body.run;
    const parked = await runUntil(w.d, exec.id, ['awaiting_input', 'completed', 'failed']);
    expect(parked.execute_mode).toBe('manual');
    const events = await readSse(
      `${w.d.daemon.url}/v1/runs/${exec.id}/events`,
      ADMIN_TOKEN,
      undefined,
      1_000,
    ).catch(() => []);
    expect(Array.isArray(events)).toBe(true);
    const fallback = (await store.listEvents(exec.id, 0, 100)).find((e) => e.type === 'mode_fallback');
    expect(fallback?.data.reason).toBe('2 of the last 2 executions failed');
  });
});
