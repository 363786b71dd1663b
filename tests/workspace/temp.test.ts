import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { removeOwnTempDirs, removeStaleTempDirs } from '../../src/workspace/temp.js';
import { tempDir } from '../support/harness.js';

// Temporary directories drydock makes are removed when it stops, and those of stopped processes when another
// starts (issue 23, point 10): before, each process left a drydock-git-home-* behind for ever.

let tmp: { path: string; remove(): void };
beforeEach(() => {
  tmp = tempDir('drydock-temp-test-');
});
afterEach(() => tmp.remove());

/** A pid no process has now: one that ran and exited. */
function deadPid(): number {
  const r = spawnSync('/bin/sh', ['-c', 'echo $$'], { encoding: 'utf8' });
  return Number(r.stdout.trim());
}

it('at start, removes the directories of drydock processes that are gone, and only those', () => {
  const dead = deadPid();
  const names = [
    `drydock-git-home-${dead}-abc`,
    `drydock-home-${dead}-def`,
    `drydock-egress-${dead}-ghi`,
    `drydock-git-home-${process.pid}-mine`,
    `drydock-git-home-1-init`, // pid 1 is alive
    'drydock-git-home-abc', // an old name without a pid: not judged
    'unrelated-dir',
  ];
  for (const n of names) mkdirSync(join(tmp.path, n));
  const removed = removeStaleTempDirs(tmp.path).sort();
  expect(removed).toEqual(names.slice(0, 3).sort());
  expect(readdirSync(tmp.path).sort()).toEqual(names.slice(3).sort());
});

it('when stopping, removes this process own directories', () => {
  mkdirSync(join(tmp.path, `drydock-home-${process.pid}-x`));
  mkdirSync(join(tmp.path, 'drydock-home-1-y'));
  expect(removeOwnTempDirs(tmp.path)).toEqual([`drydock-home-${process.pid}-x`]);
  expect(existsSync(join(tmp.path, 'drydock-home-1-y'))).toBe(true);
});
