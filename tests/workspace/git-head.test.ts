import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { headCommit } from '../../src/workspace/git.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';

const dirs: { remove(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

function repo(): string {
  const d = tempDir('drydock-head-');
  dirs.push(d);
  return join(d.path, 'r');
}

it('reads HEAD from loose refs, packed refs, a detached HEAD and a worktree, as git does', async () => {
  const dir = repo();
  const first = makeRepo(dir, { 'a.txt': 'a' });
  expect(await headCommit(dir)).toBe(first);
  git(dir, 'pack-refs', '--all');
  expect(await headCommit(dir)).toBe(first);
  git(dir, 'checkout', '-q', '--detach');
  expect(await headCommit(dir)).toBe(first);
  git(dir, 'checkout', '-q', 'main');
  git(dir, 'worktree', 'add', '-q', join(dir, '..', 'wt'), '-b', 'side');
  expect(await headCommit(join(dir, '..', 'wt'))).toBe(git(join(dir, '..', 'wt'), 'rev-parse', 'HEAD'));
});

it('is null for a directory that is not a repository, and for a repository without commits', async () => {
  const dir = repo();
  mkdirSync(dir, { recursive: true });
  expect(await headCommit(dir)).toBeNull();
  execFileSync('git', ['-C', dir, 'init', '-q', '-b', 'main']);
  expect(await headCommit(dir)).toBeNull();
});
