import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { z } from 'zod';
import { NOTIFICATION_EVENTS } from '../../src/domain/notifications.js';
import { ERROR_BODY, errorStatuses, ROUTES, type Route } from '../../src/http/contract/index.js';
import { type Receiver, startReceiver } from '../notify/receiver.js';
import { calls, proposes, says, tokenFor } from '../plans/helpers.js';
import { ADMIN_TOKEN, parseSse, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { type FakeGithub, startFakeGithub } from '../support/fake-github.js';
import { git, makeRepo } from '../support/git-repo.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { prPayload, SECRET, sign } from '../triggers/helpers.js';

// The drift test: a real daemon (SQLite file, loopback HTTP, git, the model stand-in through the Anthropic
// SDK, Octokit against the fake GitHub) is driven through a whole day of work: a session and its jobs, a run
// that asks a question and plans, a plan approved and executed with a tool call allowed, its result
// delivered, plans rejected and revised, triggers fired and webhooks received, notifications sent. Every
// answer it serves is parsed with the contract's schema for its route and status (strict: a field added,
// dropped or changed without the contract fails), and every route of the table must have been answered with
// each of its success statuses.

vi.setConfig({ testTimeout: 120_000 });

const GITHUB_TOKEN = 'ghp_CONTRACTtoken0123456789abcdefghijklm';
const PUSH_TOKEN = 'ghp_CONTRACTpush9876543210zyxwvutsrqponm';
const REPO = 'acme/widgets';

let model: ModelServer;
let github: FakeGithub;
let receiver: Receiver;
let d: TestDaemon;
let repo: string;
let alice: string;

/** What was served: route, status, and whether its body parsed (problems listed). */
const answered = new Map<string, number>();
const problems: string[] = [];

/** The table's route for a concrete path (a literal segment beats a parameter). */
function routeOf(method: string, path: string): Route | undefined {
  const pathname = path.split('?')[0]!;
  const matching = ROUTES.filter(
    (r) =>
      r.method === method.toLowerCase() &&
      new RegExp(`^${r.path.replace(/\{\w+\}/g, '[^/]+')}$`).test(pathname),
  );
  return matching.sort((a, b) => a.path.split('{').length - b.path.split('{').length)[0];
}

/** Parses a served answer with the contract's schema for its route and status. */
function hold(method: string, path: string, status: number, body: unknown, events?: unknown[]): void {
  const route = routeOf(method, path);
  if (!route) {
    problems.push(`${method} ${path}: no route in the contract`);
    return;
  }
  const key = `${route.method.toUpperCase()} ${route.path} ${status}`;
  answered.set(key, (answered.get(key) ?? 0) + 1);
  const success = route.responses[status];
  const parse = (schema: z.ZodType, value: unknown, what: string) => {
    const r = schema.safeParse(value);
    if (!r.success) {
      problems.push(
        `${key} (${what}): ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    }
  };
  if (success) {
    if (success.schema === null) {
      if (body !== null && body !== '') problems.push(`${key}: a body where the contract has none`);
    } else if (events) {
      for (const e of events) parse(success.schema, e, `event ${(e as { type?: string }).type}`);
    } else {
      parse(success.schema, body, path);
    }
  } else if (errorStatuses(route).includes(status)) {
    parse(ERROR_BODY, body, path);
  } else {
    problems.push(`${key}: a status the contract does not list`);
  }
}

/** One request over real HTTP; the answer is held to the contract. */
async function call(
  method: string,
  path: string,
  opts: { body?: unknown; token?: string | null; headers?: Record<string, string>; raw?: string } = {},
): Promise<{ status: number; body: any; events?: any[] }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
  const token = opts.token === undefined ? ADMIN_TOKEN : opts.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${d.daemon.url}${path}`, {
    method,
    headers,
    body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
  });
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  if (type.startsWith('text/event-stream')) {
    const events = parseSse(text).map((e) => e.data);
    hold(method, path, res.status, null, events);
    return { status: res.status, body: null, events };
  }
  const body = type.includes('json') ? JSON.parse(text) : text === '' ? null : text;
  hold(method, path, res.status, body);
  return { status: res.status, body };
}

const ok = async (method: string, path: string, status: number, opts: Parameters<typeof call>[2] = {}) => {
  const r = await call(method, path, opts);
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(status);
  return r.body;
};

const runUntil = (id: string, statuses: string[]) =>
  waitFor(
    async () => {
      const r = await call('GET', `/v1/runs/${id}`);
      return statuses.includes(r.body.status) ? r.body : undefined;
    },
    20_000,
    `run ${id} to reach ${statuses.join('/')}`,
  );

beforeAll(async () => {
  model = await startModelServer();
  github = await startFakeGithub({ token: GITHUB_TOKEN });
  receiver = await startReceiver();
  d = await startTestDaemon({
    modelUrl: model.url,
    patch: (c) => {
      const dir = join(c.data_dir, '..');
      const remote = join(dir, 'remote.git');
      repo = join(dir, 'repo');
      git(dir, 'init', '-q', '--bare', '-b', 'main', remote);
      makeRepo(repo, { 'README.md': '# widgets\n' });
      git(repo, 'remote', 'add', 'origin', remote);
      git(repo, 'push', '-q', 'origin', 'main');
      github.linkRepository(REPO, remote);
      c.github.token = GITHUB_TOKEN;
      c.github.api_url = github.url;
      c.github.webhook_secrets = [SECRET];
      c.github.repositories = { [REPO]: { path: repo } };
      c.delivery.token = PUSH_TOKEN;
      c.delivery.retry_base_ms = 50;
      c.delivery.retry_max_ms = 200;
      c.notifications.webhooks = [
        { url: receiver.url, events: [...NOTIFICATION_EVENTS], secret: null, format: 'json' },
      ];
      c.notifications.backoff_base_ms = 50;
      c.notifications.backoff_max_ms = 200;
      c.notifications.poll_interval_ms = 100;
    },
  });
  alice = await tokenFor(d, 'alice', 'approver');
});

afterAll(async () => {
  await d?.stop();
  await receiver?.close();
  await github?.close();
  await model?.close();
});

it('serves every route with answers its contract schema describes', async () => {
  // ---- probes, this document, metrics
  await ok('GET', '/healthz', 200, { token: null });
  await ok('GET', '/readyz', 200, { token: null });
  await ok('GET', '/openapi.json', 200, { token: null });
  await ok('GET', '/v1/schema/apply', 200, { token: null });
  await ok('GET', '/metrics', 200);

  // ---- a session and its jobs
  const session = await ok('POST', '/v1/sessions', 201, {
    body: { name: 'widgets', workspace: repo, defaults: { execute_mode: 'manual', deliver: false } },
  });
  await ok('GET', '/v1/sessions', 200);
  await ok('GET', `/v1/sessions/${session.id}`, 200);
  const job = await ok('POST', `/v1/sessions/${session.id}/jobs`, 201, {
    body: { cron: '0 9 * * *', timezone: 'Europe/Berlin', prompt: 'Add a greeting file' },
  });
  await ok('GET', `/v1/sessions/${session.id}/jobs`, 200);
  await ok('GET', `/v1/jobs?session_id=${session.id}&enabled=true`, 200);
  await ok('GET', `/v1/jobs/${job.id}`, 200);
  await ok('POST', `/v1/jobs/${job.id}/pause`, 200);
  await ok('POST', `/v1/jobs/${job.id}/resume`, 200);
  await ok('POST', `/v1/jobs/${job.id}/renew`, 200);
  await ok('PATCH', `/v1/jobs/${job.id}`, 200, { body: { timezone: 'Europe/Berlin' } });
  // A range with no 09:00 Berlin slot in it: answered, nothing fired (the runs below are this test's own).
  await ok('POST', `/v1/jobs/${job.id}/backfill`, 200, {
    body: { from: '2020-01-01T00:00:00Z', to: '2020-01-01T01:00:00Z' },
  });

  // ---- a run that asks a question, is answered, and plans
  const asked = {
    questions: [
      {
        question: 'Which greeting?',
        header: 'Greeting',
        options: [
          { label: 'Hello', description: 'the plain one' },
          { label: 'Hi', description: 'the short one', preview: 'Hi\n' },
        ],
        multiSelect: false,
      },
    ],
  };
  model.enqueue(calls('q-1', 'AskUserQuestion', asked), proposes('p-1'));
  const run = await ok('POST', `/v1/jobs/${job.id}/run`, 201);
  await runUntil(run.id, ['awaiting_input']);
  const waiting = await ok('GET', `/v1/runs/${run.id}`, 200);
  expect(waiting.waiting_on.kind).toBe('question');
  await ok('GET', '/v1/questions?status=pending', 200);
  await ok('GET', `/v1/questions/${waiting.waiting_on.id}`, 200);
  await ok('POST', `/v1/questions/${waiting.waiting_on.id}/answers`, 200, {
    body: { answers: { 'Which greeting?': 'Hello' } },
    token: alice,
  });
  const planned = await runUntil(run.id, ['planned', 'failed']);
  expect(planned.status, planned.error).toBe('planned');
  await ok('GET', `/v1/jobs/${job.id}/slots`, 200);
  await ok('GET', '/v1/runs', 200);
  await ok('GET', `/v1/runs?session_id=${session.id}&status=planned`, 200);

  // ---- the plan: listed, read, approved, executed with a tool call allowed
  await ok('GET', '/v1/plans', 200);
  await ok('GET', '/v1/plans?include=markdown', 200);
  const plan = await ok('GET', `/v1/plans/${planned.plan_id}`, 200);
  model.enqueue(calls('w-1', 'Write', { file_path: 'hello.txt', content: 'hello\n' }), says('done'));
  const approved = await ok('POST', `/v1/plans/${plan.id}/approve`, 200, {
    body: { sha256: plan.sha256, comment: 'go' },
    token: alice,
  });
  const exec = approved.run;
  const approval = await waitFor(async () => {
    const list = await ok('GET', `/v1/tool-approvals?run_id=${exec.id}&status=pending`, 200);
    return list.items[0];
  });
  await ok('GET', `/v1/tool-approvals/${approval.id}`, 200);
  await ok('POST', `/v1/tool-approvals/${approval.id}`, 200, {
    body: { decision: 'allow', message: 'fine' },
    token: alice,
  });
  const done = await runUntil(exec.id, ['completed', 'failed']);
  expect(done.status, done.error).toBe('completed');
  const diff = await ok('GET', `/v1/runs/${exec.id}/diff`, 200);
  expect(diff.state).toBe('ready');

  // ---- its result delivered on request (push, pull request)
  await ok('POST', `/v1/plans/${plan.id}/deliver`, 202, { token: alice });
  await waitFor(async () => {
    const p = await ok('GET', `/v1/plans/${plan.id}`, 200);
    return ['delivered', 'failed'].includes(p.delivery?.status) ? p : undefined;
  }, 20_000);

  // ---- every event of both runs, replayed
  const planEvents = (await call('GET', `/v1/runs/${run.id}/events`)).events!;
  const execEvents = (await call('GET', `/v1/runs/${exec.id}/events?after=0`)).events!;
  const types = new Set([...planEvents, ...execEvents].map((e) => e.type));
  for (const t of [
    'run_started',
    'question_request',
    'question_resolved',
    'plan_proposed',
    'plan_decided',
    'tool_approval_request',
    'tool_approval_resolved',
    'tool_use',
    'tool_result',
    'turn_finished',
    'execution_recorded',
    'run_finished',
    'delivery_completed',
  ]) {
    expect(types, t).toContain(t);
  }

  // ---- a plan rejected, one revised, a run canceled
  model.enqueue(proposes('p-2'));
  const second = await ok('POST', `/v1/jobs/${job.id}/run`, 201);
  const secondPlan = (await runUntil(second.id, ['planned'])).plan_id;
  await ok('POST', `/v1/plans/${secondPlan}/reject`, 200, { body: { comment: 'not now' }, token: alice });
  model.enqueue(proposes('p-3'), proposes('p-4', '## Add a greeting, revised\n\n1. Write hello.txt\n'));
  const third = await ok('POST', `/v1/jobs/${job.id}/run`, 201);
  const thirdPlan = (await runUntil(third.id, ['planned'])).plan_id;
  const revised = await ok('POST', `/v1/plans/${thirdPlan}/revise`, 200, {
    body: { feedback: 'say hello in German too' },
    token: alice,
  });
  const revision = await runUntil(revised.run.id, ['planned', 'failed']);
  await ok('GET', `/v1/plans/${revision.plan_id}`, 200);
  model.enqueue(calls('q-2', 'AskUserQuestion', asked));
  const fourth = await ok('POST', `/v1/jobs/${job.id}/run`, 201);
  await runUntil(fourth.id, ['awaiting_input']);
  await ok('POST', `/v1/runs/${fourth.id}/cancel`, 200);
  // Nothing waits on the spend limit: the admin's resume answers an empty list.
  await ok('POST', '/v1/runs/resume', 200);

  // ---- the unattended-execution switch
  await ok('GET', '/v1/admin/auto-mode', 200);
  await ok('POST', '/v1/admin/auto-mode', 200, { body: { enabled: true } });

  // ---- triggers: generic (fired with its token), scheduled, GitHub (a webhook and a ping)
  const generic = await ok('POST', '/v1/triggers', 201, {
    body: { kind: 'generic', name: 'nightly check', prompt: 'Check the build', workspace: repo },
  });
  const rotated = await ok('PATCH', `/v1/triggers/${generic.id}`, 200, {
    body: { rotate_token: true, hourly_cap: 5 },
  });
  model.enqueue(proposes('p-5'));
  const fired = await ok('POST', `/v1/triggers/${generic.id}/fire`, 201, {
    body: { idempotency_key: 'deploy-1', text: 'the build is red' },
    token: rotated.token,
  });
  await ok('POST', `/v1/triggers/${generic.id}/fire`, 200, {
    body: { idempotency_key: 'deploy-1' },
    token: rotated.token,
  });
  await runUntil(fired.run.id, ['planned', 'failed']);
  await ok('GET', `/v1/triggers/${generic.id}/deliveries`, 200);
  const scheduled = await ok('POST', '/v1/triggers', 201, {
    body: { kind: 'schedule', name: 'weekly', prompt: 'Tidy up', workspace: repo, cron: '0 3 * * 1' },
  });
  expect(scheduled.schedule).not.toBeNull();
  await ok('GET', `/v1/triggers/${scheduled.id}`, 200);
  await ok('POST', '/v1/triggers', 201, {
    body: {
      kind: 'github',
      name: 'reviews',
      events: ['pull_request.opened'],
      filters: { repositories: [REPO], draft: false },
      prompt: 'Review pull request {{number}}',
    },
  });
  await ok('GET', '/v1/triggers', 200);
  const ping = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 });
  await ok('POST', '/webhooks/github', 200, {
    token: null,
    raw: ping,
    headers: { 'x-github-event': 'ping', 'x-github-delivery': 'ping-1', 'x-hub-signature-256': sign(ping) },
  });
  const pr = JSON.stringify(prPayload('opened', { sha: 'f'.repeat(40) }));
  const received = await ok('POST', '/webhooks/github', 202, {
    token: null,
    raw: pr,
    headers: {
      'x-github-event': 'pull_request',
      'x-github-delivery': 'pr-1',
      'x-hub-signature-256': sign(pr),
    },
  });
  // A webhook left at GitHub's default Content type: form-encoded, correctly signed, refused with the error body.
  const form = new URLSearchParams({ payload: pr }).toString();
  const formEncoded = await ok('POST', '/webhooks/github', 415, {
    token: null,
    raw: form,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-github-event': 'pull_request',
      'x-github-delivery': 'pr-form-1',
      'x-hub-signature-256': sign(form),
    },
  });
  expect(formEncoded.error.code).toBe('unsupported_media_type');
  await waitFor(async () => {
    const dl = await ok('GET', `/v1/deliveries/${received.delivery_id}`, 200);
    return dl.outcome !== 'queued' ? dl : undefined;
  });
  await ok('GET', '/v1/deliveries', 200);
  await ok('DELETE', `/v1/triggers/${generic.id}`, 204);

  // ---- notifications sent about all this
  await waitFor(async () => receiver.accepted().length > 0 || undefined, 20_000, 'a notification');
  const notes = await ok('GET', '/v1/notifications', 200, { token: alice });
  expect(notes.items.length).toBeGreaterThan(0);

  // ---- where money went (every run above has a receipt in the store)
  const usage = await ok('GET', '/v1/usage?by=model', 200);
  expect(usage.totals.runs).toBeGreaterThan(0);

  // ---- a job deleted, a session closed
  const other = await ok('POST', '/v1/sessions', 201, { body: { workspace: repo } });
  // A one-shot two hours ahead: it cannot fire (nor its early jitter land) before it is deleted.
  const ahead = new Date(Date.now() + 2 * 3_600_000);
  const otherJob = await ok('POST', `/v1/sessions/${other.id}/jobs`, 201, {
    body: {
      cron: `${ahead.getUTCMinutes()} ${ahead.getUTCHours()} * * *`,
      timezone: 'UTC',
      prompt: 'poll',
      recurring: false,
    },
  });
  await ok('DELETE', `/v1/jobs/${otherJob.id}`, 204);
  await ok('POST', `/v1/sessions/${other.id}/jobs`, 201, {
    body: { cron: `${ahead.getUTCMinutes()} ${ahead.getUTCHours()} * * *`, timezone: 'UTC', prompt: 'later' },
  });
  const closed = await ok('DELETE', `/v1/sessions/${other.id}`, 200);
  expect(closed.deleted_jobs).toBe(1);

  // ---- errors share one shape
  await ok('GET', '/v1/plans/pln_missing', 404);
  await ok('POST', '/v1/sessions', 422, { body: { workspace: repo, surprise: true } });
  await ok('GET', '/v1/runs', 401, { token: null });
  await ok('POST', '/v1/admin/auto-mode', 403, { body: { enabled: false }, token: alice });
  await ok('GET', `/v1/runs/${run.id}/diff`, 409);

  expect(problems).toEqual([]);
  // Every route answered with each of its success statuses (a daemon that is not ready aside: its scheduler
  // runs here, and readiness is tested in tests/http/health.test.ts).
  const missing = ROUTES.flatMap((r) =>
    Object.keys(r.responses).map((s) => `${r.method.toUpperCase()} ${r.path} ${s}`),
  ).filter((k) => !answered.has(k) && k !== 'GET /readyz 503');
  expect(missing).toEqual([]);
});

it('fails a served answer that leaves the contract', () => {
  // The check itself: a field the contract does not know, or one it needs that is missing, is a problem.
  const before = problems.length;
  hold('GET', '/healthz', 200, { status: 'ok', uptime: 3 });
  hold('GET', '/v1/admin/auto-mode', 200, { enabled: true });
  hold('GET', '/v1/nowhere', 200, {});
  hold('GET', '/v1/jobs/job_1', 418, {});
  expect(problems.slice(before)).toHaveLength(4);
  problems.splice(before);
});
