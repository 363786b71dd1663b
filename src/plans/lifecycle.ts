import type { Clock } from '../clock.js';
import {
  isPlanTransition,
  type PlanRecorder,
  type ProposedPlan,
  planSourcesOf,
} from '../domain/plan-status.js';
import { type Decision, isFinishedRunStatus, type Plan, type PlanStatus, type Run } from '../domain/types.js';
import type { Logger } from '../logger.js';
import type { RunEvents } from '../runs/events.js';
import type { DecidedPlan, DecisionEffect, DecisionReceipt, PlanStore, RunStore } from '../store/store.js';
import { planTerms } from './policy.js';

/**
 * The plan service: the ONLY code that writes a plan's status (the store's createPlan, decidePlan,
 * transitionPlan, expirePlans and supersedePlans are called from here and nowhere else; a test holds
 * that). Every move is checked against the legal transitions (src/domain/plan-status.ts).
 *
 * The cut: this class says WHAT happens to a plan and applies it; the modules around it say WHEN.
 * - PlanDecisions (decisions.ts) holds the pure decision rules and the approval's freshness check, and
 *   records a decision through `decide`; a plan's terms and who may approve it are policy.ts's.
 * - The agent's phases propose (`propose`) and carry out (`startExecution`, `finishExecution`,
 *   `failExecution`) through a narrow port (`PlanRecorder`, src/domain/plan-status.ts), so `agent/`
 *   never imports `plans/`.
 * - ExecutionSettler (settle.ts) follows execute runs (run events, the start-up reconcile) and settles
 *   their plans through `settleExecuteRun` / `failExecution`; the run service's cancel reaches
 *   `settleExecuteRun` through a callback the daemon wires, so `runs/` never imports `plans/`.
 * - The pull request intake supersedes (`supersede`); the daemon's periodic sweep expires (`expire`).
 *   Pages and presenters never write: they read an overdue plan as expired through `planStatusAt`.
 */
export class PlanLifecycle implements PlanRecorder {
  constructor(
    private readonly deps: {
      store: PlanStore & RunStore;
      clock: Clock;
      logger: Logger;
      /** Where `plan_closed` is logged for each plan superseded or expired (what reactions such as reports read). */
      events?: Pick<RunEvents, 'emit'>;
    },
  ) {}

  /** The same service on another view of the store (a run's executor writes through its fenced one). */
  on(store: PlanStore & RunStore): PlanLifecycle {
    return new PlanLifecycle({ ...this.deps, store });
  }

  /**
   * Stores a newly proposed plan, pending approval, with the terms in force now (policy.ts `planTerms`):
   * they travel with the plan, whatever its session or job says later.
   */
  propose({ terms, ...plan }: ProposedPlan): Promise<Plan> {
    return this.deps.store.createPlan({
      ...plan,
      ...planTerms(terms, plan.createdAt),
      status: 'pending_approval',
      decidedAt: null,
      failureReason: null,
    });
  }

  /**
   * Records a decision atomically: `rule` (pure, may throw to refuse) computes the effect from the plan's
   * freshest row inside the store's transaction; a status it asks for must be a legal move. `receipt`, the
   * decision's event, is written by that same transaction.
   */
  decide(
    planId: string,
    rule: (plan: Plan, decisions: Decision[]) => DecisionEffect,
    receipt?: DecisionReceipt,
  ): Promise<DecidedPlan> {
    return this.deps.store.decidePlan(
      planId,
      (fresh, decisions) => {
        const effect = rule(fresh, decisions);
        if (effect.planStatus) legal(fresh.status, effect.planStatus);
        return effect;
      },
      receipt,
    );
  }

  /** approved (or executing, for a run resumed after a question or a restart) -> executing; whether it moved. */
  startExecution(planId: string): Promise<boolean> {
    return this.move(planId, 'executing');
  }

  /** The execution's result is recorded: -> executed. */
  finishExecution(planId: string): Promise<boolean> {
    return this.move(planId, 'executed');
  }

  /**
   * -> execution_failed with the reason a person reads. `only` narrows the statuses it may leave (a plan
   * seen in that status and no other); by default every status the table allows.
   */
  failExecution(planId: string, reason: string, only?: PlanStatus): Promise<boolean> {
    return this.move(planId, 'execution_failed', reason, only);
  }

  /**
   * Fails the plan of an execute run that has ended (failed, canceled, interrupted, …) while the plan still
   * waits on it; whether it did. A plan whose execution recorded its own outcome is left alone.
   */
  async settleExecuteRun(runId: string): Promise<boolean> {
    const { store, logger } = this.deps;
    const run = await store.getRun(runId);
    if (!run?.executesPlanId || !isFinishedRunStatus(run.status)) return false;
    const reason = `the execute run ${run.id} ended ${runEnd(run)} before the plan's result was recorded`;
    const failed = await this.failExecution(run.executesPlanId, reason);
    if (failed) logger.warn({ plan_id: run.executesPlanId, run_id: run.id, reason }, 'plan execution failed');
    return failed;
  }

  /**
   * A pull request moved on (new commits, or closed): its plans still pending approval become superseded,
   * but those of runs `exceptDelivery` started. Their ids.
   */
  async supersede(subject: string, exceptDelivery?: string): Promise<string[]> {
    legal('pending_approval', 'superseded');
    const ids = await this.deps.store.supersedePlans(subject, exceptDelivery, this.deps.clock.now());
    await this.closed(ids, 'superseded');
    return ids;
  }

  /** The sweep: pending plans past their expiry (isPlanOverdue) are written expired; how many. */
  async expire(now: number = this.deps.clock.now()): Promise<number> {
    legal('pending_approval', 'expired');
    const ids = await this.deps.store.expirePlans(now);
    await this.closed(ids, 'expired');
    return ids.length;
  }

  /**
   * Logs `plan_closed` on the run of each plan that just left pending approval undecided. After the change (unlike
   * `plan_decided`, which the decision's transaction writes): a process that dies in between leaves the plan
   * closed without the event (its check run then keeps its buttons, which decide nothing: the plan is no longer
   * pending).
   */
  private async closed(ids: string[], status: 'superseded' | 'expired'): Promise<void> {
    const { events, store } = this.deps;
    if (!events) return;
    for (const id of ids) {
      const plan = await store.getPlan(id);
      if (plan) await events.emit(plan.runId, 'plan_closed', { plan_id: id, plan_status: status });
    }
  }

  private async move(planId: string, to: PlanStatus, reason?: string, only?: PlanStatus): Promise<boolean> {
    if (only !== undefined) legal(only, to);
    const from = only !== undefined ? [only] : planSourcesOf(to);
    return this.deps.store.transitionPlan(
      planId,
      from,
      to,
      reason !== undefined ? { failureReason: reason } : {},
    );
  }
}

/** A move the table does not list is a bug in drydock, not a person's mistake: it throws. */
function legal(from: PlanStatus, to: PlanStatus): void {
  if (!isPlanTransition(from, to)) {
    throw new Error(`PlanLifecycle: a plan cannot go from ${from} to ${to}`);
  }
}

/** How a run ended, for a failure reason: `(status: error)`. */
export function runEnd(run: Run): string {
  return `(${run.status}${run.error ? `: ${run.error}` : ''})`;
}
