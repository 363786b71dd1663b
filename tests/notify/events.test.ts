import { describe, expect, it } from 'vitest';
import type { Decision, LoggedEvent, Plan, PlanDelivery, Run } from '../../src/domain/types.js';
import { announce } from '../../src/notify/announce.js';
import type { Facts } from '../../src/notify/facts.js';
import { type Envelope, escapeWithin, renderBody, SLACK_LIMITS, slackBody } from '../../src/notify/format.js';
import { blockKitProblems } from './receiver.js';

// The events a decision and a delivery announce (plan.approved, plan.rejected, delivery.succeeded), the fields
// every payload carries, and the Block Kit body for Slack. Pure: announce() and the renderers, no store.

const at = Date.parse('2026-06-01T08:00:00Z');
const ev = (type: string, data: Record<string, unknown>, runId = 'run_p'): LoggedEvent => ({
  rowid: 9,
  runId,
  seq: 4,
  type,
  data,
  at,
});
const run = (patch: Partial<Run>): Run =>
  ({ id: 'run_p', sessionId: 'ses_1', executesPlanId: null, ...patch }) as Run;
const plan = (patch: Partial<Plan> = {}): Plan =>
  ({
    id: 'pln_1',
    markdown: '## Add a greeting\n\nsteps',
    failureReason: null,
    approvalsRequired: 2,
    ...patch,
  }) as Plan;
const decision = (identity: string, kind: Decision['kind'] = 'approve'): Decision => ({
  id: `dec_${identity}`,
  planId: 'pln_1',
  kind,
  identity,
  comment: null,
  sha256: 'sha',
  createdAt: at,
});
const facts = (patch: Partial<Facts> = {}): Facts => ({
  repository: 'acme/widgets',
  workspace: '/srv/widgets',
  pullRequest: { repository: 'acme/widgets', number: 7, url: 'https://github.com/acme/widgets/pull/7' },
  job: null,
  trigger: { id: 'trg_1', name: 'improve' },
  requestedBy: 'github:octocat',
  decisions: [],
  cost: { planUsd: 0.0123, executionUsd: null },
  ...patch,
});
const ctx = (patch: { run?: Run; plan?: Plan; facts?: Facts } = {}) => ({
  run: patch.run ?? run({}),
  plan: patch.plan ?? plan(),
  publicUrl: 'https://d.example',
  facts: patch.facts ?? facts(),
});
const decided = (identity: string, decision: string, plan_status: string, comment: string | null = null) =>
  ev('plan_decided', {
    plan_id: 'pln_1',
    decision,
    identity,
    comment,
    sha256: 'sha',
    plan_status,
    run_id: null,
  });

describe('plan_decided', () => {
  it('each approval → plan.approved with who, the approvals up to it and those required', () => {
    // alice, then bob: both decisions are stored by the time alice's event is read.
    const both = facts({ decisions: [decision('alice'), decision('bob')] });
    const first = announce(decided('alice', 'approve', 'pending_approval'), ctx({ facts: both }));
    expect(first).toEqual({
      event: 'plan.approved',
      runId: 'run_p',
      planId: 'pln_1',
      data: {
        run_id: 'run_p',
        plan_id: 'pln_1',
        session_id: 'ses_1',
        repository: 'acme/widgets',
        workspace: '/srv/widgets',
        pull_request: {
          repository: 'acme/widgets',
          number: 7,
          url: 'https://github.com/acme/widgets/pull/7',
        },
        job: null,
        trigger: { id: 'trg_1', name: 'improve' },
        requested_by: 'github:octocat',
        approvers: ['alice'], // bob's later approval is not in alice's event
        cost: { plan_usd: 0.0123, execution_usd: null },
        title: 'Add a greeting',
        plan_status: 'pending_approval',
        approved_by: 'alice',
        approvals: { count: 1, required: 2 },
        links: {
          plan: 'https://d.example/ui/plans/pln_1',
          run: 'https://d.example/ui/runs/run_p',
          pull_request: 'https://github.com/acme/widgets/pull/7',
        },
      },
    });
    const second = announce(decided('bob', 'approve', 'approved', 'ship it'), ctx({ facts: both }));
    expect(second?.data).toMatchObject({
      approved_by: 'bob',
      approvals: { count: 2, required: 2 },
      plan_status: 'approved',
      comment: 'ship it',
    });
  });

  it('a rejection → plan.rejected with who and the reason; a revise request → nothing', () => {
    const a = announce(decided('carol', 'reject', 'rejected', 'touches the billing code'), ctx());
    expect(a?.event).toBe('plan.rejected');
    expect(a?.data).toMatchObject({
      rejected_by: 'carol',
      reason: 'touches the billing code',
      plan_status: 'rejected',
      title: 'Add a greeting',
      requested_by: 'github:octocat',
    });
    expect(announce(decided('carol', 'reject', 'rejected'), ctx())?.data.reason).toBeNull();
    expect(announce(decided('carol', 'revise', 'revision_requested', 'smaller'), ctx())).toBeNull();
  });
});

describe('delivery_completed', () => {
  const delivered = (patch: Partial<PlanDelivery>) =>
    plan({ delivery: { commentUrl: null, ...patch } as PlanDelivery });
  const exec = run({ id: 'run_e', executesPlanId: 'pln_1' });
  const completed = (data: Record<string, unknown>) =>
    ev(
      'delivery_completed',
      { plan_id: 'pln_1', branch: 'drydock/pln_1', commit: 'c'.repeat(40), remote: 'origin x', ...data },
      'run_e',
    );

  it('a pull request opened → delivery.succeeded carrying its number and address', () => {
    const url = 'https://github.com/acme/widgets/pull/8';
    const a = announce(
      completed({ target: 'base', pull_request_url: url }),
      ctx({ run: exec, plan: delivered({ pullRequestNumber: 8, pullRequestUrl: url }) }),
    );
    expect(a).toMatchObject({
      event: 'delivery.succeeded',
      runId: 'run_e',
      planId: 'pln_1',
      data: {
        commit: 'c'.repeat(40),
        branch: 'drydock/pln_1',
        delivery: {
          target: 'base',
          branch: 'drydock/pln_1',
          pull_request: { number: 8, url },
          comment_url: null,
        },
        links: { delivered: url, pull_request: 'https://github.com/acme/widgets/pull/7' },
      },
    });
  });

  it("pushed onto the pull request's own branch → the pull request it updated; no pull request → the branch", () => {
    const head = announce(completed({ target: 'head', pull_request_url: null }), ctx({ run: exec }));
    expect(head?.data.delivery?.pull_request).toEqual({
      number: 7,
      url: 'https://github.com/acme/widgets/pull/7',
    });
    const plain = announce(
      completed({ target: 'base', pull_request_url: null }),
      ctx({ run: exec, facts: facts({ pullRequest: null }) }),
    );
    expect(plain?.data.delivery).toMatchObject({ pull_request: null, branch: 'drydock/pln_1' });
    expect(plain?.data.links).not.toHaveProperty('delivered');
  });
});

describe('Slack blocks', () => {
  const envelope = (event: Envelope['event'], data: Partial<Envelope['data']>): Envelope => ({
    id: 'ntf_1',
    event,
    created_at: '2026-06-01T08:00:00.000Z',
    data: { run_id: 'run_p', plan_id: 'pln_1', title: 'Add a greeting', links: {}, ...data },
  });

  it('header, a section with the title, a section of fields and a context of links, with a text fallback', () => {
    const a = announce(
      decided('alice', 'approve', 'pending_approval'),
      ctx({ facts: facts({ decisions: [decision('alice')] }) }),
    );
    const body = JSON.parse(
      renderBody('slack', {
        id: 'ntf_1',
        event: a!.event,
        created_at: '2026-06-01T08:00:00.000Z',
        data: a!.data,
      }),
    );
    expect(blockKitProblems(body.blocks)).toEqual([]);
    expect(body.blocks).toEqual([
      { type: 'header', text: { type: 'plain_text', text: 'Plan approval 1 of 2' } },
      { type: 'section', text: { type: 'mrkdwn', text: '*Add a greeting*' } },
      {
        type: 'section',
        fields: [
          { type: 'mrkdwn', text: '*Repository*\nacme/widgets' },
          { type: 'mrkdwn', text: '*Pull request*\n<https://github.com/acme/widgets/pull/7|acme/widgets#7>' },
          { type: 'mrkdwn', text: '*Trigger*\nimprove' },
          { type: 'mrkdwn', text: '*Requested by*\ngithub:octocat' },
          { type: 'mrkdwn', text: '*Approvers*\nalice' },
          { type: 'mrkdwn', text: '*Approvals*\n1 of 2' },
          { type: 'mrkdwn', text: '*Cost*\nplanning $0.0123' },
        ],
      },
      {
        type: 'context',
        elements: [
          { type: 'mrkdwn', text: '<https://d.example/ui/plans/pln_1|open the plan>' },
          { type: 'mrkdwn', text: '<https://d.example/ui/runs/run_p|open the run>' },
          { type: 'mrkdwn', text: '<https://github.com/acme/widgets/pull/7|the pull request>' },
        ],
      },
    ]);
    expect(body.text).toBe(
      '*drydock* Plan approved: Add a greeting — 1 of 2 approvals\n<https://d.example/ui/plans/pln_1|open the plan> · <https://github.com/acme/widgets/pull/7|the pull request>',
    );
  });

  it('keeps within the limits with a very long title, error and reason full of characters to escape', () => {
    const long = `${'&<>'.repeat(2_000)} <!channel>`;
    const many = Object.fromEntries(
      Array.from({ length: 14 }, (_, i) => [`l${i}`, `https://d.example/${i}`]),
    );
    const body = slackBody(
      envelope('delivery.failed', {
        title: long,
        error: long,
        reason: long,
        comment: long,
        repository: long,
        requested_by: long,
        approvers: [long, long],
        trigger: { id: 'trg', name: long },
        job: { id: 'job', name: long },
        commit: 'c'.repeat(40),
        attempts: 3,
        cost: { plan_usd: 1.5, execution_usd: 2.25 },
        delivery: {
          target: 'base',
          branch: long,
          commit: null,
          remote: null,
          pull_request: null,
          comment_url: null,
        },
        spent: 3,
        limit: 2,
        resets_at: long,
        links: many,
      }),
    );
    expect(blockKitProblems(body.blocks)).toEqual([]);
    const [header, section, fields, context] = body.blocks as any[];
    expect(header.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.header);
    expect(section.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionText);
    expect(fields.fields).toHaveLength(SLACK_LIMITS.fields);
    for (const f of fields.fields) expect(f.text.length).toBeLessThanOrEqual(SLACK_LIMITS.field);
    expect(context.elements).toHaveLength(SLACK_LIMITS.contextElements);
    // Escaped, never cut inside an entity, and no mention survives.
    const all = JSON.stringify(body.blocks);
    expect(all).not.toContain('<!channel>');
    expect(section.text.text).toMatch(/^\*(&amp;&lt;&gt;)+(&amp;|&amp;&lt;)?…\*\n/);
  });

  it('escapeWithin cuts before escaping, a character at a time', () => {
    expect(escapeWithin('a&b', 10)).toBe('a&amp;b');
    expect(escapeWithin('a&b', 6)).toBe('a…');
    expect(escapeWithin('x\n\ty', 10)).toBe('x y');
  });
});
