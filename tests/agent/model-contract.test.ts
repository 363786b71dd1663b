import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  approveAs,
  calls,
  PLAN_MD,
  plannedJob,
  proposes,
  runUntil,
  says,
  type World,
  world,
} from '../plans/helpers.js';
import { ADMIN_TOKEN, readSse, waitFor } from '../support/daemon.js';
import { type ModelServer, type RecordedRequest, startModelServer } from '../support/model-server.js';

// drydock against the strict stand-in (tests/support/model-server.ts), which refuses what the real Messages
// API refuses for the model named in each request: the whole loop on several models, every stop reason, and
// the shape of the recorded requests (one system and one tool list per conversation, an append-only prefix,
// at most four cache breakpoints).

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

async function events(runId: string): Promise<{ event: string; data: any }[]> {
  return readSse(`${w.d.daemon.url}/v1/runs/${runId}/events`, ADMIN_TOKEN);
}

async function fire(): Promise<string> {
  const r = await w.d.api('POST', `/v1/jobs/${w.jobId}/run`);
  expect(r.status).toBe(201);
  return r.body.id;
}

const stripMarkers = (v: unknown): string =>
  JSON.stringify(v, (key, value) => (key === 'cache_control' ? undefined : value));

/** The conversation a request belongs to: its first user message. */
const conversationOf = (r: RecordedRequest) => stripMarkers(r.body.messages[0]);

/** Checks the request log of a whole loop: per conversation, fixed system and tools, append-only messages. */
function checkRequestLog(requests: RecordedRequest[]): number {
  expect(requests.map((r) => r.status)).toEqual(requests.map(() => 200));
  const byConversation = new Map<string, RecordedRequest[]>();
  for (const r of requests) {
    const list = byConversation.get(conversationOf(r)) ?? [];
    list.push(r);
    byConversation.set(conversationOf(r), list);
  }
  for (const list of byConversation.values()) {
    const first = list[0]!.body;
    for (const [i, r] of list.entries()) {
      // One system prompt and one tool list, byte for byte, for the conversation's whole life.
      expect(JSON.stringify(r.body.system)).toBe(JSON.stringify(first.system));
      expect(JSON.stringify(r.body.tools)).toBe(JSON.stringify(first.tools));
      const breakpoints = (r.rawBody.match(/"cache_control"/g) ?? []).length;
      expect(breakpoints).toBeLessThanOrEqual(4);
      expect(breakpoints).toBeGreaterThanOrEqual(2);
      if (i === 0) continue;
      // Every earlier message is sent again unchanged (cache markers aside); only new ones are added, except
      // the newest user message, which a later run may extend (a revision's feedback after the receipt).
      const prev = list[i - 1]!.body.messages as unknown[];
      const next = r.body.messages as unknown[];
      expect(next.length).toBeGreaterThan(prev.length - 1);
      expect(next.slice(0, prev.length - 1).map(stripMarkers)).toEqual(prev.slice(0, -1).map(stripMarkers));
    }
  }
  return byConversation.size;
}

// Sonnet 4.6 with a thinking budget stands in for Sonnet 4.5 (retired 2026-11-30): `enabled` with
// budget_tokens on a Sonnet that still answers and has no retirement date.
describe.each([
  ['claude-sonnet-5-5', 'adaptive'],
  ['claude-opus-5-5', 'adaptive'],
  ['claude-haiku-4-5', 'adaptive'],
  ['claude-sonnet-4-6', { budget_tokens: 2048 }],
] as const)('the whole loop on %s', (modelId, thinking) => {
  it('plans, asks, is revised, approved and executed with thinking; every request accepted', async () => {
    w = await world(model, { model: modelId, execute_mode: 'auto', thinking });
    const alice = await w.token('alice');
    model.enqueue(
      calls('r1', 'Read', { file_path: 'README.md' }),
      question('q1'),
      proposes('p1'),
      proposes('p2', `${PLAN_MD}3. Say hello twice\n`),
      calls('w1', 'Write', { file_path: 'hello.txt', content: 'hello\nhello\n' }),
      says('Wrote hello.txt.'),
    );
    const runId = await fire();
    await runUntil(w.d, runId, ['awaiting_input']);
    const q = (await w.d.api('GET', `/v1/questions?run_id=${runId}`)).body.items[0];
    const answered = await w.d.api('POST', `/v1/questions/${q.id}/answers`, {
      answers: { 'Which greeting?': 'hello' },
    });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const run = await runUntil(w.d, runId, ['planned', 'failed', 'refused']);
    expect(run.status, run.error).toBe('planned');
    const first = (await w.d.api('GET', `/v1/plans/${run.plan_id}`)).body;

    const revise = await w.d.api(
      'POST',
      `/v1/plans/${first.id}/revise`,
      { feedback: 'Twice, please.' },
      alice,
    );
    expect(revise.status).toBe(200);
    const second = await runUntil(w.d, revise.body.run.id, ['planned', 'failed']);
    expect(second.status, second.error).toBe('planned');
    const plan = (await w.d.api('GET', `/v1/plans/${second.plan_id}`)).body;
    const exec = await runUntil(w.d, (await approveAs(w.d, plan, alice)).id, [
      'completed',
      'failed',
      'refused',
    ]);
    expect(exec.status, exec.error).toBe('completed');

    // Two conversations: the plan (three turns, then the revision round) and the execution.
    expect(checkRequestLog(model.requests)).toBe(2);
    const execRequests = model.requests.slice(4);
    const opening = execRequests[0]!.body.messages[0].content[0].text as string;
    expect(opening).toContain(`<approved_plan sha256="${plan.sha256}">`);
    expect(opening).toContain(plan.markdown);
    expect(opening).toContain('Add a greeting file'); // the original task
    expect(opening).toContain('- README.md'); // read while planning
    expect(execRequests[0]!.body.system[1].text).toMatch(/EXECUTE/);
    expect(model.requests[0]!.body.system[1].text).toMatch(/PLAN MODE/);
    expect(model.requests.every((r) => r.body.model === modelId)).toBe(true);
  });
});

describe('stop reasons', () => {
  it('refusal in the plan phase: the run ends refused and proposes no plan', async () => {
    w = await world(model);
    model.enqueue({
      kind: 'message',
      content: [{ type: 'text', text: 'I cannot help with that.' }],
      stop_reason: 'refusal',
    });
    const run = await runUntil(w.d, await fire(), ['refused', 'failed', 'planned']);
    expect(run.status).toBe('refused');
    expect(run.error).toMatch(/^the model declined to continue \(stop reason refusal/);
    expect(run.plan_id).toBeNull();
    expect((await w.d.api('GET', '/v1/plans')).body.items).toEqual([]);
  });

  it('refusal while executing: the run ends refused and the plan execution_failed with the reason', async () => {
    w = await world(model, { execute_mode: 'auto' });
    model.enqueue(proposes('p1'), {
      kind: 'message',
      content: [{ type: 'text', text: 'No.' }],
      stop_reason: 'refusal',
    });
    const { plan } = await plannedJob(w.d, w.jobId);
    const exec = await runUntil(w.d, (await approveAs(w.d, plan, await w.token('alice'))).id, [
      'refused',
      'failed',
      'completed',
    ]);
    expect(exec.status).toBe('refused');
    const after = (await w.d.api('GET', `/v1/plans/${plan.id}`)).body;
    expect(after.status).toBe('execution_failed');
    expect(after.failure_reason).toMatch(/declined to continue/);
  });

  it('model_context_window_exceeded ends the run failed, never completed', async () => {
    w = await world(model, { execute_mode: 'auto' });
    model.enqueue(proposes('p1'), {
      kind: 'message',
      content: [{ type: 'text', text: 'Working' }],
      stop_reason: 'model_context_window_exceeded' as never,
    });
    const { plan } = await plannedJob(w.d, w.jobId);
    const exec = await runUntil(w.d, (await approveAs(w.d, plan, await w.token('alice'))).id, [
      'failed',
      'completed',
    ]);
    expect(exec.status).toBe('failed');
    expect(exec.error).toMatch(/filled the context window of claude-sonnet-5-5/);
    expect((await w.d.api('GET', `/v1/plans/${plan.id}`)).body.status).toBe('execution_failed');
  });

  it('max_tokens in the middle of a tool call: the call is not run, the model is told, and asked again', async () => {
    w = await world(model, { execute_mode: 'auto' });
    model.enqueue(
      proposes('p1'),
      {
        kind: 'message',
        content: [
          { type: 'tool_use', id: 'w1', name: 'Write', input: { file_path: 'big.txt', content: 'cut' } },
        ],
        stop_reason: 'max_tokens',
      },
      calls('w2', 'Write', { file_path: 'small.txt', content: 'ok' }),
      says('Done.'),
    );
    const { plan } = await plannedJob(w.d, w.jobId);
    const execId = (await approveAs(w.d, plan, await w.token('alice'))).id;
    const exec = await runUntil(w.d, execId, ['failed', 'completed']);
    expect(exec.status, exec.error).toBe('completed');
    expect(exec.changed_files).toEqual(['small.txt']);
    const told = model.requests[2]!.body.messages.at(-1).content[0];
    expect(told).toMatchObject({ type: 'tool_result', tool_use_id: 'w1', is_error: true });
    expect(told.content).toMatch(/^Not executed: your reply reached the output limit/);
    const log = await events(execId);
    expect(log.filter((e) => e.event === 'tool_call_cut_off').map((e) => e.data.tool_use_id)).toEqual(['w1']);
    expect(log.filter((e) => e.event === 'tool_use').map((e) => e.data.tool_use_id)).toEqual(['w2']);
  });

  it('a plan-phase run cut off at max_tokens three times in a row fails with the reason', async () => {
    w = await world(model);
    const cut = {
      kind: 'message' as const,
      content: [{ type: 'text' as const, text: 'Long…' }],
      stop_reason: 'max_tokens' as const,
    };
    model.enqueue(cut, cut, cut);
    const run = await runUntil(w.d, await fire(), ['failed', 'planned']);
    expect(run.status).toBe('failed');
    expect(run.error).toBe("the model's replies were cut off at max_tokens (32000) 3 times in a row");
    expect(model.requests).toHaveLength(3);
    expect(model.requests[1]!.body.messages.at(-1).content[0].text).toMatch(/reached the output limit/);
  });

  it('pause_turn: the conversation is resent as it is and the reply continues the same message', async () => {
    w = await world(model);
    model.enqueue(
      {
        kind: 'message',
        content: [{ type: 'text', text: 'Looking around first.' }],
        stop_reason: 'pause_turn',
      },
      proposes('p1'),
    );
    const run = await runUntil(w.d, await fire(), ['planned', 'failed']);
    expect(run.status, run.error).toBe('planned');
    const [first, second] = model.requests;
    // Resent as is: the paused reply is the last message, nothing added after it.
    expect(second!.body.messages).toHaveLength(first!.body.messages.length + 1);
    expect(second!.body.messages.at(-1).role).toBe('assistant');
    expect(JSON.stringify(second!.body.messages.at(-1))).toContain('Looking around first.');
  });

  it('pauses apart from each other never add up to a failure', async () => {
    w = await world(model, {}, undefined);
    for (let i = 0; i < 6; i++) {
      model.enqueue(
        { kind: 'message', content: [{ type: 'text', text: `Pausing ${i}.` }], stop_reason: 'pause_turn' },
        calls(`g${i}`, 'Glob', { pattern: '*' }),
      );
    }
    model.enqueue(proposes('p1'));
    const run = await runUntil(w.d, await fire(), ['planned', 'failed']);
    expect(run.status, run.error).toBe('planned');
    expect(model.requests.every((r) => r.status === 200)).toBe(true);
  });

  it('a reply cut off inside its thinking: the unsigned block is not sent back, the run goes on', async () => {
    w = await world(model);
    model.enqueue(
      {
        kind: 'message',
        content: [{ type: 'thinking', thinking: 'I was thinking about', signature: '' }],
        stop_reason: 'max_tokens',
      },
      proposes('p1'),
    );
    const run = await runUntil(w.d, await fire(), ['planned', 'failed']);
    expect(run.status, run.error).toBe('planned');
    const resent = model.requests[1]!.body.messages.at(-2);
    expect(resent).toMatchObject({
      role: 'assistant',
      content: [{ type: 'text', text: '(reply cut off at max_tokens)' }],
    });
    expect(model.requests.map((r) => r.status)).toEqual([200, 200]);
  });

  it('an unknown stop reason fails the run and runs nothing of the reply', async () => {
    w = await world(model);
    model.enqueue({
      kind: 'message',
      content: [{ type: 'tool_use', id: 'g', name: 'Glob', input: { pattern: '*' } }],
      stop_reason: 'something_new' as never,
    });
    const runId = await fire();
    const run = await runUntil(w.d, runId, ['failed', 'planned']);
    expect(run.error).toMatch(/stop reason this version of drydock does not know \(something_new\)/);
    expect((await events(runId)).some((e) => e.event === 'tool_use')).toBe(false);
  });
});

describe('tool inputs as Claude Code sends them', () => {
  it('ExitPlanMode without a plan takes the plan from the text of that turn', async () => {
    // On claude-sonnet-5: text written before a tool call stays text (the 5.5 models return it as thinking).
    w = await world(model, { model: 'claude-sonnet-5' });
    model.enqueue({
      kind: 'message',
      content: [
        { type: 'text', text: '## Plan\n\n1. Write hello.txt' },
        { type: 'tool_use', id: 'p1', name: 'ExitPlanMode', input: { allowedPrompts: [] } },
      ],
    });
    const run = await runUntil(w.d, await fire(), ['planned', 'failed']);
    expect(run.status, run.error).toBe('planned');
    const plan = (await w.d.api('GET', `/v1/plans/${run.plan_id}`)).body;
    expect(plan.markdown).toBe('## Plan\n\n1. Write hello.txt');
    const proposed = (await events(run.id)).find((e) => e.event === 'plan_proposed')!.data;
    expect(proposed.plan_source).toBe('text');
  });

  it('ExitPlanMode without a plan on claude-sonnet-5-5 takes the plan from the thinking its text came back as', async () => {
    w = await world(model);
    model.enqueue({
      kind: 'message',
      content: [
        { type: 'text', text: '## Plan\n\n1. Write hello.txt' },
        { type: 'tool_use', id: 'p1', name: 'ExitPlanMode', input: {} },
      ],
    });
    const runId = await fire();
    const run = await runUntil(w.d, runId, ['planned', 'failed']);
    expect(run.status, run.error).toBe('planned');
    // The stand-in returned the text as a thinking block after the turn's reasoning; no text block came.
    const log = await events(runId);
    const streamed = (type: string) =>
      log
        .filter((e) => e.event === type)
        .map((e) => e.data.text)
        .join('');
    expect(streamed('thinking_delta')).toContain('## Plan');
    expect(streamed('text_delta')).not.toContain('## Plan');
    expect(model.requests).toHaveLength(1);
    expect((await w.d.api('GET', `/v1/plans/${run.plan_id}`)).body.markdown).toBe(
      '## Plan\n\n1. Write hello.txt',
    );
    expect(log.find((e) => e.event === 'plan_proposed')!.data.plan_source).toBe('thinking');
  });

  it('a Bash call to run in the background is refused without asking anyone', async () => {
    w = await world(model, { execute_mode: 'manual' });
    model.enqueue(
      proposes('p1'),
      calls('b1', 'Bash', { command: 'sleep 100', run_in_background: true }),
      says('Could not run it in the background.'),
    );
    const { plan } = await plannedJob(w.d, w.jobId);
    const exec = await runUntil(w.d, (await approveAs(w.d, plan, await w.token('alice'))).id, [
      'completed',
      'failed',
      'awaiting_input',
    ]);
    expect(exec.status, exec.error).toBe('completed');
    expect((await w.d.api('GET', '/v1/tool-approvals')).body.items).toEqual([]);
    const result = model.requests[2]!.body.messages.at(-1).content[0];
    expect(result).toMatchObject({ type: 'tool_result', tool_use_id: 'b1', is_error: true });
    expect(result.content).toMatch(/background/i);
  });
});

describe('settings in the request', () => {
  it('the run_started event says what was sent and why it differs from what was asked', async () => {
    w = await world(model, { model: 'claude-opus-5-5', thinking: 'off' });
    model.enqueue(proposes('p1'));
    const runId = await fire();
    await runUntil(w.d, runId, ['planned', 'failed']);
    expect(model.requests[0]!.body.thinking).toEqual({ type: 'adaptive', display: 'summarized' });
    expect(model.requests[0]!.body.output_config).toEqual({ effort: 'low' });
    const started = (await events(runId)).find((e) => e.event === 'run_started')!.data;
    expect(started.notes).toEqual([
      'claude-opus-5-5 always thinks; thinking "off" runs adaptive thinking at low effort',
    ]);
    await waitFor(
      async () => (await w.d.api('GET', `/v1/runs/${runId}`)).body.status === 'planned' || undefined,
      5000,
      'planned',
    );
  });

  it('a session naming a retired model is refused with the replacement', async () => {
    w = await world(model);
    const r = await w.d.api('POST', '/v1/sessions', {
      workspace: w.repo,
      defaults: { model: 'claude-opus-4-1' },
    });
    expect(r.status).toBe(422);
    expect(r.body.error.message).toBe(
      'claude-opus-4-1 retired on 2026-08-05 and no longer answers; use claude-opus-5-5 (docs/models.md)',
    );
  });
});
