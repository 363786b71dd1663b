import { describe, expect, it } from 'vitest';
import { selfApprovalBar } from '../../src/domain/self-approval.js';
import { approvalRefusal } from '../../src/plans/policy.js';

const plan = { id: 'p1', requestedBy: 'alice', owner: 'olga', allowSelfApproval: false };

describe('selfApprovalBar: who may not let their own plan act', () => {
  it('bars the requester first, then the session owner, and nobody else', () => {
    expect(selfApprovalBar(plan, 'alice')).toBe('requester');
    expect(selfApprovalBar(plan, 'olga')).toBe('owner');
    expect(selfApprovalBar({ ...plan, owner: 'alice' }, 'alice')).toBe('requester');
    expect(selfApprovalBar(plan, 'bob')).toBeNull();
  });

  it('bars nobody on a plan that allows self-approval', () => {
    const open = { ...plan, allowSelfApproval: true };
    expect(selfApprovalBar(open, 'alice')).toBeNull();
    expect(selfApprovalBar(open, 'olga')).toBeNull();
  });

  it("is the plan approval's rule too: the refusal codes follow it", () => {
    for (const who of ['alice', 'olga', 'bob']) {
      const refusal = approvalRefusal(plan, [], { identity: who });
      expect(refusal?.code ?? null).toBe(selfApprovalBar(plan, who));
    }
  });
});
