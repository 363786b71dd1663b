import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cacheTtls, SPACING_BLOCKS, SPACING_TOKENS, spacedTtl } from '../../src/agent/cache-ttl.js';
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
import { git } from '../support/git-repo.js';
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
  // A file large enough (~3,000 tokens) that the turn reading it adds more than SPACING_TOKENS.
  writeFileSync(join(w.repo, 'NOTES.md'), 'A line of notes about the greeting file.\n'.repeat(300));
  // Committed: the plan phase reads the workspace's commit.
  git(w.repo, 'add', 'NOTES.md');
  git(w.repo, 'commit', '-q', '-m', 'notes');
  const alice = await w.token('alice');
  model.enqueue(
    calls('r1', 'Read', { file_path: 'NOTES.md' }),
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
  it('plan phase and a manual execution: the prefix for an hour, messages once they have grown', async () => {
    const { requests, runs } = await loop('manual', 'claude-sonnet-5-5');
    const plan = requests.filter(isPlan);
    const exec = requests.filter((r) => !isPlan(r));
    expect(plan).toHaveLength(4);
    expect(exec).toHaveLength(2); // the Write call (parked, approved, run), then the end
    // The static prefix and the last tool both phases share (AskUserQuestion, 4th): an hour, every request.
    for (const r of requests) expect(breakpoints(r).slice(0, 2)).toEqual(['tools.3:1h', 'system.1:1h']);
    expect(exec[0]!.body.tools[3].name).toBe('AskUserQuestion');
    expect(exec[0]!.body.tools[4].name).toBe('Write');
    // Messages: the opening is small (5 minutes); the request after the large file read is written for an
    // hour (the question it answers with then waits on it); the turns after add little: 5 minutes again.
    expect(breakpoints(plan[0]!).slice(2)).toEqual(['messages.0:default']);
    expect(breakpoints(plan[1]!).slice(2)).toEqual(['messages.0:1h', 'messages.2:1h']);
    expect(breakpoints(plan[2]!).slice(2)).toEqual(['messages.2:default', 'messages.4:default']);
    expect(breakpoints(plan[3]!).slice(2)).toEqual(['messages.4:default', 'messages.6:default']);
    expect(breakpoints(exec[0]!).slice(2)).toEqual(['messages.0:default']);
    expect(breakpoints(exec[1]!).slice(2)).toEqual(['messages.0:default', 'messages.2:default']);
    // The plan run's usage has both kinds of write, apart (the stand-in reports them so, the SDK passes them).
    const usage = (await w.d.api('GET', `/v1/runs/${runs[0]}`)).body.usage;
    expect(usage.cache_write_1h_tokens).toBeGreaterThan(3000);
    expect(usage.cache_write_5m_tokens).toBeGreaterThan(0);
    // The execution's first turn reads the shared tools from the cache the plan conversation wrote.
    const execEvents = await readSse(`${w.d.daemon.url}/v1/runs/${runs[2]}/events`, ADMIN_TOKEN);
    const firstTurn = execEvents.find((e: any) => e.event === 'turn_finished') as any;
    expect(firstTurn.data.usage.cache_read_tokens).toBeGreaterThan(1000);
  });

  it('an auto execution keeps the 5-minute default; the plan phase still writes its prefix for an hour', async () => {
    const { requests, runs } = await loop('auto', 'claude-haiku-4-5');
    const plan = requests.filter(isPlan);
    const exec = requests.filter((r) => !isPlan(r));
    expect(exec).toHaveLength(2);
    for (const r of plan) expect(breakpoints(r).slice(0, 2)).toEqual(['tools.3:1h', 'system.1:1h']);
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
    expect(cacheTtls(described, 'any_turn')).toEqual({ prefix: '1h', messages: 'spaced' });
  });

  it('every catalogue model takes it; "seldom" keeps 5 minutes; 1h never follows 5m in a request', () => {
    for (const id of ['claude-sonnet-5-5', 'claude-opus-5-5', 'claude-haiku-4-5', 'claude-opus-4-5']) {
      const m = findModel({ models: {}, pricing: {} }, id);
      expect(cacheTtls(m, 'any_turn'), id).toEqual({ prefix: '1h', messages: 'spaced' });
      expect(cacheTtls(m, 'seldom'), id).toEqual({ prefix: '5m', messages: '5m' });
    }
    const ttls = cacheTtls(findModel({ models: {}, pricing: {} }, 'claude-sonnet-5-5'), 'any_turn');
    // Small messages: the prefix for an hour, the messages for 5 minutes (after it: the allowed order).
    const small = buildRequest({ settings, tools: [], system: ['base', 'directive'], messages, cache: ttls });
    const markers = (b: unknown) => JSON.stringify(b).match(/"cache_control":\{[^}]*\}/g) ?? [];
    expect(markers(small)).toEqual([
      '"cache_control":{"type":"ephemeral","ttl":"1h"}',
      '"cache_control":{"type":"ephemeral"}',
      '"cache_control":{"type":"ephemeral"}',
    ]);
    const big = [
      ...messages.slice(0, 2),
      { role: 'user' as const, content: [{ type: 'text', text: 'x'.repeat(9000) }] },
    ];
    const large = buildRequest({
      settings,
      tools: [],
      system: ['base', 'directive'],
      messages: big,
      cache: ttls,
    });
    expect(markers(large)).toEqual(Array(3).fill('"cache_control":{"type":"ephemeral","ttl":"1h"}'));
  });

  it('spaced: an hour once the newest message adds enough to the last 1-hour entry, by tokens or blocks', () => {
    const text = (role: 'user' | 'assistant', chars: number, blocks = 1) => ({
      role,
      content: Array.from({ length: blocks }, () => ({ type: 'text', text: 'y'.repeat(chars / blocks) })),
    });
    // ~614 tokens and 2 blocks a turn: 5 minutes until what came since the last 1-hour entry passes
    // SPACING_TOKENS (each text block is its characters + 27 of JSON, / 4).
    const conversation = [text('user', 2000)];
    const ttls: string[] = [spacedTtl(conversation)];
    for (let i = 0; i < 10; i++) {
      conversation.push(text('assistant', 400), text('user', 2000));
      ttls.push(spacedTtl(conversation));
    }
    expect(SPACING_TOKENS).toBe(2048);
    expect(ttls).toEqual(['5m', '5m', '5m', '1h', '5m', '5m', '5m', '1h', '5m', '5m', '5m']);
    // The same conversation asked again gives the same answer (each request's decision is taken again).
    expect(spacedTtl(conversation)).toBe('5m');
    expect(spacedTtl(conversation.slice(0, 15))).toBe('1h');
    // Many small blocks: an hour at SPACING_BLOCKS, however few the tokens.
    const blocky = [text('user', 10, SPACING_BLOCKS - 1)];
    expect(spacedTtl(blocky)).toBe('5m');
    expect(spacedTtl([...blocky, text('assistant', 10), text('user', 10)])).toBe('1h');
    // A large message right away: an hour.
    expect(spacedTtl([text('user', 4 * SPACING_TOKENS + 400)])).toBe('1h');
  });
});
