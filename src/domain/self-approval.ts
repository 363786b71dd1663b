import type { Plan } from './types.js';

/**
 * Separation of duties, the one rule: unless a plan allows self-approval, whoever requested it or owns its
 * session may not be the one who lets it act: neither approve the plan (plans/policy.ts) nor allow one of its
 * execution's parked tool calls (runs/service.ts, the tool-approval page). Rejecting, revising and denying
 * stay open to them. Returns which tie bars `identity` (the requester first), or null.
 */
export function selfApprovalBar(
  plan: Pick<Plan, 'requestedBy' | 'owner' | 'allowSelfApproval'>,
  identity: string,
): 'requester' | 'owner' | null {
  if (plan.allowSelfApproval) return null;
  if (plan.requestedBy === identity) return 'requester';
  if (plan.owner === identity) return 'owner';
  return null;
}
