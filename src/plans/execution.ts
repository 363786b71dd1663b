import { isFinishedRunStatus, type Plan, type RunEvent } from '../domain/types.js';
import type { Logger } from '../logger.js';
import { RUN_FINISHED } from '../runs/events.js';
import type { PlanStore } from '../store/store.js';
import { type PlanLifecycle, runEnd } from './lifecycle.js';

interface Deps {
  store: PlanStore;
  logger: Logger;
  /** Writes the plans' statuses. */
  lifecycle: PlanLifecycle;
}

/**
 * A plan's execution follows its execute run: once that run has ended, the plan is `executed` or
 * `execution_failed`, never left `approved` or `executing`. The execute phase records the result and the
 * failures it sees itself, with their detail (ExecutePhase.finish); this catches every other end: a run that
 * failed before its phase opened (a missing session, a worktree that could not be made), a throw, a cancel,
 * and, at start, runs that ended or vanished while no daemon was watching.
 */
export class PlanExecutions {
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly deps: Deps) {}

  /** For RunEvents.subscribeAll: settles the plan of each execute run that finishes. Never throws. */
  readonly onEvent = (event: RunEvent): void => {
    if (event.type !== RUN_FINISHED) return;
    const settling = this.deps.lifecycle
      .settleExecuteRun(event.runId)
      .catch((err) =>
        this.deps.logger.warn({ err, run_id: event.runId }, 'could not settle the plan of an execute run'),
      )
      .finally(() => this.pending.delete(settling));
    this.pending.add(settling);
  };

  /**
   * On start, after the run queue recovered (runs it retries are queued again and left alone): plans still
   * `approved` or `executing` whose execute run has ended, or no longer exists, become `execution_failed`.
   */
  async reconcile(): Promise<number> {
    const { store, logger, lifecycle } = this.deps;
    let failed = 0;
    for (const status of ['executing', 'approved'] as const) {
      for (const plan of await this.all(status)) {
        const run = (await store.listPlanRuns(plan)).filter((r) => r.executesPlanId === plan.id).pop();
        if (run && !isFinishedRunStatus(run.status)) continue;
        const reason = run
          ? `its execute run ${run.id} had ended ${runEnd(run)} when drydock started`
          : 'its execute run no longer exists (found when drydock started)';
        if (await lifecycle.failExecution(plan.id, reason, status)) {
          logger.warn({ plan_id: plan.id, run_id: run?.id ?? null, reason }, 'plan execution failed');
          failed += 1;
        }
      }
    }
    return failed;
  }

  /** Waits for settlements under way (before the store closes). */
  async close(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  private async all(status: Plan['status']): Promise<Plan[]> {
    const plans: Plan[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.deps.store.listPlans({ status, summary: true, limit: 200, cursor });
      plans.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return plans;
  }
}
