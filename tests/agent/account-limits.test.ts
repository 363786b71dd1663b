import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { FakeClock } from '../support/fake-clock.js';
import { makeRepo } from '../support/git-repo.js';
import {
  type ModelServer,
  type ScriptedResponse,
  script,
  startModelServer,
} from '../support/model-server.js';
import { signIn, ui } from '../ui/helpers.js';

// What the account's limits do to a run, through the real SDK (built as the daemon builds it) against the
// strict stand-in, which answers each limit as the Messages API does (tests/support/model-script.ts).

let model: ModelServer | undefined;
let d: TestDaemon;

afterEach(async () => {
  await d?.stop();
  await model?.close();
  model = undefined;
});

const plan = (id = 'p'): ScriptedResponse => ({
  kind: 'message',
  content: [{ type: 'tool_use', id, name: 'ExitPlanMode', input: { plan: '## plan\n- step' } }],
});

async function setup(opts: Parameters<typeof startTestDaemon>[0] = {}): Promise<string> {
  model = await startModelServer();
  d = await startTestDaemon({ modelUrl: model!.url, maxRetries: 3, ...opts });
  return session();
}

/** A session on a repository of its own, with a job; its id. */
async function session(): Promise<string> {
  const repo = join(d.dir, `repo-${Math.random().toString(36).slice(2)}`);
  makeRepo(repo, { 'a.txt': 'hello\n' });
  const s = await d.api('POST', '/v1/sessions', { workspace: repo });
  const j = await d.api('POST', `/v1/sessions/${s.body.id}/jobs`, { cron: '0 9 * * *', prompt: 'plan it' });
  return j.body.id as string;
}

async function fire(jobId: string): Promise<string> {
  const r = await d.api('POST', `/v1/jobs/${jobId}/run`);
  expect(r.status).toBe(201);
  return r.body.id;
}

/** The run once it is in `status` (with the test's predicate, if any). */
function runIn(runId: string, status: string, also: (run: any) => boolean = () => true): Promise<any> {
  return waitFor(
    async () => {
      const r = await d.api('GET', `/v1/runs/${runId}`);
      return r.body.status === status && also(r.body) ? r.body : undefined;
    },
    15_000,
    `run ${runId} ${status}`,
  );
}

/** The run's event log as stored (a parked run's SSE stream stays open). */
async function eventsOf(runId: string): Promise<{ event: string; data: any }[]> {
  const events = await d.daemon.store.listEvents(runId, 0, 1000);
  return events.map((e) => ({ event: e.type, data: e.data }));
}

const waitingOnSpendLimit = (run: any) => run.waiting?.on === 'spend_limit';

async function modelErrors(): Promise<Record<string, number>> {
  const res = await fetch(`${d.daemon.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const text = await res.text();
  const counts: Record<string, number> = {};
  for (const m of text.matchAll(/^drydock_model_errors_total\{kind="([a-z_]+)"\} (\d+)$/gm)) {
    counts[m[1]!] = Number(m[2]);
  }
  return counts;
}

describe('account limits', () => {
  it('a spend limit 429: one request, the run waits on spend_limit, so does the next run (without a request), and both go on when an admin resumes them', async () => {
    const jobA = await setup();
    const jobB = await session();
    model!.enqueue(script.spendLimitReached('2027-01-01'));
    const a = await fire(jobA);
    const waiting = await runIn(a, 'awaiting_input', waitingOnSpendLimit);
    // Exactly one HTTP request: neither the SDK nor the turn loop tried again.
    expect(model!.requests.map((r) => r.status)).toEqual([429]);
    const detail = await d.api('GET', `/v1/runs/${a}`);
    expect(detail.body.waiting_on).toMatchObject({ kind: 'spend_limit' });
    expect(detail.body.waiting_on.detail).toContain('drydock runs resume');
    expect(Date.parse(waiting.waiting.until) - Date.now()).toBeGreaterThan(30 * 60_000);
    const events = await eventsOf(a);
    const reached = events.find((e) => e.event === 'spend_limit_reached');
    expect(reached?.data.reason).toMatch(
      /spend limit \(429 rate_limit_error: You have reached your API usage limits/,
    );
    expect(events.some((e) => e.event === 'model_retry')).toBe(false);
    // The run's page says so too.
    const app = {
      request: (url: string, init: RequestInit) =>
        fetch(url.replace('http://localhost', d.daemon.url), { ...init, redirect: 'manual' }),
    };
    const { cookie } = await signIn(app as never, ADMIN_TOKEN);
    const page = (await ui(app as never, 'GET', `/ui/runs/${a}`, { cookie })).text;
    expect(page).toMatch(/<dt>Waiting on<\/dt><dd id="run-waiting">the account's spend limit/);

    // Another run while the account is limited waits too, and sends nothing.
    const b = await fire(jobB);
    await runIn(b, 'awaiting_input', waitingOnSpendLimit);
    expect(model!.requests).toHaveLength(1);
    expect(await modelErrors()).toMatchObject({ spend_limit: 1 });

    // The limit is raised; an admin resumes: both go on from their stored conversations.
    model!.enqueue(plan('pa'), plan('pb'));
    const resumed = await d.api('POST', '/v1/runs/resume');
    expect(resumed.status).toBe(200);
    expect(resumed.body.resumed.map((r: any) => r.id).sort()).toEqual([a, b].sort());
    await runIn(a, 'planned');
    await runIn(b, 'planned');
    expect(model!.requests).toHaveLength(3);
    // Nothing redone: the resumed request of run A is the one that met the limit.
    const second = model!.requests.slice(1).find((r) => r.rawBody === model!.requests[0]!.rawBody);
    expect(second).toBeDefined();
    const after = await eventsOf(a);
    expect(after.filter((e) => e.event === 'run_started')).toHaveLength(1);
    expect(after.find((e) => e.event === 'spend_limit_resumed')?.data.by).toBeTruthy();
    // Nothing left to resume.
    expect((await d.api('POST', '/v1/runs/resume')).body.resumed).toEqual([]);
  });

  it('resumes on its own once anthropic.spend_limit_wait_ms has passed (the injected clock)', async () => {
    const clock = new FakeClock(Date.parse('2026-12-04T10:00:00Z'));
    const job = await setup({
      clock,
      patch: (c) => {
        c.anthropic.spend_limit_wait_ms = 600_000;
      },
    });
    model!.enqueue(script.spendLimitReached(), plan());
    const runId = await fire(job);
    const waiting = await runIn(runId, 'awaiting_input', waitingOnSpendLimit);
    expect(Date.parse(waiting.waiting.until)).toBe(clock.now() + 600_000);
    clock.advance(599_999);
    // Not yet: still waiting, and no second request.
    expect((await d.api('GET', `/v1/runs/${runId}`)).body.waiting?.on).toBe('spend_limit');
    expect(model!.requests).toHaveLength(1);
    clock.advance(1);
    await runIn(runId, 'planned');
    expect(model!.requests.map((r) => r.status)).toEqual([429, 200]);
  });

  it("a run held back by another run's wait waits until that wait ends, and both go on then", async () => {
    // A run that only saw another run's wait must not start a wait of its own: each would find the other's
    // later end when its own came, park again, and neither would ever ask the model again.
    const clock = new FakeClock(Date.parse('2026-12-04T10:00:00Z'));
    const jobA = await setup({
      clock,
      patch: (c) => {
        c.anthropic.spend_limit_wait_ms = 600_000;
      },
    });
    const jobB = await session();
    model!.enqueue(script.spendLimitReached(), plan('pa'), plan('pb'));
    const a = await fire(jobA);
    const waitA = await runIn(a, 'awaiting_input', waitingOnSpendLimit);
    clock.advance(1_000);
    const b = await fire(jobB);
    const waitB = await runIn(b, 'awaiting_input', waitingOnSpendLimit);
    expect(waitB.waiting.until).toBe(waitA.waiting.until);
    expect(model!.requests).toHaveLength(1);
    clock.advance(599_000);
    await runIn(a, 'planned');
    await runIn(b, 'planned');
    expect(model!.requests.map((r) => r.status)).toEqual([429, 200, 200]);
  });

  it('a workspace spend limit (400): the run waits on spend_limit with that reason, after one request', async () => {
    const job = await setup();
    model!.enqueue(script.workspaceSpendLimitReached('2027-01-01'));
    const runId = await fire(job);
    await runIn(runId, 'awaiting_input', waitingOnSpendLimit);
    expect(model!.requests.map((r) => r.status)).toEqual([400]);
    const events = await eventsOf(runId);
    const reason = events.find((e) => e.event === 'spend_limit_reached')?.data.reason;
    expect(reason).toContain('You have reached your specified workspace API usage limits');
    expect(reason).not.toMatch(/drydock bug/);
  });

  it('a refused key (401): the run fails at once, saying to set the key; one request', async () => {
    const job = await setup();
    model!.enqueue(script.keyRefused());
    const runId = await fire(job);
    const run = await runIn(runId, 'failed');
    expect(run.error).toMatch(
      /^the API key was refused \(401 authentication_error: invalid x-api-key\): set ANTHROPIC_API_KEY/,
    );
    expect(model!.requests).toHaveLength(1);
    expect(await modelErrors()).toMatchObject({ auth: 1 });
  });

  it("a key without permission (403): the run fails at once, naming the model and the key's access; one request", async () => {
    const job = await setup();
    model!.enqueue(script.permissionDenied());
    const runId = await fire(job);
    const run = await runIn(runId, 'failed');
    expect(run.error).toMatch(/^the API key may not use claude-[a-z0-9-]+ \(403 permission_error: /);
    expect(run.error).toContain("check the key's workspace and model access");
    expect(model!.requests).toHaveLength(1);
    expect(await modelErrors()).toMatchObject({ permission: 1 });
  });

  it('no key at all: the run fails without a request, saying to set ANTHROPIC_API_KEY', async () => {
    const job = await setup({ apiKey: null });
    const runId = await fire(job);
    const run = await runIn(runId, 'failed');
    expect(run.error).toMatch(/^no API key is set: set ANTHROPIC_API_KEY/);
    expect(model!.requests).toHaveLength(0);
    const events = await eventsOf(runId);
    expect(events.some((e) => e.event === 'model_retry')).toBe(false);
    expect(await modelErrors()).toMatchObject({ auth: 1 });
  });

  it('an ordinary rate limit and an overload are still retried, and counted by kind', async () => {
    const job = await setup();
    model!.enqueue(script.rateLimited(0.05), script.overloaded(), plan());
    const runId = await fire(job);
    await runIn(runId, 'planned');
    // Both retried by the SDK inside one turn: the run saw no failure.
    expect(model!.requests.map((r) => r.status)).toEqual([429, 529, 200]);
    expect(await modelErrors()).toEqual({});
    // Past the SDK's retries, the turn loop retries and the metric counts what it saw.
    await d.stop();
    d = await startTestDaemon({ modelUrl: model!.url, maxRetries: 0 });
    const again = await session();
    model!.enqueue(
      { ...script.rateLimited(0.05) },
      { ...script.overloaded(), retryAfterSeconds: 0.05 },
      plan(),
    );
    await runIn(await fire(again), 'planned');
    expect(await modelErrors()).toEqual({ rate_limit: 1, overloaded: 1 });
  });
});
