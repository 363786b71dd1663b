import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  allRuns,
  commentPayload,
  deliver,
  example,
  getPlan,
  hasCommit,
  PR_NUMBER,
  plannedPlan,
  processed,
  prPayload,
  REPO,
  runUntil,
  settled,
  type TriggerWorld,
  triggerWorld,
} from './helpers.js';

// Codertocat opens the pull requests of the examples; they map to alice. bob reviews.
const USERS = { Codertocat: 'alice', 'octo-reviewer': 'bob' };

let w: TriggerWorld;

beforeEach(async () => {
  w = await triggerWorld({ users: USERS });
  await w.trigger({
    name: 'review',
    events: ['pull_request.opened'],
    prompt: 'Review {{repository}}#{{number}} at {{head_sha}}.',
  });
});
afterEach(async () => {
  await w.close();
});

/** Opens the pull request at `sha` and waits for its pending plan. */
async function pendingPlan(sha = w.repo.base, ref?: string): Promise<any> {
  const r = await deliver(w.d, 'pull_request', prPayload('opened', { sha, ...(ref ? { ref } : {}) }));
  expect(r.status).toBe(202);
  expect(r.body.run_ids).toHaveLength(1);
  const plan = await plannedPlan(w.d, r.body.run_ids[0]);
  expect(plan).toMatchObject({ status: 'pending_approval', requested_by: 'alice', workspace_commit: sha });
  return plan;
}

const comment = (body: string, login: string) => deliver(w.d, 'issue_comment', commentPayload(body, login));

describe('/drydock commands in pull request comments', () => {
  it('processed again after a crash between deciding and settling, the decision it made stands', async () => {
    const plan = await pendingPlan();
    const body = commentPayload('/drydock approve', 'octo-reviewer');
    const r = await deliver(w.d, 'issue_comment', body);
    expect(r.body.outcome).toBe('accepted');
    // What a SIGKILL right after the decision leaves: the delivery still queued, marked as deciding.
    await w.d.daemon.store.updateWebhookDelivery(r.body.delivery_id, {
      outcome: 'queued',
      detail: `deciding ${plan.id}`,
      payload: JSON.stringify(body),
      runIds: [],
      claimedUntil: null,
      processedAt: null,
    });
    w.d.daemon.triggers.startInbox();
    const again = await processed(w.d, r.body.delivery_id);
    expect(again.outcome, again.detail).toBe('accepted');
    expect(again.detail).toMatch(new RegExp(`^approve by bob: plan ${plan.id} is `));
    expect((await getPlan(w.d, plan.id)).decisions).toHaveLength(1);
  });

  it('/drydock approve from a mapped user approves the plan and starts its execution', async () => {
    const plan = await pendingPlan();
    const r = await comment('Looks good to me.\n\n/drydock approve', 'octo-reviewer');
    expect(r.status).toBe(202);
    expect(r.body.outcome).toBe('accepted');
    expect(r.body.detail).toContain(`approve by bob: plan ${plan.id} is approved`);
    expect(r.body.run_ids).toHaveLength(1);

    const after = await getPlan(w.d, plan.id);
    expect(after.decisions).toEqual([
      expect.objectContaining({ kind: 'approve', identity: 'bob', sha256: plan.sha256 }),
    ]);
    const exec = await runUntil(w.d, r.body.run_ids[0], ['completed', 'failed']);
    expect(exec, exec.error ?? '').toMatchObject({
      status: 'completed',
      phase: 'execute',
      executes_plan_id: plan.id,
    });
    expect((await getPlan(w.d, plan.id)).status).toBe('executed');
    const stored = await w.d.daemon.store.getWebhookDelivery(r.body.delivery_id);
    expect(stored).toMatchObject({ event: 'issue_comment.created', outcome: 'accepted' });
  });

  it('/drydock approve of a plan made at a pushed branch head (not the clone HEAD) approves and executes it', async () => {
    // The usual case: the pull request's head is a branch commit the clone fetched, not the clone's HEAD.
    const head = w.repo.pushBranch('feature', { 'feature.txt': 'new feature\n' });
    const plan = await pendingPlan(head, 'feature');
    expect(hasCommit(w.repo.clone, head)).toBe(true);

    const r = await comment('/drydock approve', 'octo-reviewer');
    expect(r.body.detail).toContain(`plan ${plan.id} is approved`);
    expect(r.body.outcome).toBe('accepted');
    const exec = await runUntil(w.d, r.body.run_ids[0], ['completed', 'failed']);
    expect(exec.status, exec.error ?? '').toBe('completed');
    expect((await getPlan(w.d, plan.id)).status).toBe('executed');
  });

  it('refuses /drydock approve from the pull request author (self-approval)', async () => {
    const plan = await pendingPlan();
    const r = await comment('/drydock approve', 'Codertocat');
    expect(r.status).toBe(202);
    expect(r.body.outcome).toBe('rejected');
    expect(r.body.detail).toMatch(/^self_approval: alice requested this plan/);
    expect(r.body.run_ids).toEqual([]);
    const stored = await w.d.daemon.store.getWebhookDelivery(r.body.delivery_id);
    expect(stored?.detail).toContain('self_approval: alice requested this plan');
    const after = await getPlan(w.d, plan.id);
    expect(after.status).toBe('pending_approval');
    expect(after.decisions).toEqual([]);
  });

  it('records /drydock approve from an unmapped GitHub user as rejected and changes nothing', async () => {
    const plan = await pendingPlan();
    const r = await comment('/drydock approve', 'drive-by-user');
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ outcome: 'rejected', run_ids: [] });
    expect(r.body.detail).toContain('drive-by-user is not mapped to a drydock identity');
    const after = await getPlan(w.d, plan.id);
    expect(after.status).toBe('pending_approval');
    expect(after.decisions).toEqual([]);
    expect((await settled(w.d)).length).toBe(1);
  });

  it('/drydock reject <reason> rejects the plan with that comment', async () => {
    const plan = await pendingPlan();
    const r = await comment('/drydock reject too risky', 'octo-reviewer');
    expect(r.status).toBe(202);
    expect(r.body.outcome).toBe('accepted');
    expect(r.body.detail).toContain(`reject by bob: plan ${plan.id} is rejected`);
    const after = await getPlan(w.d, plan.id);
    expect(after.status).toBe('rejected');
    expect(after.decisions).toEqual([
      expect.objectContaining({ kind: 'reject', identity: 'bob', comment: 'too risky', sha256: plan.sha256 }),
    ]);
    // The author may reject their own plan.
    const plan2 = await pendingPlan();
    const own = await comment('/drydock reject changed my mind', 'Codertocat');
    expect(own.body.outcome).toBe('accepted');
    expect((await getPlan(w.d, plan2.id)).status).toBe('rejected');
  });

  it('ignores comments without a command, edits, issues; refuses malformed commands and missing plans', async () => {
    const none = await comment('Nice work!', 'octo-reviewer');
    expect(none.body).toMatchObject({ outcome: 'ignored' });
    const noPlan = await comment('/drydock approve', 'octo-reviewer');
    expect(noPlan.body.outcome).toBe('rejected');
    expect(noPlan.body.detail).toContain(`no plan of ${REPO}#${PR_NUMBER} is pending approval`);

    const plan = await pendingPlan();
    const edited = commentPayload('/drydock approve', 'octo-reviewer');
    edited.action = 'edited';
    expect((await deliver(w.d, 'issue_comment', edited)).body.outcome).toBe('ignored');
    // The examples' comments are on an issue, not a pull request: an approval there decides the issue's own
    // pending plan (it has none), never the pull request's.
    const onIssue = example('issue_comment', 'created');
    onIssue.comment.body = '/drydock approve';
    onIssue.comment.user.login = 'octo-reviewer';
    const issue = await deliver(w.d, 'issue_comment', onIssue);
    expect(issue.body.outcome).toBe('rejected');
    expect(issue.body.detail).toContain(`no plan of ${REPO}#${onIssue.issue.number} is pending approval`);
    const noReason = await comment('/drydock reject', 'octo-reviewer');
    expect(noReason.body).toMatchObject({ outcome: 'rejected' });
    expect(noReason.body.detail).toContain('reject needs a reason');
    const unknown = await comment('/drydock merge', 'octo-reviewer');
    expect(unknown.body.outcome).toBe('rejected');
    expect(unknown.body.detail).toContain('unknown command "merge"');
    expect((await getPlan(w.d, plan.id)).status).toBe('pending_approval');
  });

  // config.github.users is a plain object: users['constructor'] must not find Object.prototype.constructor.
  it('a commenter whose login is named like an Object.prototype member is not a mapped identity', async () => {
    const plan = await pendingPlan();
    for (const login of ['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf']) {
      const r = await comment('/drydock approve', login);
      expect(r.status, `${login}: ${JSON.stringify(r.body)}`).toBe(202);
      expect(r.body.outcome).toBe('rejected');
      expect(r.body.detail).toContain('is not mapped to a drydock identity');
    }
    expect((await getPlan(w.d, plan.id)).status).toBe('pending_approval');
    expect((await getPlan(w.d, plan.id)).decisions).toEqual([]);
  });

  it('a pull request opened by a login named like an Object.prototype member is requested as github:<login>', async () => {
    const p = prPayload('opened', { sha: w.repo.base });
    p.number = 11;
    p.pull_request.number = 11;
    p.pull_request.user.login = 'constructor';
    const opened = await deliver(w.d, 'pull_request', p);
    expect(opened.status, JSON.stringify(opened.body)).toBe(202);
    expect(opened.body.outcome).toBe('accepted');
    expect(opened.body.run_ids).toHaveLength(1);
    const runs = await allRuns(w.d);
    expect(runs.find((r) => r.id === opened.body.run_ids[0])?.requested_by).toBe('github:constructor');
  });
});
