import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_UNCOMMITTED_LISTED } from '../../src/domain/types.js';
import { uncommittedNotice } from '../../src/domain/uncommitted.js';
import { checkoutCommit } from '../../src/workspace/checkout.js';
import { checkoutPath } from '../../src/workspace/paths.js';
import { collectGarbage } from '../../src/workspace/retention.js';
import { parseStatus, uncommittedChanges } from '../../src/workspace/uncommitted.js';
import { givenRun, givenSession } from '../store/contract/fixtures.js';
import { git, makeRepo } from '../support/git-repo.js';
import { createHarness, type Harness, tempDir } from '../support/harness.js';

// What a git workspace has that its HEAD commit has not, as a plan records it (agent/planning-base.ts), on
// real repositories; the sentence the plan says it in; and a planning checkout a crash left behind.

const dirs: { remove(): void }[] = [];
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const d of dirs.splice(0)) d.remove();
});

function repo(files: Record<string, string>): { dir: string; head: string } {
  const tmp = tempDir('drydock-uncommitted-');
  dirs.push(tmp);
  const dir = join(tmp.path, 'repo');
  return { dir, head: makeRepo(dir, files) };
}

describe('uncommittedChanges', () => {
  it('counts modified, staged, deleted, renamed and untracked paths; not ignored ones; an untracked directory once', async () => {
    const { dir } = repo({
      '.gitignore': 'build/\n*.log\n',
      'a.txt': 'a\n',
      'b.txt': 'b\n',
      'c.txt': 'c\n',
      'old name.txt': 'moved\n',
    });
    writeFileSync(join(dir, 'a.txt'), 'a changed\n');
    writeFileSync(join(dir, 'b.txt'), 'b staged\n');
    git(dir, 'add', 'b.txt');
    rmSync(join(dir, 'c.txt'));
    git(dir, 'mv', 'old name.txt', 'new name.txt');
    writeFileSync(join(dir, 'untracked.md'), 'u\n');
    mkdirSync(join(dir, 'drafts/deep'), { recursive: true });
    writeFileSync(join(dir, 'drafts/deep/one.md'), '1\n');
    writeFileSync(join(dir, 'drafts/two.md'), '2\n');
    mkdirSync(join(dir, 'build'));
    writeFileSync(join(dir, 'build/out.js'), 'ignored\n');
    writeFileSync(join(dir, 'debug.log'), 'ignored\n');
    const indexBefore = statSync(join(dir, '.git/index')).mtimeMs;

    expect(await uncommittedChanges(dir)).toEqual({
      count: 7,
      paths: ['a.txt', 'b.txt', 'c.txt', 'drafts/', 'new name.txt', 'old name.txt', 'untracked.md'],
    });
    // The person's index is left as it is (no optional lock, no refresh written).
    expect(statSync(join(dir, '.git/index')).mtimeMs).toBe(indexBefore);
    expect(existsSync(join(dir, '.git/index.lock'))).toBe(false);
  });

  it('a clean repository has none; past the listed number, all are counted and the first listed', async () => {
    const { dir } = repo({ 'README.md': '# r\n' });
    expect(await uncommittedChanges(dir)).toEqual({ count: 0, paths: [] });
    for (let i = 0; i < 25; i++) writeFileSync(join(dir, `f${String(i).padStart(2, '0')}.txt`), `${i}\n`);
    const many = await uncommittedChanges(dir);
    expect(many.count).toBe(25);
    expect(many.paths).toHaveLength(MAX_UNCOMMITTED_LISTED);
    expect(many.paths[0]).toBe('f00.txt');
    expect(many.paths.at(-1)).toBe('f19.txt');
  });

  it('in a subdirectory: only what lies below it, relative to it', async () => {
    const { dir } = repo({ 'top.txt': 't\n', 'sub/in.txt': 'i\n' });
    writeFileSync(join(dir, 'top.txt'), 'changed\n');
    writeFileSync(join(dir, 'sub/in.txt'), 'changed\n');
    writeFileSync(join(dir, 'sub/new.txt'), 'new\n');
    expect(await uncommittedChanges(join(dir, 'sub'))).toEqual({ count: 2, paths: ['in.txt', 'new.txt'] });
  });

  it('parses porcelain -z entries, names with spaces and newlines included', () => {
    expect(parseStatus(' M sub/a b.txt\0?? sub/line\nbreak.txt\0A  sub/c.txt\0', 'sub/')).toEqual([
      'a b.txt',
      'line\nbreak.txt',
      'c.txt',
    ]);
    expect(parseStatus('', '')).toEqual([]);
  });
});

describe('uncommittedNotice', () => {
  const commit = 'a'.repeat(40);
  it('says how many, which, and the commit the plan and its execution start from', () => {
    expect(
      uncommittedNotice({
        workspaceCommit: commit,
        uncommitted: { count: 1, paths: ['x.ts'] },
        executionBase: null,
      }),
    ).toBe(
      'The workspace had 1 uncommitted change (x.ts); this plan was made from commit aaaaaaaaaaaa without it, and the execution starts from that commit too.',
    );
    expect(
      uncommittedNotice({
        workspaceCommit: commit,
        uncommitted: { count: 22, paths: ['a', 'b'] },
        executionBase: 'b'.repeat(40),
      }),
    ).toBe(
      'The workspace had 22 uncommitted changes (a, b, … 20 more); this plan was made from commit aaaaaaaaaaaa without them, and the execution starts from commit bbbbbbbbbbbb, which the workspace moved on to without touching what the plan read.',
    );
  });

  it('says nothing for a clean workspace or a plan without a commit', () => {
    expect(uncommittedNotice({ workspaceCommit: commit, uncommitted: null })).toBeNull();
    expect(uncommittedNotice({ workspaceCommit: commit, uncommitted: { count: 0, paths: [] } })).toBeNull();
    expect(uncommittedNotice({ workspaceCommit: null, uncommitted: { count: 1, paths: ['x'] } })).toBeNull();
  });
});

describe('a planning checkout left behind', () => {
  it('goes with retention once its run ended, and git forgets it in the workspace it was made of', async () => {
    h = await createHarness();
    const { dir, head } = repo({ 'README.md': '# r\n' });
    const now = h.clock.now();
    await givenSession(h.store, 'ses_left', { workspace: dir, workspaceKind: 'git' });
    const run = await givenRun(h.store, 'run_left', { sessionId: 'ses_left' });
    await h.store.updateRun(run.id, { planningBase: { commit: head, uncommitted: { count: 0, paths: [] } } });
    await h.store.transitionRun(run.id, ['queued'], 'running', { startedAt: now });
    await h.store.transitionRun(run.id, ['running'], 'failed', { finishedAt: now, error: 'the daemon died' });
    const workRoot = join(h.dir, 'work');
    // What a daemon killed while the run planned left: the checkout, and git's record of it.
    const path = await checkoutCommit(dir, head, checkoutPath(workRoot, run.id));
    expect(git(dir, 'worktree', 'list')).toContain(path);

    const report = await collectGarbage({ store: h.store, workRoot }, { ttlMs: 0, now: now + 1 });
    expect(report).toMatchObject({ checkouts: [run.id], failed: [] });
    expect(existsSync(path)).toBe(false);
    expect(git(dir, 'worktree', 'list')).not.toContain(path);
  });
});
