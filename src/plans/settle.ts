import { isFinishedRunStatus, type LoggedEvent, type Plan } from '../domain/types.js';
import type { Logger } from '../logger.js';
import type { Reaction } from '../reactions/reactions.js';
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
 * failed before its phase opened (a missing session, a worktree that could not be made), a throw, a cancel.
 *
 * A reaction (src/reactions/) to `run_finished` in the stored event log: a crash between a run's end and its
 * plan's settling settles it after the restart. Settling is idempotent: a plan already `executed` or
 * `execution_failed` is left as it is (the lifecycle moves only `approved` or `executing`). What the log cannot
 * tell, runs that vanished or ended while no daemon was there to write their end, `reconcile` finds at start.
 */
export class ExecutionSettler implements Reaction {
  readonly name = 'plan_settling';
  readonly types = [RUN_FINISHED] as const;

  constructor(private readonly deps: Deps) {}

  /** Settles the plan of an execute run that finished (a plan run's end changes nothing). */
  async react(event: LoggedEvent): Promise<void> {
    await this.deps.lifecycle.settleExecuteRun(event.runId);
  }

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
