import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhooks } from '@octokit/webhooks';
import examples from '@octokit/webhooks-examples';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { calls, jobIn, plannedJob, proposes, runUntil, says, tokenFor } from '../plans/helpers.js';
import { startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { type FakeGithub, startFakeGithub } from '../support/fake-github.js';
import { git, makeRepo } from '../support/git-repo.js';
import { type TestStore, tempDir } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { postgresAvailable } from '../support/postgres.js';
import { settledAnswer } from '../support/webhook-deliveries.js';
import { blockKitProblems, type Receiver, startReceiver } from './receiver.js';

// A plan's life as its notifications tell it, end to end: a real daemon (its state in SQLite, or PostgreSQL
// when a server answers), real receivers on loopback, the Messages API stand-in. Each event is announced once
// per webhook (counted in the outbox once a later event is there: the collect step reads the event log in
// order), with the fields every payload carries. The Slack stand-in refuses blocks over Slack's limits.

let model: ModelServer;
const receivers: Receiver[] = [];
const daemons: TestDaemon[] = [];

beforeEach(async () => {
  model = await startModelServer();
});
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.stop();
  for (const r of receivers.splice(0)) await r.close();
  await model.close();
});

async function receiver(kind: 'json' | 'slack' = 'json'): Promise<Receiver> {
  const r = await startReceiver({ kind });
  receivers.push(r);
  return r;
}

function notifyTo(c: Config, json: Receiver, slack: Receiver): void {
  c.server.public_url = 'https://drydock.example';
  c.notifications.webhooks = [
    { url: json.url, events: [...ALL], secret: null, format: 'json' },
    { url: slack.url, events: [...ALL], secret: null, format: 'slack' },
  ];
  c.notifications.poll_interval_ms = 100;
  c.notifications.backoff_base_ms = 50;
  c.notifications.backoff_max_ms = 200;
}

const ALL = [
  'plan.pending',
  'plan.approved',
  'plan.rejected',
  'plan.executed',
  'plan.execution_failed',
  'delivery.succeeded',
  'delivery.failed',
] as const;

/** The outbox rows (as the API lists them), once every one is delivered and `done` holds for them. */
async function settledOutbox(d: TestDaemon, done: (items: any[]) => boolean): Promise<any[]> {
  return waitFor(
    async () => {
      const items = (await d.api('GET', '/v1/notifications?limit=100')).body.items as any[];
      return done(items) && items.every((n) => n.status === 'delivered') ? items : undefined;
    },
    20_000,
    'the notifications to be delivered',
  );
}

/** How many rows each event made, per webhook format (json / slack). */
function tally(items: any[], json: Receiver): Record<string, number> {
  const out: Record<string, number> = {};
  for (const n of items) {
    const key = `${n.event} ${n.webhook.url === json.url ? 'json' : 'slack'}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

const postgres = await postgresAvailable('notifications of a plan (PostgreSQL)');

const STORES: [string, TestStore][] = [
  ['SQLite', 'sqlite'],
  ...(postgres ? [['PostgreSQL', 'postgres'] as [string, TestStore]] : []),
];

describe.each(STORES)('a plan approved by two, executed, and one rejected (%s)', (_name, store) => {
  it('announces each approval with its tally, the execution, and the rejection with its reason, once each', async () => {
    const json = await receiver();
    const slack = await receiver('slack');
    const d = await startTestDaemon({
      modelUrl: model.url,
      store,
      patch: (c) => {
        notifyTo(c, json, slack);
        c.delivery.enabled = false;
      },
    });
    daemons.push(d);
    const repo = join(d.dir, 'repo');
    makeRepo(repo, { 'README.md': '# demo\n' });
    const { jobId } = await jobIn(d, repo, { execute_mode: 'auto', approvals_required: 2 }, 'Add a greeting');
    const alice = await tokenFor(d, 'alice');
    const bob = await tokenFor(d, 'bob');
    const carol = await tokenFor(d, 'carol');

    model.enqueue(
      proposes('p1'),
      calls('w1', 'Write', { file_path: 'hello.txt', content: 'hello\n' }),
      says('done'),
    );
    const { plan, runId } = await plannedJob(d, jobId);
    const first = await d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, alice);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.run).toBeNull();
    const second = await d.api(
      'POST',
      `/v1/plans/${plan.id}/approve`,
      { sha256: plan.sha256, comment: 'looks right' },
      bob,
    );
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    const exec = await runUntil(d, second.body.run.id, ['completed', 'failed'], 20_000);
    expect(exec.status, exec.error).toBe('completed');

    model.enqueue(proposes('p2', '## Drop the tests\n\n1. rm -r tests\n'));
    const { plan: other, runId: otherRun } = await plannedJob(d, jobId);
    const rejected = await d.api(
      'POST',
      `/v1/plans/${other.id}/reject`,
      { comment: 'we keep <!channel> our tests' },
      carol,
    );
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);

    // plan.rejected is the last event: once its rows are there, every earlier event was collected.
    const items = await settledOutbox(
      d,
      (all) => all.filter((n) => n.event === 'plan.rejected').length === 2,
    );
    expect(tally(items, json)).toEqual({
      'plan.pending json': 2,
      'plan.pending slack': 2,
      'plan.approved json': 2,
      'plan.approved slack': 2,
      'plan.executed json': 1,
      'plan.executed slack': 1,
      'plan.rejected json': 1,
      'plan.rejected slack': 1,
    });
    // Slack took every body (its stand-in answers 400 to blocks over the limits).
    expect(slack.requests.every((r) => r.status === 200)).toBe(true);
    for (const body of slack.accepted()) expect(blockKitProblems(body.blocks)).toEqual([]);

    const bodies = json.accepted();
    const of = (event: string) => bodies.filter((b) => b.event === event).map((b) => b.data);
    const common = {
      repository: repo,
      workspace: repo,
      pull_request: null,
      job: { id: jobId, name: null },
      trigger: null,
      requested_by: expect.any(String),
      cost: { plan_usd: expect.any(Number), execution_usd: null },
    };
    const links = {
      plan: `https://drydock.example/ui/plans/${plan.id}`,
      run: `https://drydock.example/ui/runs/${runId}`,
    };
    expect(of('plan.approved')).toEqual([
      {
        run_id: runId,
        plan_id: plan.id,
        session_id: plan.session_id,
        ...common,
        // Those who approved up to this approval, not bob, who approved before it was collected (or not).
        approvers: ['alice'],
        title: 'Add a greeting',
        plan_status: 'pending_approval',
        approved_by: 'alice',
        approvals: { count: 1, required: 2 },
        links,
      },
      {
        run_id: runId,
        plan_id: plan.id,
        session_id: plan.session_id,
        ...common,
        approvers: ['alice', 'bob'],
        title: 'Add a greeting',
        plan_status: 'approved',
        approved_by: 'bob',
        approvals: { count: 2, required: 2 },
        comment: 'looks right',
        links,
      },
    ]);
    const [executed] = of('plan.executed');
    expect(executed).toMatchObject({
      ...common,
      run_id: exec.id,
      approvers: ['alice', 'bob'],
      status: 'completed',
      commit: exec.result_commit,
      cost: { plan_usd: expect.any(Number), execution_usd: exec.cost_usd },
      links: { plan: links.plan, run: `https://drydock.example/ui/runs/${exec.id}` },
    });
    expect(of('plan.rejected')).toEqual([
      {
        run_id: otherRun,
        plan_id: other.id,
        session_id: other.session_id,
        ...common,
        approvers: [],
        title: 'Drop the tests',
        plan_status: 'rejected',
        rejected_by: 'carol',
        reason: 'we keep <!channel> our tests',
        links: {
          plan: `https://drydock.example/ui/plans/${other.id}`,
          run: `https://drydock.example/ui/runs/${otherRun}`,
        },
      },
    ]);
    const rejectedSlack = slack.accepted().find((b) => b.text.startsWith('*drydock* Plan rejected'));
    expect(rejectedSlack.blocks[1].text.text).toBe(
      '*Drop the tests*\nReason: we keep &lt;!channel&gt; our tests',
    );
  });
});

describe('a pull request whose plan is delivered as a pull request', () => {
  const TOKEN = 'ghp_NOTIFYtoken0123456789abcdefghijklmnop';
  const SECRET = 'notify-webhook-secret-0123456789abcdef';
  const REPO = 'acme/widgets';
  let github: FakeGithub;
  beforeEach(async () => {
    github = await startFakeGithub({ token: TOKEN });
  });
  afterEach(async () => {
    for (const d of daemons.splice(0)) await d.stop();
    await github.close();
  });

  it('delivery.succeeded carries the pull request it opened; every event carries the one the work came from', async () => {
    const json = await receiver();
    const slack = await receiver('slack');
    const tmp = tempDir('drydock-notify-pr-');
    const remote = join(tmp.path, 'remote.git');
    const repo = join(tmp.path, 'repo');
    git(tmp.path, 'init', '-q', '--bare', '-b', 'main', remote);
    makeRepo(repo, { 'README.md': '# widgets\n' });
    git(repo, 'remote', 'add', 'origin', remote);
    git(repo, 'push', '-q', 'origin', 'main');
    github.linkRepository(REPO, remote);
    // The pull request's branch: one commit on main.
    git(repo, 'checkout', '-q', '-b', 'feature');
    writeFileSync(join(repo, 'feature.txt'), 'the feature\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'the feature');
    const head = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'push', '-q', 'origin', 'feature');
    git(repo, 'checkout', '-q', 'main');

    const d = await startTestDaemon({
      modelUrl: model.url,
      dir: tmp.path,
      patch: (c) => {
        notifyTo(c, json, slack);
        c.github.token = TOKEN;
        c.github.api_url = github.url;
        c.github.webhook_secrets = [SECRET];
        c.github.repositories = { [REPO]: { path: repo } };
        c.delivery.pr_target = 'base';
        c.delivery.push_timeout_ms = 20_000;
      },
    });
    daemons.push(d);
    const trigger = await d.api('POST', '/v1/triggers', {
      kind: 'github',
      name: 'improve',
      events: ['pull_request.opened'],
      prompt: 'Improve {{repository}}#{{number}}',
      options: { execute_mode: 'auto', deliver: true },
    });
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(201);
    const alice = await tokenFor(d, 'alice');

    model.enqueue(
      proposes('pr-plan'),
      calls('w1', 'Write', { file_path: 'hello.txt', content: 'hello\n' }),
      says('done'),
    );
    const def = (examples as unknown as any[]).find((e) => e.name === 'pull_request');
    const payload = structuredClone(def.examples.find((e: any) => e.action === 'opened'));
    const prUrl = `https://github.com/${REPO}/pull/7`;
    payload.repository.full_name = REPO;
    payload.number = 7;
    Object.assign(payload.pull_request, { number: 7, html_url: prUrl });
    Object.assign(payload.pull_request.head, { sha: head, ref: 'feature' });
    payload.pull_request.head.repo.full_name = REPO;
    payload.pull_request.base.ref = 'main';
    payload.pull_request.base.repo.full_name = REPO;
    github.setPullRequest(REPO, 7, payload.pull_request);
    const raw = JSON.stringify(payload);
    const res = await fetch(`${d.daemon.url}/webhooks/github`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'pull_request',
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': await new Webhooks({ secret: SECRET }).sign(raw),
      },
      body: raw,
    });
    const answer = await settledAnswer(d.api, res.status, await res.json());
    expect(answer.outcome, JSON.stringify(answer)).toBe('accepted');
    const planRun = await runUntil(d, answer.run_ids[0], ['planned', 'failed'], 30_000);
    expect(planRun.status, planRun.error).toBe('planned');
    const plan = (await d.api('GET', `/v1/plans/${planRun.plan_id}`)).body;
    const approved = await d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, alice);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);

    const items = await settledOutbox(d, (all) => all.some((n) => n.event === 'delivery.succeeded'));
    expect(tally(items, json)).toEqual({
      'plan.pending json': 1,
      'plan.pending slack': 1,
      'plan.approved json': 1,
      'plan.approved slack': 1,
      'plan.executed json': 1,
      'plan.executed slack': 1,
      'delivery.succeeded json': 1,
      'delivery.succeeded slack': 1,
    });
    const [opened] = github.pullRequests();
    expect(opened).toBeDefined();
    const delivered = (await d.api('GET', `/v1/plans/${plan.id}`)).body.delivery;
    expect(delivered).toMatchObject({
      status: 'delivered',
      target: 'base',
      pull_request_url: opened!.html_url,
    });

    const bodies = json.accepted();
    const pr = { repository: REPO, number: 7, url: prUrl };
    for (const b of bodies) {
      expect(b.data, b.event).toMatchObject({
        repository: REPO,
        pull_request: pr,
        job: null,
        trigger: { id: trigger.body.id, name: 'improve' },
        requested_by: expect.any(String),
      });
      expect(b.data.links.pull_request, b.event).toBe(prUrl);
    }
    const succeeded = bodies.find((b) => b.event === 'delivery.succeeded').data;
    expect(succeeded).toMatchObject({
      plan_id: plan.id,
      title: 'Add a greeting',
      approvers: ['alice'],
      branch: delivered.branch,
      commit: delivered.commit,
      delivery: {
        target: 'base',
        branch: delivered.branch,
        commit: delivered.commit,
        pull_request: { number: opened!.number, url: opened!.html_url },
      },
      cost: { plan_usd: expect.any(Number), execution_usd: expect.any(Number) },
    });
    expect(succeeded.links.delivered).toBe(opened!.html_url);
    const slackBody = slack.accepted().find((b) => b.text.startsWith('*drydock* Plan result delivered'));
    expect(blockKitProblems(slackBody.blocks)).toEqual([]);
    expect(JSON.stringify(slackBody.blocks)).toContain(`<${opened!.html_url}|#${opened!.number}>`);
  });
});
