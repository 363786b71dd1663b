import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlanFootprint } from '../../src/domain/footprint.js';
import { planFreshness, staleMessage, touching } from '../../src/plans/staleness.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';

// The one staleness rule (src/plans/staleness.ts) on real git repositories: a plan stays approvable when the
// commits since its own touch nothing of its footprint, and is stale when they do, when its commit left the
// head's history, or when it has no footprint.

let tmp: { path: string; remove(): void };
let repo: string;
let base: string;
beforeEach(() => {
  tmp = tempDir();
  repo = join(tmp.path, 'repo');
  base = makeRepo(repo, {
    'README.md': '# r\n',
    'src/a.ts': 'a\n',
    'src/lib/b.ts': 'b\n',
    'docs/guide.md': 'g\n',
    'old.txt': 'o\n',
  });
});
afterEach(() => tmp.remove());

/** Commits the given files (content, or null to delete) on the repository's branch; returns the new head. */
function commit(files: Record<string, string | null>, at = repo): string {
  for (const [path, content] of Object.entries(files)) {
    if (content === null) git(at, 'rm', '-q', path);
    else {
      mkdirSync(dirname(join(at, path)), { recursive: true });
      writeFileSync(join(at, path), content);
      git(at, 'add', path);
    }
  }
  git(at, 'commit', '-q', '-m', 'change');
  return git(at, 'rev-parse', 'HEAD');
}

const footprint = (o: Partial<PlanFootprint>): PlanFootprint => ({ files: [], dirs: [], globs: [], ...o });
const plan = (fp: PlanFootprint | null, workspaceCommit = base) => ({
  id: 'pln_1',
  workspaceCommit,
  subject: null,
  footprint: fp,
});

describe('planFreshness', () => {
  it('current while the head is the plan commit', async () => {
    expect(await planFreshness(plan(footprint({ files: ['README.md'] })), repo)).toEqual({
      state: 'current',
      head: base,
      commitsBehind: 0,
      changedReadFiles: [],
      reason: null,
    });
  });

  it('a commit touching a read file makes it stale; one touching another file does not', async () => {
    const fp = footprint({ files: ['README.md'] });
    const head = commit({ 'other.txt': 'x' });
    expect(await planFreshness(plan(fp), repo)).toEqual({
      state: 'moved_on',
      head,
      commitsBehind: 1,
      changedReadFiles: [],
      reason: null,
    });
    const next = commit({ 'README.md': '# changed\n' });
    const f = (await planFreshness(plan(fp), repo))!;
    expect(f).toEqual({
      state: 'stale',
      head: next,
      commitsBehind: 2,
      changedReadFiles: ['README.md'],
      reason: 'footprint_changed',
    });
    expect(staleMessage(plan(fp), f)).toBe(
      `plan pln_1 is stale: the workspace moved on by 2 commits since ${base.slice(0, 12)}, and they change what this plan read or touches: README.md; revise it or plan again`,
    );
  });

  it('a Grep over a directory counts any change below it, and only below it', async () => {
    const fp = footprint({ dirs: ['src/lib'] });
    commit({ 'src/a.ts': 'changed\n', 'docs/new.md': 'n\n' });
    expect((await planFreshness(plan(fp), repo))?.state).toBe('moved_on');
    commit({ 'src/lib/deep/c.ts': 'new\n' });
    expect(await planFreshness(plan(fp), repo)).toMatchObject({
      state: 'stale',
      changedReadFiles: ['src/lib/deep/c.ts'],
    });
    // A Grep over the whole workspace: any change at all.
    expect((await planFreshness(plan(footprint({ dirs: ['.'] })), repo))?.state).toBe('stale');
  });

  it('a Glob counts changes below its directory that match its pattern', async () => {
    const fp = footprint({ globs: [{ dir: 'docs', pattern: '**/*.md' }] });
    commit({ 'docs/img.png': 'p', 'notes.md': 'outside docs' });
    expect((await planFreshness(plan(fp), repo))?.state).toBe('moved_on');
    commit({ 'docs/deep/new.md': 'n' });
    expect(await planFreshness(plan(fp), repo)).toMatchObject({
      state: 'stale',
      changedReadFiles: ['docs/deep/new.md'],
    });
  });

  it('a rename counts both of its names', async () => {
    git(repo, 'mv', 'old.txt', 'new.txt');
    git(repo, 'commit', '-q', '-m', 'rename');
    expect(await planFreshness(plan(footprint({ files: ['old.txt'] })), repo)).toMatchObject({
      state: 'stale',
      changedReadFiles: ['old.txt'],
    });
    expect(await planFreshness(plan(footprint({ files: ['new.txt'] })), repo)).toMatchObject({
      state: 'stale',
      changedReadFiles: ['new.txt'],
    });
  });

  it('a rewritten base (not an ancestor of the head any more) is stale, whatever the footprint', async () => {
    const planned = commit({ 'other.txt': 'x' });
    // A force-push's effect: the branch goes back and on along another line.
    git(repo, 'reset', '-q', '--hard', base);
    const head = commit({ 'unrelated.txt': 'y' });
    const f = (await planFreshness(plan(footprint({ files: ['README.md'] }), planned), repo))!;
    expect(f).toEqual({
      state: 'stale',
      head,
      commitsBehind: null,
      changedReadFiles: [],
      reason: 'base_gone',
    });
    expect(staleMessage(plan(null, planned), f)).toContain('is no longer in the history of the workspace');
    // A commit the repository never had.
    expect((await planFreshness(plan(footprint({}), 'f'.repeat(40)), repo))?.reason).toBe('base_gone');
  });

  it('a plan without a footprint (older, or reads that could not be bounded) is stale once the head moved', async () => {
    expect((await planFreshness(plan(null), repo))?.state).toBe('current');
    commit({ 'unrelated.txt': 'y' });
    expect(await planFreshness(plan(null), repo)).toMatchObject({
      state: 'stale',
      commitsBehind: 1,
      reason: 'no_footprint',
    });
  });

  it('a session on a subdirectory: footprint paths are relative to it, changes outside it do not count', async () => {
    const sub = join(repo, 'src');
    const fp = footprint({ dirs: ['.'] });
    commit({ 'docs/guide.md': 'changed\n', 'README.md': 'changed\n' });
    expect((await planFreshness(plan(fp), sub))?.state).toBe('moved_on');
    commit({ 'src/lib/b.ts': 'changed\n' });
    expect(await planFreshness(plan(fp), sub)).toMatchObject({
      state: 'stale',
      changedReadFiles: ['lib/b.ts'],
    });
  });

  it('does not apply to a plain workspace or a pull request plan', async () => {
    expect(await planFreshness({ ...plan(null), workspaceCommit: null }, repo)).toBeNull();
    commit({ 'README.md': 'changed\n' });
    expect(await planFreshness({ ...plan(null), subject: 'octo/repo#7' }, repo)).toBeNull();
  });
});

describe('touching', () => {
  it('a glob that does not compile counts anything below its directory', () => {
    const fp = footprint({ globs: [{ dir: 'docs', pattern: '[z-a]' }] });
    expect(touching(fp, ['docs/x', 'src/y'])).toEqual(['docs/x']);
  });
});
