import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitFiles } from '../../src/workspace/commit-files.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';

// Files of a commit's tree, read from git's object database: only regular files, never through a symbolic
// link of the tree, never from the work tree.

let tmp: { path: string; remove: () => void };
let repo: string;
beforeEach(() => {
  tmp = tempDir('drydock-commit-files-');
  repo = join(tmp.path, 'repo');
});
afterEach(() => tmp.remove());

describe('commitFiles', () => {
  it('reads the regular files asked for as committed, not as the work tree has them now', async () => {
    const commit = makeRepo(repo, { 'CLAUDE.md': 'committed\n', 'sub/CLAUDE.md': 'in sub\n', 'x.md': 'x' });
    writeFileSync(join(repo, 'CLAUDE.md'), 'changed in the work tree\n');
    const files = await commitFiles(repo, commit, ['CLAUDE.md', 'sub/CLAUDE.md', 'missing.md'], 1024);
    expect(files).toEqual([
      { path: 'CLAUDE.md', size: 10, text: 'committed\n' },
      { path: 'sub/CLAUDE.md', size: 7, text: 'in sub\n' },
    ]);
  });

  it('leaves out a committed symbolic link, and a file below a linked directory', async () => {
    makeRepo(repo, { 'README.md': 'r\n', 'real/CLAUDE.md': 'through a link\n' });
    symlinkSync('/etc/passwd', join(repo, 'CLAUDE.md'));
    symlinkSync('real', join(repo, '.claude'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'links');
    const commit = git(repo, 'rev-parse', 'HEAD');
    expect(await commitFiles(repo, commit, ['CLAUDE.md', '.claude/CLAUDE.md'], 1024)).toEqual([]);
  });

  it('a file over maxBytes comes back with its size and no text', async () => {
    const commit = makeRepo(repo, { 'CLAUDE.md': 'y'.repeat(100) });
    expect(await commitFiles(repo, commit, ['CLAUDE.md'], 99)).toEqual([
      { path: 'CLAUDE.md', size: 100, text: null },
    ]);
  });

  it('refuses anything but a full commit id (no ref, no option)', async () => {
    makeRepo(repo, { 'CLAUDE.md': 'c\n' });
    for (const bad of ['HEAD', 'main', '--output=/tmp/x', 'abc123']) {
      await expect(commitFiles(repo, bad, ['CLAUDE.md'], 1024)).rejects.toThrow(/not a full commit id/);
    }
  });
});
