import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { commonGitDir, git, headCommit, prefixInRepository, withRepoLock, worktreeGitDir } from './git.js';

export class StaleBaseError extends Error {
  constructor(
    readonly planned: string,
    readonly current: string | null,
  ) {
    super(
      `the workspace moved from ${planned.slice(0, 12)} to ${current?.slice(0, 12) ?? 'nothing'} since the plan was made`,
    );
  }
}

export const branchFor = (planId: string) => `drydock/${planId}`;

/** Where an execution works when its workspace is a git repository. */
export interface ExecutionTree {
  /** The top of the worktree drydock made for the plan. */
  top: string;
  /** Where the session works: `top`, or the same subdirectory of it as the session's workspace. */
  root: string;
  /** The session's subdirectory relative to the top (`''`, or `sub/dir/` as git says it). */
  prefix: string;
  /** The worktree's administrative git directory, inside the repository (see `worktreeGitDir`). */
  gitDir: string;
  /** The repository's shared git directory (objects, refs, its configuration). */
  commonDir: string;
}

/**
 * The execute phase of a plan made in a git repository works in its own worktree, on branch
 * `drydock/<plan id>`, checked out at the commit the plan was made against: the person's checkout is never
 * touched. A session on a subdirectory of the repository works in the same subdirectory of the worktree, so
 * a plan's relative paths mean the same files in both phases. Refuses (StaleBaseError) when the repository's
 * HEAD is no longer that commit. A pull request's plan is pinned to the PR's head instead (`checkBase`
 * false): a new push supersedes it before it can run.
 */
export async function prepareWorktree(
  repo: string,
  planId: string,
  base: string,
  worktrees: string,
  checkBase = true,
  /**
   * An execution that starts over (its replica stopped or died midway): what the earlier attempt left, its
   * worktree and branch, is removed and made again at `base`. The base was checked by that first attempt.
   */
  startOver = false,
): Promise<ExecutionTree> {
  // Absolute: git resolves a relative path against the repository, drydock against its own directory.
  const top = resolve(worktrees, planId);
  if (startOver) await removeWorktree(repo, top, branchFor(planId));
  if (!existsSync(top)) {
    // Not resumed after a restart: the worktree is made now.
    if (checkBase && !startOver) {
      const head = await headCommit(repo);
      if (head !== base) throw new StaleBaseError(base, head);
    }
    await mkdir(dirname(top), { recursive: true });
    await withRepoLock(repo, () => git(repo, ['worktree', 'add', '-q', '-b', branchFor(planId), top, base]));
  }
  const [commonDir, prefix] = await Promise.all([commonGitDir(repo), prefixInRepository(repo)]);
  const gitDir = await worktreeGitDir(commonDir, top);
  const root = prefix === '' ? top : join(top, prefix);
  // A subdirectory with nothing committed in it yet is not in the worktree: the session still works there.
  await mkdir(root, { recursive: true });
  return { top, root, prefix, gitDir, commonDir };
}

export interface ExecutionResult {
  commit: string | null;
  diffStat: string;
  changedFiles: string[];
}

/**
 * Commits what the execution changed in the session's part of the worktree, referencing the plan; returns the
 * commit and what changed. git works on the worktree through its pinned git directory.
 */
export async function commitExecution(
  tree: ExecutionTree,
  base: string,
  plan: { id: string; sha256: string; title: string },
): Promise<ExecutionResult> {
  const run = (args: string[]) => git(tree.top, args, { gitDir: tree.gitDir });
  const scope = tree.prefix === '' ? '.' : tree.prefix;
  await run(['add', '-A', '--', scope]);
  const staged = (await run(['diff', '--cached', '--name-only'])).trim() !== '';
  if (staged) {
    const message = `${plan.title}\n\nCarries out drydock plan ${plan.id}.\n\nDrydock-Plan: ${plan.id}\nDrydock-Plan-Sha256: ${plan.sha256}\n`;
    await run(['commit', '-q', '--no-verify', '-m', message]);
  }
  const commit = await headCommit(tree.top, tree.gitDir);
  const diffStat = (await run(['diff', '--stat', base, 'HEAD'])).trim();
  const changedFiles = (await run(['diff', '--name-only', base, 'HEAD'])).split('\n').filter(Boolean);
  return { commit: commit !== base ? commit : null, diffStat, changedFiles };
}

/** The worktree through its repository (so git forgets it), then its directory, then its local branch. */
export async function removeWorktree(
  repo: string | null,
  path: string,
  branch: string | null,
): Promise<void> {
  if (repo && existsSync(repo)) {
    await withRepoLock(repo, async () => {
      await git(repo, ['worktree', 'remove', '--force', path]).catch(() => undefined);
      await git(repo, ['worktree', 'prune']).catch(() => undefined);
      if (branch) await git(repo, ['branch', '-D', branch]).catch(() => undefined);
    });
  }
  // Whatever git left (or a worktree whose repository is gone).
  await rm(path, { recursive: true, force: true });
}
