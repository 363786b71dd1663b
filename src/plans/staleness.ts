import { compileGlob } from '../agent/tools/glob-pattern.js';
import type { PlanFootprint } from '../domain/footprint.js';
import { planStatusAt } from '../domain/plan-status.js';
import type { Plan } from '../domain/types.js';
import type { SessionStore } from '../store/store.js';
import { headCommit } from '../workspace/git.js';
import { type MovedOn, movedSince } from '../workspace/moved.js';

// THE ONE PLACE THAT SAYS WHETHER A PLAN IS STALE. A plan made against a commit of a git workspace stays
// approvable when the workspace moved on, as long as none of the commits since touch the plan's footprint
// (domain/footprint.ts: what its plan phase read, searched and named); then it executes on the new head.
// Everything asks `planFreshness`: the approval (decisions.ts, and through it the API, the pages' decision
// box, the pull request comment commands and the check run buttons), the queue page, the plan page and the
// API's plan presentation. Conservative: a base that is no longer an ancestor of the head, or a plan without
// a footprint, is stale as soon as the head moved.

/** current: the head is the plan's commit; moved_on: it moved, touching nothing of the footprint. */
export type FreshnessState = 'current' | 'moved_on' | 'stale';

/** Why a plan is stale. */
export type StaleReason =
  /** A commit since the plan's changes a file it read, searched or names. */
  | 'footprint_changed'
  /** The plan's commit is not in the head's history any more (rewritten, force-pushed, gone), or no head. */
  | 'base_gone'
  /** Nothing of what the plan read was recorded (an older plan, or reads drydock cannot bound). */
  | 'no_footprint';

export interface Freshness {
  state: FreshnessState;
  /** The workspace's head now (null: it has no commit). */
  head: string | null;
  /** Commits on the head since the plan's commit; null when the plan's commit is not in its history. */
  commitsBehind: number | null;
  /** Of the paths changed since the plan's commit, those in its footprint (at most `MAX_LISTED`). */
  changedReadFiles: string[];
  reason: StaleReason | null;
}

/** How many of the changed paths that count are listed. */
export const MAX_LISTED = 20;

/** Answers shared by the plans of one page: heads per workspace, moves per workspace and commit. */
export type FreshnessMemo = Map<string, Promise<unknown>>;

function memoized<T>(memo: FreshnessMemo | undefined, key: string, get: () => Promise<T>): Promise<T> {
  if (!memo) return get();
  if (!memo.has(key)) memo.set(key, get());
  return memo.get(key) as Promise<T>;
}

/**
 * Whether `plan` may still be approved, judged against the git workspace at `workspace` (its session's) now.
 * Null when the rule does not apply: a plan of a plain workspace (no commit), or a pull request's plan, which
 * is pinned to the PR's head and superseded by a new push instead.
 */
export async function planFreshness(
  plan: Pick<Plan, 'workspaceCommit' | 'subject' | 'footprint'>,
  workspace: string,
  memo?: FreshnessMemo,
): Promise<Freshness | null> {
  const base = plan.workspaceCommit;
  if (!base || plan.subject) return null;
  const head = await memoized(memo, `head\0${workspace}`, () => headCommit(workspace));
  if (head === base) {
    return { state: 'current', head, commitsBehind: 0, changedReadFiles: [], reason: null };
  }
  const moved = head
    ? await memoized<MovedOn | null>(memo, `moved\0${workspace}\0${base}\0${head}`, () =>
        movedSince(workspace, base, head),
      )
    : null;
  if (!moved) return { state: 'stale', head, commitsBehind: null, changedReadFiles: [], reason: 'base_gone' };
  const behind = { head, commitsBehind: moved.commits };
  if (!plan.footprint) return { state: 'stale', ...behind, changedReadFiles: [], reason: 'no_footprint' };
  const hits = touching(plan.footprint, moved.changed);
  if (hits.length === 0) return { state: 'moved_on', ...behind, changedReadFiles: [], reason: null };
  return {
    state: 'stale',
    ...behind,
    changedReadFiles: hits.slice(0, MAX_LISTED),
    reason: 'footprint_changed',
  };
}

/**
 * `planFreshness` for a plan still pending approval at `now`, against its session's workspace; null for a
 * decided or expired plan (nothing is approved any more) and where the rule does not apply.
 */
export async function pendingFreshness(
  store: SessionStore,
  plan: Plan,
  now: number,
): Promise<Freshness | null> {
  if (planStatusAt(plan, now) !== 'pending_approval') return null;
  const session = await store.getSession(plan.sessionId);
  return session ? planFreshness(plan, session.workspace) : null;
}

/** The paths of `changed` (workspace-relative) that the footprint counts. Pure. */
export function touching(footprint: PlanFootprint, changed: readonly string[]): string[] {
  const files = new Set(footprint.files);
  const globs = footprint.globs.map((g) => ({ dir: g.dir, regex: globRegex(g.pattern) }));
  return changed.filter(
    (path) =>
      files.has(path) ||
      footprint.dirs.some((d) => below(d, path) !== null) ||
      globs.some((g) => {
        const rel = below(g.dir, path);
        // A pattern that does not compile bounds nothing: anything below its directory counts.
        return rel !== null && (g.regex === null || g.regex.test(rel));
      }),
  );
}

/** `path` relative to `dir` when it is `dir` itself or lies below it (`.`: the whole workspace), else null. */
function below(dir: string, path: string): string | null {
  if (dir === '.') return path;
  if (path === dir) return '';
  return path.startsWith(`${dir}/`) ? path.slice(dir.length + 1) : null;
}

function globRegex(pattern: string): RegExp | null {
  try {
    return compileGlob(pattern).regex;
  } catch {
    return null;
  }
}

/** Why a plan is stale, in a sentence that names it (the API's 409, a comment's answer, the pages). */
export function staleMessage(plan: Pick<Plan, 'id' | 'workspaceCommit'>, f: Freshness): string {
  const base = (plan.workspaceCommit ?? '').slice(0, 12);
  const head = f.head?.slice(0, 12) ?? 'no commit';
  const commits = f.commitsBehind === 1 ? '1 commit' : `${f.commitsBehind} commits`;
  const why =
    f.reason === 'footprint_changed'
      ? `the workspace moved on by ${commits} since ${base}, and they change what this plan read or touches: ${f.changedReadFiles.join(', ')}`
      : f.reason === 'no_footprint'
        ? `it was made against ${base}, the workspace is now at ${head}, and what this plan read was not recorded`
        : f.head
          ? `the commit it was made against (${base}) is no longer in the history of the workspace's head (${head})`
          : `it was made against ${base}, and the workspace has no commit`;
  return `plan ${plan.id} is stale: ${why}; revise it or plan again`;
}

/** The page's line for a plan that may still be approved on a moved head. */
export function movedOnMessage(f: Freshness): string {
  const n = f.commitsBehind ?? 0;
  return `workspace moved on by ${n} commit${n === 1 ? '' : 's'}; none touch what this plan read`;
}
