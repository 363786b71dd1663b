import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkoutsDir } from '../../src/workspace/paths.js';
import { CLI } from '../cli/cli-process.js';
import { ADMIN_TOKEN, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { git, makeRepo } from '../support/git-repo.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { signIn, ui } from '../ui/helpers.js';
import {
  approveAs,
  calls,
  jobIn,
  PLAN_MD,
  plannedJob,
  proposes,
  runUntil,
  says,
  tokenFor,
} from './helpers.js';

// Plans are made from what executes. A git workspace's plan run reads a clean checkout of the commit its
// execution starts from, never the person's uncommitted edits; what the workspace had uncommitted is
// recorded with the plan and said by the API, the plan page and `drydock plans show`.

let model: ModelServer;
const cleanups: (() => Promise<void> | void)[] = [];
beforeEach(async () => {
  model = await startModelServer();
});
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
  await model.close();
});

/** A daemon stopped (its directory removed) after the test. */
async function daemon(): Promise<TestDaemon> {
  const d = await startTestDaemon({ modelUrl: model.url });
  cleanups.push(() => d.stop());
  return d;
}

/** The last tool_result the model received for `id`. */
function resultFor(id: string): { content: string; is_error?: boolean } {
  for (const req of [...model.requests].reverse()) {
    for (const m of [...req.body.messages].reverse()) {
      if (!Array.isArray(m.content)) continue;
      const found = m.content.find((b: any) => b.type === 'tool_result' && b.tool_use_id === id);
      if (found) return found;
    }
  }
  throw new Error(`no result for ${id}`);
}

/** The system text of the first request: the project memory the conversation holds. */
const systemText = (): string => JSON.stringify(model.requests[0]!.body.system ?? '');

/** The worktrees git lists for the repository, by path. */
const worktrees = (repo: string): string[] =>
  git(repo, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice('worktree '.length));

/** A repository with committed files, then edits of the person's that are not committed. */
function dirtyRepo(dir: string): string {
  const head = makeRepo(dir, {
    'README.md': '# demo\n',
    'CLAUDE.md': 'committed memory 7d1f\n',
    'src/a.txt': 'committed a\n',
  });
  writeFileSync(join(dir, 'src/a.txt'), 'dirty a UNCOMMITTED-e3b9\n');
  writeFileSync(join(dir, 'CLAUDE.md'), 'dirty memory UNCOMMITTED-e3b9\n');
  writeFileSync(join(dir, 'notes.txt'), 'untracked UNCOMMITTED-e3b9\n');
  writeFileSync(join(dir, 'staged.txt'), 'staged UNCOMMITTED-e3b9\n');
  git(dir, 'add', 'staged.txt');
  return head;
}

/** `drydock plans show ID` against the daemon (asynchronously: the daemon serves from this process). */
function plansShow(d: TestDaemon, id: string): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(process.execPath, [CLI, 'plans', 'show', id], {
    env: { PATH: process.env.PATH ?? '', HOME: d.dir, DRYDOCK_URL: d.daemon.url, DRYDOCK_TOKEN: ADMIN_TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (b) => {
    stdout += b;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout }));
  });
}

/** The plan page as an approver's browser gets it, over the daemon's real HTTP. */
async function planPage(d: TestDaemon, planId: string): Promise<string> {
  const token = await tokenFor(d, 'viewer-of-pages');
  // The UI helpers speak to an app; this one forwards to the daemon's listening socket.
  const app = {
    request: (url: string, init: RequestInit) =>
      fetch(url.replace('http://localhost', d.daemon.url), { ...init, redirect: 'manual' }),
  };
  const me = await signIn(app as never, token);
  const page = await ui(app as never, 'GET', `/ui/plans/${planId}`, { cookie: me.cookie });
  expect(page.status).toBe(200);
  return page.text;
}

describe('the plan phase of a git workspace reads its HEAD commit', () => {
  it('uncommitted and untracked files are invisible to Read, Grep, Glob and the memory; the plan says what it was made without; the execution starts from the same commit', async () => {
    const d = await daemon();
    const repo = join(d.dir, 'repo');
    const head = dirtyRepo(repo);
    const { jobId } = await jobIn(d, repo, { execute_mode: 'edits' });
    model.enqueue(
      calls('r-a', 'Read', { file_path: 'src/a.txt' }),
      // An absolute path of the workspace means the same file of the checkout: never the working tree's.
      calls('r-abs', 'Read', { file_path: join(repo, 'src/a.txt') }),
      calls('r-notes', 'Read', { file_path: join(repo, 'notes.txt') }),
      calls('r-staged', 'Read', { file_path: 'staged.txt' }),
      calls('g', 'Grep', { pattern: 'UNCOMMITTED', path: '.' }),
      calls('gl', 'Glob', { pattern: '**/*.txt' }),
      // The checkout's .git file names where the repository lies: refused like drydock's own files.
      calls('r-git', 'Read', { file_path: '.git' }),
      proposes(),
      calls('x-read', 'Read', { file_path: 'src/a.txt' }),
      calls('x-write', 'Write', { file_path: 'hello.txt', content: 'hello\n' }),
      says('done'),
    );
    const { runId, plan } = await plannedJob(d, jobId);

    expect(resultFor('r-a')).toMatchObject({ content: expect.stringContaining('committed a') });
    expect(resultFor('r-a').content).not.toContain('UNCOMMITTED');
    expect(resultFor('r-abs').content).toContain('committed a');
    expect(resultFor('r-abs').content).not.toContain('UNCOMMITTED');
    expect(resultFor('r-notes')).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/does not exist/),
    });
    expect(resultFor('r-staged')).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/does not exist/),
    });
    expect(resultFor('g').content).toContain('No matches found');
    expect(resultFor('gl').content).toContain('src/a.txt');
    expect(resultFor('gl').content).not.toMatch(/notes\.txt|staged\.txt/);
    expect(resultFor('r-git')).toMatchObject({ is_error: true });
    expect(resultFor('r-git').content).not.toContain(d.dir);
    // The project memory is the commit's CLAUDE.md.
    expect(systemText()).toContain('committed memory 7d1f');
    expect(systemText()).not.toContain('UNCOMMITTED');

    const message = `The workspace had 4 uncommitted changes (CLAUDE.md, notes.txt, src/a.txt, staged.txt); this plan was made from commit ${head.slice(0, 12)} without them, and the execution starts from that commit too.`;
    expect(plan).toMatchObject({
      workspace_commit: head,
      uncommitted_changes: {
        count: 4,
        paths: ['CLAUDE.md', 'notes.txt', 'src/a.txt', 'staged.txt'],
        message,
      },
    });
    const listed = (await d.api('GET', `/v1/plans?status=pending_approval`)).body.items;
    expect(listed.find((p: any) => p.id === plan.id).uncommitted_changes.count).toBe(4);
    expect(await planPage(d, plan.id)).toContain(
      `<p class="hint uncommitted" id="plan-uncommitted">${message}</p>`,
    );
    const shown = await plansShow(d, plan.id);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(
      new RegExp(
        `^uncommitted\\s+The workspace had 4 uncommitted changes \\(CLAUDE\\.md, notes\\.txt, src/a\\.txt, staged\\.txt\\); this plan was made from commit ${head.slice(0, 12)}`,
        'm',
      ),
    );

    // The planning checkout went when the run ended; only the person's checkout is a worktree.
    expect(existsSync(join(checkoutsDir(d.config.data_dir), runId))).toBe(false);
    expect(worktrees(repo)).toEqual([repo]);

    const exec = await approveAs(d, plan, await tokenFor(d, 'alice'));
    const done = await runUntil(d, exec.id, ['completed', 'failed']);
    expect(done.status, done.error).toBe('completed');
    // The execution read the same committed file, and its diff is against the plan's commit.
    expect(resultFor('x-read').content).toContain('committed a');
    expect(done.changed_files).toEqual(['hello.txt']);
    expect(git(repo, 'rev-parse', `${done.result_commit}^`)).toBe(head);
    // The person's edits are where they left them.
    expect(readFileSync(join(repo, 'src/a.txt'), 'utf8')).toBe('dirty a UNCOMMITTED-e3b9\n');
    expect(git(repo, 'status', '--porcelain')).toContain('?? notes.txt');
  });

  it('a clean workspace: no notice anywhere; a session on a subdirectory counts only its own changes, by its own paths', async () => {
    const d = await daemon();
    const repo = join(d.dir, 'repo');
    const head = makeRepo(repo, { 'README.md': '# demo\n', 'sub/b.txt': 'b\n' });
    const clean = await jobIn(d, repo);
    model.enqueue(calls('r', 'Read', { file_path: 'README.md' }), proposes('p1'));
    const { plan } = await plannedJob(d, clean.jobId);
    expect(plan).toMatchObject({ workspace_commit: head, uncommitted_changes: null });
    expect(await planPage(d, plan.id)).not.toContain('id="plan-uncommitted"');
    expect((await plansShow(d, plan.id)).stdout).not.toMatch(/^uncommitted/m);

    // Outside the session's subdirectory: not counted. Inside: counted relative to it, an untracked directory once.
    writeFileSync(join(repo, 'README.md'), '# changed outside\n');
    writeFileSync(join(repo, 'sub/b.txt'), 'b changed\n');
    mkdirSync(join(repo, 'sub/drafts'));
    writeFileSync(join(repo, 'sub/drafts/one.md'), '1\n');
    writeFileSync(join(repo, 'sub/drafts/two.md'), '2\n');
    const sub = await jobIn(d, join(repo, 'sub'));
    model.enqueue(calls('rb', 'Read', { file_path: 'b.txt' }), proposes('p2'));
    const inSub = (await plannedJob(d, sub.jobId)).plan;
    expect(resultFor('rb').content).toMatch(/^\s*1\tb$/);
    expect(inSub.uncommitted_changes).toMatchObject({ count: 2, paths: ['b.txt', 'drafts/'] });
  });
});

describe('a plan run that waits', () => {
  it('keeps its commit and checkout across a daemon restart, though the workspace moved on; the checkout goes when it ends', async () => {
    // Stopped and started again on one directory, removed after the test.
    const d1 = await startTestDaemon({ modelUrl: model.url });
    cleanups.push(() => d1.stop());
    const repo = join(d1.dir, 'repo');
    const head = dirtyRepo(repo);
    const { jobId } = await jobIn(d1, repo);
    model.enqueue(
      calls('ask', 'AskUserQuestion', {
        questions: [
          {
            question: 'Which greeting?',
            header: 'Greeting',
            multiSelect: false,
            options: [
              { label: 'Hello', description: 'plain' },
              { label: 'Hi', description: 'short' },
            ],
          },
        ],
      }),
    );
    const fired = await d1.api('POST', `/v1/jobs/${jobId}/run`);
    expect(fired.status).toBe(201);
    await runUntil(d1, fired.body.id, ['awaiting_input']);
    const checkout = join(checkoutsDir(d1.config.data_dir), fired.body.id);
    // Parked, the run keeps its checkout.
    expect(readFileSync(join(checkout, 'src/a.txt'), 'utf8')).toBe('committed a\n');
    await d1.halt();

    // Meanwhile the person commits their edits: the workspace's HEAD moves.
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'the edits');
    const d2 = await startTestDaemon({ modelUrl: model.url, dir: d1.dir });
    cleanups.push(() => d2.halt());
    model.enqueue(calls('r-after', 'Read', { file_path: 'src/a.txt' }), proposes());
    const question = await waitFor(
      async () => (await d2.api('GET', '/v1/questions?status=pending')).body.items[0],
      10_000,
      'the question',
    );
    const answered = await d2.api(
      'POST',
      `/v1/questions/${question.id}/answers`,
      { answers: { 'Which greeting?': 'Hello' } },
      await tokenFor(d2, 'alice'),
    );
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const run = await runUntil(d2, fired.body.id, ['planned', 'failed']);
    expect(run.status, run.error).toBe('planned');
    expect(resultFor('r-after').content).toContain('committed a');
    const plan = (await d2.api('GET', `/v1/plans/${run.plan_id}`)).body;
    expect(plan.workspace_commit).toBe(head);
    expect(plan.uncommitted_changes.count).toBe(4);
    expect(existsSync(checkout)).toBe(false);
    expect(worktrees(repo)).toEqual([repo]);
  });
});

describe('a revision round', () => {
  it('plans on the head when it starts and is told what moved since the plan it revises', async () => {
    const d = await daemon();
    const repo = join(d.dir, 'repo');
    const head = makeRepo(repo, { 'README.md': '# demo\n', 'src/a.txt': 'first a\n' });
    const { jobId } = await jobIn(d, repo);
    model.enqueue(calls('r1', 'Read', { file_path: 'src/a.txt' }), proposes('p1'));
    const { plan } = await plannedJob(d, jobId);
    expect(plan.workspace_commit).toBe(head);

    writeFileSync(join(repo, 'src/a.txt'), 'second a\n');
    git(repo, 'commit', '-q', '-am', 'second');
    const moved = git(repo, 'rev-parse', 'HEAD');
    writeFileSync(join(repo, 'src/a.txt'), 'third a, not committed\n');
    model.enqueue(
      calls('r2', 'Read', { file_path: 'src/a.txt' }),
      proposes('p2', `${PLAN_MD}\n3. Revised\n`),
    );
    const revised = await d.api(
      'POST',
      `/v1/plans/${plan.id}/revise`,
      { feedback: 'say more' },
      await tokenFor(d, 'alice'),
    );
    expect(revised.status, JSON.stringify(revised.body)).toBe(200);
    const round2 = await runUntil(d, revised.body.run.id, ['planned', 'failed']);
    expect(round2.status, round2.error).toBe('planned');
    expect(resultFor('r2').content).toContain('second a');
    const second = (await d.api('GET', `/v1/plans/${round2.plan_id}`)).body;
    expect(second).toMatchObject({
      round: 2,
      workspace_commit: moved,
      uncommitted_changes: { count: 1, paths: ['src/a.txt'] },
    });
    // The revision's instruction names the move and the file that changed.
    const kickoff = JSON.stringify(model.requests.at(-1)!.body.messages);
    expect(kickoff).toContain(
      `The workspace moved on from commit ${head.slice(0, 12)} to ${moved.slice(0, 12)} (1 commit) since the previous plan`,
    );
    expect(kickoff).toContain('Changed since: src/a.txt.');
  });
});

describe('workspaces without a commit to plan on', () => {
  it('a plain directory is read as it is, and its plan records no commit and no notice', async () => {
    const d = await daemon();
    const dir = join(d.dir, 'plain');
    mkdirSync(dir);
    writeFileSync(join(dir, 'draft.md'), 'plain draft 41c2\n');
    const { jobId } = await jobIn(d, dir);
    model.enqueue(calls('r', 'Read', { file_path: 'draft.md' }), proposes());
    const { runId, plan } = await plannedJob(d, jobId);
    expect(resultFor('r').content).toContain('plain draft 41c2');
    expect(plan).toMatchObject({ workspace_commit: null, uncommitted_changes: null });
    expect(existsSync(join(checkoutsDir(d.config.data_dir), runId))).toBe(false);
  });
});
