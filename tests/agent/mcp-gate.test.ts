import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inputDigest } from '../../src/agent/execute-phase.js';
import { type Config, configSchema } from '../../src/config/schema.js';
import {
  calls,
  pendingApproval,
  planned,
  proposes,
  runUntil,
  says,
  type World,
  world,
} from '../plans/helpers.js';
import { ADMIN_TOKEN, readSse, waitFor } from '../support/daemon.js';
import { type NotesServer, startNotesServer } from '../support/mcp-notes.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';

// The gate for MCP calls (README, MCP servers in runs), proven from the server's side: a real MCP server (the
// official SDK's, over streamable HTTP on loopback) records every call it receives. Plan mode runs only the
// tools the configuration names read-only and refuses the rest without reaching the server; the execute phase
// runs a call on its own only where the mode and the configuration say so, and otherwise after a person
// allowed that exact input, once.

let model: ModelServer;
let notes: NotesServer;
let w: World;
beforeEach(async () => {
  model = await startModelServer();
  notes = await startNotesServer();
});
afterEach(async () => {
  await w?.d.stop();
  await notes.close();
  await model.close();
});

/** The notes server as `notes` under mcp.servers, with `more` of its settings. */
const withNotes =
  (more: Record<string, unknown>) =>
  (c: Config): void => {
    c.mcp = configSchema.parse({ mcp: { servers: { notes: { url: notes.url, ...more } } } }).mcp;
  };

const toolNames = (request: { body: { tools: { name: string }[] } }): string[] =>
  request.body.tools.map((t) => t.name);

/** The tool_result the model got for `id`, from the newest request that carries it. */
function resultFor(id: string): { content: string; is_error?: boolean } {
  for (const r of [...model.requests].reverse()) {
    for (const m of r.body.messages) {
      if (m.role !== 'user' || !Array.isArray(m.content)) continue;
      const hit = m.content.find((b: any) => b.type === 'tool_result' && b.tool_use_id === id);
      if (hit) return hit;
    }
  }
  throw new Error(`no tool_result for ${id}`);
}

async function eventsOf(runId: string) {
  return readSse(`${w.d.daemon.url}/v1/runs/${runId}/events`, ADMIN_TOKEN);
}

describe('plan mode', () => {
  it('offers and runs only plan_tools; a call to another MCP tool is a policy violation that never reaches the server', async () => {
    w = await world(model, { mcp: ['notes'] }, withNotes({ plan_tools: ['list_notes'] }));
    model.enqueue(
      calls('l1', 'mcp__notes__list_notes', {}),
      calls('a1', 'mcp__notes__add_note', { text: 'sneaky' }),
      calls('d1', 'mcp__notes__delete_notes', {}),
      proposes('p1'),
    );
    const { runId, plan } = await planned(w);

    // The request listed the plan tool only, after drydock's own.
    const names = toolNames(model.requests[0]!);
    expect(names.slice(-1)).toEqual(['mcp__notes__list_notes']);
    expect(names).not.toContain('mcp__notes__add_note');
    expect(names).not.toContain('mcp__notes__delete_notes');

    // The server received the read, and nothing else.
    expect(notes.calls).toEqual([{ tool: 'list_notes', input: {} }]);
    expect(notes.notes).toEqual([]);
    expect(resultFor('l1').is_error).toBeUndefined();
    expect(resultFor('l1').content).toContain('(no notes)');
    expect(resultFor('a1')).toMatchObject({ is_error: true });
    expect(resultFor('d1')).toMatchObject({ is_error: true });

    const events = await eventsOf(runId);
    const violations = events.filter((e) => e.event === 'policy_violation').map((e) => e.data);
    expect(violations).toEqual([
      expect.objectContaining({ tool: 'mcp__notes__add_note', tool_use_id: 'a1', phase: 'plan' }),
      expect.objectContaining({ tool: 'mcp__notes__delete_notes', tool_use_id: 'd1', phase: 'plan' }),
    ]);

    // The plan's context lists the MCP calls beside the files read: server, tool, input summary.
    expect(plan.context.mcp_calls).toEqual([
      { server: 'notes', tool: 'list_notes', input: '{}', round: 1, calls: 1, errors: 0 },
      { server: 'notes', tool: 'add_note', input: '{"text":"sneaky"}', round: 1, calls: 1, errors: 1 },
      { server: 'notes', tool: 'delete_notes', input: '{}', round: 1, calls: 1, errors: 1 },
    ]);
  });

  it("a server's readOnlyHint counts only with trust_annotations", async () => {
    w = await world(model, { mcp: ['notes'] }, withNotes({ trust_annotations: false }));
    model.enqueue(proposes('p1'));
    await planned(w);
    expect(toolNames(model.requests[0]!).filter((n) => n.startsWith('mcp__'))).toEqual([]);
    await w.d.stop();

    w = await world(model, { mcp: ['notes'] }, withNotes({ trust_annotations: true }));
    model.enqueue(proposes('p1'));
    await planned(w);
    expect(toolNames(model.requests.at(-1)!).filter((n) => n.startsWith('mcp__'))).toEqual([
      'mcp__notes__list_notes',
    ]);
    expect(notes.calls).toEqual([]);
  });
});

describe('a conversation that parks and resumes', () => {
  it('closes the servers while parked; resumed, it keeps its tool list, and a tool no longer served is an error result', async () => {
    w = await world(model, { mcp: ['notes'] }, withNotes({ plan_tools: ['list_notes', 'add_note'] }));
    const question = 'Which notes matter?';
    model.enqueue(
      calls('l1', 'mcp__notes__list_notes', {}),
      calls('q1', 'AskUserQuestion', {
        questions: [
          {
            question,
            header: 'Notes',
            multiSelect: false,
            options: [
              { label: 'All', description: 'every note' },
              { label: 'None', description: 'no note' },
            ],
          },
        ],
      }),
      calls('l2', 'mcp__notes__list_notes', {}),
      proposes('p1'),
    );
    const fired = await w.d.api('POST', `/v1/jobs/${w.jobId}/run`);
    const parked = await waitFor(
      async () => (await w.d.api('GET', '/v1/questions?status=pending')).body.items[0],
      10_000,
      'the question',
    );
    await runUntil(w.d, fired.body.id, ['awaiting_input']);
    // Parked for a person: the run's MCP session is closed.
    await waitFor(async () => notes.openSessions() === 0 || undefined, 10_000, 'the MCP session to close');
    expect(notes.calls).toEqual([{ tool: 'list_notes', input: {} }]);

    // The server stops serving list_notes before the run resumes.
    notes.gone.add('list_notes');
    const before = model.requests.at(-1)!.body.tools;
    const answered = await w.d.api('POST', `/v1/questions/${parked.id}/answers`, {
      answers: { [question]: 'All' },
    });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const run = await runUntil(w.d, fired.body.id, ['planned', 'failed']);
    expect(run.status, run.error).toBe('planned');

    // The resumed conversation sent the tools it started with, list_notes included.
    for (const r of model.requests) expect(r.body.tools).toEqual(before);
    expect(toolNames(model.requests[0]!).filter((n) => n.startsWith('mcp__'))).toEqual([
      'mcp__notes__add_note',
      'mcp__notes__list_notes',
    ]);
    // Its call answered with an error; the server saw no second call.
    expect(resultFor('l2')).toMatchObject({ is_error: true });
    expect(resultFor('l2').content).toContain('no longer serves the tool list_notes');
    expect(notes.calls).toEqual([{ tool: 'list_notes', input: {} }]);
    await waitFor(async () => notes.openSessions() === 0 || undefined, 10_000, 'the MCP session to close');
  });
});

describe('the execute phase', () => {
  it('manual: an MCP call waits as a tool approval showing server, tool and input; allowed, it runs once', async () => {
    w = await world(model, { mcp: ['notes'], execute_mode: 'manual' }, withNotes({}));
    const alice = await w.token('alice');
    model.enqueue(proposes('p1'), calls('a1', 'mcp__notes__add_note', { text: 'hello' }), says('done'));
    const { plan } = await planned(w);
    const approve = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, alice);
    expect(approve.status, JSON.stringify(approve.body)).toBe(200);
    const exec = approve.body.run;

    const pending = await pendingApproval(w.d, (a) => a.run_id === exec.id);
    expect(pending).toMatchObject({
      tool: 'mcp__notes__add_note',
      mcp: { server: 'notes', tool: 'add_note' },
      input: { text: 'hello' },
    });
    // The execute phase lists every tool of the server.
    const execRequest = model.requests.find((r) =>
      r.body.messages[0]?.content?.some?.((b: any) => /approved/.test(b.text ?? '')),
    )!;
    expect(toolNames(execRequest).filter((n) => n.startsWith('mcp__'))).toEqual([
      'mcp__notes__add_note',
      'mcp__notes__delete_notes',
      'mcp__notes__list_notes',
    ]);
    await runUntil(w.d, exec.id, ['awaiting_input']);
    expect(notes.calls).toEqual([]);

    const decided = await w.d.api('POST', `/v1/tool-approvals/${pending.id}`, { decision: 'allow' }, alice);
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    const done = await runUntil(w.d, exec.id, ['completed', 'failed']);
    expect(done.status, done.error).toBe('completed');
    expect(notes.calls).toEqual([{ tool: 'add_note', input: { text: 'hello' } }]);
    expect(resultFor('a1').content).toContain('noted: hello');

    const events = await eventsOf(exec.id);
    const request = events.find((e) => e.event === 'tool_approval_request')!.data;
    expect(request).toMatchObject({
      tool: 'mcp__notes__add_note',
      mcp: { server: 'notes', tool: 'add_note' },
    });
  });

  it('an allowed call found journaled by an earlier attempt is not called again', async () => {
    w = await world(model, { mcp: ['notes'], execute_mode: 'manual' }, withNotes({}));
    const alice = await w.token('alice');
    model.enqueue(proposes('p1'), calls('a1', 'mcp__notes__add_note', { text: 'once' }), says('done'));
    const { plan } = await planned(w);
    const exec = (await w.d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, alice)).body
      .run;
    const pending = await pendingApproval(w.d, (a) => a.run_id === exec.id);
    await runUntil(w.d, exec.id, ['awaiting_input']);
    // What an attempt that died inside the call leaves: the call journaled as started, with no result.
    const started = await w.d.daemon.store.startToolCall({
      runId: exec.id,
      toolUseId: 'a1',
      tool: 'mcp__notes__add_note',
      inputSha256: inputDigest({ text: 'once' }),
      startedAt: Date.now(),
    });
    expect(started.started).toBe(true);
    await w.d.api('POST', `/v1/tool-approvals/${pending.id}`, { decision: 'allow' }, alice);
    const done = await runUntil(w.d, exec.id, ['completed', 'failed']);
    expect(done.status, done.error).toBe('completed');
    expect(notes.calls).toEqual([]);
    expect(resultFor('a1')).toMatchObject({ is_error: true });
    const events = await eventsOf(exec.id);
    expect(events.filter((e) => e.event === 'tool_interrupted').map((e) => e.data)).toEqual([
      expect.objectContaining({ tool: 'mcp__notes__add_note', tool_use_id: 'a1' }),
    ]);
  });

  it('auto: a tool under auto_tools runs unasked; another waits, and denied, never reaches the server', async () => {
    w = await world(model, { mcp: ['notes'], execute_mode: 'auto' }, withNotes({ auto_tools: ['add_note'] }));
    const alice = await w.token('alice');
    model.enqueue(
      proposes('p1'),
      calls('a1', 'mcp__notes__add_note', { text: 'one' }),
      calls('d1', 'mcp__notes__delete_notes', {}),
      says('done'),
    );
    const { plan } = await planned(w);
    const approve = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, alice);
    const exec = approve.body.run;
    const pending = await pendingApproval(w.d, (a) => a.run_id === exec.id);
    expect(pending).toMatchObject({
      tool: 'mcp__notes__delete_notes',
      mcp: { server: 'notes', tool: 'delete_notes' },
    });
    expect(notes.calls).toEqual([{ tool: 'add_note', input: { text: 'one' } }]);

    await w.d.api(
      'POST',
      `/v1/tool-approvals/${pending.id}`,
      { decision: 'deny', message: 'keep them' },
      alice,
    );
    const done = await runUntil(w.d, exec.id, ['completed', 'failed']);
    expect(done.status, done.error).toBe('completed');
    expect(notes.calls).toEqual([{ tool: 'add_note', input: { text: 'one' } }]);
    expect(notes.notes).toEqual(['one']);
    expect(resultFor('d1')).toMatchObject({ is_error: true });
    expect(resultFor('d1').content).toContain('keep them');
  });

  it("edits: a trusted server's destructiveHint: false tool runs like Write; a destructive one waits", async () => {
    w = await world(model, { mcp: ['notes'], execute_mode: 'edits' }, withNotes({ trust_annotations: true }));
    const alice = await w.token('alice');
    model.enqueue(
      proposes('p1'),
      calls('a1', 'mcp__notes__add_note', { text: 'kept' }),
      calls('d1', 'mcp__notes__delete_notes', {}),
      says('done'),
    );
    const { plan } = await planned(w);
    const exec = (await w.d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, alice)).body
      .run;
    const pending = await pendingApproval(w.d, (a) => a.run_id === exec.id);
    expect(pending.tool).toBe('mcp__notes__delete_notes');
    expect(notes.calls).toEqual([{ tool: 'add_note', input: { text: 'kept' } }]);
    await w.d.api('POST', `/v1/tool-approvals/${pending.id}`, { decision: 'allow' }, alice);
    const done = await runUntil(w.d, exec.id, ['completed', 'failed']);
    expect(done.status, done.error).toBe('completed');
    expect(notes.calls.map((c) => c.tool)).toEqual(['add_note', 'delete_notes']);
  });

  it('edits without trust_annotations: the same tool waits for a person', async () => {
    w = await world(model, { mcp: ['notes'], execute_mode: 'edits' }, withNotes({}));
    const alice = await w.token('alice');
    model.enqueue(proposes('p1'), calls('a1', 'mcp__notes__add_note', { text: 'x' }), says('done'));
    const { plan } = await planned(w);
    const exec = (await w.d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, alice)).body
      .run;
    const pending = await pendingApproval(w.d, (a) => a.run_id === exec.id);
    expect(pending.tool).toBe('mcp__notes__add_note');
    await runUntil(w.d, exec.id, ['awaiting_input']);
    expect(notes.calls).toEqual([]);
  });
});

describe('a server that does not start', () => {
  it('fails the run with the tail of its stderr; the daemon goes on', async () => {
    const script =
      'process.stderr.write("cannot reach the database at db.internal:5432\\n"); process.exit(3)';
    w = await world(model, { mcp: ['broken'] }, (c) => {
      c.mcp = configSchema.parse({
        mcp: { servers: { broken: { command: process.execPath, args: ['-e', script] } } },
      }).mcp;
    });
    const fired = await w.d.api('POST', `/v1/jobs/${w.jobId}/run`);
    const run = await runUntil(w.d, fired.body.id, ['failed', 'planned']);
    expect(run.status).toBe('failed');
    expect(run.error).toContain('broken');
    expect(run.error).toContain('cannot reach the database at db.internal:5432');
    expect(model.requests).toEqual([]);
    const events = await eventsOf(run.id);
    const failed = events.find((e) => e.event === 'mcp_server_failed')!.data;
    expect(failed).toMatchObject({ server: 'broken' });
    expect(failed.stderr_tail).toContain('cannot reach the database');
    expect((await w.d.api('GET', '/healthz')).status).toBe(200);
  });
});
