import { afterEach, describe, expect, it } from 'vitest';
import { PLAN_STATUSES } from '../../src/domain/types.js';
import { AppAuth } from '../../src/github/app-auth.js';
import { TokenAuth } from '../../src/github/auth.js';
import {
  ACTION_LIMITS,
  CHECK_RUN_NAME,
  clipBytes,
  PLAN_ACTIONS,
  type PlanCheckInput,
  planCheckRun,
  SUMMARY_MAX_BYTES,
} from '../../src/github/check-run.js';
import { GithubApi, GithubCallError } from '../../src/github/client.js';
import { silentLogger } from '../../src/logger.js';
import { type FakeGithub, startFakeGithub } from '../support/fake-github.js';
import { type Access, appKeyPair } from '../support/fake-github-app.js';

// What a plan's check run says (src/github/check-run.ts), within GitHub's limits; and the fake GitHub's check runs
// (tests/support/fake-checks.ts) refusing what GitHub refuses, driven through drydock's own client where it can.

const SHA = 'a'.repeat(40);
const REPO = 'acme/widgets';
const PAT = 'ghp_PATcheckruns0123456789abcdefghijklm';
const keys = appKeyPair();

const input = (
  over: Partial<PlanCheckInput['plan']> = {},
  rest: Partial<PlanCheckInput> = {},
): PlanCheckInput => ({
  plan: {
    id: 'pln_1',
    status: 'pending_approval',
    markdown: '## Plan\n\n1. one\n',
    sha256: 'f'.repeat(64),
    round: 1,
    approvalsRequired: 1,
    failureReason: null,
    previousPlanId: null,
    ...over,
  },
  decisions: [],
  headSha: SHA,
  page: 'https://drydock.example.test/ui/plans/pln_1',
  pageIsUrl: true,
  ...rest,
});

describe('a plan check run', () => {
  it('is completed in every state, with the buttons only while the plan waits', () => {
    const seen = Object.fromEntries(
      PLAN_STATUSES.map((status) => {
        const run = planCheckRun(input({ status }));
        expect(run.status).toBe('completed');
        expect(run.actions.length, status).toBe(status === 'pending_approval' ? 2 : 0);
        return [status, run.conclusion];
      }),
    );
    expect(seen).toEqual({
      pending_approval: 'action_required',
      approved: 'neutral',
      executing: 'neutral',
      executed: 'success',
      execution_failed: 'failure',
      rejected: 'failure',
      revision_requested: 'cancelled',
      expired: 'timed_out',
      superseded: 'cancelled',
    });
  });

  it("keeps its buttons within GitHub's limits", () => {
    expect(PLAN_ACTIONS.length).toBeLessThanOrEqual(ACTION_LIMITS.count);
    for (const a of PLAN_ACTIONS) {
      expect(a.label.length).toBeLessThanOrEqual(ACTION_LIMITS.label);
      expect(a.description.length).toBeLessThanOrEqual(ACTION_LIMITS.description);
      expect(a.identifier.length).toBeLessThanOrEqual(ACTION_LIMITS.identifier);
    }
  });

  it('links the plan page only when it is an absolute URL', () => {
    expect(planCheckRun(input()).detailsUrl).toBe('https://drydock.example.test/ui/plans/pln_1');
    const relative = planCheckRun(input({}, { page: '/ui/plans/pln_1', pageIsUrl: false }));
    expect(relative.detailsUrl).toBeUndefined();
    expect(relative.output.summary).toContain('/ui/plans/pln_1');
  });

  it('cuts a long plan to 65535 bytes of summary, never inside a character, saying where the rest is', () => {
    const markdown = `## Plan\n\n${'🚢 schiff größer '.repeat(8_000)}`;
    const run = planCheckRun(input({ markdown }));
    const bytes = Buffer.byteLength(run.output.summary, 'utf8');
    expect(bytes).toBeLessThanOrEqual(SUMMARY_MAX_BYTES);
    expect(bytes).toBeGreaterThan(SUMMARY_MAX_BYTES - 8);
    expect(run.output.summary).not.toContain('\uFFFD');
    expect(run.output.summary.endsWith('read it whole at https://drydock.example.test/ui/plans/pln_1)')).toBe(
      true,
    );
    expect(clipBytes('ab🚢', 5, '')).toBe('ab');
    expect(clipBytes('short', 5, '…')).toBe('short');
  });

  it('names who decided, and why', () => {
    const rejected = planCheckRun(
      input(
        { status: 'rejected' },
        { decisions: [{ kind: 'reject', identity: 'bob', comment: 'too broad' }] },
      ),
    );
    expect(rejected.output.title).toBe('Rejected by bob');
    expect(rejected.output.summary).toContain('Rejected: too broad.');
    const partial = planCheckRun(
      input({ approvalsRequired: 2 }, { decisions: [{ kind: 'approve', identity: 'alice', comment: null }] }),
    );
    expect(partial.output.title).toBe('Awaits approval (1 of 2)');
    expect(partial.actions).toHaveLength(2);
  });
});

describe("the fake GitHub's check runs", () => {
  let github: FakeGithub | undefined;
  afterEach(async () => {
    await github?.close();
    github = undefined;
  });

  async function setUp(permissions: Record<string, Access> = { checks: 'write', metadata: 'read' }) {
    github = await startFakeGithub({
      token: PAT,
      app: {
        id: 99,
        publicKey: keys.publicKey,
        installations: [{ id: 5, account: 'acme', repositories: [REPO], permissions }],
      },
    });
    const auth = new AppAuth({
      appId: 99,
      privateKey: keys.privateKey,
      baseUrl: github.url,
      logger: silentLogger(),
    });
    const api = new GithubApi({
      auth,
      baseUrl: github.url,
      logger: silentLogger(),
      reportRetry: { attempts: 1 },
    });
    const token = await auth.tokenFor(REPO);
    const post = async (path: string, body: unknown, method = 'POST', as = token) => {
      const res = await fetch(`${github!.url}/repos/${REPO}${path}`, {
        method,
        headers: { authorization: `token ${as}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    return { github, api, post };
  }

  const fields = planCheckRun(input());
  const valid = {
    name: CHECK_RUN_NAME,
    head_sha: SHA,
    status: 'completed',
    conclusion: 'action_required',
    output: { title: 't', summary: 's' },
  };

  it('are written through the client by the App, listed by name with every one or only the latest', async () => {
    const { github, api } = await setUp();
    const first = await api.createCheckRun(REPO, {
      name: CHECK_RUN_NAME,
      sha: SHA,
      externalId: 'pln_1',
      ...fields,
    });
    await api.createCheckRun(REPO, { name: CHECK_RUN_NAME, sha: SHA, externalId: 'pln_2', ...fields });
    const listed = await api.listCheckRuns(REPO, SHA, CHECK_RUN_NAME);
    expect(listed.map((r) => [r.externalId, r.appSlug])).toEqual([
      ['pln_1', 'drydock-test'],
      ['pln_2', 'drydock-test'],
    ]);
    const latest = await fetch(
      `${github.url}/repos/${REPO}/commits/${SHA}/check-runs?check_name=drydock%20plan`,
      {
        headers: { authorization: `token ${PAT}` },
      },
    );
    expect(((await latest.json()) as any).check_runs.map((r: any) => r.external_id)).toEqual(['pln_2']);
    await api.updateCheckRun(REPO, first.id, planCheckRun(input({ status: 'executed' })));
    expect(github.checkRuns().map((r) => [r.externalId, r.conclusion, r.actions.length])).toEqual([
      ['pln_1', 'success', 0],
      ['pln_2', 'action_required', 2],
    ]);
  });

  it('refuse a personal token: "You must authenticate via a GitHub App."', async () => {
    const { github } = await setUp();
    const pat = new GithubApi({
      auth: new TokenAuth(PAT),
      baseUrl: github.url,
      logger: silentLogger(),
      reportRetry: { attempts: 1 },
    });
    const err = await pat
      .createCheckRun(REPO, { name: CHECK_RUN_NAME, sha: SHA, externalId: 'pln_1', ...fields })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GithubCallError);
    expect((err as GithubCallError).status).toBe(403);
    expect((err as GithubCallError).message).toContain('You must authenticate via a GitHub App.');
    // Reading them is allowed.
    expect(await pat.listCheckRuns(REPO, SHA, CHECK_RUN_NAME)).toEqual([]);
    expect(github.checkRuns()).toEqual([]);
  });

  it('refuse an installation without checks write: "Resource not accessible by integration"', async () => {
    const { api } = await setUp({ checks: 'read', metadata: 'read' });
    const err = (await api
      .createCheckRun(REPO, { name: CHECK_RUN_NAME, sha: SHA, externalId: 'pln_1', ...fields })
      .catch((e: unknown) => e)) as GithubCallError;
    expect(err.status).toBe(403);
    expect(err.message).toContain('Resource not accessible by integration');
  });

  it('answer 422 to what GitHub refuses', async () => {
    const { github, post } = await setUp();
    const refused = async (body: unknown, expected: RegExp) => {
      const r = await post('/check-runs', body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(JSON.stringify(r.body), JSON.stringify(body)).toMatch(expected);
    };
    const { name: _name, ...noName } = valid;
    const { head_sha: _sha, ...noSha } = valid;
    const { conclusion: _c, ...noConclusion } = valid;
    await refused(noName, /\\"name\\" wasn't supplied/);
    await refused(noSha, /\\"head_sha\\" wasn't supplied/);
    await refused(noConclusion, /\\"conclusion\\" wasn't supplied/);
    await refused({ ...valid, status: 'running' }, /properties\/status/);
    await refused({ ...valid, conclusion: 'stale' }, /properties\/conclusion/);
    await refused(
      { ...valid, output: { title: 't', summary: 'é'.repeat(32_768) } },
      /maximum bytesize of 65535/,
    );
    const action = { label: 'Go', description: 'Do it', identifier: 'go' };
    await refused({ ...valid, actions: [action, action, action, action] }, /at most 3 actions/);
    await refused({ ...valid, actions: [{ ...action, label: 'x'.repeat(21) }] }, /label is too long/);
    await refused(
      { ...valid, actions: [{ ...action, description: 'x'.repeat(41) }] },
      /description is too long/,
    );
    await refused(
      { ...valid, actions: [{ ...action, identifier: 'x'.repeat(21) }] },
      /identifier is too long/,
    );
    expect(github.checkRuns()).toEqual([]);
    // At the limits, taken.
    const ok = await post('/check-runs', {
      ...valid,
      output: { title: 't', summary: 'é'.repeat(32_767) },
      actions: [
        action,
        action,
        { label: 'x'.repeat(20), description: 'y'.repeat(40), identifier: 'z'.repeat(20) },
      ],
    });
    expect(ok.status).toBe(201);
  });

  it('keep a completed check run completed, its conclusion changeable', async () => {
    const { github, post } = await setUp();
    const made = await post('/check-runs', valid);
    expect(made.status).toBe(201);
    const back = await post(`/check-runs/${made.body.id}`, { status: 'in_progress' }, 'PATCH');
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ status: 'completed', conclusion: 'action_required' });
    const done = await post(`/check-runs/${made.body.id}`, { conclusion: 'success' }, 'PATCH');
    expect(done.body).toMatchObject({ status: 'completed', conclusion: 'success' });
    expect(github.checkRuns()[0]).toMatchObject({ status: 'completed', conclusion: 'success', updates: 2 });
  });
});
