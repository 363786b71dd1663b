import { join } from 'node:path';
import { expect } from 'vitest';
import { issueToken } from '../../src/auth/tokens.js';
import type { Role } from '../../src/store/types.js';
import { startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { makeRepo } from '../support/git-repo.js';
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

export interface World {
  d: TestDaemon;
  repo: string;
  head: string;
  sessionId: string;
  jobId: string;
  token(name: string, role?: Role): Promise<string>;
}

/** A daemon, a git repository and a session (owned by the admin) with one job. */
export async function world(
  model: ModelServer,
  defaults: Record<string, unknown> = {},
  patch?: Parameters<typeof startTestDaemon>[0]['patch'],
): Promise<World> {
  const d = await startTestDaemon({ modelUrl: model.url, ...(patch ? { patch } : {}) });
  const repo = join(d.dir, 'repo');
  const head = makeRepo(repo, { 'README.md': '# demo\n' });
  const s = await d.api('POST', '/v1/sessions', { workspace: repo, defaults });
  expect(s.status).toBe(201);
  const j = await d.api('POST', `/v1/sessions/${s.body.id}/jobs`, {
    cron: '0 9 * * *',
    prompt: 'Add a greeting file',
  });
  expect(j.status).toBe(201);
  return {
    d,
    repo,
    head,
    sessionId: s.body.id,
    jobId: j.body.id,
    async token(name, role = 'approver') {
      const issued = issueToken(name, name, role, Date.now());
      await d.daemon.store.createToken(issued.record);
      return issued.token;
    },
  };
}

export async function runUntil(d: TestDaemon, runId: string, statuses: string[], ms = 10_000): Promise<any> {
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
export async function planned(w: World): Promise<{ runId: string; plan: any }> {
  const fired = await w.d.api('POST', `/v1/jobs/${w.jobId}/run`);
  expect(fired.status).toBe(201);
  const run = await runUntil(w.d, fired.body.id, ['planned', 'failed']);
  expect(run.status, run.error).toBe('planned');
  const plan = await w.d.api('GET', `/v1/plans/${run.plan_id}`);
  return { runId: run.id, plan: plan.body };
}
