import { git } from './git.js';

// How a git workspace moved on from the commit a plan was made against: what the staleness rule
// (plans/staleness.ts) weighs a plan's footprint against.

const SHA = /^[0-9a-f]{40,64}$/;

export interface MovedOn {
  /** Commits on `head` that `base` does not have (`git rev-list --count base..head`). */
  commits: number;
  /**
   * Every path changed between the two commits, relative to `dir` and only below it (a session on a
   * subdirectory sees nothing else); a rename counts as both its old and its new path.
   */
  changed: string[];
}

/**
 * What changed in the work tree at `dir` from `base` to `head`, or null when `base` is not an ancestor of
 * `head` any more: the commit is gone, or the history was rewritten (a force push, a rebase, a reset to
 * another line). Anything git cannot answer is null as well: the caller treats it as stale.
 */
export async function movedSince(dir: string, base: string, head: string): Promise<MovedOn | null> {
  if (!SHA.test(base) || !SHA.test(head)) return null;
  try {
    // Exit 1: not an ancestor; 128: no such commit. Both, and any other failure, throw.
    await git(dir, ['merge-base', '--is-ancestor', base, head], { timeoutMs: 30_000 });
    const [count, names] = await Promise.all([
      git(dir, ['rev-list', '--count', `${base}..${head}`], { timeoutMs: 30_000 }),
      // --no-renames: a renamed file is its deletion and its addition, so both of its names are listed.
      git(dir, ['diff', '--name-only', '-z', '--no-renames', '--relative', base, head, '--'], {
        timeoutMs: 30_000,
      }),
    ]);
    return { commits: Number(count.trim()), changed: names.split('\0').filter((n) => n !== '') };
  } catch {
    return null;
  }
}
