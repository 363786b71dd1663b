import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TokenUsage } from '../../src/domain/types.js';
import { findModel, type ModelSpec } from '../../src/models/catalogue.js';
import { costOf, promptTokensOf } from '../../src/models/pricing.js';
import { breakpointsOf, type CacheUsage, PromptCache } from '../../tests/support/model-cache.js';
import { promptOf } from '../../tests/support/model-prompt.js';
import { rulesFor } from '../../tests/support/model-rules.js';
import { startModelServer } from '../../tests/support/model-server.js';
import { childParams, fail, finish } from './child-io.js';
import { checkRun, makeWorkspace, openDrydock } from './harness.js';
import type { CacheFigures, CacheParams, CacheReport } from './protocol.js';
import { turnResponse } from './script.js';

// Child: the prompt cache's economy over one N-turn plan run on the default model. The run goes to the strict
// stand-in in this process, which bills each request from its prompt cache the way the API does (a prefix up
// to a breakpoint written earlier, live and at least the model's minimum, is a cache read). Beside it, in the
// same run: the same requests priced at the table drydock shipped before its model catalogue, re-laid-out as
// drydock laid them out before (breakpoints on system[0] and the newest message), and with no breakpoint at
// all; the last two are billed offline by the stand-in's own cache accounting, from a cold cache.

const p = childParams<CacheParams>();

/** The price table before the catalogue (the old built-in entry for claude-sonnet-5-5). */
const PREVIOUS_PRICE = { input: 3, output: 15, cache_write_5m: 3.75, cache_write_1h: 6, cache_read: 0.3 };

function tokens(u: CacheUsage, output: number): TokenUsage {
  return {
    input_tokens: u.input_tokens,
    output_tokens: output,
    cache_write_5m_tokens: u.cache_creation.ephemeral_5m_input_tokens,
    cache_write_1h_tokens: u.cache_creation.ephemeral_1h_input_tokens,
    cache_read_tokens: u.cache_read_input_tokens,
  };
}

function figures(turns: TokenUsage[], model: Pick<ModelSpec, 'price' | 'long_prompt'>): CacheFigures {
  const sum = (pick: (t: TokenUsage) => number, from = 0) =>
    turns.slice(from).reduce((n, t) => n + pick(t), 0);
  const write = (t: TokenUsage) => (t.cache_write_5m_tokens ?? 0) + (t.cache_write_1h_tokens ?? 0);
  const promptAfter1 = sum((t) => promptTokensOf(t), 1);
  return {
    input: sum((t) => t.input_tokens ?? 0),
    cacheRead: sum((t) => t.cache_read_tokens ?? 0),
    cacheWrite: sum(write),
    output: sum((t) => t.output_tokens ?? 0),
    readShareAfterTurn1: promptAfter1 > 0 ? sum((t) => t.cache_read_tokens ?? 0, 1) / promptAfter1 : 0,
    usd: Math.round(turns.reduce((n, t) => n + costOf(t, model, promptTokensOf(t)), 0) * 1e6) / 1e6,
  };
}

/** A request body with every cache marker removed, then put where `place` says. */
function relaid(body: any, place: 'previous' | 'none'): any {
  const copy = JSON.parse(JSON.stringify(body, (k, v) => (k === 'cache_control' ? undefined : v)));
  if (place === 'none') return copy;
  if (Array.isArray(copy.system) && copy.system[0]) copy.system[0].cache_control = { type: 'ephemeral' };
  const last = copy.messages.at(-1);
  if (Array.isArray(last?.content)) {
    const blocks = last.content as { type: string; cache_control?: unknown }[];
    const at = blocks.findLastIndex((b) => b.type !== 'thinking' && b.type !== 'redacted_thinking');
    if (at >= 0) blocks[at]!.cache_control = { type: 'ephemeral' };
  }
  return copy;
}

function replay(bodies: any[], outputs: number[], place: 'previous' | 'none', model: string): TokenUsage[] {
  const cache = new PromptCache();
  // The rules as published, whatever the date (0: before any retirement).
  const min = rulesFor(model, 0)?.minCacheTokens ?? 1024;
  return bodies.map((body, i) => {
    const b = relaid(body, place);
    const prompt = promptOf(b);
    // One second between requests: well inside the 5-minute lifetime, as in the run.
    return tokens(cache.account(model, prompt, breakpointsOf(prompt, b), min, i * 1000), outputs[i] ?? 0);
  });
}

async function main(): Promise<void> {
  const server = await startModelServer();
  server.setFallback((req) => turnResponse(req.body, p.turns));
  const ws = join(p.dir, 'workspace-cache');
  mkdirSync(ws, { recursive: true });
  makeWorkspace(ws);
  const dd = await openDrydock({ file: join(p.dir, 'cache.db'), url: server.url, maxConcurrent: 1 });
  const sessionId = await dd.createSession(ws, p.turns);
  const settled = await dd.submit(await dd.createRun(sessionId, 'Add pagination to the list endpoints.'));
  const check = await checkRun(dd.store, settled.run, p.turns);
  const events = await dd.store.listEvents(settled.run.id, 0, 1_000_000);
  const perTurn = events.filter((e) => e.type === 'turn_finished').map((e) => e.data.usage as TokenUsage);
  const modelId = settled.run.model ?? '';
  const model = findModel({ models: {}, pricing: {} }, modelId);
  const bodies = server.requests
    .filter((r) => r.path === '/v1/messages' && r.status === 200)
    .map((r) => r.body);
  const outputs = perTurn.map((t) => t.output_tokens ?? 0);
  const problem =
    check.problem ??
    (bodies.length !== p.turns ? `${bodies.length} accepted requests instead of ${p.turns}` : null) ??
    (server.requests.some((r) => r.status !== 200) ? 'the stand-in refused a request' : null);
  const report: CacheReport = {
    type: 'cache',
    model: modelId,
    turns: p.turns,
    drydock: figures(perTurn, model),
    previousPriceUsd: figures(perTurn, { price: PREVIOUS_PRICE }).usd,
    previousLayout: figures(replay(bodies, outputs, 'previous', modelId), model),
    uncached: figures(replay(bodies, outputs, 'none', modelId), model),
    runCostUsd: settled.run.costUsd,
    problem,
  };
  await dd.close();
  await server.close();
  await finish(report);
}

main().catch(fail);
