import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Run, TokenUsage } from '../../src/domain/types.js';
import { findModel } from '../../src/models/catalogue.js';
import { costOf, promptTokensOf } from '../../src/models/pricing.js';
import { startModelServer } from '../../tests/support/model-server.js';
import { childParams, fail, finish } from './child-io.js';
import { BENCH_MODEL, type Drydock, makeWorkspace, openDrydock } from './harness.js';
import { ANSWER, FEEDBACK, loopScript, QUESTION } from './loop-script.js';
import type { LoopFigures, LoopParams, LoopReport } from './protocol.js';

// Child: the prompt cache over one whole loop (plan → question → answer → plan → revise → plan → approve →
// execute in manual mode, two changes allowed by a person), on the default model, against the strict
// stand-in in this process. The stand-in's cache runs on a clock of this child's own: each model request
// takes 3 s of it, and each time a person acts (the answer, the revision, the approval, each tool approval)
// it moves on by the wait (20 minutes, or 30 s for the loop without a wait), so no one really waits. Four
// loops, each with a fresh stand-in and database: today's policy (every breakpoint 5 minutes: the model's
// catalogue fact `cache_ttl_1h` set to false) and this build's, each with and without the wait.

const p = childParams<LoopParams>();
const MODEL_SECONDS = 3_000;
const NO_WAIT_MS = 30_000;
const PERSON = 'alice';

async function loop(policy: 'today' | 'new', waitMs: number, index: number): Promise<LoopFigures> {
  let t = 1_000_000;
  const server = await startModelServer({ now: () => t });
  for (const reply of loopScript()) {
    server.enqueue(() => {
      t += MODEL_SECONDS;
      return reply;
    });
  }
  const dd = await openDrydock({
    file: join(p.dir, `loop-${index}.db`),
    url: server.url,
    maxConcurrent: 1,
    ...(policy === 'today' ? { models: { [BENCH_MODEL]: { cache_ttl_1h: false } } } : {}),
  });
  try {
    const runs = await drive(dd, () => {
      t += waitMs;
    });
    const problem =
      server.remaining() !== 0
        ? `${server.remaining()} scripted replies left over`
        : server.requests.some((r) => r.status !== 200)
          ? `the stand-in refused a request: ${server.requests.find((r) => r.status !== 200)?.error?.message}`
          : null;
    return await figures(dd, runs, policy, waitMs, problem);
  } finally {
    await dd.close();
    await server.close();
  }
}

const WORKING = new Set(['queued', 'running']);

/** Run `id` once the queue has parked or ended it (a run the service has just submitted). */
async function settledRun(dd: Drydock, id: string): Promise<Run> {
  const next = dd.settled(id);
  const now = await dd.store.getRun(id);
  if (now && !WORKING.has(now.status)) return now;
  return (await next).run;
}

/** The loop, acting as the person where it waits for one; returns the plan run, the revision, the execution. */
async function drive(dd: Drydock, personWaits: () => void): Promise<Run[]> {
  const ws = join(p.dir, `workspace-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(ws, { recursive: true });
  makeWorkspace(ws);
  // The execute mode is the default, manual: each change waits for a person.
  const sessionId = await dd.createSession(ws, 30);
  const expect = (run: Run, status: string): Run => {
    if (run.status !== status) throw new Error(`${run.id} ended ${run.status} (${run.error}), not ${status}`);
    return run;
  };
  const planRun = await dd.createRun(sessionId, 'Add pagination to the list endpoints.');
  expect((await dd.submit(planRun)).run, 'awaiting_input');
  const [question] = await dd.store.listQuestions({ runId: planRun.id, status: 'pending', limit: 1 });
  if (!question) throw new Error('no pending question');
  personWaits();
  const planned = dd.settled(planRun.id);
  await dd.runs.answer(question.id, { [QUESTION]: ANSWER }, PERSON);
  const first = expect((await planned).run, 'planned');

  personWaits();
  const revised = await dd.plans.decide(first.planId!, 'revise', { identity: PERSON, comment: FEEDBACK });
  const revision = expect(await settledRun(dd, revised.run!.id), 'planned');

  personWaits();
  const approved = await dd.plans.decide(revision.planId!, 'approve', { identity: PERSON });
  let exec = await settledRun(dd, approved.run!.id);
  while (exec.status === 'awaiting_input') {
    const [pending] = await dd.store.listToolApprovals({ runId: exec.id, status: 'pending', limit: 1 });
    if (!pending) throw new Error(`${exec.id} waits, but for no tool approval`);
    personWaits();
    const resumed = dd.settled(exec.id);
    await dd.runs.decideToolApproval(pending.id, true, null, PERSON);
    exec = (await resumed).run;
  }
  expect(exec, 'completed');
  return [first, revision, exec];
}

async function figures(
  dd: Drydock,
  runs: Run[],
  policy: 'today' | 'new',
  waitMs: number,
  problem: string | null,
): Promise<LoopFigures> {
  const model = findModel({ models: {}, pricing: {} }, BENCH_MODEL);
  const turns: { usage: TokenUsage; conversation: string }[] = [];
  let receiptsUsd = 0;
  for (const run of runs) {
    const stored = (await dd.store.getRun(run.id))!;
    receiptsUsd += stored.costUsd;
    const events = await dd.store.listEvents(run.id, 0, 1_000_000);
    for (const e of events) {
      if (e.type !== 'turn_finished') continue;
      turns.push({ usage: e.data.usage as TokenUsage, conversation: stored.conversationId ?? run.id });
    }
  }
  const sum = (list: TokenUsage[], pick: (u: TokenUsage) => number) => list.reduce((n, u) => n + pick(u), 0);
  const share = (list: TokenUsage[]) => {
    const prompt = sum(list, promptTokensOf);
    return prompt > 0 ? sum(list, (u) => u.cache_read_tokens ?? 0) / prompt : 0;
  };
  const all = turns.map((x) => x.usage);
  const notFirst = turns.filter((x, i) => turns.findIndex((y) => y.conversation === x.conversation) !== i);
  return {
    policy,
    waitMinutes: waitMs / 60_000,
    turns: turns.length,
    conversations: new Set(turns.map((x) => x.conversation)).size,
    readShareAfterTurn1: share(all.slice(1)),
    readShareWithinConversations: share(notFirst.map((x) => x.usage)),
    input: sum(all, (u) => u.input_tokens ?? 0),
    cacheRead: sum(all, (u) => u.cache_read_tokens ?? 0),
    write5m: sum(all, (u) => u.cache_write_5m_tokens ?? 0),
    write1h: sum(all, (u) => u.cache_write_1h_tokens ?? 0),
    output: sum(all, (u) => u.output_tokens ?? 0),
    usd: Math.round(all.reduce((n, u) => n + costOf(u, model, promptTokensOf(u)), 0) * 1e6) / 1e6,
    receiptsUsd: Math.round(receiptsUsd * 1e6) / 1e6,
    problem,
  };
}

async function main(): Promise<void> {
  const loops: LoopFigures[] = [];
  let i = 0;
  for (const waitMs of [p.waitMinutes * 60_000, NO_WAIT_MS]) {
    for (const policy of ['today', 'new'] as const) loops.push(await loop(policy, waitMs, i++));
  }
  const report: LoopReport = { type: 'loop', model: BENCH_MODEL, loops };
  await finish(report);
}

main().catch(fail);
