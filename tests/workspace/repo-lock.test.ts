import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { withRepoLock } from '../../src/workspace/git.js';
import { branchFor, prepareWorktree } from '../../src/workspace/worktree.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';

const dirs: { remove(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

function repo() {
  const tmp = tempDir('drydock-repo-lock-');
  dirs.push(tmp);
  const path = join(tmp.path, 'repo');
  const head = makeRepo(path, { 'README.md': '# demo\n' });
  return { path, head, worktrees: join(tmp.path, 'worktrees') };
}

it('a worktree is made once another process lets go of the git lock it needs', async () => {
  const r = repo();
  // Another process (a replica on the same volume) is changing the branch's ref: its lock file is there.
  const lock = join(r.path, '.git', 'refs', 'heads', `${branchFor('pln_locked')}.lock`);
  mkdirSync(join(lock, '..'), { recursive: true });
  writeFileSync(lock, '');
  setTimeout(() => rmSync(lock), 400);
  const started = Date.now();
  const tree = await prepareWorktree(r.path, 'pln_locked', r.head, r.worktrees);
  expect(Date.now() - started).toBeGreaterThanOrEqual(350);
  expect(git(tree.top, 'rev-parse', 'HEAD')).toBe(r.head);
});

it('a lock held for good fails after the retries; any other git error fails at once', async () => {
  const r = repo();
  const lock = join(r.path, '.git', 'refs', 'heads', `${branchFor('pln_stuck')}.lock`);
  mkdirSync(join(lock, '..'), { recursive: true });
  writeFileSync(lock, '');
  await expect(prepareWorktree(r.path, 'pln_stuck', r.head, r.worktrees)).rejects.toThrow(/cannot lock ref/);
  let calls = 0;
  await expect(
    withRepoLock(r.path, async () => {
      calls += 1;
      throw new Error('fatal: not a git repository');
    }),
  ).rejects.toThrow(/not a git repository/);
  expect(calls).toBe(1);
}, 20_000);
