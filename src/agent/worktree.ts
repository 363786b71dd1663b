import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { git, headCommit, withRepoLock } from './git.js';

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

/**
 * The execute phase of a plan made in a git repository works in its own worktree, on branch
 * `drydock/<plan id>`, checked out at the commit the plan was made against: the person's checkout is never
 * touched. Refuses (StaleBaseError) when the repository's HEAD is no longer that commit. A pull request's
 * plan is pinned to the PR's head instead (`checkBase` false): a new push supersedes it before it can run.
 */
export async function prepareWorktree(
  repo: string,
  planId: string,
  base: string,
  root: string,
  checkBase = true,
): Promise<string> {
  const path = join(root, planId);
  if (existsSync(path)) return path; // resumed after a restart: the worktree is already there
  if (checkBase) {
    const head = await headCommit(repo);
    if (head !== base) throw new StaleBaseError(base, head);
  }
  await mkdir(dirname(path), { recursive: true });
  await withRepoLock(repo, () => git(repo, ['worktree', 'add', '-q', '-b', branchFor(planId), path, base]));
  return path;
}

export interface ExecutionResult {
  commit: string | null;
  diffStat: string;
  changedFiles: string[];
}

/** Commits everything the execution changed, referencing the plan; returns the commit and what changed. */
export async function commitExecution(
  worktree: string,
  base: string,
  plan: { id: string; sha256: string; title: string },
): Promise<ExecutionResult> {
  await git(worktree, ['add', '-A']);
  const dirty = (await git(worktree, ['status', '--porcelain'])).trim() !== '';
  if (dirty) {
    const message = `${plan.title}\n\nCarries out drydock plan ${plan.id}.\n\nDrydock-Plan: ${plan.id}\nDrydock-Plan-Sha256: ${plan.sha256}\n`;
    await git(worktree, ['commit', '-q', '--no-verify', '-m', message]);
  }
  const commit = await headCommit(worktree);
  const diffStat = (await git(worktree, ['diff', '--stat', base, 'HEAD'])).trim();
  const changedFiles = (await git(worktree, ['diff', '--name-only', base, 'HEAD']))
    .split('\n')
    .filter(Boolean);
  return { commit: commit !== base ? commit : null, diffStat, changedFiles };
}

/** The first heading or line of a plan, for a commit subject. */
export function planTitle(markdown: string): string {
  const line = markdown.split('\n').find((l) => l.trim() !== '') ?? 'drydock plan';
  const title = line.replace(/^#+\s*/, '').trim();
  return title.length > 72 ? `${title.slice(0, 69)}...` : title;
}
