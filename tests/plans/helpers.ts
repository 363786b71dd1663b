import { join } from 'node:path';
import { expect } from 'vitest';
import { issueToken } from '../../src/auth/tokens.js';
import type { Role } from '../../src/domain/types.js';
import type { StateStore } from '../../src/store/store.js';
import { startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { makeRepo } from '../support/git-repo.js';
import type { TestStore } from '../support/harness.js';
import type { ModelServer, ScriptedResponse } from '../support/model-server.js';

export const PLAN_MD = '## Add a greeting\n\n1. Create `hello.txt` with a greeting\n2. Run `git status`\n';

export const proposes = (id = 'plan', markdown = PLAN_MD): ScriptedResponse => ({
  kind: 'message',
  content: [{ type: 'tool_use', id, name: 'ExitPlanMode', input: { plan: markdown } }],
});

export const says = (text: string): ScriptedResponse => ({
  kind: 'message',
  content: [{ type: 'text', text }],
});

export const calls = (id: string, name: string, input: unknown): ScriptedResponse => ({
  kind: 'message',
  content: [{ type: 'tool_use', id, name, input }],
});

/** Anything that answers the API: a daemon in this process or a daemon process. */
export type ApiClient = Pick<TestDaemon, 'api'>;

export interface World {
  d: TestDaemon;
  repo: string;
  head: string;
  sessionId: string;
  jobId: string;
  token(name: string, role?: Role): Promise<string>;
}

/**
 * A daemon (its state in a SQLite file, or where `store` says), a git repository and a session (owned by
 * the admin) with one job.
 */
export async function world(
  model: ModelServer,
  defaults: Record<string, unknown> = {},
  patch?: Parameters<typeof startTestDaemon>[0]['patch'],
  store?: TestStore,
): Promise<World> {
  const d = await startTestDaemon({
    modelUrl: model.url,
    ...(patch ? { patch } : {}),
    ...(store ? { store } : {}),
  });
  const repo = join(d.dir, 'repo');
  const head = makeRepo(repo, { 'README.md': '# demo\n' });
  const { sessionId, jobId } = await jobIn(d, repo, defaults, 'Add a greeting file');
  return {
    d,
    repo,
    head,
    sessionId,
    jobId,
    token: (name, role = 'approver') => tokenFor(d, name, role),
  };
}

/** A token of a new identity, written straight into the daemon's store. */
export const tokenFor = (d: TestDaemon, name: string, role: Role = 'approver'): Promise<string> =>
  tokenIn(d.daemon.store, name, role);

/** A token of a new identity, written straight into `store` (the daemons' database). */
export async function tokenIn(store: StateStore, name: string, role: Role = 'approver'): Promise<string> {
  const issued = issueToken(name, name, role, Date.now());
  await store.createToken(issued.record);
  return issued.token;
}

/** A session on `workspace` (owned by the admin) with one daily job; returns both ids. */
export async function jobIn(
  d: ApiClient,
  workspace: string,
  defaults: Record<string, unknown> = {},
  prompt = 'work',
): Promise<{ sessionId: string; jobId: string }> {
  const s = await d.api('POST', '/v1/sessions', { workspace, defaults });
  expect(s.status, JSON.stringify(s.body)).toBe(201);
  const j = await d.api('POST', `/v1/sessions/${s.body.id}/jobs`, { cron: '0 9 * * *', prompt });
  expect(j.status, JSON.stringify(j.body)).toBe(201);
  return { sessionId: s.body.id, jobId: j.body.id };
}

export async function runUntil(d: ApiClient, runId: string, statuses: string[], ms = 10_000): Promise<any> {
  return waitFor(
    async () => {
      const r = await d.api('GET', `/v1/runs/${runId}`);
      return statuses.includes(r.body.status) ? r.body : undefined;
    },
    ms,
    `run ${runId} to reach ${statuses.join('/')}`,
  );
}

/** Fires the job now and waits for its plan. */
export async function plannedJob(d: ApiClient, jobId: string): Promise<{ runId: string; plan: any }> {
  const fired = await d.api('POST', `/v1/jobs/${jobId}/run`);
  expect(fired.status).toBe(201);
  const run = await runUntil(d, fired.body.id, ['planned', 'failed']);
  expect(run.status, run.error).toBe('planned');
  const plan = await d.api('GET', `/v1/plans/${run.plan_id}`);
  return { runId: run.id, plan: plan.body };
}

/** Fires the world's job now and waits for its plan. */
export const planned = (w: World) => plannedJob(w.d, w.jobId);

/** Approves the plan (the text it shows) with `token`; returns the execute run. */
export async function approveAs(d: ApiClient, plan: any, token: string): Promise<any> {
  const r = await d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, token);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.run;
}

/** Waits for a pending tool approval (the first, or the first that `match` accepts). */
export async function pendingApproval(
  d: ApiClient,
  match: (a: any) => boolean = () => true,
  ms = 10_000,
): Promise<any> {
  return waitFor(
    async () => {
      const items = (await d.api('GET', '/v1/tool-approvals?status=pending')).body.items as any[];
      return items.find(match);
    },
    ms,
    'a pending tool approval',
  );
}
