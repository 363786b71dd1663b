import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { PlanningBase, Run, Session } from '../domain/types.js';
import { checkoutCommit, removeCheckout } from '../workspace/checkout.js';
import { headCommit, inGitRepository, prefixInRepository } from '../workspace/git.js';
import { HiddenPaths } from '../workspace/hidden.js';
import { movedSince } from '../workspace/moved.js';
import { checkoutPath, workRoot } from '../workspace/paths.js';
import { uncommittedChanges } from '../workspace/uncommitted.js';
import type { PhaseDeps } from './phase.js';

// Plans are made from what executes. A plan run in a git workspace reads a clean, detached checkout of the
// commit its execution will start from (the workspace's HEAD when the run first opens), never the person's
// working tree with its uncommitted edits, which the execution (a worktree of that commit, worktree.ts) does
// not have. What the workspace had uncommitted then is recorded with the run and the plan, so the people
// approving it know what the plan did not see. A pull request's or commit event's run has a checkout of its
// own (`Run.checkout`, checkout.ts); a plain directory, or a repository without a commit, is read as it is.

/** Where a git workspace's plan run reads. */
export interface PlanningTree {
  /** The session's workspace: the repository the checkout belongs to. */
  repo: string;
  /** The checkout's top: `<work root>/checkouts/<run id>`. */
  top: string;
  /** Where the session works in it: `top`, or the same subdirectory of it as the session's workspace. */
  root: string;
  /** The session's subdirectory relative to the top (`''`, or `sub/dir/` as git says it). */
  prefix: string;
  base: PlanningBase;
}

/**
 * The planning checkout of a plan run without a `checkout` in a git workspace; null for a plain directory or a
 * repository without a commit (the plan phase reads the workspace itself, and a plan of an unborn repository
 * records no commit: its execution is refused). The base is fixed when the run first opens and stored with
 * the run before the checkout is made, so a run that continues (after an answer, or a restart of the daemon)
 * reads the same commit, its checkout made again if it went.
 */
export async function planningTree(
  deps: PhaseDeps,
  run: Run,
  session: Session,
): Promise<PlanningTree | null> {
  // The kind was fixed when the session was made; a session from before that is judged now.
  const git =
    session.workspaceKind === 'git' ||
    (session.workspaceKind === null && (await inGitRepository(session.workspace)));
  if (!git) return null;
  let base = run.planningBase ?? null;
  if (!base) {
    const head = await headCommit(session.workspace);
    if (!head) return null;
    base = { commit: head, uncommitted: await uncommittedChanges(session.workspace) };
    await deps.store.updateRun(run.id, { planningBase: base });
    run.planningBase = base;
  }
  const top = await checkoutCommit(
    session.workspace,
    base.commit,
    checkoutPath(workRoot(deps.config), run.id),
  );
  const prefix = await prefixInRepository(session.workspace);
  const root = prefix === '' ? top : join(top, prefix);
  // A subdirectory with nothing committed in it yet is not in the checkout: the session still reads there.
  await mkdir(root, { recursive: true });
  return { repo: session.workspace, top, root, prefix, base };
}

/**
 * What the plan tools refuse in the checkout: the daemon's hidden paths; again, at their place in the checkout,
 * those the workspace holds (a configuration file committed by a workspace from before that was refused); and
 * the checkout's `.git` file, which names where the repository lies on the host.
 */
export function planningHidden(hidden: HiddenPaths, tree: PlanningTree): HiddenPaths {
  const inCheckout = hidden.alsoIn(tree.repo, tree.root);
  return new HiddenPaths([
    ...inCheckout.entries,
    {
      path: join(tree.top, '.git'),
      name: "planning checkout's .git file",
      what: "the planning checkout's link to its repository",
      fix: null,
    },
  ]);
}

/** The planning checkout goes once the run has ended; not while it waits (it continues there). */
export async function removePlanningTree(tree: PlanningTree): Promise<void> {
  await removeCheckout(tree.repo, tree.top);
}

/**
 * What a revision round is told when it reads another commit than the plan it revises was made from: the
 * workspace moved on between the rounds, so what the earlier rounds read may have changed. Null when it did
 * not move.
 */
export async function movedBetweenRounds(
  tree: PlanningTree,
  previous: string | null,
): Promise<string | null> {
  const now = tree.base.commit;
  if (!previous || previous === now) return null;
  const moved = await movedSince(tree.repo, previous, now);
  const short = (sha: string) => sha.slice(0, 12);
  if (!moved) {
    return `The workspace is now at commit ${short(now)}, which does not descend from ${short(previous)}, the commit the previous plan was made from: read again what the revised plan relies on.`;
  }
  const listed = moved.changed.slice(0, 20);
  const more =
    moved.changed.length > listed.length ? `, and ${moved.changed.length - listed.length} more` : '';
  const files = listed.length > 0 ? ` Changed since: ${listed.join(', ')}${more}.` : '';
  return `The workspace moved on from commit ${short(previous)} to ${short(now)} (${moved.commits} commit${moved.commits === 1 ? '' : 's'}) since the previous plan; this round reads ${short(now)}, and so does its execution.${files} Read again what the revised plan relies on.`;
}
