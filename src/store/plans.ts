import type { DecisionEffect } from '../domain/plan-decision.js';
import type { Decision, Page, Plan, PlanStatus, Run, RunEvent, RunStatus } from '../domain/types.js';
import type { Fence } from './leases.js';

/** What a decision recorded: the plan after it, the decision, and the run it started (or null). */
export interface DecidedPlan {
  plan: Plan;
  decision: Decision;
  run: Run | null;
}

/**
 * The event a decision logs (plan_decided, RunEvents.withDecision makes it), written by the decision's own
 * transaction on the log of the run that proposed the plan: a decision is never recorded without its event,
 * even when the process dies right after.
 */
export interface DecisionReceipt {
  /** When it is written (ms). */
  at: number;
  /** The event, made from what the transaction recorded. */
  event(decided: DecidedPlan): { type: string; data: Record<string, unknown> };
  /** Called with the stored event once the transaction committed. */
  stored(event: RunEvent): void;
}

export interface PlanFilter {
  status?: PlanStatus | undefined;
  /**
   * With status pending_approval: only plans still decidable at this time (not past their expiry); with
   * status expired: also pending plans past their expiry at this time, before the sweep writes them so.
   */
  activeAt?: number | undefined;
  /** Rows for a listing: the markdown is cut to its first 300 characters. */
  summary?: boolean | undefined;
  sessionId?: string | undefined;
  jobId?: string | undefined;
  triggerId?: string | undefined;
  /** Only plans this identity requested. */
  requestedBy?: string | undefined;
  /** Only plans proposed before this time (the queue's "older than N days"). */
  createdBefore?: number | undefined;
  /** oldest (the default): oldest first; newest: newest first (a cursor continues in the same order). */
  order?: 'oldest' | 'newest' | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** Plans and their decisions; a decision creates the run it starts in the same transaction. */
export interface PlanStore {
  /** Stores a proposed plan; a second pending plan of one run is refused (ConflictError) by a unique index. */
  createPlan(plan: Plan, fence?: Fence): Promise<Plan>;
  getPlan(id: string): Promise<Plan | null>;
  findPlan(runId: string, toolUseId: string): Promise<Plan | null>;
  /** The queue: oldest first (or newest first), keyset-paginated. */
  listPlans(filter: PlanFilter): Promise<Page<Plan>>;
  /** Moves whenever any plan or decision is written, by any process on this database. */
  plansVersion(): Promise<number>;
  listDecisions(planId: string): Promise<Decision[]>;
  /** The runs of a plan: the one that proposed it, its revision round, its execution. Oldest first. */
  listPlanRuns(plan: Plan): Promise<Run[]>;
  /**
   * Records a decision atomically: re-reads the plan and its approvals inside one transaction, calls
   * `decide` (pure, may throw to refuse), then writes the decision, the plan's new status and the run it
   * starts, and with `receipt` its event. Concurrent decisions serialize here; a second execute run for one
   * plan is refused by a unique index.
   */
  decidePlan(
    planId: string,
    decide: (plan: Plan, decisions: Decision[]) => DecisionEffect,
    receipt?: DecisionReceipt,
  ): Promise<DecidedPlan>;
  /** Moves a plan between statuses; false when it was not in one of `from`. */
  transitionPlan(
    id: string,
    from: readonly PlanStatus[],
    to: PlanStatus,
    fields?: { failureReason?: string | null },
    fence?: Fence,
  ): Promise<boolean>;
  /** Pending plans past their expiry at `now` (isPlanOverdue, src/domain/plan-status.ts) become expired; their ids. */
  expirePlans(now: number): Promise<string[]>;
  /**
   * Statuses of the newest execute runs that ended since `since` (for the circuit breaker); runs whose error
   * begins with TREE_REFUSED (src/domain/types.ts) are not among them.
   */
  recentExecutions(since: number, limit: number): Promise<RunStatus[]>;

  // ---- plans of a subject (a pull request)
  /**
   * Pending plans of a subject become superseded (decided at `now`), but those of runs `exceptDelivery`
   * started; their ids.
   */
  supersedePlans(subject: string, exceptDelivery: string | undefined, now: number): Promise<string[]>;
  /** The newest plan of a subject still pending approval. */
  pendingPlanForSubject(subject: string): Promise<Plan | null>;
}
