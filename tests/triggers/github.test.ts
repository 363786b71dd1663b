import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { Webhooks } from '@octokit/webhooks';
import examples from '@octokit/webhooks-examples';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/auth/tokens.js';
import type { Config } from '../../src/config/schema.js';
import { type Daemon, startDaemon } from '../../src/daemon.js';
import { createLogger } from '../../src/logger.js';
import { parseCommand } from '../../src/triggers/commands.js';
import { ADMIN_TOKEN, waitFor } from '../support/daemon.js';
import { type FakeGithub, startFakeGithub } from '../support/fake-github.js';
import { makeRepo } from '../support/git-repo.js';
import { tempDir, testConfig } from '../support/harness.js';
import { type ModelServer, type ScriptedResponse, startModelServer } from '../support/model-server.js';
import { settledAnswer } from '../support/webhook-deliveries.js';

const GITHUB_TOKEN = 'ghp_FAKEtoken0123456789abcdefghijklmnopqrs';
const SECRET = 'webhook-secret-for-tests-0123456789';
const REPO = 'acme/widgets';

const proposes = (id: string, markdown: string): ScriptedResponse => ({
  kind: 'message',
  content: [{ type: 'tool_use', id, name: 'ExitPlanMode', input: { plan: markdown } }],
});
const says = (text: string): ScriptedResponse => ({ kind: 'message', content: [{ type: 'text', text }] });

/** ~`chars` characters of plan: numbered steps, with a fenced block now and then. */
function bigPlan(chars: number): string {
  let out = '## Plan\n\n';
  for (let i = 0; out.length < chars - 200; i++) {
    out +=
      i % 50 === 49
        ? `\`\`\`ts\nexport const step${i} = ${i}; // keep this block whole\n\`\`\`\n`
        : `${i}. Change module ${i}: ${'adjust the handler and its tests; '.repeat(2)}\n`;
  }
  return out;
}

function example(name: string, action: string): any {
  const def = (examples as unknown as any[]).find((d) => d.name === name);
  return structuredClone(def.examples.find((e: any) => e.action === action));
}

interface World {
  daemon: Daemon;
  config: Config;
  head: string;
  logs: string[];
  api(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }>;
  token(identity: string): Promise<string>;
  webhook(event: string, payload: unknown): Promise<{ status: number; body: any }>;
  /** A signed pull_request.opened for `number` at the clone's HEAD; returns the run it started. */
  openPullRequest(number: number): Promise<string>;
  stop(): Promise<void>;
}

/**
 * The whole daemon with its GitHub settings pointed at the fake, its model at the scripted server, a local
 * clone as the repository, and its log captured (the real pino logger writing into `logs`).
 */
async function start(model: ModelServer, github: FakeGithub, patch?: (c: Config) => void): Promise<World> {
  const tmp = tempDir('drydock-report-');
  const clone = join(tmp.path, 'clone');
  const head = makeRepo(clone, { 'README.md': '# widgets\n', 'src/index.ts': 'export {};\n' });
  const config = testConfig(join(tmp.path, 'data'), (c) => {
    c.server.port = 0;
    c.admin_token = ADMIN_TOKEN;
    c.server.shutdown_grace_ms = 2_000;
    c.log_level = 'debug';
    c.github.report = true;
    c.github.token = GITHUB_TOKEN;
    c.github.api_url = github.url;
    c.github.webhook_secrets = [SECRET];
    c.github.repositories = { [REPO]: { path: clone } };
    c.github.users = { octo: 'octo' };
    patch?.(c);
  });
  const logs: string[] = [];
  const logger = createLogger('debug', { write: (line: string) => void logs.push(line) });
  const daemon = await startDaemon({
    config,
    logger,
    model: new Anthropic({ apiKey: 'test-key', baseURL: model.url, maxRetries: 0, timeout: 10_000 }),
    announce: () => {},
  });
  const signer = new Webhooks({ secret: SECRET });
  const api: World['api'] = async (method, path, body, token = ADMIN_TOKEN) => {
    const res = await fetch(`${daemon.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const webhook: World['webhook'] = async (event, payload) => {
    const body = JSON.stringify(payload);
    const res = await fetch(`${daemon.url}/webhooks/github`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': event,
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': await signer.sign(body),
      },
      body,
    });
    return { status: res.status, body: await settledAnswer(api, res.status, await res.json()) };
  };
  const trigger = await api('POST', '/v1/triggers', {
    kind: 'github',
    name: 'review',
    events: ['pull_request.opened'],
    prompt: 'Review {{repository}}#{{number}}',
  });
  expect(trigger.status, JSON.stringify(trigger.body)).toBe(201);
  let stopped = false;
  return {
    daemon,
    config,
    head,
    logs,
    api,
    webhook,
    async token(identity) {
      const issued = issueToken(identity, identity, 'approver', Date.now());
      await daemon.store.createToken(issued.record);
      return issued.token;
    },
    async openPullRequest(number) {
      const payload = example('pull_request', 'opened');
      payload.repository.full_name = REPO;
      payload.number = number;
      payload.pull_request.number = number;
      payload.pull_request.head.sha = head;
      // GitHub knows the pull request it sends a webhook about (the reporter lists its comments).
      github.setPullRequest(REPO, number, payload.pull_request);
      const res = await webhook('pull_request', payload);
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      expect(res.body.outcome).toBe('accepted');
      return res.body.run_ids[0];
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await daemon.stop();
      tmp.remove();
    },
  };
}

let model: ModelServer;
let github: FakeGithub;
let w: World | undefined;
beforeEach(async () => {
  model = await startModelServer();
  github = await startFakeGithub({ token: GITHUB_TOKEN });
});
afterEach(async () => {
  await w?.stop();
  w = undefined;
  await github.close();
  await model.close();
});

async function planOf(world: World, runId: string): Promise<any> {
  const run = await waitFor(
    async () => {
      const r = await world.api('GET', `/v1/runs/${runId}`);
      return ['planned', 'failed'].includes(r.body.status) ? r.body : undefined;
    },
    15_000,
    `run ${runId} to plan`,
  );
  expect(run.status, run.error).toBe('planned');
  return (await world.api('GET', `/v1/plans/${run.plan_id}`)).body;
}

/** The markdown of a posted plan comment (what follows the header or label, up to the hidden part marker). */
const chunkOf = (body: string) =>
  body.slice(body.indexOf('\n\n---\n\n') + 7).replace(/\n\n<!-- drydock:plan \S+ part \d+ -->$/, '');

function expectNoSecrets(world: World): void {
  const all = world.logs.join('');
  expect(all.length).toBeGreaterThan(0);
  expect(all).not.toContain(GITHUB_TOKEN);
  expect(all).not.toContain(SECRET);
}

describe('reporting plans back to GitHub', () => {
  it('posts a long plan in parts, sets pending on the head, and success once approved', async () => {
    w = await start(model, github);
    const markdown = bigPlan(99_000); // the most a plan may hold is 100,000 characters
    model.enqueue(proposes('p1', markdown), says('Nothing to change after all.'));
    const runId = await w.openPullRequest(2);
    const plan = await planOf(w, runId);
    expect((await w.daemon.store.getPlan(plan.id))?.subject).toBe(`${REPO}#2`);
    // A plan made from a webhook says so in the API; the store keeps its older word for it.
    expect(plan.source).toBe('webhook');
    expect((await w.daemon.store.getPlan(plan.id))?.source).toBe('delivery');

    const pending = await github.waitFor(() => github.statuses(w!.head)[0], 10_000, 'a pending status');
    expect(pending).toMatchObject({ repository: REPO, state: 'pending', context: 'drydock/plan' });
    expect(pending.description.length).toBeLessThan(140);
    expect(pending.description).toContain(plan.id);

    const comments = github.comments(REPO, 2);
    expect(comments).toHaveLength(2);
    comments.forEach((c, i) => {
      expect(c.body.length).toBeLessThan(65_536);
      expect(c.body).toContain(`(part ${i + 1} of 2)`);
      expect(c.body.endsWith(`\n\n<!-- drydock:plan ${plan.id} part ${i + 1} -->`)).toBe(true);
      expect(parseCommand(c.body)).toBeNull();
    });
    const first = comments[0]!.body;
    expect(first).toContain(plan.id);
    expect(first).toContain('round 1');
    expect(first).toContain(plan.sha256.slice(0, 12));
    expect(first).toContain(`/ui/plans/${plan.id}`);
    expect(first).toContain('`/drydock approve`');
    expect(first).toContain('`/drydock reject <reason>`');
    expect(comments.map((c) => chunkOf(c.body)).join('')).toBe(markdown);
    // Comments went out before the status, each call with the token.
    const posts = github.calls.filter((c) => c.method === 'POST');
    expect(posts.map((c) => c.path)).toEqual([
      `/repos/${REPO}/issues/2/comments`,
      `/repos/${REPO}/issues/2/comments`,
      `/repos/${REPO}/statuses/${w.head}`,
    ]);
    for (const c of github.calls) expect(c.headers.authorization).toBe(`token ${GITHUB_TOKEN}`);

    // The requester (github:Codertocat) cannot approve; another person can.
    const alice = await w.token('alice');
    const approved = await w.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, alice);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const success = await github.waitFor(
      () => github.statuses(w!.head).find((s) => s.state === 'success'),
      10_000,
      'a success status',
    );
    expect(success.description).toContain('alice');
    expect(success.context).toBe('drydock/plan');
    expectNoSecrets(w);
  });

  it("another pull request's rejected plan fails its status; an approval short of the quorum changes nothing", async () => {
    w = await start(model, github);
    await w.api('PATCH', `/v1/triggers/${(await w.api('GET', '/v1/triggers')).body.items[0].id}`, {
      options: { approvals_required: 2 },
    });
    model.enqueue(proposes('p1', '## Plan A\n\n1. one\n'), proposes('p2', '## Plan B\n\n1. two\n'));
    const planA = await planOf(w, await w.openPullRequest(7));
    const planB = await planOf(w, await w.openPullRequest(8));
    await github.waitFor(() => github.statuses().length === 2, 10_000, 'two pending statuses');
    expect(github.comments(REPO, 7)).toHaveLength(1);
    expect(github.comments(REPO, 8)).toHaveLength(1);
    expect(github.comments(REPO, 7)[0]!.body).toContain(planA.id);

    const alice = await w.token('alice');
    const bob = await w.token('bob');
    const once = await w.api('POST', `/v1/plans/${planA.id}/approve`, {}, alice);
    expect(once.status).toBe(200);
    expect(once.body.plan.status).toBe('pending_approval');
    const rejected = await w.api('POST', `/v1/plans/${planB.id}/reject`, { comment: 'wrong approach' }, bob);
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    const failure = await github.waitFor(
      () => github.statuses().find((s) => s.state === 'failure'),
      10_000,
      'a failure status',
    );
    expect(failure.description).toContain(planB.id);
    expect(failure.description).toContain('wrong approach');
    // Reports are in order, so once the rejection's status is out the lone approval's would be too: none.
    expect(github.statuses().map((s) => s.state)).toEqual(['pending', 'pending', 'failure']);
    expectNoSecrets(w);
  });

  it('a revision round (a run without a checkout of its own) is reported on the same pull request', async () => {
    w = await start(model, github);
    model.enqueue(proposes('p1', '## Plan\n\n1. one\n'), proposes('p2', '## Plan\n\n1. one\n2. two\n'));
    const first = await planOf(w, await w.openPullRequest(3));
    await github.waitFor(() => github.statuses().length === 1, 10_000, 'pending');
    const alice = await w.token('alice');
    const revise = await w.api('POST', `/v1/plans/${first.id}/revise`, { feedback: 'add step two' }, alice);
    expect(revise.status, JSON.stringify(revise.body)).toBe(200);
    const second = await planOf(w, revise.body.run.id);
    await github.waitFor(() => github.comments(REPO, 3).length === 2, 10_000, 'the second round');
    const round2 = github.comments(REPO, 3)[1]!.body;
    expect(round2).toContain(second.id);
    expect(round2).toContain('round 2');
    expect(round2).toContain(first.id);
    await github.waitFor(() => github.statuses().length === 3, 10_000, 'three statuses');
    expect(github.statuses().map((s) => [s.state, s.sha])).toEqual([
      ['pending', w.head],
      ['pending', w.head], // revision requested
      ['pending', w.head], // round 2 awaits approval
    ]);
    expect(github.statuses()[1]!.description).toMatch(/revision/i);
  });

  it('retries a 500 and a secondary rate limit (waiting as retry-after says), once each', async () => {
    w = await start(model, github);
    github.fail(
      { status: 500, match: /^POST .*\/comments$/ },
      {
        status: 403,
        retryAfter: 1,
        message: 'You have exceeded a secondary rate limit.',
        match: /statuses/,
      },
    );
    model.enqueue(proposes('p1', '## Plan\n\n1. one\n'));
    await planOf(w, await w.openPullRequest(4));
    await github.waitFor(() => github.statuses().length === 1, 15_000, 'the status after a retry');
    expect(github.comments(REPO, 4)).toHaveLength(1);

    const commentCalls = github.calls.filter((c) => c.method === 'POST' && c.path.endsWith('/comments'));
    expect(commentCalls.map((c) => c.status)).toEqual([500, 201]);
    const statusCalls = github.calls.filter((c) => c.path.includes('/statuses/'));
    expect(statusCalls.map((c) => c.status)).toEqual([403, 201]);
    expect(statusCalls[1]!.receivedAt - statusCalls[0]!.receivedAt).toBeGreaterThanOrEqual(950);
    const retries = w.logs.filter((l) => l.includes('GitHub call failed; retrying'));
    expect(retries).toHaveLength(2);
    expectNoSecrets(w);
  });

  it('GitHub failing for good never breaks the run or the decision, and is logged without the token', async () => {
    w = await start(model, github);
    github.fail({ status: 401, message: `Bad credentials for ${GITHUB_TOKEN}`, times: 100 });
    model.enqueue(proposes('p1', '## Plan\n\n1. one\n'), says('Done.'));
    const plan = await planOf(w, await w.openPullRequest(5));
    const alice = await w.token('alice');
    const approved = await w.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, alice);
    expect(approved.status).toBe(200);
    expect(approved.body.plan.status).toBe('approved');
    await waitFor(
      async () =>
        w!.logs.some((l) => l.includes('setting the pull request status failed') && l.includes('success')),
      10_000,
      'the failed success status to be logged',
    );
    expect(w.logs.some((l) => l.includes('posting the plan to the pull request failed'))).toBe(true);
    // 401 is not retried: one comment call, two status calls.
    expect(github.calls.map((c) => c.status)).toEqual([401, 401, 401]);
    expectNoSecrets(w);
  });

  it('cuts a plan past five comments, naming where to read all of it', async () => {
    w = await start(model, github);
    model.enqueue(proposes('p1', '## Plan\n\n1. one\n'));
    const runId = await w.openPullRequest(6);
    await planOf(w, runId);
    await github.waitFor(() => github.statuses().length === 1, 10_000, 'pending');
    // A plan longer than the agent may propose, reported as if it had been: the reporter's own limit.
    await w.daemon.events.emit(runId, 'plan_proposed', {
      plan_id: 'pln_huge',
      sha256: 'f'.repeat(64),
      workspace_commit: null,
      round: 1,
      previous_plan_id: null,
      markdown: bigPlan(400_000),
    });
    await github.waitFor(() => github.statuses().length === 2, 10_000, 'the second pending');
    const huge = github.comments(REPO, 6).slice(1);
    expect(huge).toHaveLength(5);
    for (const c of huge) expect(c.body.length).toBeLessThan(65_536);
    expect(huge[4]!.body).toMatch(/\(part 5 of 7\)/);
    expect(huge[4]!.body).toMatch(/2 more parts were cut/);
    expect(huge[4]!.body).toContain('/ui/plans/pln_huge');
  });

  it('ignores runs that are not about a pull request', async () => {
    w = await start(model, github);
    const events = w.daemon.events;
    const session = await w.api('POST', '/v1/sessions', {
      workspace: w.config.github.repositories[REPO]!.path,
    });
    const job = await w.api('POST', `/v1/sessions/${session.body.id}/jobs`, {
      cron: '0 9 * * *',
      prompt: 'x',
    });
    model.enqueue(proposes('p1', '## Plan\n\n1. one\n'));
    const seen: string[] = [];
    const off = events.subscribeAll((e) => seen.push(e.type));
    const fired = await w.api('POST', `/v1/jobs/${job.body.id}/run`);
    await planOf(w, fired.body.id);
    off();
    expect(seen).toContain('plan_proposed');
    await new Promise((r) => setTimeout(r, 200));
    expect(github.calls).toEqual([]);
  });
});

describe('reading pull requests for /drydock plan', () => {
  const commentPayload = (number: number, body: string) => {
    const payload = example('issue_comment', 'created');
    payload.repository.full_name = REPO;
    payload.issue.number = number;
    payload.issue.pull_request = { url: `https://api.github.com/repos/${REPO}/pulls/${number}` };
    payload.comment.body = body;
    payload.comment.user.login = 'octo';
    return payload;
  };

  it('with a token but without report, reads the pull request and posts nothing', async () => {
    w = await start(model, github, (c) => {
      c.github.report = false;
    });
    const pr = example('pull_request', 'opened').pull_request;
    pr.number = 9;
    pr.head.sha = w.head;
    github.setPullRequest(REPO, 9, pr);
    model.enqueue(proposes('p1', '## Plan\n\n1. one\n'));
    const res = await w.webhook('issue_comment', commentPayload(9, '/drydock plan'));
    expect(res.status).toBe(202);
    expect(res.body.outcome, res.body.detail).toBe('accepted');
    expect(github.calls.map((c) => `${c.method} ${c.path} ${c.status}`)).toEqual([
      `GET /repos/${REPO}/pulls/9 200`,
    ]);
    expect(github.calls[0]!.headers.authorization).toBe(`token ${GITHUB_TOKEN}`);
    const plan = await planOf(w, res.body.run_ids[0]);
    expect((await w.daemon.store.getPlan(plan.id))?.subject).toBe(`${REPO}#9`);
    await new Promise((r) => setTimeout(r, 200));
    expect(github.calls).toHaveLength(1); // report is off: no comment, no status

    const missing = await w.webhook('issue_comment', commentPayload(404, '/drydock plan'));
    expect(missing.body.outcome).toBe('rejected');
    expect(missing.body.detail).toMatch(/cannot read/);
    expectNoSecrets(w);
  });

  it('retries a lookup once on 500', async () => {
    w = await start(model, github, (c) => {
      c.github.report = false;
    });
    const pr = example('pull_request', 'opened').pull_request;
    pr.number = 10;
    pr.head.sha = w.head;
    github.setPullRequest(REPO, 10, pr);
    github.fail({ status: 502, match: /pulls/ });
    model.enqueue(proposes('p1', '## Plan\n\n1. one\n'));
    const res = await w.webhook('issue_comment', commentPayload(10, '/drydock plan'));
    expect(res.body.outcome, res.body.detail).toBe('accepted');
    expect(github.calls.map((c) => c.status)).toEqual([502, 200]);
    await planOf(w, res.body.run_ids[0]);
  });
});
