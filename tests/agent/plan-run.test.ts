import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, readSse, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { makeRepo } from '../support/git-repo.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';

let model: ModelServer;
let d: TestDaemon;
let repo: string;
let head: string;

beforeEach(async () => {
  model = await startModelServer();
  d = await startTestDaemon({ modelUrl: model.url });
  repo = join(d.dir, 'repo');
  head = makeRepo(repo, {
    'README.md': '# demo\n',
    'src/users.ts': 'export function listUsers() {\n  return db.query("select * from users");\n}\n',
    'src/orders.ts': 'export function listOrders() {\n  return db.query("select * from orders");\n}\n',
  });
});
afterEach(async () => {
  await d.stop();
  await model.close();
});

const PLAN =
  '## Add pagination\n\n1. Add `limit`/`offset` to `listUsers` in src/users.ts\n2. Same for src/orders.ts\n';

async function sessionAndJob(
  defaults: Record<string, unknown> = {},
): Promise<{ sessionId: string; jobId: string }> {
  const s = await d.api('POST', '/v1/sessions', { workspace: repo, defaults });
  expect(s.status).toBe(201);
  const j = await d.api('POST', `/v1/sessions/${s.body.id}/jobs`, {
    cron: '0 9 * * *',
    prompt: 'Add pagination to the list endpoints',
  });
  expect(j.status).toBe(201);
  return { sessionId: s.body.id, jobId: j.body.id };
}

describe('a full plan run on a real git repository', () => {
  it('explores, asks, answers over HTTP, proposes a plan; events over SSE; receipt', async () => {
    model.enqueue(
      {
        kind: 'message',
        content: [
          { type: 'text', text: 'Looking at the route files first.' },
          { type: 'tool_use', id: 'toolu_glob', name: 'Glob', input: { pattern: 'src/**/*.ts' } },
        ],
        usage: {
          input_tokens: 1200,
          output_tokens: 40,
          cache_creation_input_tokens: 900,
          cache_read_input_tokens: 0,
        },
      },
      {
        kind: 'message',
        content: [
          { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'src/users.ts' } },
          {
            type: 'tool_use',
            id: 'toolu_grep',
            name: 'Grep',
            input: { pattern: 'db\\.query', output_mode: 'content' },
          },
        ],
        usage: {
          input_tokens: 300,
          output_tokens: 60,
          cache_read_input_tokens: 900,
          cache_creation_input_tokens: 0,
        },
      },
      {
        kind: 'message',
        content: [
          {
            type: 'tool_use',
            id: 'toolu_ask',
            name: 'AskUserQuestion',
            input: {
              questions: [
                {
                  question: 'Which pagination style?',
                  header: 'Pagination style',
                  multiSelect: false,
                  options: [
                    { label: 'Offset', description: 'limit and offset' },
                    { label: 'Cursor', description: 'opaque cursor' },
                  ],
                },
              ],
            },
          },
        ],
        usage: {
          input_tokens: 500,
          output_tokens: 80,
          cache_read_input_tokens: 900,
          cache_creation_input_tokens: 0,
        },
      },
      {
        kind: 'message',
        content: [
          { type: 'text', text: 'Here is the plan.' },
          { type: 'tool_use', id: 'toolu_plan', name: 'ExitPlanMode', input: { plan: PLAN } },
        ],
        usage: {
          input_tokens: 200,
          output_tokens: 120,
          cache_read_input_tokens: 900,
          cache_creation_input_tokens: 0,
        },
      },
    );
    const { jobId } = await sessionAndJob();
    const fired = await d.api('POST', `/v1/jobs/${jobId}/run`);
    expect(fired.status).toBe(201);
    const runId = fired.body.id;

    // The run parks on its question.
    const question = await waitFor(
      async () => {
        const q = await d.api('GET', '/v1/questions?status=pending');
        return q.body.items[0];
      },
      10_000,
      'a pending question',
    );
    expect(question).toMatchObject({ run_id: runId, status: 'pending' });
    expect(question.questions[0].question).toBe('Which pagination style?');
    // A header over 12 characters is taken from the model and stored whole (it is cut only where shown).
    expect(question.questions[0].header).toBe('Pagination style');
    expect((await d.api('GET', `/v1/runs/${runId}`)).body.status).toBe('awaiting_input');

    // An answer to a question that was not asked, or a blank one, is refused; a right one resumes the run.
    // (Text that is none of the labels is a person's own answer, "Other", and would be taken.)
    const wrong = await d.api('POST', `/v1/questions/${question.id}/answers`, {
      answers: { 'Which pagination style?': 'Offset', 'Which colour?': 'Red' },
    });
    expect(wrong.status).toBe(422);
    const blank = await d.api('POST', `/v1/questions/${question.id}/answers`, {
      answers: { 'Which pagination style?': '  ' },
    });
    expect(blank.status).toBe(422);
    const ok = await d.api('POST', `/v1/questions/${question.id}/answers`, {
      answers: { 'Which pagination style?': 'Keyset, on created_at' },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'answered', answered_by: 'admin' });
    const again = await d.api('POST', `/v1/questions/${question.id}/answers`, {
      answers: { 'Which pagination style?': 'Cursor' },
    });
    expect(again.status).toBe(409);

    const run = await waitFor(
      async () => {
        const r = await d.api('GET', `/v1/runs/${runId}`);
        return r.body.status === 'planned' ? r.body : undefined;
      },
      10_000,
      'the run to be planned',
    );

    // Receipt: turns, tokens by kind, cost from the catalogue (claude-sonnet-5-5: 2 / 10 / 2.50 / 4 / 0.10).
    expect(run.turns).toBe(4);
    expect(run.usage).toEqual({
      input_tokens: 2200,
      output_tokens: 300,
      cache_write_5m_tokens: 900,
      cache_write_1h_tokens: 0,
      cache_read_tokens: 2700,
    });
    const expected = (2200 * 2 + 300 * 10 + 900 * 2.5 + 2700 * 0.1) / 1e6;
    expect(run.cost_usd).toBeCloseTo(expected, 6);
    expect(run.model).toBe('claude-sonnet-5-5');

    // The plan record: markdown, sha256, the repository's commit, pending approval.
    const plan = await d.api('GET', `/v1/plans/${run.plan_id}`);
    expect(plan.body).toMatchObject({
      status: 'pending_approval',
      markdown: PLAN,
      sha256: createHash('sha256').update(PLAN).digest('hex'),
      workspace_commit: head,
      run_id: runId,
      round: 1,
    });

    // What the model saw: the tool results, with line numbers, matches, and the answer.
    const last = model.requests.at(-1)!.body;
    const results = last.messages
      .flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
      .filter((b: any) => b.type === 'tool_result');
    const byId = Object.fromEntries(results.map((r: any) => [r.tool_use_id, r]));
    expect(byId.toolu_glob.content).toContain('src/users.ts');
    expect(byId.toolu_read.content).toMatch(/1\texport function listUsers/);
    expect(byId.toolu_grep.content).toContain('src/orders.ts');
    // The person's own answer ("Other") reaches the model as the answer.
    expect(byId.toolu_ask.content).toContain('- Which pagination style? => Keyset, on created_at');
    expect(byId.toolu_ask.is_error).toBeUndefined();
    // Plan mode in the request shape: only the plan tools are offered.
    expect(last.tools.map((t: any) => t.name)).toEqual([
      'Read',
      'Glob',
      'Grep',
      'AskUserQuestion',
      'ExitPlanMode',
    ]);
    expect(last.thinking).toEqual({ type: 'adaptive', display: 'summarized' });

    // The event log over SSE, replayed after the fact, ends with the receipt.
    const events = await readSse(`${d.daemon.url}/v1/runs/${runId}/events`, ADMIN_TOKEN);
    const types = events.map((e) => e.event);
    expect(types[0]).toBe('run_started');
    expect(types.at(-1)).toBe('run_finished');
    for (const t of [
      'thinking_delta',
      'tool_use',
      'tool_result',
      'question_request',
      'question_resolved',
      'plan_proposed',
      'run_resumed',
    ]) {
      expect(types).toContain(t);
    }
    expect(events.map((e) => Number(e.id))).toEqual(events.map((_, i) => i + 1));
    const finished = events.at(-1)!.data;
    expect(finished).toMatchObject({ status: 'planned', turns: 4, plan_id: run.plan_id });
    expect(finished.cost_usd).toBeCloseTo(expected, 6);
    expect(typeof finished.duration_ms).toBe('number');
    // On claude-sonnet-5-5 a note written before a tool call comes back as a thinking block, shown because
    // drydock asks for summarized display.
    const text = events
      .filter((e) => e.event === 'thinking_delta')
      .map((e) => e.data.text)
      .join('');
    expect(text).toContain('Looking at the route files first.');

    // Resuming from Last-Event-ID replays only what came after.
    const tail = await readSse(
      `${d.daemon.url}/v1/runs/${runId}/events`,
      ADMIN_TOKEN,
      String(events.length - 2),
    );
    expect(tail.map((e) => Number(e.id))).toEqual([events.length - 1, events.length]);
  });

  it('streams events live while the run is in progress and closes when it ends', async () => {
    model.enqueue(
      {
        kind: 'message',
        content: [
          { type: 'text', text: 'thinking about it' },
          { type: 'tool_use', id: 't1', name: 'Glob', input: { pattern: '*' } },
        ],
        chunkDelayMs: 30,
      },
      {
        kind: 'message',
        content: [{ type: 'tool_use', id: 't2', name: 'ExitPlanMode', input: { plan: PLAN } }],
        delayMs: 300,
      },
    );
    const { jobId } = await sessionAndJob();
    const runId = (await d.api('POST', `/v1/jobs/${jobId}/run`)).body.id;
    const started = Date.now();
    const events = await readSse(`${d.daemon.url}/v1/runs/${runId}/events`, ADMIN_TOKEN);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(events.at(-1)!.event).toBe('run_finished');
    expect(events.at(-1)!.data.status).toBe('planned');
  });
});
