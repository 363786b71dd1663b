import type { Clock } from '../clock.js';
import { DomainError } from '../domain/errors.js';
import { planStatusAt } from '../domain/plan-status.js';
import type { Decision, DecisionKind, Plan, Run, Session } from '../domain/types.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import type { RunEvents } from '../runs/events.js';
import type { RunQueue } from '../runs/queue.js';
import type { DecisionEffect, NewRun, PlanStore, RunStore, SessionStore } from '../store/store.js';
import type { PlanLifecycle } from './lifecycle.js';
import { approvalRefusal, approversWith, BAR_ERROR, quorumReached } from './policy.js';
import { planFreshness, staleMessage } from './staleness.js';

/** A refused decision; its code says why. */
export class DecisionError extends DomainError<
  | 'not_found'
  | 'conflict'
  | 'stale'
  | 'expired'
  | 'sha256_mismatch'
  | 'self_approval'
  | 'already_approved'
  | 'forbidden'
> {}

export interface DecisionInput {
  identity: string;
  comment?: string | undefined;
  /** The plan text the person saw; when given it must be the plan's current sha256. */
  sha256?: string | undefined;
}

export interface DecisionOutcome {
  plan: Plan;
  decision: Decision;
  /** The execute run an approval started, or the revision round a revise started. */
  run: Run | null;
}

/**
 * Approve, reject, revise. Each is recorded with who, when, their comment and the plan sha256 they saw.
 * The rules (status, expiry, sha256, and policy.ts's self-approval and quorum) are checked inside the
 * store's transaction against the plan's freshest state, so of concurrent decisions exactly one can
 * complete a plan.
 */
export class PlanDecisions {
  constructor(
    private readonly deps: {
      store: PlanStore & RunStore & SessionStore;
      clock: Clock;
      logger: Logger;
      events: RunEvents;
      queue: RunQueue;
      /** Records the decision and the plan's new status. */
      lifecycle: PlanLifecycle;
    },
  ) {}

  async decide(planId: string, kind: DecisionKind, input: DecisionInput): Promise<DecisionOutcome> {
    const { store, clock, events, queue, lifecycle } = this.deps;
    const plan = await store.getPlan(planId);
    if (!plan) throw new DecisionError('not_found', `plan ${planId} not found`);
    const session = await store.getSession(plan.sessionId);
    const source = await store.getRun(plan.runId);
    if (!session || !source)
      throw new DecisionError('conflict', `plan ${planId} has lost its session or run`);
    const movedTo =
      kind === 'approve' && plan.status === 'pending_approval' ? await this.checkFresh(plan, session) : null;

    const now = clock.now();
    // The decision and its plan_decided event are written by one transaction.
    const receipt = events.withDecision('plan_decided', (d) => ({
      plan_id: d.plan.id,
      decision: kind,
      identity: input.identity,
      comment: input.comment ?? null,
      sha256: d.decision.sha256,
      plan_status: d.plan.status,
      run_id: d.run?.id ?? null,
    }));
    const result = await lifecycle.decide(
      planId,
      (fresh, decisions) => rule(fresh, decisions, kind, { ...input, movedTo }, now, source),
      receipt,
    );
    if (result.run) queue.submit(result.run);
    return result;
  }

  /**
   * Approving a stale plan is refused (staleness.ts `planFreshness`, the one rule). A plan whose workspace
   * moved on without touching what it read is approvable: the head it was judged on, which its execution
   * starts from, or null when it executes on its own commit.
   */
  private async checkFresh(plan: Plan, session: Session): Promise<string | null> {
    const f = await planFreshness(plan, session.workspace);
    if (f?.state === 'stale') throw new DecisionError('stale', staleMessage(plan, f));
    return f?.state === 'moved_on' ? f.head : null;
  }
}

/** The decision rules: pure, run inside the store's transaction. Throws DecisionError to refuse. */
function rule(
  plan: Plan,
  decisions: Decision[],
  kind: DecisionKind,
  input: DecisionInput & { movedTo: string | null },
  now: number,
  source: Run,
): DecisionEffect {
  checkOpen(plan, input, now);
  const decision: Decision = {
    id: newId('dec'),
    planId: plan.id,
    kind,
    identity: input.identity,
    comment: input.comment ?? null,
    sha256: plan.sha256,
    createdAt: now,
  };
  if (kind === 'reject') return { decision, planStatus: 'rejected' };
  const next = continuation(plan, source, now);
  if (kind === 'revise')
    return { decision, planStatus: 'revision_requested', run: revision(plan, input, next, source) };
  return approval(plan, decisions, decision, next, input.movedTo);
}

/** What every decision needs: a plan still pending, not past its expiry, and (when given) the text it has. */
function checkOpen(plan: Plan, input: DecisionInput, now: number): void {
  if (planStatusAt(plan, now) === 'expired') {
    throw new DecisionError(
      'expired',
      `plan ${plan.id} expired at ${new Date(plan.expiresAt).toISOString()}`,
    );
  }
  if (plan.status !== 'pending_approval') {
    throw new DecisionError('conflict', `plan ${plan.id} is ${plan.status}, no longer pending approval`);
  }
  if (input.sha256 !== undefined && input.sha256 !== plan.sha256) {
    throw new DecisionError('sha256_mismatch', `plan ${plan.id} is not the text you saw (sha256 differs)`);
  }
}

type Continuation = Omit<NewRun, 'id' | 'prompt' | 'phase'>;

/** What a run a decision starts shares with the run that proposed the plan. */
function continuation(plan: Plan, source: Run, now: number): Continuation {
  return {
    sessionId: plan.sessionId,
    jobId: plan.jobId,
    slotAt: null,
    source: plan.source,
    requestedBy: plan.requestedBy,
    createdAt: now,
    overrides: source.overrides,
    // A pull request's later rounds and execution stay tied to it (supersede, reporting back).
    ...(plan.subject ? { subject: plan.subject } : {}),
    ...(source.triggerId ? { triggerId: source.triggerId } : {}),
  };
}

/**
 * The next planning round. Its prompt records the request in words for people; what the model is told is
 * worded by the plan phase from the revise decision (agent/plan-phase.ts `opening`).
 */
function revision(plan: Plan, input: DecisionInput, next: Continuation, source: Run): NewRun {
  return {
    ...next,
    id: newId('run'),
    phase: 'plan',
    prompt: `${input.identity} asked for changes to plan ${plan.id}:\n\n${input.comment ?? ''}`,
    // A revision round appends to the plan's conversation.
    conversationId: plan.conversationId,
    revisesPlanId: plan.id,
    // A revision of a pull request's plan explores the same head commit again.
    ...(source.checkout ? { checkout: source.checkout } : {}),
  };
}

/**
 * An approval: refused when the policy bars this person (policy.ts `approvalRefusal`), recorded, and once the
 * quorum is reached (`quorumReached`) the plan is approved and its execution starts.
 */
function approval(
  plan: Plan,
  decisions: Decision[],
  decision: Decision,
  next: Continuation,
  /** The head the workspace moved on to without touching the plan's footprint: the execution starts there. */
  movedTo: string | null,
): DecisionEffect {
  const refusal = approvalRefusal(plan, decisions, { identity: decision.identity });
  if (refusal) throw new DecisionError(BAR_ERROR[refusal.code], refusal.message);
  const approvers = approversWith(decisions, decision.identity);
  if (!quorumReached(plan, approvers)) return { decision };
  return {
    decision,
    planStatus: 'approved',
    ...(movedTo ? { executionBase: movedTo } : {}),
    run: {
      ...next,
      id: newId('run'),
      phase: 'execute',
      // In words for people; what the model is told is worded by the execute phase from the plan and its
      // decisions (agent/execute-phase.ts `opening`).
      prompt: `Execute plan ${plan.id}, approved by ${approvers.join(', ')}.`,
      executesPlanId: plan.id,
      // No conversationId: the execute phase is a conversation of its own, opened with the approved plan
      // (see ExecutePhase.opening).
    },
  };
}
