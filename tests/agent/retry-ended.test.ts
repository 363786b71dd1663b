import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { jobIn, plannedJob, proposes, runUntil } from '../plans/helpers.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { makeRepo } from '../support/git-repo.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';

// A plan-phase run writes its end in steps: the plan, the run naming it, the plan's receipt in the
// conversation, then the run `planned`. A daemon that dies between them leaves a run to retry whose plan is
// already proposed: the retry must end it planned with that plan, not ask the model again for a second one.

let model: ModelServer;
const cleanups: (() => Promise<void> | void)[] = [];
beforeEach(async () => {
  model = await startModelServer();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await model.close();
});

async function daemon(dir?: string): Promise<TestDaemon> {
  const d = await startTestDaemon({ modelUrl: model.url, ...(dir ? { dir } : {}) });
  cleanups.push(async () => {
    await d.halt();
    if (!dir) d.remove();
  });
  return d;
}

it('a run that died after its plan receipt, before it ended planned, is planned with that plan on retry', async () => {
  const first = await daemon();
  const repo = join(realpathSync(first.dir), 'repo');
  makeRepo(repo, { 'README.md': '# demo\n' });
  model.enqueue(proposes());
  const { jobId } = await jobIn(first, repo);
  const { runId, plan } = await plannedJob(first, jobId);
  await first.halt();

  // The state of a death after the receipt was stored: the run still running, and (the earlier window) not
  // yet naming its plan.
  const store = new SqliteStore({ file: join(first.config.data_dir, 'drydock.db') });
  expect(await store.transitionRun(runId, ['planned'], 'running', {})).toBe(true);
  store.db.prepare('UPDATE runs SET plan_id = NULL WHERE id = ?').run(runId);
  expect((await store.getRun(runId))!.planId).toBeNull();
  await store.close();
  const requests = model.requests.length;
  // Were the model asked again, it would propose a second plan.
  model.enqueue(proposes());

  const second = await daemon(first.dir);
  const run = await runUntil(second, runId, ['planned', 'failed', 'interrupted']);
  expect(run.status, run.error).toBe('planned');
  expect(run.attempt).toBe(2);
  expect(run.plan_id).toBe(plan.id);
  expect(model.requests.length).toBe(requests);
  const plans = (await second.api('GET', '/v1/plans?status=pending_approval')).body.items;
  expect(plans.map((p: any) => p.id)).toEqual([plan.id]);
});
