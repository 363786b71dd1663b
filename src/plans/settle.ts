import { isFinishedRunStatus, type LoggedEvent, type Plan } from '../domain/types.js';
import type { Logger } from '../logger.js';
import type { Reaction } from '../reactions/reactions.js';
import { RUN_FINISHED } from '../runs/events.js';
import type { PlanStore, ReactionCursorStore, RunStore } from '../store/store.js';
import { type PlanLifecycle, runEnd } from './lifecycle.js';

/** Events read at a time when the start-up looks for what the reaction still has to read. */
const PAGE = 500;

interface Deps {
  store: PlanStore & ReactionCursorStore & Pick<RunStore, 'eventsAfter'>;
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
 * plan's settling settles it after the restart, by the reaction. Settling is idempotent: a plan already `executed` or
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
   * On start, after the run queue recovered (runs it retries are queued again and left alone) and the
   * reactions' cursors were placed: plans still `approved` or `executing` whose execute run has ended, or no
   * longer exists, become `execution_failed`. A run whose `run_finished` lies after this reaction's cursor is
   * left to the reaction, which reads it next: only what the log cannot tell is settled here.
   */
  async reconcile(): Promise<number> {
    const { store, logger, lifecycle } = this.deps;
    const awaited = await this.unreadEnds();
    let failed = 0;
    for (const status of ['executing', 'approved'] as const) {
      for (const plan of await this.all(status)) {
        const run = (await store.listPlanRuns(plan)).filter((r) => r.executesPlanId === plan.id).pop();
        if (run && (!isFinishedRunStatus(run.status) || awaited.has(run.id))) continue;
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

  /** The runs whose `run_finished` this reaction has not read yet (none before its cursor is placed). */
  private async unreadEnds(): Promise<Set<string>> {
    const { store } = this.deps;
    const runs = new Set<string>();
    let cursor = await store.reactionCursor(this.name);
    while (cursor !== null) {
      const { events } = await store.eventsAfter(cursor, this.types, PAGE);
      for (const e of events) runs.add(e.runId);
      if (events.length < PAGE) break;
      cursor = events[events.length - 1]!.rowid;
    }
    return runs;
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
