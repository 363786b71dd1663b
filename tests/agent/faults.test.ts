import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, readSse, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { makeRepo } from '../support/git-repo.js';
import { type ModelServer, type ScriptedResponse, startModelServer } from '../support/model-server.js';

let model: ModelServer;
let d: TestDaemon;

afterEach(async () => {
  await d?.stop();
  await model?.close();
});

const plan = (id = 'p'): ScriptedResponse => ({
  kind: 'message',
  content: [{ type: 'tool_use', id, name: 'ExitPlanMode', input: { plan: '## plan\n- step' } }],
});

const ask: ScriptedResponse = {
  kind: 'message',
  content: [
    {
      type: 'tool_use',
      id: 'ask',
      name: 'AskUserQuestion',
      input: {
        questions: [
          {
            question: 'Scope?',
            header: 'Scope',
            multiSelect: false,
            options: [
              { label: 'Small', description: 'one file' },
              { label: 'Large', description: 'everything' },
            ],
          },
        ],
      },
    },
  ],
};

async function setup(
  opts: Parameters<typeof startTestDaemon>[0] = {},
  defaults: Record<string, unknown> = {},
) {
  model = await startModelServer();
  d = await startTestDaemon({ modelUrl: model.url, ...opts });
  const repo = join(d.dir, 'repo');
  makeRepo(repo, { 'a.txt': 'hello\n' });
  const s = await d.api('POST', '/v1/sessions', { workspace: repo, defaults });
  const j = await d.api('POST', `/v1/sessions/${s.body.id}/jobs`, {
    cron: '0 9 * * *',
    prompt: 'plan something',
  });
  return { sessionId: s.body.id as string, jobId: j.body.id as string, repo };
}

async function fire(jobId: string): Promise<string> {
  const r = await d.api('POST', `/v1/jobs/${jobId}/run`);
  expect(r.status).toBe(201);
  return r.body.id;
}

async function settled(runId: string, ms = 10_000): Promise<any> {
  return waitFor(
    async () => {
      const r = await d.api('GET', `/v1/runs/${runId}`);
      return ['queued', 'running', 'awaiting_input'].includes(r.body.status) ? undefined : r.body;
    },
    ms,
    `run ${runId} to end`,
  );
}

describe('model faults', () => {
  it('429 with retry-after, then success: retried by the SDK, the run goes on', async () => {
    const { jobId } = await setup();
    model.enqueue({ kind: 'status', status: 429, retryAfterSeconds: 0.2 }, plan());
    const run = await settled(await fire(jobId));
    expect(run.status).toBe('planned');
    expect(model.requests.map((r) => r.status)).toEqual([429, 200]);
  });

  it('529 until the SDK and the turn retries run out: the run fails with the cause, the daemon keeps serving', async () => {
    // Each turn attempt is one SDK call with 2 retries (3 requests); the run tries the turn 3 times.
    const { jobId } = await setup({ maxRetries: 2 });
    for (let i = 0; i < 9; i++) model.enqueue({ kind: 'status', status: 529, retryAfterSeconds: 0.02 });
    const runId = await fire(jobId);
    const run = await settled(runId);
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(
      /^the API is overloaded \(529 overloaded_error: Overloaded\); gave up after 3 attempts/,
    );
    expect(model.requests).toHaveLength(9);
    const events = await readSse(`${d.daemon.url}/v1/runs/${runId}/events`, ADMIN_TOKEN);
    const retries = events.filter((e) => e.event === 'model_retry').map((e) => e.data);
    expect(retries.map((r) => r.attempt)).toEqual([1, 2]);
    expect(retries[0].cause).toMatch(/529/);
    // Still serving, and the next run works.
    expect((await fetch(`${d.daemon.url}/healthz`)).status).toBe(200);
    model.enqueue(plan());
    expect((await settled(await fire(jobId))).status).toBe('planned');
  });

  it('an overloaded_error in the middle of the stream: the turn is asked again and the run goes on', async () => {
    const { jobId } = await setup();
    model.enqueue(
      {
        kind: 'message',
        content: [
          { type: 'text', text: 'partial answer' },
          { type: 'text', text: 'more' },
        ],
        midStreamError: { afterBlocks: 1, type: 'overloaded_error', message: 'Overloaded mid-stream' },
      },
      plan(),
    );
    const runId = await fire(jobId);
    const run = await settled(runId);
    expect(run.status).toBe('planned');
    expect(model.requests).toHaveLength(2);
    // The retry resends the stored conversation: the same messages, nothing of the broken reply.
    expect(model.requests[1]!.body.messages).toEqual(model.requests[0]!.body.messages);
    const events = await readSse(`${d.daemon.url}/v1/runs/${runId}/events`, ADMIN_TOKEN);
    const retry = events.find((e) => e.event === 'model_retry');
    expect(retry?.data.cause).toMatch(
      /broke off mid-stream \(stream overloaded_error: Overloaded mid-stream\)/,
    );
    expect(retry?.data.partial_reply_discarded).toBe(true);
  });

  it('a connection dropped in the middle of the reply: the turn is asked again and the run goes on', async () => {
    const { jobId } = await setup({ maxRetries: 0 });
    model.enqueue(
      {
        kind: 'message',
        content: [{ type: 'text', text: 'a reply that will be cut off by the network' }],
        dropAfterFrames: 4,
      },
      plan(),
    );
    const runId = await fire(jobId);
    const run = await settled(runId);
    expect(run.status, run.error).toBe('planned');
    expect(model.requests).toHaveLength(2);
    expect(model.requests[0]!.clientAborted || model.requests[0]!.status === 200).toBe(true);
    const events = await readSse(`${d.daemon.url}/v1/runs/${runId}/events`, ADMIN_TOKEN);
    const retries = events.filter((e) => e.event === 'model_retry');
    expect(retries.map((e) => e.data.cause)).toEqual([
      'the connection was lost or the reply ended early (terminated)',
    ]);
  });

  it('an error in the middle of every attempt fails the run with the message', async () => {
    const { jobId } = await setup();
    const broken: ScriptedResponse = {
      kind: 'message',
      content: [
        { type: 'text', text: 'partial answer' },
        { type: 'text', text: 'more' },
      ],
      midStreamError: { afterBlocks: 1, type: 'overloaded_error', message: 'Overloaded mid-stream' },
    };
    model.enqueue(broken, broken, broken);
    const run = await settled(await fire(jobId));
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/Overloaded mid-stream.*gave up after 3 attempts/);
  });

  it('a model that does not answer in time: the run fails with a timeout', async () => {
    const { jobId } = await setup({ maxRetries: 0, timeoutMs: 400 });
    model.enqueue({ kind: 'hang' }, { kind: 'hang' }, { kind: 'hang' });
    const run = await settled(await fire(jobId));
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/timed out/i);
    expect(model.requests).toHaveLength(3);
  });

  it("a 429 after the SDK's own retries: the turn waits what retry-after says, then goes on", async () => {
    const { jobId } = await setup({ maxRetries: 0 });
    model.enqueue({ kind: 'status', status: 429, retryAfterSeconds: 0.3 }, plan());
    const runId = await fire(jobId);
    expect((await settled(runId)).status).toBe('planned');
    const events = await readSse(`${d.daemon.url}/v1/runs/${runId}/events`, ADMIN_TOKEN);
    const retry = events.find((e) => e.event === 'model_retry')!.data;
    expect(retry).toMatchObject({ attempt: 1, next_attempt_in_ms: 300 });
    expect(retry.cause).toMatch(/^rate limited \(429 rate_limit_error/);
    const [first, second] = model.requests;
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(290);
  });

  it('a 400 is not retried and says what to check', async () => {
    const { jobId } = await setup();
    model.enqueue({ kind: 'status', status: 400, message: 'messages.0: something is off' });
    const run = await settled(await fire(jobId));
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(
      /^the Messages API refused the request \(400 invalid_request_error: messages.0: something is off\); a setting the model claude-sonnet-5-5 does not accept, or a drydock bug/,
    );
    expect(model.requests).toHaveLength(1);
  });

  it('an invalid API key is not retried and says what to fix', async () => {
    const { jobId } = await setup();
    model.enqueue({ kind: 'status', status: 401, message: 'invalid x-api-key' });
    const run = await settled(await fire(jobId));
    expect(run.status).toBe('failed');
    expect(run.error).toBe(
      'the API key was refused (401 authentication_error: invalid x-api-key): set ANTHROPIC_API_KEY (or anthropic.api_key) to a valid key',
    );
    expect(model.requests).toHaveLength(1);
  });
});

describe('cancel', () => {
  it('cancels a run parked on a question: the question is released, status canceled', async () => {
    const { jobId } = await setup();
    model.enqueue(ask);
    const runId = await fire(jobId);
    const q = await waitFor(async () => (await d.api('GET', '/v1/questions?status=pending')).body.items[0]);
    const res = await d.api('POST', `/v1/runs/${runId}/cancel`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('canceled');
    expect((await d.api('GET', `/v1/questions/${q.id}`)).body.status).toBe('canceled');
    const late = await d.api('POST', `/v1/questions/${q.id}/answers`, { answers: { 'Scope?': 'Small' } });
    expect(late.status).toBe(409);
    const events = await readSse(`${d.daemon.url}/v1/runs/${runId}/events`, ADMIN_TOKEN);
    expect(events.at(-1)).toMatchObject({ event: 'run_finished', data: { status: 'canceled' } });
    expect((await d.api('POST', `/v1/runs/${runId}/cancel`)).status).toBe(409);
  });

  it('aborts a run mid-stream promptly', async () => {
    const { jobId } = await setup();
    model.enqueue({ kind: 'hang' });
    const runId = await fire(jobId);
    await waitFor(async () => model.requests.length === 1);
    const t0 = Date.now();
    const res = await d.api('POST', `/v1/runs/${runId}/cancel`);
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(res.body.status).toBe('canceled');
  });
});

describe('durability', () => {
  it('a run parked on a question survives a restart and continues when answered', async () => {
    const { jobId } = await setup();
    model.enqueue(ask, plan());
    const runId = await fire(jobId);
    const q = await waitFor(async () => (await d.api('GET', '/v1/questions?status=pending')).body.items[0]);
    await d.halt();

    d = await startTestDaemon({ modelUrl: model.url, dir: d.dir });
    expect((await d.api('GET', `/v1/runs/${runId}`)).body.status).toBe('awaiting_input');
    const ok = await d.api('POST', `/v1/questions/${q.id}/answers`, { answers: { 'Scope?': 'Large' } });
    expect(ok.status).toBe(200);
    const run = await settled(runId);
    expect(run.status).toBe('planned');
    // The model got the answer in the tool result of the same conversation.
    const last = model.requests.at(-1)!.body.messages.at(-1);
    expect(last.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'ask' });
    expect(last.content[0].content).toContain('Large');
  });

  it('an unanswered question times out and the model is told not to guess', async () => {
    const { jobId } = await setup({ patch: (c) => void Object.assign(c.runs, { question_timeout_ms: 300 }) });
    model.enqueue(ask, plan());
    const runId = await fire(jobId);
    // The deadline is enforced by the sweep of deadlines; nudge it instead of waiting up to 30 s.
    await waitFor(async () => (await d.api('GET', '/v1/questions?status=pending')).body.items[0]);
    await new Promise((r) => setTimeout(r, 350));
    d.daemon.sweeps.kick();
    const run = await settled(runId);
    expect(run.status).toBe('planned');
    const result = model.requests.at(-1)!.body.messages.at(-1).content[0];
    expect(result.content).toMatch(/Do not guess/);
    const q = (await d.api('GET', `/v1/questions?run_id=${runId}`)).body.items[0];
    expect(q.status).toBe('timed_out');
  });

  it('stops as budget_exceeded when the run would pass its budget', async () => {
    const { jobId } = await setup({}, { budget_usd: 0.01 });
    const glob: ScriptedResponse = {
      kind: 'message',
      content: [{ type: 'tool_use', id: 'g', name: 'Glob', input: { pattern: '*' } }],
      // $0.009 a turn on claude-sonnet-5-5 ($2 / $10), nothing cached
      usage: {
        input_tokens: 4000,
        output_tokens: 100,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    };
    model.enqueue(
      glob,
      { ...glob, content: [{ type: 'tool_use', id: 'g2', name: 'Glob', input: { pattern: '*' } }] },
      plan(),
    );
    const run = await settled(await fire(jobId));
    expect(run.status).toBe('budget_exceeded');
    expect(run.error).toMatch(/budget of \$0.01/);
    // It stopped before the turn that would have passed the budget.
    expect(model.requests).toHaveLength(1);
    expect(run.cost_usd).toBeCloseTo(0.009, 6);
  });
});

describe('request shape', () => {
  it('thinking: shaped for the model, deltas logged, blocks passed back unmodified', async () => {
    const { jobId } = await setup({}, { thinking: 'adaptive' });
    model.enqueue(
      {
        kind: 'message',
        content: [
          { type: 'thinking', thinking: 'Let me look at the files first.' },
          { type: 'tool_use', id: 'g', name: 'Glob', input: { pattern: '*' } },
        ],
      },
      plan(),
    );
    const runId = await fire(jobId);
    expect((await settled(runId)).status).toBe('planned');
    const [first, second] = model.requests.map((r) => r.body);
    expect(first.thinking).toEqual({ type: 'adaptive', display: 'summarized' });
    expect(first.temperature).toBeUndefined();
    expect(first.tool_choice).toBeUndefined();
    const echoed = second.messages[1].content[0];
    expect(echoed).toMatchObject({ type: 'thinking', thinking: 'Let me look at the files first.' });
    expect(typeof echoed.signature).toBe('string');
    expect(echoed.signature.length).toBeGreaterThan(0);
    // The block came back as it went out: the stand-in checks its signature and prefix, and accepted it.
    expect(model.requests.map((r) => r.status)).toEqual([200, 200]);
    const events = await readSse(`${d.daemon.url}/v1/runs/${runId}/events`, ADMIN_TOKEN);
    const thought = events
      .filter((e) => e.event === 'thinking_delta')
      .map((e) => e.data.text)
      .join('');
    expect(thought).toContain('Let me look at the files first.');
  });

  it.each([
    ['claude-sonnet-5-5', 'off', { type: 'between_tools' }],
    ['claude-haiku-4-5', 'off', { type: 'disabled' }],
    ['claude-haiku-4-5', { budget_tokens: 2048 }, { type: 'enabled', budget_tokens: 2048 }],
    ['claude-sonnet-5', 'off', { type: 'disabled' }],
  ])('%s with thinking %j is sent %j', async (modelId, thinking, sent) => {
    const { jobId } = await setup({}, { model: modelId, thinking });
    model.enqueue(plan());
    expect((await settled(await fire(jobId))).status).toBe('planned');
    expect(model.requests[0]!.body.thinking).toEqual(sent);
    expect(model.requests[0]!.status).toBe(200);
  });

  it('consecutive requests share a byte-identical prefix up to each cache breakpoint', async () => {
    const { jobId } = await setup();
    const glob = (id: string): ScriptedResponse => ({
      kind: 'message',
      content: [{ type: 'tool_use', id, name: 'Glob', input: { pattern: '*' } }],
    });
    model.enqueue(glob('g1'), glob('g2'), plan());
    await settled(await fire(jobId));
    const raws = model.requests.map((r) => r.rawBody);
    expect(raws).toHaveLength(3);
    // tools, then the system prompt with its breakpoint at the end: the same bytes in every request.
    const prefixes = model.requests.map((r) =>
      JSON.stringify({ tools: r.body.tools, system: r.body.system }),
    );
    expect(new Set(prefixes).size).toBe(1);
    const system = model.requests[0]!.body.system;
    // A plan-phase turn may end waiting for a person: its breakpoints are written for an hour.
    expect(system.at(-1).cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
    expect(system.slice(0, -1).some((b: any) => b.cache_control)).toBe(false);
    expect(system.at(-1).text).toMatch(/PLAN MODE/);
    const cut = (raw: string) =>
      raw.slice(0, raw.indexOf('"cache_control"') + '"cache_control":{"type":"ephemeral","ttl":"1h"}'.length);
    expect(cut(raws[1]!)).toBe(cut(raws[0]!));
    expect(cut(raws[2]!)).toBe(cut(raws[0]!));
    const strip = (m: any) => JSON.stringify(m, (k, v) => (k === 'cache_control' ? undefined : v));
    for (let i = 1; i < 3; i++) {
      const prev = model.requests[i - 1]!.body.messages;
      const next = model.requests[i]!.body.messages;
      // Each request's conversation extends the previous one.
      expect(next.slice(0, prev.length).map(strip)).toEqual(prev.map(strip));
      // Breakpoints: the newest message, and the one where the previous request put its own.
      const marked = next.flatMap((m: any, j: number) =>
        JSON.stringify(m).includes('cache_control') ? [j] : [],
      );
      expect(marked).toEqual([prev.length - 1, next.length - 1]);
      // With the last tool both phases share (Read, Glob, Grep, AskUserQuestion) and the system prompt: four.
      expect((raws[i]!.match(/"cache_control"/g) ?? []).length).toBe(4);
    }
  });
});
