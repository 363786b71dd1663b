import { readdir } from 'node:fs/promises';
import { isFinishedRunStatus, type Plan, type PlanStatus, type Run } from '../domain/types.js';
import type { PlanStore, RunStore, SessionStore } from '../store/store.js';
import { checkoutPath, checkoutsDir, worktreePath, worktreesDir } from './paths.js';
import { deliveryRefs } from './replay.js';
import { branchFor, removeWorktree } from './worktree.js';

// Retention: an execution's worktree (<work root>/worktrees/<plan id>, on branch drydock/<plan id>) and a plan
// run's checkout (<work root>/checkouts/<run id>: a pull request's, or a git workspace's commit) are kept for people to look at, then removed once
// their plan or run has been settled for `ttlMs`. Never while anything can still use them: a plan that is
// approved or executing, a run that has not ended. Without this, every execution leaves a worktree and a
// branch behind and the disk only grows. Branches pushed elsewhere are the remote's to keep; only the local
// branch goes (and what a delivery kept beside it: replay.ts). An executed plan's delivery (src/delivery/) must have ended first: delivered, failed or off.

/** Plans whose worktree nothing will use again. */
const SETTLED: ReadonlySet<PlanStatus> = new Set<PlanStatus>([
  'executed',
  'execution_failed',
  'rejected',
  'expired',
  'superseded',
]);

export interface RetentionReport {
  /** Worktrees removed (plan ids), and with them their local branches. */
  worktrees: string[];
  /** Pull request checkouts removed (run ids). */
  checkouts: string[];
  /** Still kept: in use, or settled less than the retention time ago. */
  kept: number;
  failed: { path: string; error: string }[];
}

export async function collectGarbage(
  deps: { store: PlanStore & RunStore & SessionStore; workRoot: string },
  opts: { ttlMs: number; now: number; dryRun?: boolean },
): Promise<RetentionReport> {
  const { store, workRoot } = deps;
  const report: RetentionReport = { worktrees: [], checkouts: [], kept: 0, failed: [] };
  const cutoff = opts.now - opts.ttlMs;

  for (const planId of await entries(worktreesDir(workRoot))) {
    const top = worktreePath(workRoot, planId);
    try {
      const plan = await store.getPlan(planId);
      let repo: string | null = null;
      if (plan) {
        if (!SETTLED.has(plan.status) || deliveryUnsettled(plan)) {
          report.kept += 1;
          continue;
        }
        const runs = await store.listPlanRuns(plan);
        if (runs.some((r) => !isFinishedRunStatus(r.status))) {
          report.kept += 1;
          continue;
        }
        const settledAt = Math.max(
          plan.decidedAt ?? plan.createdAt,
          plan.delivery?.settledAt ?? 0,
          ...runs.map((r) => r.finishedAt ?? 0),
        );
        if (settledAt > cutoff) {
          report.kept += 1;
          continue;
        }
        // A plain workspace's execution ran on a copy: git has nothing to forget there, and is never run in it.
        const session = await store.getSession(plan.sessionId);
        repo = session && session.workspaceKind !== 'plain' ? session.workspace : null;
      }
      if (!opts.dryRun) await removeWorktree(repo, top, branchFor(planId), deliveryRefs(planId));
      report.worktrees.push(planId);
    } catch (err) {
      report.failed.push({ path: top, error: (err as Error).message });
    }
  }

  for (const runId of await entries(checkoutsDir(workRoot))) {
    const path = checkoutPath(workRoot, runId);
    try {
      const run = await store.getRun(runId);
      if (run && (!isFinishedRunStatus(run.status) || (run.finishedAt ?? 0) > cutoff)) {
        report.kept += 1;
        continue;
      }
      if (!opts.dryRun) await removeWorktree(await checkoutRepo(store, run), path, null);
      report.checkouts.push(runId);
    } catch (err) {
      report.failed.push({ path, error: (err as Error).message });
    }
  }
  return report;
}

/**
 * The repository a run's checkout belongs to: a pull request's or commit event's clone, or the git workspace a
 * plan run read a checkout of (agent/planning-base.ts). Null: unknown (the run is gone); the directory alone goes.
 */
async function checkoutRepo(store: SessionStore, run: Run | null): Promise<string | null> {
  if (run?.checkout) return run.checkout.clone;
  if (!run?.planningBase) return null;
  const session = await store.getSession(run.sessionId);
  return session && session.workspaceKind !== 'plain' ? session.workspace : null;
}

/**
 * An executed plan is settled only once its delivery is (delivered, failed, or off): the branch is what gets
 * pushed, so it stays while the delivery worker has not looked at the plan yet, or a delivery waits or retries.
 */
function deliveryUnsettled(plan: Plan): boolean {
  if (plan.status !== 'executed') return false;
  const status = plan.delivery?.status ?? null;
  return status === null || status === 'pending' || status === 'retrying';
}

async function entries(dir: string): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true }).catch(() => []))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}
