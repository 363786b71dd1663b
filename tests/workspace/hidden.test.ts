import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hiddenPaths, overlapOf, realPathOf } from '../../src/workspace/hidden.js';
import { tempDir } from '../support/harness.js';

const dirs: { remove(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});
function temp(): string {
  const d = tempDir('drydock-hidden-list-');
  dirs.push(d);
  return d.path;
}

describe('the list of hidden paths', () => {
  it('holds the data directory, the work directory when set, the config file when given, and /proc', () => {
    const base = temp();
    const config = { data_dir: join(base, 'data'), work_dir: null };
    expect(hiddenPaths(config).paths).toEqual([join(base, 'data'), '/proc']);
    const all = hiddenPaths({ ...config, work_dir: join(base, 'work') }, join(base, 'drydock.yaml'));
    expect(all.paths).toEqual([join(base, 'data'), join(base, 'work'), join(base, 'drydock.yaml'), '/proc']);
    // One frozen array: what the sandbox is given can never change under it.
    expect(Object.isFrozen(all.paths)).toBe(true);
    expect(all.paths).toBe(all.paths);
  });

  it('judges by real path, also for a directory not made yet', () => {
    const base = temp();
    mkdirSync(join(base, 'real'));
    symlinkSync(join(base, 'real'), join(base, 'link'));
    expect(realPathOf(join(base, 'link', 'data', 'x'))).toBe(join(base, 'real', 'data', 'x'));
    const hidden = hiddenPaths({ data_dir: join(base, 'link', 'data'), work_dir: null });
    expect(hidden.real()[0]!.real).toBe(join(base, 'real', 'data'));
  });

  it('below(root) is what a tool in root refuses: nothing of a hidden directory that holds the root', () => {
    const base = temp();
    const hidden = hiddenPaths({ data_dir: join(base, 'data'), work_dir: null });
    expect(hidden.below(base).map((h) => h.real)).toEqual([join(base, 'data')]);
    // An execution's worktree lives in the data directory: its tools see the worktree whole.
    expect(hidden.below(join(base, 'data', 'worktrees', 'pln_1'))).toEqual([]);
    expect(hidden.below(join(base, 'data'))).toEqual([]);
    expect(hidden.below('/').map((h) => h.real)).toEqual([join(base, 'data'), '/proc']);
  });

  it('overlapOf tells a workspace that holds a hidden path from one inside it', () => {
    const base = temp();
    const hidden = hiddenPaths({ data_dir: join(base, 'data'), work_dir: null });
    expect(overlapOf(hidden, base)).toMatchObject({ holds: true, hidden: { name: 'data directory' } });
    expect(overlapOf(hidden, join(base, 'data', 'x'))).toMatchObject({ holds: false });
    expect(overlapOf(hidden, join(base, 'elsewhere'))).toBeNull();
    expect(overlapOf(hidden, join(base, 'data-2'))).toBeNull();
  });
});
