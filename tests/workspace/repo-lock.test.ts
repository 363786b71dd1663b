import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { withRepoLock } from '../../src/workspace/git.js';
import { LOCK_FILE, STALE_MS } from '../../src/workspace/repo-lock.js';
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

describe('the lock drydock processes sharing a repository take', () => {
  const lockFile = (r: { path: string }) => join(r.path, '.git', LOCK_FILE);

  it('a change waits while another drydock holds the lock, then goes ahead; the file is gone after', async () => {
    const r = repo();
    writeFileSync(lockFile(r), 'another replica\n');
    setTimeout(() => rmSync(lockFile(r)), 400);
    const started = Date.now();
    const tree = await prepareWorktree(r.path, 'pln_waits', r.head, r.worktrees);
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(git(tree.top, 'rev-parse', 'HEAD')).toBe(r.head);
    expect(existsSync(lockFile(r))).toBe(false);
  });

  it('a lock left by a holder that died (untouched for longer than STALE_MS) is taken over at once', async () => {
    const r = repo();
    writeFileSync(lockFile(r), 'a replica killed while it held the lock\n');
    const then = new Date(Date.now() - STALE_MS - 1_000);
    utimesSync(lockFile(r), then, then);
    const started = Date.now();
    await prepareWorktree(r.path, 'pln_stale', r.head, r.worktrees);
    expect(Date.now() - started).toBeLessThan(STALE_MS);
    expect(readdirSync(join(r.path, '.git')).filter((f) => f.startsWith(LOCK_FILE))).toEqual([]);
  });

  it('three processes changing one repository at once take turns', async () => {
    const r = repo();
    const script = `
      const { withRepoLock } = await import(${JSON.stringify(join(packageRoot(), 'dist/src/workspace/git.js'))});
      await withRepoLock(process.argv[1], async () => {
        const start = Date.now();
        await new Promise((done) => setTimeout(done, 300));
        console.log(JSON.stringify([start, Date.now()]));
      });`;
    const spans = await Promise.all(
      [0, 1, 2].map(
        () =>
          new Promise<[number, number]>((done, fail) => {
            execFile(process.execPath, ['--input-type=module', '-e', script, r.path], (err, out) =>
              err ? fail(err) : done(JSON.parse(out)),
            );
          }),
      ),
    );
    spans.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
    expect(existsSync(lockFile(r))).toBe(false);
  }, 20_000);
});
