import type { Plan, PlanStatus, RunDefaults } from './types.js';

/**
 * Where a plan may go from each status. The plan service (src/plans/lifecycle.ts), the only writer of plan
 * status, derives the `from` of every move from this table and refuses a move it does not list.
 * `executing -> executing` is a run resumed after a question or a restart; `approved -> executed` and
 * `approved -> execution_failed` are an execution that ended before it was seen to start.
 */
export const PLAN_TRANSITIONS: { readonly [S in PlanStatus]: readonly PlanStatus[] } = {
  pending_approval: ['approved', 'rejected', 'revision_requested', 'expired', 'superseded'],
  approved: ['executing', 'executed', 'execution_failed'],
  executing: ['executing', 'executed', 'execution_failed'],
  executed: [],
  execution_failed: [],
  rejected: [],
  revision_requested: [],
  expired: [],
  superseded: [],
};

export function isPlanTransition(from: PlanStatus, to: PlanStatus): boolean {
  return PLAN_TRANSITIONS[from].includes(to);
}

/** The statuses a plan may reach `to` from, in the table's order of statuses. */
export function planSourcesOf(to: PlanStatus): PlanStatus[] {
  return (Object.keys(PLAN_TRANSITIONS) as PlanStatus[]).filter((from) => isPlanTransition(from, to));
}

/**
 * THE expiry rule, the one definition of "expired": a plan pending approval is expired from its
 * `expiresAt` on (inclusive). The presenters, the decision rules and the pages read it through
 * `planStatusAt`; the store's sweep (`expirePlans`) and its listing filter state the same condition in SQL.
 */
export function isPlanOverdue(plan: Pick<Plan, 'status' | 'expiresAt'>, now: number): boolean {
  return plan.status === 'pending_approval' && plan.expiresAt <= now;
}

/** The status a plan has at `now`: its stored one, but a pending plan past its expiry reads expired before the sweep has written it so. */
export function planStatusAt(plan: Pick<Plan, 'status' | 'expiresAt'>, now: number): PlanStatus {
  return isPlanOverdue(plan, now) ? 'expired' : plan.status;
}

/** The terms a plan carries from its proposal on: resolved by the plan service alone (src/plans/policy.ts). */
export type PlanTerms = Pick<
  Plan,
  'approvalsRequired' | 'allowSelfApproval' | 'executeMode' | 'network' | 'expiresAt'
>;

/** What a plan's terms are resolved from, as the plan phase hands it in (src/plans/policy.ts `planTerms`). */
export interface PlanTermsInput {
  /** The run's options: its job's or trigger's. */
  overrides: RunDefaults;
  /** Its session's defaults. */
  defaults: RunDefaults;
  /** The configuration's `plans`: how long a plan waits for approval, how many approvals it needs by default. */
  plans: { ttl_ms: number; approvals_required: number };
  /** The configuration's execute.network_default_domains: the list `network: true` stands for. */
  networkDefaults: readonly string[];
}

/**
 * A plan as the plan phase proposes it: every new plan starts pending approval, undecided, unfailed. Its
 * terms are not the phase's to set: it hands in what they are made from (`terms`), the plan service
 * resolves them.
 */
export type ProposedPlan = Omit<
  Plan,
  'status' | 'decidedAt' | 'failureReason' | 'approvals' | 'delivery' | keyof PlanTerms
> & { terms: PlanTermsInput };

/**
 * What the agent's phases write of a plan: the plan phase proposes it, the execute phase carries it out.
 * Implemented by the plan service (src/plans/lifecycle.ts); a port here so the agent does not import it.
 */
export interface PlanRecorder {
  propose(plan: ProposedPlan): Promise<Plan>;
  startExecution(planId: string): Promise<boolean>;
  finishExecution(planId: string): Promise<boolean>;
  failExecution(planId: string, reason: string): Promise<boolean>;
}
