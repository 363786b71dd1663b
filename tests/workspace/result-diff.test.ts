import { rmSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseUnifiedDiff } from '../../src/ui/diff.js';
import { cutAtLine, parseNumstat, readResultDiff } from '../../src/workspace/result-diff.js';
import { collectGarbage } from '../../src/workspace/retention.js';
import { git } from '../support/git-repo.js';
import { createHarness, type Harness } from '../support/harness.js';
import { seedExecution } from '../ui/execution-seed.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

const deps = () => ({ store: h.store, workRoot: h.config.data_dir });

describe('readResultDiff', () => {
  it('reads the diff between the plan commit and the execution commit, with every file counted', async () => {
    const x = await seedExecution(h, {
      files: {
        'src/app.ts': 'export const a = 1;\n',
        'old.txt': 'bye\n',
        'same.md': 'one\ntwo\nthree\nfour\n',
      },
      changes: { 'src/app.ts': 'export const a = 2;\n', 'old.txt': null, 'NOTES.md': '# Notes\n' },
    });
    const d = await readResultDiff(deps(), x.run);
    expect(d.state).toBe('ready');
    if (d.state !== 'ready') return;
    expect(d).toMatchObject({
      runId: x.run.id,
      planId: x.plan.id,
      branch: `drydock/${x.plan.id}`,
      base: x.base,
      commit: x.run.resultCommit,
      shownFiles: 3,
      truncated: null,
    });
    expect(d.files).toEqual([
      { path: 'NOTES.md', oldPath: null, additions: 1, deletions: 0, binary: false },
      { path: 'old.txt', oldPath: null, additions: 0, deletions: 1, binary: false },
      { path: 'src/app.ts', oldPath: null, additions: 1, deletions: 1, binary: false },
    ]);
    // The same text git itself prints for the branch.
    expect(d.diff).toBe(`${git(x.repo, 'diff', '--no-color', x.base, `drydock/${x.plan.id}`)}\n`);
    expect(parseUnifiedDiff(d.diff).map((f) => f.status)).toEqual(['added', 'deleted', 'modified']);
  });

  it('caps files and bytes and says so', async () => {
    const changes: Record<string, string> = {};
    for (let i = 0; i < 6; i++) changes[`f${i}.txt`] = `${'x'.repeat(100)}\n`.repeat(20);
    const x = await seedExecution(h, { changes });
    const byFiles = await readResultDiff(deps(), x.run, { maxBytes: 1_000_000, maxFiles: 2 });
    expect(byFiles).toMatchObject({
      state: 'ready',
      shownFiles: 2,
      truncated: '4 of 6 files left out (at most 2)',
    });
    if (byFiles.state === 'ready') expect(byFiles.files).toHaveLength(6);
    const byBytes = await readResultDiff(deps(), x.run, { maxBytes: 5_000, maxFiles: 300 });
    expect(byBytes).toMatchObject({ state: 'ready', truncated: 'the diff text was cut at 5000 bytes' });
    if (byBytes.state === 'ready') {
      expect(Buffer.byteLength(byBytes.diff)).toBeLessThanOrEqual(5_000);
      expect(byBytes.diff.endsWith('\n')).toBe(true);
      expect(byBytes.shownFiles).toBeLessThan(6);
    }
  });

  it('says "no changes" for an execution that changed nothing, "pending" for one without a commit', async () => {
    const none = await seedExecution(h, { changes: {} });
    expect(await readResultDiff(deps(), none.run)).toMatchObject({
      state: 'no_changes',
      reason: 'the execution finished without changing a file',
    });
    const running = await seedExecution(h, { status: 'running' });
    expect(await readResultDiff(deps(), running.run)).toMatchObject({
      state: 'pending',
      reason: 'the execution has not recorded a commit yet (run running)',
    });
    const failed = await seedExecution(h, { status: 'failed' });
    expect(await readResultDiff(deps(), failed.run)).toMatchObject({
      state: 'pending',
      reason: 'the execution ended failed before recording a commit',
    });
    expect(await readResultDiff(deps(), running.planRun)).toMatchObject({ state: 'not_execution' });
  });

  it('is no longer available once retention removed the branch and git pruned the commit', async () => {
    const x = await seedExecution(h);
    const report = await collectGarbage(deps(), { ttlMs: 0, now: h.clock.now() + 10_000 });
    expect(report.worktrees).toEqual([x.plan.id]);
    // The branch is gone but the commit object stays until git prunes it: the diff is still readable.
    expect((await readResultDiff(deps(), x.run)).state).toBe('ready');
    git(x.repo, 'reflog', 'expire', '--expire=now', '--all');
    git(x.repo, 'gc', '-q', '--prune=now');
    const d = await readResultDiff(deps(), x.run);
    expect(d).toMatchObject({
      state: 'unavailable',
      reason: `commit ${x.run.resultCommit!.slice(0, 12)} is no longer in the repository; its worktree and local branch were removed by retention`,
    });
  });

  it('never throws when the repository is gone', async () => {
    const x = await seedExecution(h);
    rmSync(x.repo, { recursive: true, force: true });
    expect(await readResultDiff(deps(), x.run)).toMatchObject({
      state: 'unavailable',
      reason: expect.stringContaining('the workspace repository is no longer there'),
    });
  });
});

describe('helpers', () => {
  it('parses numstat with renames and binaries', () => {
    expect(parseNumstat('1\t2\ta.txt\0-\t-\tbin\0' + '0\t0\t\0old name\0new\tname\0')).toEqual([
      { path: 'a.txt', oldPath: null, additions: 1, deletions: 2, binary: false },
      { path: 'bin', oldPath: null, additions: null, deletions: null, binary: true },
      { path: 'new\tname', oldPath: 'old name', additions: 0, deletions: 0, binary: false },
    ]);
  });

  it('cuts at a line end without splitting a character', () => {
    expect(cutAtLine('ab\ncd\n', 100)).toBe('ab\ncd\n');
    expect(cutAtLine('ab\ncd\n', 5)).toBe('ab\n');
    expect(cutAtLine('é\né\n', 4)).toBe('é\n');
    expect(cutAtLine('abcdef', 3)).toBe('');
  });
});
