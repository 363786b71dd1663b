import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PlanTermsInput } from '../../src/domain/plan-status.js';
import type { Decision, Plan } from '../../src/domain/types.js';
import {
  approvalRefusal,
  approversOf,
  approversWith,
  BAR_ERROR,
  decideRefusal,
  planTerms,
  quorumReached,
} from '../../src/plans/policy.js';
import { prSubject } from '../../src/triggers/fire-context.js';
import { createHarness, type Harness } from '../support/harness.js';
import { processedWebhookDelivery } from '../support/webhook-deliveries.js';
import { commentPayload, REPO, SECRET, sign } from '../triggers/helpers.js';
import { seedPlan, signIn, ui } from '../ui/helpers.js';

// src/plans/policy.ts is the one place for a plan's terms and for who may approve it. The functions are
// tested here directly, and then the places that use them (the API's answer, the plan page, the pull
// request comment command) are held to them on one refused case and one allowed case: they say what the
// policy says, in the policy's words.

const INPUT: PlanTermsInput = {
  overrides: {},
  defaults: {},
  plans: { ttl_ms: 3_600_000, approvals_required: 1 },
  networkDefaults: ['registry.npmjs.org'],
};

const plan = (over: Partial<Plan> = {}) => ({
  id: 'pln_1',
  requestedBy: 'alice',
  owner: 'olivia',
  allowSelfApproval: false,
  approvalsRequired: 2,
  ...over,
});
const approved = (...who: string[]): Pick<Decision, 'kind' | 'identity'>[] =>
  who.map((identity) => ({ kind: 'approve', identity }));

describe('planTerms', () => {
  it('with nothing set: the configured approvals and expiry, the strictest execute mode, network and self-approval', () => {
    expect(planTerms(INPUT, 1_000)).toEqual({
      approvalsRequired: 1,
      allowSelfApproval: false,
      executeMode: 'manual',
      network: [],
      expiresAt: 3_601_000,
    });
  });

  it("takes each term from the run's options over its session's defaults", () => {
    const terms = planTerms(
      {
        ...INPUT,
        overrides: { approvals_required: 3, network: ['Example.com'] },
        defaults: { approvals_required: 2, execute_mode: 'edits', allow_self_approval: true, network: true },
      },
      0,
    );
    expect(terms).toEqual({
      approvalsRequired: 3,
      allowSelfApproval: true,
      executeMode: 'edits',
      network: ['example.com'],
      expiresAt: 3_600_000,
    });
    // `network: true` is the configured default list, as it is when the plan is made.
    expect(planTerms({ ...INPUT, defaults: { network: true } }, 0).network).toEqual(['registry.npmjs.org']);
  });
});

describe('who may approve', () => {
  it('refuses the requester, then the session owner, then a second approval, each with its own code', () => {
    expect(approvalRefusal(plan(), [], { identity: 'alice' })).toMatchObject({
      code: 'requester',
      reason: 'you requested this plan; someone else must approve it',
      message:
        'alice requested this plan and cannot approve it (allow_self_approval is off); rejecting or revising is allowed',
    });
    expect(approvalRefusal(plan(), [], { identity: 'olivia' })?.code).toBe('owner');
    expect(approvalRefusal(plan(), approved('bob'), { identity: 'bob' })).toMatchObject({
      code: 'already_approved',
      reason: 'you already approved it',
      message: 'bob already approved plan pln_1',
    });
    expect(approvalRefusal(plan(), approved('bob'), { identity: 'carol' })).toBeNull();
    // Self-approval allowed: the requester and the owner may approve, once.
    const lenient = plan({ allowSelfApproval: true });
    expect(approvalRefusal(lenient, [], { identity: 'alice' })).toBeNull();
    expect(approvalRefusal(lenient, [], { identity: 'olivia' })).toBeNull();
    expect(approvalRefusal(lenient, approved('alice'), { identity: 'alice' })?.code).toBe('already_approved');
    expect(BAR_ERROR).toEqual({
      role: 'forbidden',
      requester: 'self_approval',
      owner: 'self_approval',
      already_approved: 'already_approved',
    });
  });

  it('checks the role only when the roles are given, and first', () => {
    const viewer = { identity: 'alice', roles: ['viewer'] as const };
    expect(decideRefusal(viewer)).toEqual({
      code: 'role',
      reason: 'your role (viewer) may read plans but not decide them',
      message: 'alice holds no token that may decide plans (approver, operator or admin)',
    });
    expect(approvalRefusal(plan(), [], viewer)?.code).toBe('role');
    expect(decideRefusal({ identity: 'x', roles: [] })?.reason).toBe(
      'your role (none) may read plans but not decide them',
    );
    expect(decideRefusal({ identity: 'x', roles: ['viewer', 'approver'] })).toBeNull();
    expect(decideRefusal({ identity: 'x' })).toBeNull();
  });

  it('the quorum: distinct approvers, in the order they approved, reaching approvals_required', () => {
    const decisions: Pick<Decision, 'kind' | 'identity'>[] = [
      ...approved('bob'),
      { kind: 'revise', identity: 'carol' },
      ...approved('dan'),
    ];
    expect(approversOf(decisions)).toEqual(['bob', 'dan']);
    expect(approversWith(approved('bob'), 'carol')).toEqual(['bob', 'carol']);
    expect(approversWith(approved('bob'), 'bob')).toEqual(['bob']);
    expect(quorumReached(plan(), ['bob'])).toBe(false);
    expect(quorumReached(plan(), ['bob', 'carol'])).toBe(true);
  });
});

describe('the places that use the policy agree with it', () => {
  // A GitHub login mapped to the approver's identity (the harness's approver token is approver-user's).
  const LOGIN = 'octo-approver';
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness({
      patch: (c) => {
        c.github.webhook_secrets = [SECRET];
        c.github.users = { [LOGIN]: 'approver-user' };
      },
    });
  });
  afterEach(async () => {
    await h.close();
  });

  /** A pending plan of pull request `number` (its comment commands reach it). */
  const pullRequestPlan = (number: number, o: Parameters<typeof seedPlan>[1] = {}) =>
    seedPlan(h, { ...o, subject: prSubject(REPO, number) });

  async function pagePhrase(planId: string): Promise<string> {
    const me = await signIn(h.app, h.tokens.approver);
    return (await ui(h.app, 'GET', `/ui/plans/${planId}`, { cookie: me.cookie })).text;
  }

  const apiApprove = (p: Plan) =>
    h.call('POST', `/v1/plans/${p.id}/approve`, { role: 'approver', body: { sha256: p.sha256 } });

  /** `/drydock approve` commented by LOGIN on pull request `number`, once the inbox has processed it. */
  async function commentApprove(number: number): Promise<{ outcome: string; detail: string }> {
    const raw = JSON.stringify(commentPayload('/drydock approve', LOGIN, number));
    const r = await h.call('POST', '/webhooks/github', {
      token: null,
      rawBody: raw,
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(raw)),
        'x-github-event': 'issue_comment',
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': sign(raw),
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    return processedWebhookDelivery(
      (method, path) => h.call(method, path, { role: 'admin' }),
      r.body.delivery_id,
    );
  }

  it('refused: the requester is told so by the policy, the page, the API and the comment command alike', async () => {
    const own = { requestedBy: 'approver-user' };
    const forPage = await pullRequestPlan(1, own);
    const forApi = await pullRequestPlan(2, own);
    const forComment = await pullRequestPlan(3, own);
    const refusal = approvalRefusal(forPage.plan, [], { identity: 'approver-user', roles: ['approver'] });
    expect(refusal?.code).toBe('requester');

    expect(await pagePhrase(forPage.plan.id)).toContain(`— not offered: ${refusal!.reason}.</span>`);

    const api = await apiApprove(forApi.plan);
    expect(api.status).toBe(403);
    expect(api.body.error).toEqual({ code: BAR_ERROR[refusal!.code], message: refusal!.message });

    const comment = await commentApprove(3);
    expect(comment.outcome).toBe('rejected');
    expect(comment.detail).toBe(`${BAR_ERROR[refusal!.code]}: ${refusal!.message}`);

    for (const seeded of [forApi, forComment]) {
      expect(await h.store.listDecisions(seeded.plan.id)).toEqual([]);
      expect((await h.store.getPlan(seeded.plan.id))!.status).toBe('pending_approval');
    }
  });

  it('allowed: a plan of someone else is offered, accepted and counted alike, short of its quorum of 2', async () => {
    const terms = { requestedBy: 'operator-user', approvalsRequired: 2 };
    const forPage = await pullRequestPlan(1, terms);
    const forApi = await pullRequestPlan(2, terms);
    await pullRequestPlan(3, terms);
    const asker = { identity: 'approver-user', roles: ['approver'] as const };
    expect(approvalRefusal(forPage.plan, [], asker)).toBeNull();
    const tally = approversWith([], asker.identity);
    expect(quorumReached(forPage.plan, tally)).toBe(false);

    const page = await pagePhrase(forPage.plan.id);
    expect(page).toContain(
      '<input type="radio" name="decision" id="decision-approve" value="approve" required>',
    );
    expect(page).toContain(`(${tally.length} of 2 approvals with yours)`);

    const api = await apiApprove(forApi.plan);
    expect(api.status, JSON.stringify(api.body)).toBe(200);
    expect(api.body.plan).toMatchObject({ status: 'pending_approval', approvals: tally.length });
    expect(api.body.run).toBeNull();

    const comment = await commentApprove(3);
    expect(comment.outcome, comment.detail).toBe('accepted');
    expect(comment.detail).toMatch(/^approve by approver-user: plan pln_\S+ is pending_approval$/);

    // Approved once, the same person is refused a second time, by the policy and the API in one voice.
    const decisions = await h.store.listDecisions(forApi.plan.id);
    const again = approvalRefusal(forApi.plan, decisions, asker);
    expect(again?.code).toBe('already_approved');
    const second = await apiApprove(forApi.plan);
    expect(second.status).toBe(409);
    expect(second.body.error).toEqual({ code: 'already_approved', message: again!.message });
  });
});
