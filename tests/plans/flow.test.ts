import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, readSse } from '../support/daemon.js';
import { git } from '../support/git-repo.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import {
  calls,
  jobIn,
  PLAN_MD,
  pendingApproval,
  planned,
  plannedJob,
  proposes,
  runUntil,
  says,
  type World,
  world,
} from './helpers.js';

let model: ModelServer;
let w: World;
beforeEach(async () => {
  model = await startModelServer();
});
afterEach(async () => {
  await w?.d.stop();
  await model.close();
});

describe('the whole loop on a real git repository', () => {
  it('a job fires, the plan is revised once, approved, executed in a worktree and committed', async () => {
    w = await world(model, { execute_mode: 'auto' });
    const alice = await w.token('alice');
    const revised = `${PLAN_MD}3. Mention the date in the greeting\n`;
    model.enqueue(
      proposes('p1'),
      // Revision round: continues the same conversation.
      proposes('p2', revised),
      // Execute phase: write a file, run an allow-listed command, finish.
      calls('w1', 'Write', { file_path: 'hello.txt', content: 'hello, world\n' }),
      calls('b1', 'Bash', { command: 'git status --short' }),
      says('Created hello.txt and checked git status.'),
    );

    const first = await planned(w);
    expect(first.plan).toMatchObject({
      round: 1,
      status: 'pending_approval',
      workspace_commit: w.head,
      approvals_required: 1,
    });

    const revise = await w.d.api(
      'POST',
      `/v1/plans/${first.plan.id}/revise`,
      { feedback: 'Also mention the date.' },
      alice,
    );
    expect(revise.status).toBe(200);
    expect(revise.body.plan.status).toBe('revision_requested');
    const roundTwoRun = await runUntil(w.d, revise.body.run.id, ['planned', 'failed']);
    expect(roundTwoRun.status).toBe('planned');
    const second = (await w.d.api('GET', `/v1/plans/${roundTwoRun.plan_id}`)).body;
    expect(second).toMatchObject({ round: 2, previous_plan_id: first.plan.id, markdown: revised });
    // The revision continued the conversation: the feedback reached the model after the plan receipt.
    const reviseRequest = model.requests[1]!.body;
    const lastUser = reviseRequest.messages.at(-1);
    expect(lastUser.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'p1' });
    expect(lastUser.content[1].text).toContain('Also mention the date.');

    const approve = await w.d.api('POST', `/v1/plans/${second.id}/approve`, { sha256: second.sha256 }, alice);
    expect(approve.status).toBe(200);
    expect(approve.body.plan.status).toBe('approved');
    const exec = await runUntil(w.d, approve.body.run.id, ['completed', 'failed']);
    expect(exec.status, exec.error).toBe('completed');
    expect(exec.execute_mode).toBe('auto');

    const plan = (await w.d.api('GET', `/v1/plans/${second.id}`)).body;
    expect(plan.status).toBe('executed');
    expect(plan.decisions.map((d: any) => [d.kind, d.identity, d.sha256])).toEqual([
      ['approve', 'alice', second.sha256],
    ]);

    // The commit is on drydock/<plan id>, references the plan, and the person's checkout is untouched.
    const branch = `drydock/${second.id}`;
    expect(git(w.repo, 'rev-parse', branch)).toBe(exec.result_commit);
    expect(git(w.repo, 'log', '-1', '--format=%B', branch)).toContain(`Drydock-Plan: ${second.id}`);
    expect(git(w.repo, 'show', `${branch}:hello.txt`)).toBe('hello, world');
    expect(existsSync(join(w.repo, 'hello.txt'))).toBe(false);
    expect(git(w.repo, 'rev-parse', 'HEAD')).toBe(w.head);
    expect(exec.changed_files).toEqual(['hello.txt']);
    expect(exec.diff_stat).toMatch(/hello\.txt \| 1 \+/);

    // The allow-listed command ran without asking anyone, in the worktree.
    const bashResult = model.requests.at(-1)!.body.messages.at(-1).content[0];
    expect(bashResult).toMatchObject({ tool_use_id: 'b1' });
    expect(bashResult.content).toContain('?? hello.txt');
    const pending = await w.d.api('GET', '/v1/tool-approvals?status=pending');
    expect(pending.body.items).toEqual([]);

    // The execute phase offered the execute tools, not ExitPlanMode.
    const execRequest = model.requests[2]!.body;
    expect(execRequest.tools.map((t: any) => t.name)).toEqual([
      'Read',
      'Glob',
      'Grep',
      'AskUserQuestion',
      'Write',
      'Edit',
      'Bash',
    ]);
    expect(execRequest.system[1].text).toMatch(/EXECUTE/);
    expect(execRequest.messages.at(-1).content.at(-1).text).toMatch(/approved by alice/);
    const events = await readSse(`${w.d.daemon.url}/v1/runs/${exec.id}/events`, ADMIN_TOKEN);
    expect(events.map((e) => e.event)).toContain('execution_recorded');
  });
});

describe('manual mode', () => {
  it('a Write parks as a tool approval; allowed, it is written', async () => {
    w = await world(model, { execute_mode: 'manual' });
    const alice = await w.token('alice');
    model.enqueue(proposes(), calls('w1', 'Write', { file_path: 'a.txt', content: 'A\n' }), says('done'));
    const { plan } = await planned(w);
    const approved = (await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, alice)).body;
    const exec = approved.run;
    // The answer says what happens next and where the run will wait.
    expect(approved.next).toBe(
      `execute run ${exec.id} carries out the plan in manual mode: each Write, Edit and Bash call waits for a person to allow it; see them with drydock tool-approvals list --run ${exec.id} (GET /v1/tool-approvals?run_id=${exec.id}), follow the run with drydock runs follow ${exec.id}`,
    );
    await runUntil(w.d, exec.id, ['awaiting_input']);
    const pending = (await w.d.api('GET', '/v1/tool-approvals?status=pending')).body.items;
    expect(pending).toHaveLength(1);
    const parked = (await w.d.api('GET', `/v1/runs/${exec.id}`)).body;
    expect(parked.waiting_on).toMatchObject({ kind: 'tool_approval', id: pending[0].id });
    expect(parked.waiting_on.detail).toContain(`drydock tool-approvals decide ${pending[0].id}`);
    const firstStart = parked.started_at;
    await new Promise((r) => setTimeout(r, 300));
    expect(pending[0]).toMatchObject({ tool: 'Write', input: { file_path: 'a.txt' }, run_id: exec.id });
    const decided = await w.d.api(
      'POST',
      `/v1/tool-approvals/${pending[0].id}`,
      { decision: 'allow' },
      alice,
    );
    expect(decided.status).toBe(200);
    const done = await runUntil(w.d, exec.id, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    expect(git(w.repo, 'show', `drydock/${plan.id}:a.txt`)).toBe('A');
    // Run times: started_at is the first start; the wait for the person is waiting, not active, time.
    expect(done.started_at).toBe(firstStart);
    expect(done.waiting_on).toBeNull();
    expect(done.active_ms + done.waiting_ms).toBe(done.duration_ms);
    expect(done.waiting_ms).toBeGreaterThanOrEqual(300);
  });

  it('denied, the model reads the denial and nothing is written', async () => {
    w = await world(model, { execute_mode: 'manual' });
    const alice = await w.token('alice');
    model.enqueue(
      proposes(),
      calls('w1', 'Write', { file_path: 'a.txt', content: 'A\n' }),
      says('understood'),
    );
    const { plan } = await planned(w);
    const exec = (await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, alice)).body.run;
    await runUntil(w.d, exec.id, ['awaiting_input']);
    const [pending] = (await w.d.api('GET', '/v1/tool-approvals?status=pending')).body.items;
    await w.d.api(
      'POST',
      `/v1/tool-approvals/${pending.id}`,
      { decision: 'deny', message: 'not that file' },
      alice,
    );
    const done = await runUntil(w.d, exec.id, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    const result = model.requests.at(-1)!.body.messages.at(-1).content[0];
    expect(result).toMatchObject({ tool_use_id: 'w1', is_error: true });
    expect(result.content).toMatch(/denied this call; it was not executed. Their reason: not that file/);
    expect(existsSync(join(w.d.dir, 'data/worktrees', plan.id, 'a.txt'))).toBe(false);
    expect(done.changed_files).toEqual([]);
    expect(done.result_commit).toBeNull();
  });
});

describe('non-git workspaces', () => {
  it('execute on a copy; the changed files are carried back and recorded', async () => {
    w = await world(model, { execute_mode: 'edits' });
    const alice = await w.token('alice');
    const plain = join(w.d.dir, 'plain');
    mkdirSync(join(plain, 'notes'), { recursive: true });
    writeFileSync(join(plain, 'notes', 'old.md'), 'old\n');
    const { jobId } = await jobIn(w.d, plain, { execute_mode: 'edits' });
    model.enqueue(
      proposes(),
      calls('w1', 'Write', { file_path: 'notes/todo.md', content: '- x\n' }),
      says('done'),
    );
    const { plan } = await plannedJob(w.d, jobId);
    expect(plan.workspace_commit).toBeNull();
    const exec = (await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, alice)).body.run;
    const done = await runUntil(w.d, exec.id, ['completed', 'failed']);
    expect(done.status, done.error).toBe('completed');
    expect(readFileSync(join(plain, 'notes/todo.md'), 'utf8')).toBe('- x\n');
    expect(readFileSync(join(plain, 'notes/old.md'), 'utf8')).toBe('old\n');
    expect(done.changed_files).toEqual(['notes/todo.md']);
  });

  it('a .git a command makes in the copy with a smudge filter is never read by the host, then or in the next execution', async () => {
    w = await world(model, { execute_mode: 'edits' });
    const alice = await w.token('alice');
    const plain = join(w.d.dir, 'plain');
    mkdirSync(plain);
    writeFileSync(join(plain, 'a.txt'), 'a\n');
    const marker = join(w.d.dir, 'smudged-on-the-host');
    const { jobId } = await jobIn(w.d, plain, { execute_mode: 'edits' });
    // Execution 1: the command turns the directory into a repository whose smudge filter names a host path.
    const init = `git init -q . && git config filter.x.smudge 'touch ${marker}; cat' && git config filter.x.clean cat && echo '* filter=x' > .gitattributes && git add -A && git -c user.name=m -c user.email=m@m commit -qm x && echo made`;
    model.enqueue(proposes(), calls('b1', 'Bash', { command: init }), says('done'));
    const first = await plannedJob(w.d, jobId);
    const exec1 = (await w.d.api('POST', `/v1/plans/${first.plan.id}/approve`, {}, alice)).body.run;
    const approval = await pendingApproval(w.d);
    await w.d.api('POST', `/v1/tool-approvals/${approval.id}`, { decision: 'allow' }, alice);
    const done1 = await runUntil(w.d, exec1.id, ['completed', 'failed']);
    expect(done1.status, done1.error).toBe('completed');
    const copyDir = join(w.d.dir, 'data', 'worktrees', first.plan.id);
    expect(existsSync(join(copyDir, '.git'))).toBe(true);
    // Its .gitattributes is data and comes back; no .git does.
    expect(existsSync(join(plain, '.gitattributes'))).toBe(true);
    expect(existsSync(join(plain, '.git'))).toBe(false);

    // Even were a .git there (say a person made it), the session stays plain: the plan records no commit and
    // the next execution copies the directory again, with no git run over it.
    execFileSync('cp', ['-a', join(copyDir, '.git'), join(plain, '.git')]);
    model.enqueue(proposes(), calls('w2', 'Write', { file_path: 'b.txt', content: 'b\n' }), says('done'));
    const second = await plannedJob(w.d, jobId);
    expect(second.plan.workspace_commit).toBeNull();
    const exec2 = (await w.d.api('POST', `/v1/plans/${second.plan.id}/approve`, {}, alice)).body.run;
    const done2 = await runUntil(w.d, exec2.id, ['completed', 'failed']);
    expect(done2.status, done2.error).toBe('completed');
    expect(done2.changed_files).toEqual(['b.txt']);
    expect(existsSync(marker)).toBe(false);
  });

  it('a git session whose repository is gone is refused, never executed in place', async () => {
    w = await world(model, { execute_mode: 'edits' });
    const alice = await w.token('alice');
    rmSync(join(w.repo, '.git'), { recursive: true, force: true });
    model.enqueue(
      proposes(),
      calls('w1', 'Write', { file_path: 'notes/todo.md', content: '- x\n' }),
      says('done'),
    );
    const { plan } = await planned(w);
    expect(plan.workspace_commit).toBeNull();
    const exec = (await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, alice)).body.run;
    const done = await runUntil(w.d, exec.id, ['completed', 'failed']);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/git repository/);
    expect(existsSync(join(w.repo, 'notes/todo.md'))).toBe(false);
  });
});
