import { allows } from '../auth/tokens.js';
import { latitudeOf } from '../domain/loosening.js';
import { networkDomains } from '../domain/network.js';
import type { PlanTerms, PlanTermsInput } from '../domain/plan-status.js';
import { selfApprovalBar } from '../domain/self-approval.js';
import type { Decision, Plan, Role } from '../domain/types.js';

// THE ONE PLACE FOR A PLAN'S TERMS. What a plan carries when it is proposed (approvals required, expiry,
// execute mode, self-approval, network) and who may approve it and why not are decided here and nowhere
// else. Everything else asks:
// - the plan service resolves a new plan's terms with `planTerms` (PlanLifecycle.propose; the plan phase only
//   hands in the inputs, through the PlanRecorder port),
// - the decision rules (decisions.ts) refuse with `approvalRefusal` and complete a plan with `quorumReached`,
// - the API answers with those refusals (403 self_approval, 409 already_approved),
// - the web pages (ui/pages/plan.ts, ui/pages/queue.ts) show `decideRefusal` / `approvalRefusal` and the
//   tally of `approversWith` before anyone clicks,
// - the pull request comment commands (triggers/service.ts) refuse a login with `decideRefusal` and decide
//   through the rules.
// So a change to the quorum rule (how many approvals a plan needs, who counts, who may not approve) is a
// change to this file only; tests/plans/policy.test.ts holds the surfaces to it.
//
// Pure: no store, no clock (times are arguments), no configuration read here (its values are arguments).

/**
 * The terms of a plan made at `createdAt`: each from the run's options (its job's or trigger's), else its
 * session's defaults, else the configuration (approvals) or the strictest (execute mode, network,
 * self-approval: the resolution domain/loosening.ts checks changes with). The network is the list of host
 * names itself, as it is now (`true` reads as today's default list): what approvers see and what executes.
 */
export function planTerms(input: PlanTermsInput, createdAt: number): PlanTerms {
  const { overrides: o, defaults: d } = input;
  const latitude = latitudeOf(o, d);
  return {
    approvalsRequired: o.approvals_required ?? d.approvals_required ?? input.plans.approvals_required,
    allowSelfApproval: latitude.allow_self_approval,
    executeMode: latitude.execute_mode,
    network: networkDomains(latitude.network, input.networkDefaults),
    expiresAt: createdAt + input.plans.ttl_ms,
  };
}

/** Why a person may not approve a plan: one code per reason. */
export type ApprovalBar =
  /** None of their roles may decide plans (a viewer). */
  | 'role'
  /** They requested the plan, and its terms do not allow self-approval. */
  | 'requester'
  /** They own the plan's session, and its terms do not allow self-approval. */
  | 'owner'
  /** They approved this plan already: one approval per person. */
  | 'already_approved';

/** The domain error code each refusal is answered with (the API's status follows from it). */
export const BAR_ERROR = {
  role: 'forbidden',
  requester: 'self_approval',
  owner: 'self_approval',
  already_approved: 'already_approved',
} as const satisfies Record<ApprovalBar, string>;

export interface Refusal {
  code: ApprovalBar;
  /** Said to the person refused, as the pages show it: "you requested this plan; someone else must approve it". */
  reason: string;
  /** Said about them, as the API and a comment's answer give it: "alice requested this plan and cannot approve it (…)". */
  message: string;
}

/** Who asks. */
export interface Approver {
  identity: string;
  /**
   * The roles their tokens hold (a web page's viewer has one; a GitHub login mapped to an identity has every
   * role of that identity's tokens). Unset: the caller checked the role already (the API's `requires('decide')`).
   */
  roles?: readonly Role[];
}

/** Why `who` may not decide plans at all (approve, reject or revise), or null when they may. */
export function decideRefusal(who: Approver): Refusal | null {
  if (who.roles === undefined || who.roles.some((r) => allows(r, 'decide'))) return null;
  const held = who.roles.length ? who.roles.join(', ') : 'none';
  return {
    code: 'role',
    reason: `your role (${held}) may read plans but not decide them`,
    message: `${who.identity} holds no token that may decide plans (approver, operator or admin)`,
  };
}

const SELF_APPROVAL_OFF = '(allow_self_approval is off); rejecting or revising is allowed';

/**
 * Why `who` may not approve `plan` now, given the decisions recorded on it, or null when they may. The checks
 * in order: the role, then self-approval (the requester, then the session owner), then a second approval.
 * Whether the plan is still pending is the decision rules' (decisions.ts) and the pages' own question.
 */
export function approvalRefusal(
  plan: Pick<Plan, 'id' | 'requestedBy' | 'owner' | 'allowSelfApproval'>,
  decisions: readonly Pick<Decision, 'kind' | 'identity'>[],
  who: Approver,
): Refusal | null {
  const role = decideRefusal(who);
  if (role) return role;
  const id = who.identity;
  const bar = selfApprovalBar(plan, id);
  if (bar === 'requester') {
    return {
      code: 'requester',
      reason: 'you requested this plan; someone else must approve it',
      message: `${id} requested this plan and cannot approve it ${SELF_APPROVAL_OFF}`,
    };
  }
  if (bar === 'owner') {
    return {
      code: 'owner',
      reason: 'you own its session; someone else must approve it',
      message: `${id} owns the session of this plan and cannot approve it ${SELF_APPROVAL_OFF}`,
    };
  }
  if (approversOf(decisions).includes(id)) {
    return {
      code: 'already_approved',
      reason: 'you already approved it',
      message: `${id} already approved plan ${plan.id}`,
    };
  }
  return null;
}

/** The people whose approvals count, in the order they approved. */
export function approversOf(decisions: readonly Pick<Decision, 'kind' | 'identity'>[]): string[] {
  return [...new Set(decisions.filter((d) => d.kind === 'approve').map((d) => d.identity))];
}

/** The approvers once `identity` approves too (they count once). */
export function approversWith(
  decisions: readonly Pick<Decision, 'kind' | 'identity'>[],
  identity: string,
): string[] {
  const approvers = approversOf(decisions);
  return approvers.includes(identity) ? approvers : [...approvers, identity];
}

/** THE quorum rule: a plan is approved once this many distinct people approved it. */
export function quorumReached(plan: Pick<Plan, 'approvalsRequired'>, approvers: readonly string[]): boolean {
  return approvers.length >= plan.approvalsRequired;
}
