import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cacheTtls } from '../../src/agent/cache-ttl.js';
import { buildRequest } from '../../src/agent/request.js';
import type { RunSettings } from '../../src/domain/types.js';
import { findModel } from '../../src/models/catalogue.js';
import {
  approveAs,
  calls,
  PLAN_MD,
  pendingApproval,
  proposes,
  runUntil,
  says,
  type World,
  world,
} from '../plans/helpers.js';
import { ADMIN_TOKEN, readSse } from '../support/daemon.js';
import { type ModelServer, type RecordedRequest, startModelServer } from '../support/model-server.js';

// Which breakpoint carries which TTL, phase by phase, as the real SDK sends it to the strict stand-in (which
// refuses an unknown ttl, a 1-hour breakpoint after a 5-minute one, more than 4 breakpoints, and "1h" on a
// model without it). A conversation where any turn may end waiting for a person (the plan phase; the execute
// phase in manual and edits mode) writes every breakpoint for an hour; the auto execute phase keeps 5 minutes.

let model: ModelServer;
let w: World;
beforeEach(async () => {
  model = await startModelServer();
});
afterEach(async () => {
  await w?.d.stop();
  await model.close();
});

const question = (id: string) =>
  calls(id, 'AskUserQuestion', {
    questions: [
      {
        question: 'Which greeting?',
        header: 'Greeting',
        multiSelect: false,
        options: [
          { label: 'hello', description: 'plain' },
          { label: 'hi', description: 'short' },
        ],
      },
    ],
  });

/** Every breakpoint of a request, in the order the API reads them, as `where:ttl`. */
function breakpoints(r: RecordedRequest): string[] {
  const out: string[] = [];
  const ttl = (cc: any) => (cc.ttl === undefined ? 'default' : cc.ttl);
  for (const [i, t] of (r.body.tools as any[]).entries()) {
    if (t.cache_control) out.push(`tools.${i}:${ttl(t.cache_control)}`);
  }
  for (const [i, b] of (r.body.system as any[]).entries())
    if (b.cache_control) out.push(`system.${i}:${ttl(b.cache_control)}`);
  for (const [i, m] of (r.body.messages as any[]).entries()) {
    for (const b of m.content as any[])
      if (b.cache_control) out.push(`messages.${i}:${ttl(b.cache_control)}`);
  }
  return out;
}

const isPlan = (r: RecordedRequest) => /PLAN MODE/.test(r.body.system[1].text);

async function loop(
  executeMode: 'manual' | 'auto',
  modelId: string,
): Promise<{ requests: RecordedRequest[]; runs: string[] }> {
  w = await world(model, { model: modelId, execute_mode: executeMode });
  const alice = await w.token('alice');
  model.enqueue(
    calls('r1', 'Read', { file_path: 'README.md' }),
    question('q1'),
    proposes('p1'),
    proposes('p2', `${PLAN_MD}3. Say hello twice\n`),
    calls('w1', 'Write', { file_path: 'hello.txt', content: 'hello\nhello\n' }),
    says('Wrote hello.txt.'),
  );
  const runId = (await w.d.api('POST', `/v1/jobs/${w.jobId}/run`)).body.id;
  await runUntil(w.d, runId, ['awaiting_input']);
  const q = (await w.d.api('GET', `/v1/questions?run_id=${runId}`)).body.items[0];
  await w.d.api('POST', `/v1/questions/${q.id}/answers`, { answers: { 'Which greeting?': 'hello' } });
  const run = await runUntil(w.d, runId, ['planned', 'failed']);
  expect(run.status, run.error).toBe('planned');
  const revise = await w.d.api('POST', `/v1/plans/${run.plan_id}/revise`, { feedback: 'Twice.' }, alice);
  const second = await runUntil(w.d, revise.body.run.id, ['planned', 'failed']);
  expect(second.status, second.error).toBe('planned');
  const plan = (await w.d.api('GET', `/v1/plans/${second.plan_id}`)).body;
  const exec = await approveAs(w.d, plan, alice);
  if (executeMode === 'manual') {
    const pending = await pendingApproval(w.d);
    const allowed = await w.d.api('POST', `/v1/tool-approvals/${pending.id}`, { decision: 'allow' }, alice);
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
  }
  const done = await runUntil(w.d, exec.id, ['completed', 'failed']);
  expect(done.status, done.error).toBe('completed');
  expect(model.requests.map((r) => r.status)).toEqual(model.requests.map(() => 200));
  return { requests: model.requests, runs: [runId, second.id, exec.id] };
}

describe('prompt-cache TTLs per phase, through the SDK to the strict stand-in', () => {
  it('plan phase and a manual execution: every breakpoint is written for an hour', async () => {
    const { requests, runs } = await loop('manual', 'claude-sonnet-5-5');
    const plan = requests.filter(isPlan);
    const exec = requests.filter((r) => !isPlan(r));
    expect(plan).toHaveLength(4);
    expect(exec).toHaveLength(2); // the Write call (parked, approved, run), then the end
    // Turn 1: the prefix and the opening message; later turns also the message before the newest reply.
    // The last shared tool (AskUserQuestion, 4th) carries one too: the execution reads the plan's tools.
    expect(breakpoints(plan[0]!)).toEqual(['tools.3:1h', 'system.1:1h', 'messages.0:1h']);
    for (const r of [...plan.slice(1), ...exec.slice(1)]) {
      const bps = breakpoints(r);
      expect(bps).toHaveLength(4);
      expect(bps.every((b) => b.endsWith(':1h'))).toBe(true);
    }
    expect(breakpoints(exec[0]!)).toEqual(['tools.3:1h', 'system.1:1h', 'messages.0:1h']);
    expect(exec[0]!.body.tools[3].name).toBe('AskUserQuestion');
    expect(exec[0]!.body.tools[4].name).toBe('Write');
    // The execution's first turn reads the shared tools from the cache the plan conversation wrote.
    const execEvents = await readSse(`${w.d.daemon.url}/v1/runs/${runs[2]}/events`, ADMIN_TOKEN);
    const firstTurn = execEvents.find((e: any) => e.event === 'turn_finished') as any;
    expect(firstTurn.data.usage.cache_read_tokens).toBeGreaterThan(1000);
    // The runs' usage counts the writes as 1-hour writes (the stand-in reports them apart).
    for (const id of runs) {
      const usage = (await w.d.api('GET', `/v1/runs/${id}`)).body.usage;
      expect(usage.cache_write_1h_tokens, id).toBeGreaterThan(0);
      expect(usage.cache_write_5m_tokens, id).toBe(0);
    }
  });

  it('an auto execution keeps the 5-minute default; the plan phase still writes for an hour', async () => {
    const { requests, runs } = await loop('auto', 'claude-haiku-4-5');
    const plan = requests.filter(isPlan);
    const exec = requests.filter((r) => !isPlan(r));
    expect(exec).toHaveLength(2);
    for (const r of plan) expect(breakpoints(r).every((b) => b.endsWith(':1h'))).toBe(true);
    for (const r of exec) expect(breakpoints(r).every((b) => b.endsWith(':default'))).toBe(true);
    expect(breakpoints(exec[1]!)).toEqual([
      'tools.3:default',
      'system.1:default',
      'messages.0:default',
      'messages.2:default',
    ]);
    // Haiku 4.5 caches nothing under 4,096 tokens: these short conversations write nothing at either TTL.
    const usage = (await w.d.api('GET', `/v1/runs/${runs[2]}`)).body.usage;
    expect(usage.cache_write_1h_tokens ?? 0).toBe(0);
  });
});

describe('the TTL policy', () => {
  const settings = {
    model: 'claude-next',
    maxTokens: 1000,
    request: { thinking: null, effort: null, notes: [] },
  } as unknown as RunSettings;
  const messages = [
    { role: 'user' as const, content: [{ type: 'text', text: 'go' }] },
    { role: 'assistant' as const, content: [{ type: 'text', text: 'ok' }] },
    { role: 'user' as const, content: [{ type: 'text', text: 'more' }] },
  ];

  it('a model not known to take the 1-hour TTL keeps 5 minutes wherever it runs', () => {
    const unknown = findModel({ models: {}, pricing: {} }, 'claude-next');
    expect(unknown.cache_ttl_1h).toBe(false);
    expect(cacheTtls(unknown, 'any_turn')).toEqual({ prefix: '5m', messages: '5m' });
    const body = buildRequest({
      settings,
      tools: [],
      system: ['base', 'directive'],
      messages,
      cache: cacheTtls(unknown, 'any_turn'),
    });
    expect(JSON.stringify(body)).not.toContain('"ttl"');
    // Described in the configuration as taking it, it does.
    const described = findModel(
      { models: { 'claude-next': { cache_ttl_1h: true } }, pricing: {} },
      'claude-next',
    );
    expect(cacheTtls(described, 'any_turn')).toEqual({ prefix: '1h', messages: '1h' });
  });

  it('every catalogue model takes it; "seldom" keeps 5 minutes; 1h never follows 5m in a request', () => {
    for (const id of ['claude-sonnet-5-5', 'claude-opus-5-5', 'claude-haiku-4-5', 'claude-opus-4-5']) {
      const m = findModel({ models: {}, pricing: {} }, id);
      expect(cacheTtls(m, 'any_turn'), id).toEqual({ prefix: '1h', messages: '1h' });
      expect(cacheTtls(m, 'seldom'), id).toEqual({ prefix: '5m', messages: '5m' });
    }
    const ttls = cacheTtls(findModel({ models: {}, pricing: {} }, 'claude-sonnet-5-5'), 'any_turn');
    const body = buildRequest({ settings, tools: [], system: ['base', 'directive'], messages, cache: ttls });
    // No tools here, so no shared-tools breakpoint: system, the message before the newest reply, the newest.
    const markers = JSON.stringify(body).match(/"cache_control":\{[^}]*\}/g) ?? [];
    expect(markers).toEqual(Array(3).fill('"cache_control":{"type":"ephemeral","ttl":"1h"}'));
  });
});
