import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { approveAs, calls, jobIn, plannedJob, proposes, runUntil, tokenFor } from '../plans/helpers.js';
import { startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { makeRepo } from '../support/git-repo.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { verifySignature } from '../support/signature.js';
import { type Receiver, startReceiver } from './receiver.js';

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

const SECRET = 'receiver-secret-7f3a9c';

async function receiver(opts: Parameters<typeof startReceiver>[0] = {}): Promise<Receiver> {
  const r = await startReceiver(opts);
  receivers.push(r);
  return r;
}

/** Fast retries for tests: 50 ms doubling to 200 ms, looked at every 100 ms. */
function fast(
  c: Config,
  webhooks: Config['notifications']['webhooks'],
  publicUrl: string | null = null,
): void {
  c.server.public_url = publicUrl;
  c.notifications.webhooks = webhooks;
  c.notifications.backoff_base_ms = 50;
  c.notifications.backoff_max_ms = 200;
  c.notifications.poll_interval_ms = 100;
  c.notifications.timeout_ms = 2_000;
}

async function daemonWith(patch: (c: Config) => void, dir?: string): Promise<TestDaemon> {
  const d = await startTestDaemon({ modelUrl: model.url, patch, ...(dir ? { dir } : {}) });
  daemons.push(d);
  return d;
}

async function job(d: TestDaemon): Promise<string> {
  const repo = `${d.dir}/repo-${Math.random().toString(36).slice(2)}`;
  makeRepo(repo, { 'README.md': '# demo\n' });
  return (await jobIn(d, repo, {}, 'Add a greeting file')).jobId;
}

it('a pending plan is announced to a JSON receiver (signed) and a Slack channel (its text format)', async () => {
  const json = await receiver({ secret: SECRET });
  const slack = await receiver({ kind: 'slack' });
  const d = await daemonWith((c) =>
    fast(
      c,
      [
        { url: json.url, events: ['plan.pending', 'plan.executed'], secret: SECRET, format: 'json' },
        { url: slack.url, events: ['plan.pending'], secret: null, format: 'slack' },
      ],
      'https://drydock.example',
    ),
  );
  model.enqueue(proposes('p1', '## Add a greeting <!channel>\n\n1. Create hello.txt\n'));
  const { plan, runId } = await plannedJob(d, await job(d));
  await waitFor(
    async () => json.requests.length >= 1 && slack.requests.length >= 1,
    10_000,
    'both receivers',
  );

  const [sent] = json.requests;
  expect(sent!.status).toBe(200);
  expect(sent!.signed).toBe(true);
  expect(verifySignature(SECRET, sent!.raw, sent!.headers['x-drydock-signature-256'] as string)).toBe(true);
  expect(sent!.headers['content-type']).toBe('application/json');
  expect(sent!.headers['user-agent']).toMatch(/^drydock\/\d+\.\d+\.\d+$/);
  expect(sent!.headers['x-drydock-event']).toBe('plan.pending');
  const body = JSON.parse(sent!.raw);
  expect(sent!.headers['x-drydock-delivery']).toBe(body.id);
  expect(body).toEqual({
    id: expect.stringMatching(/^ntf_/),
    event: 'plan.pending',
    created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
    data: {
      run_id: runId,
      plan_id: plan.id,
      session_id: plan.session_id,
      title: 'Add a greeting <!channel>',
      links: {
        plan: `https://drydock.example/ui/plans/${plan.id}`,
        run: `https://drydock.example/ui/runs/${runId}`,
      },
      // What every payload carries: a job's plan in a directory no GitHub repository is configured for.
      repository: expect.stringMatching(/\/repo-[a-z0-9]+$/),
      workspace: expect.stringMatching(/\/repo-[a-z0-9]+$/),
      pull_request: null,
      job: { id: expect.stringMatching(/^job_/), name: null },
      trigger: null,
      requested_by: expect.any(String),
      approvers: [],
      cost: { plan_usd: expect.any(Number), execution_usd: null },
    },
  });

  const [posted] = slack.requests;
  expect(posted!.status).toBe(200); // the Slack stand-in accepted it: a JSON object with a text
  expect(posted!.signed).toBeNull();
  const slackBody = JSON.parse(posted!.raw);
  expect(Object.keys(slackBody)).toEqual(['text', 'blocks']);
  expect(slackBody.text).toBe(
    `*drydock* Plan waiting for approval: Add a greeting &lt;!channel&gt;\n<https://drydock.example/ui/plans/${plan.id}|open the plan>`,
  );
  expect(slackBody.blocks[1]).toEqual({
    type: 'section',
    text: { type: 'mrkdwn', text: '*Add a greeting &lt;!channel&gt;*' },
  });

  // The outbox as the API shows it: both delivered at the first attempt, receivers without secrets.
  const list = await waitFor(async () => {
    const r = await d.api('GET', '/v1/notifications');
    return r.body.items.every((n: any) => n.status === 'delivered') && r.body.items.length === 2
      ? r
      : undefined;
  });
  expect(list.body.next_cursor).toBeNull();
  const byFormat = Object.fromEntries(list.body.items.map((n: any) => [n.webhook.url, n]));
  expect(byFormat[json.url]).toMatchObject({
    id: body.id,
    event: 'plan.pending',
    status: 'delivered',
    attempts: 1,
    max_attempts: 10,
    last_error: null,
    next_attempt_at: null,
    delivered_at: expect.any(String),
    plan_id: plan.id,
    run_id: runId,
    data: { title: 'Add a greeting <!channel>' },
  });
  expect(byFormat[slack.url]).toMatchObject({ status: 'delivered', attempts: 1 });

  // Approvers and admins read it; viewers do not. Filters and paging.
  const approver = await tokenFor(d, 'alice', 'approver');
  expect((await d.api('GET', '/v1/notifications', undefined, approver)).status).toBe(200);
  const viewer = await tokenFor(d, 'val', 'viewer');
  expect((await d.api('GET', '/v1/notifications', undefined, viewer)).status).toBe(403);
  expect((await d.api('GET', '/v1/notifications?status=failed')).body.items).toEqual([]);
  expect((await d.api('GET', '/v1/notifications?event=plan.pending')).body.items).toHaveLength(2);
  const first = await d.api('GET', '/v1/notifications?limit=1');
  expect(first.body.items).toHaveLength(1);
  const second = await d.api('GET', `/v1/notifications?limit=1&cursor=${first.body.next_cursor}`);
  expect(second.body.items).toHaveLength(1);
  expect(second.body.items[0].id).not.toBe(first.body.items[0].id);
  const bad = await d.api('GET', '/v1/notifications?status=sent');
  expect(bad.status).toBe(422);
  expect(bad.body.error.message).toMatch(/status/);
  expect((await d.api('GET', '/v1/notifications?cursor=nonsense')).status).toBe(400);

  const metrics = await fetch(`${d.daemon.url}/metrics`, {
    headers: { authorization: `Bearer ${approver}` },
  }).then((r) => r.text());
  expect(metrics).toContain('drydock_notifications_total{event="plan.pending",outcome="delivered"} 2');
  expect(metrics).toContain('drydock_notification_outbox{status="delivered"} 2');
});

it('retries with backoff until the last attempt, then marks the notification failed with the cause', async () => {
  const down = await receiver({ answer: () => 503 });
  const gone = await receiver({ answer: () => 410 });
  const closed = await receiver();
  await closed.close(); // nothing listens there any more
  const d = await daemonWith((c) => {
    fast(c, [
      { url: down.url, events: ['plan.pending'], secret: null, format: 'json' },
      { url: gone.url, events: ['plan.pending'], secret: null, format: 'json' },
      { url: closed.url, events: ['plan.pending'], secret: null, format: 'json' },
    ]);
    c.notifications.max_attempts = 3;
  });
  model.enqueue(proposes());
  await plannedJob(d, await job(d));
  const items = await waitFor(
    async () => {
      const r = await d.api('GET', '/v1/notifications');
      return r.body.items.length === 3 && r.body.items.every((n: any) => n.status === 'failed')
        ? (r.body.items as any[])
        : undefined;
    },
    15_000,
    'all three notifications to fail',
  );
  const by = Object.fromEntries(items.map((n) => [n.webhook.url, n]));
  expect(by[down.url]).toMatchObject({ attempts: 3, last_error: 'HTTP 503', next_attempt_at: null });
  expect(by[gone.url]).toMatchObject({ attempts: 1, last_error: 'HTTP 410' }); // gone is final
  expect(by[closed.url]).toMatchObject({ attempts: 3, last_error: 'network error: ECONNREFUSED' });
  // The same body and id on every attempt.
  expect(down.requests).toHaveLength(3);
  expect(new Set(down.requests.map((r) => r.raw)).size).toBe(1);
  expect(new Set(down.requests.map((r) => r.headers['x-drydock-delivery'])).size).toBe(1);
  // Links are paths without server.public_url.
  expect(JSON.parse(down.requests[0]!.raw).data.links.plan).toMatch(/^\/ui\/plans\/pln_/);
  const metrics = await fetch(`${d.daemon.url}/metrics`, {
    headers: { authorization: 'Bearer test-admin-token-0123456789abcdef' },
  }).then((r) => r.text());
  expect(metrics).toContain('drydock_notifications_total{event="plan.pending",outcome="retried"} 4');
  expect(metrics).toContain('drydock_notifications_total{event="plan.pending",outcome="failed"} 3');
  expect(metrics).toContain('drydock_notification_outbox{status="failed"} 3');
});

it('does not announce what happened before notifications were configured', async () => {
  const r = await receiver();
  const first = await daemonWith((c) => fast(c, []));
  const jobId = await job(first);
  model.enqueue(proposes('old', '## Old plan\n'));
  await plannedJob(first, jobId);
  await first.halt();

  const second = await daemonWith(
    (c) => fast(c, [{ url: r.url, events: ['plan.pending'], secret: null, format: 'json' }]),
    first.dir,
  );
  model.enqueue(proposes('new', '## New plan\n'));
  const { plan } = await plannedJob(second, jobId);
  await waitFor(async () => r.requests.length >= 1, 10_000, 'the notification');
  await new Promise((res) => setTimeout(res, 300));
  expect(r.accepted().map((b) => b.data.plan_id)).toEqual([plan.id]);
  expect(r.accepted()[0].data.title).toBe('New plan');
});

it('announces a failed execution and a failed delivery of its result', async () => {
  const r = await receiver({ secret: SECRET });
  const d = await daemonWith((c) =>
    fast(c, [
      {
        url: r.url,
        events: ['tool_approval.pending', 'plan.execution_failed', 'delivery.failed'],
        secret: SECRET,
        format: 'json',
      },
    ]),
  );
  const repo = `${d.dir}/repo-x`;
  makeRepo(repo, { 'README.md': '# demo\n' });
  const { jobId } = await jobIn(d, repo, { execute_mode: 'manual' }, 'Add a greeting file');
  model.enqueue(proposes(), calls('w1', 'Bash', { command: 'rm -rf <!everyone> && echo hi' }));
  const { plan } = await plannedJob(d, jobId);
  const alice = await tokenFor(d, 'alice', 'approver');
  const exec = await approveAs(d, plan, alice);
  await runUntil(d, exec.id, ['awaiting_input']);
  expect((await d.api('POST', `/v1/runs/${exec.id}/cancel`)).status).toBe(200);
  await runUntil(d, exec.id, ['canceled']);
  // The delivery part records a push or pull request that failed for good as this event on the execute run.
  await d.daemon.events.emit(exec.id, 'delivery_failed', {
    plan_id: plan.id,
    error: 'push refused: remote rejected',
    attempts: 5,
  });
  await waitFor(async () => r.accepted().length >= 3, 10_000, 'three notifications');
  const by = Object.fromEntries(r.accepted().map((b) => [b.event, b.data]));
  expect(Object.keys(by).sort()).toEqual([
    'delivery.failed',
    'plan.execution_failed',
    'tool_approval.pending',
  ]);
  expect(by['tool_approval.pending']).toMatchObject({
    plan_id: plan.id,
    run_id: exec.id,
    title: 'Bash: rm -rf <!everyone> && echo hi',
  });
  expect(by['plan.execution_failed']).toMatchObject({
    plan_id: plan.id,
    run_id: exec.id,
    status: 'canceled',
    error: 'canceled',
    title: 'Add a greeting',
  });
  expect(by['delivery.failed']).toMatchObject({
    plan_id: plan.id,
    error: 'push refused: remote rejected',
    attempts: 5,
    links: { plan: `/ui/plans/${plan.id}` },
  });
  expect(r.requests.every((q) => q.signed === true)).toBe(true);
});
