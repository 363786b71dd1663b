import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { git } from '../support/git-repo.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { calls, planned, proposes, runUntil, says, type World, world } from './helpers.js';

// Smart staleness end to end (src/plans/staleness.ts): a real daemon, a real git repository, the plan phase's
// tool calls scripted on the fake model server. The plan reads README.md and names hello.txt.

let model: ModelServer;
let w: World;
beforeEach(async () => {
  model = await startModelServer();
});
afterEach(async () => {
  await w?.d.stop();
  await model.close();
});

function commit(file: string, content: string): string {
  writeFileSync(join(w.repo, file), content);
  git(w.repo, 'add', '-A');
  git(w.repo, 'commit', '-q', '-m', `touch ${file}`);
  return git(w.repo, 'rev-parse', 'HEAD');
}

/** A plan whose plan phase read README.md before proposing. */
async function planReadingReadme(): Promise<any> {
  model.enqueue(calls('toolu_read', 'Read', { file_path: 'README.md' }), proposes());
  const { plan } = await planned(w);
  expect(plan.freshness).toMatchObject({ state: 'current', commits_behind: 0 });
  return plan;
}

describe('smart staleness', () => {
  it('a commit touching a file the plan read: approving answers 409 stale and the plan says why', async () => {
    w = await world(model);
    const plan = await planReadingReadme();
    const head = commit('README.md', '# changed by someone else\n');
    const shown = (await w.d.api('GET', `/v1/plans/${plan.id}`)).body;
    expect(shown.freshness).toMatchObject({
      state: 'stale',
      head,
      commits_behind: 1,
      changed_read_files: ['README.md'],
      reason: 'footprint_changed',
    });
    const res = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, await w.token('alice'));
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('stale');
    expect(res.body.error.message).toContain('they change what this plan read or touches: README.md');
    expect((await w.d.api('GET', `/v1/plans/${plan.id}`)).body.status).toBe('pending_approval');
  });

  it('a commit touching nothing the plan read: approvable, and it executes on the new head', async () => {
    w = await world(model, { approvals_required: 1 });
    const plan = await planReadingReadme();
    const head = commit('unrelated.txt', 'landed after the plan\n');
    const shown = (await w.d.api('GET', `/v1/plans/${plan.id}`)).body;
    expect(shown.freshness).toMatchObject({
      state: 'moved_on',
      head,
      commits_behind: 1,
      changed_read_files: [],
      reason: null,
      message: 'workspace moved on by 1 commit; none touch what this plan read',
    });
    model.enqueue(says('nothing to change'));
    const res = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, await w.token('alice'));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.plan).toMatchObject({
      status: 'approved',
      workspace_commit: w.head,
      execution_base: head,
    });
    const exec = await runUntil(w.d, res.body.run.id, ['completed', 'failed']);
    expect(exec.status, exec.error).toBe('completed');
    // The execution's worktree was made at the new head: the file that landed since is there.
    const tree = join(w.d.dir, 'data/worktrees', plan.id);
    expect(readFileSync(join(tree, 'unrelated.txt'), 'utf8')).toBe('landed after the plan\n');
    // The sandbox made the worktree as its own uid when the daemon is root: git asks to be told it is safe.
    expect(git(tree, '-c', 'safe.directory=*', 'rev-parse', 'HEAD')).toBe(head);
    // The execution's diff is against the head it started from, not the plan's commit.
    expect((await w.d.api('GET', `/v1/runs/${exec.id}/diff`)).body).toMatchObject({ base_commit: head });
    expect((await w.d.api('GET', `/v1/plans/${plan.id}`)).body).toMatchObject({
      status: 'executed',
      execution_base: head,
      freshness: null,
    });
  });

  it('a Grep over a directory: a commit elsewhere moves it on, one below that directory makes it stale', async () => {
    w = await world(model);
    model.enqueue(calls('toolu_grep', 'Grep', { pattern: 'greeting', path: 'lib' }), proposes());
    const { plan } = await planned(w);
    commit('notes.txt', 'elsewhere\n');
    expect((await w.d.api('GET', `/v1/plans/${plan.id}`)).body.freshness.state).toBe('moved_on');
    mkdirSync(join(w.repo, 'lib'));
    commit('lib/new.ts', 'export const greeting = 1;\n');
    const res = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, await w.token('alice'));
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain('read or touches: lib/new.ts');
  });

  it('a plan from before footprints (none recorded) keeps the old rule: any new commit makes it stale', async () => {
    w = await world(model);
    const plan = await planReadingReadme();
    // What migration 25 leaves on a plan made before it.
    const db = new Database(join(w.d.dir, 'data', 'drydock.db'), { fileMustExist: true });
    db.prepare('UPDATE plans SET footprint = NULL WHERE id = ?').run(plan.id);
    db.close();
    commit('unrelated.txt', 'x');
    const res = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, await w.token('alice'));
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('stale');
    expect(res.body.error.message).toContain('what this plan read was not recorded');
    expect((await w.d.api('GET', `/v1/plans/${plan.id}`)).body.freshness).toMatchObject({
      state: 'stale',
      commits_behind: 1,
      reason: 'no_footprint',
    });
  });

  it('a rewritten base is stale even when no read file changed', async () => {
    w = await world(model);
    const plan = await planReadingReadme();
    // The branch is rewritten: the plan's commit is amended away.
    writeFileSync(join(w.repo, 'unrelated.txt'), 'x');
    git(w.repo, 'add', '-A');
    git(w.repo, 'commit', '-q', '--amend', '-m', 'rewritten');
    const res = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, {}, await w.token('alice'));
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('stale');
    expect((await w.d.api('GET', `/v1/plans/${plan.id}`)).body.freshness.reason).toBe('base_gone');
    expect(existsSync(join(w.d.dir, 'data/worktrees', plan.id))).toBe(false);
  });
});
