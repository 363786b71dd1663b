import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { unconfined } from '../../src/workspace/isolation.js';
import { commitExecution, prepareWorktree } from '../../src/workspace/worktree.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';

// An edit made in the same second the worktree's index was written, leaving the file's size as it was, is
// still an edit. git tells such a "racily clean" entry by comparing it with the index file's own time; the
// commit works on a copy of the index, so the copy must not look newer than the original. The times are set
// by hand (and core.checkStat is minimal, as a user may configure it: seconds, size, mode) so the test does
// not depend on how fast the machine is.

let tmp: { path: string; remove(): void };
beforeEach(() => {
  tmp = tempDir('drydock-commit-racy-');
});
afterEach(() => tmp.remove());

it('commits an edit made in the second the index was written that kept the file size', async () => {
  const repo = join(tmp.path, 'repo');
  const base = makeRepo(repo, { 'src/app.ts': 'export const a = 1;\n' });
  git(repo, 'config', 'core.checkStat', 'minimal');
  const tree = await prepareWorktree(repo, 'pln_racy', base, join(tmp.path, 'data', 'worktrees'));
  const file = join(tree.root, 'src/app.ts');
  const second = Math.floor(Date.now() / 1000) - 100;
  utimesSync(file, second, second);
  git(tree.top, 'update-index', '--refresh');
  const index = join(tree.gitDir, 'index');
  utimesSync(index, second, second);
  // The edit: same size, same second.
  writeFileSync(file, 'export const a = 2;\n');
  utimesSync(file, second, second);

  const result = await commitExecution(
    tree,
    base,
    { id: 'pln_racy', sha256: 'f'.repeat(64), title: 'Racy' },
    unconfined,
    join(tmp.path, 'data', 'scratch', 'pln_racy'),
  );
  expect(result.changedFiles).toEqual(['src/app.ts']);
  expect(result.commit).not.toBeNull();
  expect(git(repo, 'show', `${result.commit}:src/app.ts`)).toBe('export const a = 2;');
  expect(readFileSync(file, 'utf8')).toBe('export const a = 2;\n');
});
