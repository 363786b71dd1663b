import { realpathSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import {
  type ApiClient,
  calls,
  jobIn,
  pendingApproval,
  plannedJob,
  proposes,
  runUntil,
  says,
  tokenFor,
} from './helpers.js';

let model: ModelServer;
const cleanups: (() => Promise<void> | void)[] = [];
beforeEach(async () => {
  model = await startModelServer();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await model.close();
});

function dir(prefix: string): string {
  const d = tempDir(prefix);
  cleanups.push(d.remove);
  return realpathSync(d.path);
}

async function daemon(opts: Parameters<typeof startTestDaemon>[0]): Promise<TestDaemon> {
  const d = await startTestDaemon({ modelUrl: model.url, ...opts });
  cleanups.push(async () => {
    await d.halt();
    if (!opts.dir) d.remove();
  });
  return d;
}

const planOf = async (d: ApiClient, id: string) => (await d.api('GET', `/v1/plans/${id}`)).body;

const planReaches = (d: ApiClient, id: string, status: string) =>
  waitFor(
    async () => {
      const plan = await planOf(d, id);
      return plan.status === status ? plan : undefined;
    },
    10_000,
    `plan ${id} to be ${status}`,
  );

/** A plan on a fresh repository, approved by alice in manual mode: its execute run is started. */
async function approvedPlan(d: TestDaemon, repo: string): Promise<{ plan: any; execRunId: string }> {
  const { jobId } = await jobIn(d, repo, { execute_mode: 'manual' }, 'Add a greeting file');
  const { plan } = await plannedJob(d, jobId);
  const alice = await tokenFor(d, 'alice');
  const approved = await d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, alice);
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  return { plan, execRunId: approved.body.run.id };
}

describe('a relative data_dir', () => {
  it('resolves against where drydock started: the worktree lives in it, the repository stays clean', async () => {
    // The daemon "starts" in `home` (no chdir: the base directory goes through LoadOptions); the person's
    // repository is somewhere else entirely.
    const home = dir('drydock-home-');
    const loaded = loadConfig({ env: { DRYDOCK_DATA_DIR: 'state' }, baseDir: home });
    expect(loaded.data_dir).toBe(join(home, 'state'));
    const d = await daemon({ dir: home, patch: (c) => Object.assign(c, { data_dir: loaded.data_dir }) });
    expect(isAbsolute(d.config.data_dir)).toBe(true);
    const repo = join(dir('drydock-repo-'), 'project');
    makeRepo(repo, { 'README.md': '# demo\n' });

    model.enqueue(
      proposes(),
      calls('w1', 'Write', { file_path: 'hello.txt', content: 'hello\n' }),
      says('Created hello.txt.'),
    );
    const { plan, execRunId } = await approvedPlan(d, repo);
    const approval = await pendingApproval(d, (a) => a.run_id === execRunId);
    const alice = await tokenFor(d, 'alice');
    const allowed = await d.api('POST', `/v1/tool-approvals/${approval.id}`, { decision: 'allow' }, alice);
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    const done = await runUntil(d, execRunId, ['completed', 'failed']);
    expect(done.status, done.error).toBe('completed');
    expect((await planOf(d, plan.id)).status).toBe('executed');

    // The commit is on drydock/<plan>; the person's repository has nothing new in its tree.
    expect(git(repo, 'rev-parse', `drydock/${plan.id}`)).toBe(done.result_commit);
    expect(git(repo, 'show', `drydock/${plan.id}:hello.txt`)).toBe('hello');
    expect(git(repo, 'status', '--porcelain')).toBe('');
    const worktrees = git(repo, 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.startsWith('worktree '))
      .map((l) => l.slice('worktree '.length));
    expect(worktrees).toEqual([repo, join(home, 'state', 'worktrees', plan.id)]);
  });
});

/**
 * An approved plan whose execute run waits for a tool approval, and the daemon halted then: for a test to
 * write into its store what a crash at some moment would have left.
 */
async function haltedMidExecution() {
  const first = await daemon({});
  const repo = join(first.dir, 'repo');
  makeRepo(repo, { 'README.md': '# demo\n' });
  model.enqueue(proposes(), calls('w1', 'Write', { file_path: 'a.txt', content: 'A\n' }));
  const { plan, execRunId } = await approvedPlan(first, repo);
  await runUntil(first, execRunId, ['awaiting_input']);
  await first.halt();
  return { first, repo, plan, execRunId };
}

describe('a plan never stays executing once its execute run has ended', () => {
  it('an execute run that fails before its phase opens fails the plan, with the reason', async () => {
    const d = await daemon({});
    const repo = join(d.dir, 'repo');
    makeRepo(repo, { 'README.md': '# demo\n' });
    model.enqueue(proposes());
    const { jobId } = await jobIn(d, repo, { execute_mode: 'manual' });
    const { plan } = await plannedJob(d, jobId);
    // The model is retired between the plan and its approval: the execute run fails before it starts.
    d.config.models['claude-sonnet-5-5'] = { retires_on: '2000-01-01', replacement: 'claude-opus-5-5' };
    const alice = await tokenFor(d, 'alice');
    const approved = await d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, alice);
    expect(approved.status).toBe(200);
    const run = await runUntil(d, approved.body.run.id, ['failed', 'completed']);
    expect(run.error).toMatch(
      /^claude-sonnet-5-5 retired on 2000-01-01 and no longer answers; use claude-opus-5-5/,
    );
    const failed = await planReaches(d, plan.id, 'execution_failed');
    expect(failed.failure_reason).toBe(
      `the execute run ${run.id} ended (failed: ${run.error}) before the plan's result was recorded`,
    );
  });

  it('an execute run canceled while it waits for a tool approval fails the plan', async () => {
    const d = await daemon({});
    const repo = join(d.dir, 'repo');
    makeRepo(repo, { 'README.md': '# demo\n' });
    model.enqueue(proposes(), calls('w1', 'Write', { file_path: 'a.txt', content: 'A\n' }));
    const { plan, execRunId } = await approvedPlan(d, repo);
    await runUntil(d, execRunId, ['awaiting_input']);
    expect((await planOf(d, plan.id)).status).toBe('executing');
    expect((await d.api('POST', `/v1/runs/${execRunId}/cancel`)).status).toBe(200);
    const failed = await planReaches(d, plan.id, 'execution_failed');
    expect(failed.failure_reason).toBe(
      `the execute run ${execRunId} ended (canceled: canceled) before the plan's result was recorded`,
    );
  });

  it('an execute run that recorded its result, then died before it ended, completes when taken over', async () => {
    const { first, repo, plan, execRunId } = await haltedMidExecution();

    // What a crash between the execute phase's two writes leaves: the plan executed, the run still running
    // (with no live holder, as after a SIGKILL).
    const store = new SqliteStore({ file: join(first.config.data_dir, 'drydock.db') });
    expect(await store.transitionPlan(plan.id, ['executing'], 'executed')).toBe(true);
    expect(await store.transitionRun(execRunId, ['awaiting_input'], 'running')).toBe(true);
    await store.close();
    const requests = model.requests.length;

    const second = await daemon({ dir: first.dir });
    const run = await runUntil(second, execRunId, ['completed', 'failed', 'interrupted']);
    expect(run.status, run.error).toBe('completed');
    expect(run.attempt).toBe(2);
    expect((await planOf(second, plan.id)).status).toBe('executed');
    // Nothing ran again: no model request, no file written in the workspace.
    expect(model.requests.length).toBe(requests);
    expect(git(repo, 'status', '--porcelain')).toBe('');
  });

  it('on start, a plan whose execute run ended while no daemon watched becomes execution_failed', async () => {
    const { first, plan, execRunId } = await haltedMidExecution();

    // What a crash between the run's end and its plan's settling leaves: the run over, the plan executing.
    const store = new SqliteStore({ file: join(first.config.data_dir, 'drydock.db') });
    expect(
      await store.transitionRun(execRunId, ['awaiting_input'], 'failed', {
        finishedAt: Date.now(),
        error: 'x',
      }),
    ).toBe(true);
    expect((await store.getPlan(plan.id))!.status).toBe('executing');
    await store.close();

    const second = await daemon({ dir: first.dir });
    const settled = await planOf(second, plan.id);
    expect(settled.status).toBe('execution_failed');
    expect(settled.failure_reason).toBe(
      `its execute run ${execRunId} had ended (failed: x) when drydock started`,
    );
  });
});
