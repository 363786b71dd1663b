import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { waitFor } from '../support/daemon.js';
import type { FakeCheckRun } from '../support/fake-checks.js';
import { git } from '../support/git-repo.js';
import {
  APP_ID,
  type GithubWorld,
  type GithubWorldOptions,
  githubWorld,
  INSTALLATION_ID,
  REPOSITORY as REPO,
} from '../support/github-world.js';
import { createTokenOffline, type DaemonProcess } from '../support/process-daemon.js';
import { calls, example, proposes, says } from '../triggers/helpers.js';

// As a GitHub App, drydock reports each plan of a pull request as a "drydock plan" check run on its head, with
// Approve and Reject buttons while the plan waits; a press comes back as a signed check_run.requested_action
// webhook (built from @octokit/webhooks-examples) and decides the plan as `/drydock approve` would. Real daemon
// processes on SQLite, the fake GitHub playing the App and refusing what GitHub refuses.

const PR = 7;
const PLAN = '## Plan\n\n1. Add hello.txt saying hello\n';
/** GitHub logins the configuration maps: a reviewer, and the pull request's author (the example's). */
const USERS = '  users: {reviewer: alice, Codertocat: carol}';

let w: GithubWorld | undefined;

afterEach(async () => {
  await w?.close();
  w = undefined;
});

async function world(opts: GithubWorldOptions = {}): Promise<GithubWorld> {
  w = await githubWorld({ name: 'check-runs', app: true, github: USERS, ...opts });
  return w;
}

/** A trigger on opened pull requests whose runs carry out their plan (one Write) and deliver it. */
async function reviewTrigger(d: DaemonProcess, deliver = false): Promise<void> {
  const trigger = await d.api('POST', '/v1/triggers', {
    kind: 'github',
    name: 'review',
    events: ['pull_request.opened', 'pull_request.synchronize'],
    prompt: 'Review {{repository}}#{{number}}',
    options: { execute_mode: 'auto', ...(deliver ? { deliver: true } : {}) },
  });
  expect(trigger.status, JSON.stringify(trigger.body)).toBe(201);
}

/** Opens pull request PR on `head`; resolves with its plan once the plan waits for approval. */
async function plannedPullRequest(w: GithubWorld, d: DaemonProcess, head = w.head): Promise<any> {
  w.model.enqueue(proposes(PLAN, `p-${randomUUID()}`));
  const runId = (await w.openPullRequest(d, PR, head, head === w.head ? 'opened' : 'synchronize')).run_ids[0];
  const run = await waitFor(
    async () => {
      const r = (await d.api('GET', `/v1/runs/${runId}`)).body;
      return ['planned', 'failed', 'completed'].includes(r.status) ? r : undefined;
    },
    20_000,
    'the plan run to end',
  );
  expect(run.status, run.error).toBe('planned');
  return (await d.api('GET', `/v1/plans/${run.plan_id}`)).body;
}

/** The plan's check run once it says `conclusion`. */
function checkRunSaying(
  w: GithubWorld,
  sha: string,
  planId: string,
  conclusion: string,
): Promise<FakeCheckRun> {
  return w.github.waitFor(
    () => w.github.checkRuns(sha).find((r) => r.externalId === planId && r.conclusion === conclusion),
    20_000,
    `the check run of ${planId} to say ${conclusion}`,
  );
}

/** A check_run.requested_action payload (GitHub's example, moved onto the plan's check run) pressed by `login`. */
function pressed(planId: string, headSha: string, identifier: string, login: string, repository = REPO): any {
  const p = example('check_run', 'requested_action');
  p.requested_action.identifier = identifier;
  p.check_run.name = 'drydock plan';
  p.check_run.external_id = planId;
  p.check_run.head_sha = headSha;
  p.check_run.app.id = APP_ID;
  p.check_run.app.slug = 'drydock-test';
  p.check_run.status = 'completed';
  p.check_run.conclusion = 'action_required';
  p.repository.full_name = repository;
  p.installation.id = INSTALLATION_ID;
  p.sender.login = login;
  return p;
}

const planOf = async (d: DaemonProcess, id: string) => (await d.api('GET', `/v1/plans/${id}`)).body;

it('a proposed plan is one check run on the head: action required, Approve and Reject, the plan in its summary; no commit status', async () => {
  const w = await world();
  const d = await w.serve();
  await reviewTrigger(d);
  const plan = await plannedPullRequest(w, d);

  const run = await checkRunSaying(w, w.head, plan.id, 'action_required');
  expect(run).toMatchObject({
    repository: REPO,
    name: 'drydock plan',
    status: 'completed',
    madeBy: 'drydock-test[bot]',
  });
  expect(run.actions.map((a) => a.identifier)).toEqual(['approve', 'reject']);
  expect(run.actions.map((a) => a.label)).toEqual(['Approve', 'Reject']);
  expect(run.summary).toContain(PLAN);
  expect(run.summary).toContain(plan.id);
  expect(run.title).toBe('Awaits approval');
  // The plan comment still goes out; the commit status is a token setup's.
  await w.github.waitFor(() => w.github.comments(REPO, PR).length === 1, 10_000, 'the plan comment');
  expect(w.github.checkRuns()).toHaveLength(1);
  expect(w.github.statuses()).toEqual([]);
  expect(w.github.calls.filter((c) => c.path.includes('/statuses/'))).toEqual([]);
  expect(await d.stop()).toBe(0);
  expect(w.github.checkRuns()).toHaveLength(1);
}, 60_000);

it('Approve pressed by a mapped approver: the plan is approved, carried out and delivered once, and its check run ends success; a redelivered press decides nothing more', async () => {
  const w = await world({
    origin: true,
    config: 'delivery:\n  pull_request: true\n  push_timeout_ms: 60000\n',
  });
  const d = await w.serve();
  createTokenOffline(w.dataDir, 'alice', 'approver');
  await reviewTrigger(d, true);
  const plan = await plannedPullRequest(w, d);
  await checkRunSaying(w, w.head, plan.id, 'action_required');

  w.model.enqueue(calls('w-1', 'Write', { file_path: 'hello.txt', content: 'hello\n' }), says('done'));
  const delivery = randomUUID();
  const press = pressed(plan.id, w.head, 'approve', 'reviewer');
  const first = await w.webhook(d, 'check_run', press, delivery);
  expect(first.status, JSON.stringify(first.answer)).toBe(202);
  expect(first.answer).toMatchObject({ outcome: 'accepted' });
  expect(first.answer.detail).toBe(`approve by alice: plan ${plan.id} is approved`);
  expect(first.answer.run_ids).toHaveLength(1);

  const done = await waitFor(
    async () => {
      const p = await planOf(d, plan.id);
      return ['delivered', 'failed'].includes(p.delivery?.status) ? p : undefined;
    },
    30_000,
    'the delivery to end',
  );
  expect(done.status).toBe('executed');
  expect(done.delivery, done.delivery.last_error).toMatchObject({ status: 'delivered', target: 'head' });
  const run = await checkRunSaying(w, w.head, plan.id, 'success');
  expect(run.actions).toEqual([]);
  // On its way it said approved (neutral: a completed check run does not go back to in progress), never
  // asking GitHub for in_progress.
  const patches = w.github.calls.filter((c) => c.method === 'PATCH' && c.path.includes('/check-runs/'));
  const said = patches.map((c) => c.body.conclusion);
  expect(said).toContain('neutral');
  expect(said.indexOf('neutral')).toBeLessThan(said.indexOf('success'));
  expect(patches.every((c) => c.body.status === 'completed' && c.status === 200)).toBe(true);
  expect(run.title).toBe('Carried out (approved by alice)');
  expect(run.summary).toContain(PLAN);
  // One check run, one decision, one delivery: drydock's one commit on the pull request's branch, one comment.
  expect(w.github.checkRuns()).toHaveLength(1);
  const tip = git(w.remote!, 'rev-parse', `refs/heads/pr-${PR}`);
  expect(git(w.remote!, 'rev-parse', `${tip}^`)).toBe(w.head);
  const deliveries = w.github.comments(REPO, PR).filter((c) => c.body.includes('<!-- drydock:delivery '));
  expect(deliveries).toHaveLength(1);

  // GitHub delivers the same press again (same X-GitHub-Delivery): answered as the first, nothing decided.
  const again = await w.webhook(d, 'check_run', press, delivery);
  expect(again.status).toBe(200);
  expect(again.answer).toMatchObject({ duplicate: true, outcome: 'accepted' });
  const decisions = (await planOf(d, plan.id)).decisions;
  expect(decisions.map((x: any) => [x.kind, x.identity])).toEqual([['approve', 'alice']]);
  const runs = (await d.api('GET', '/v1/runs')).body.items;
  expect(runs.filter((r: any) => r.phase === 'execute')).toHaveLength(1);
  expect(await d.stop()).toBe(0);
}, 90_000);

it("Approve pressed by a login nobody mapped, or by the pull request's author, decides nothing; a press naming the plan from another repository or commit is ignored", async () => {
  const w = await world();
  const d = await w.serve();
  createTokenOffline(w.dataDir, 'carol', 'approver');
  await reviewTrigger(d);
  const plan = await plannedPullRequest(w, d);
  await checkRunSaying(w, w.head, plan.id, 'action_required');

  const stranger = await w.webhook(d, 'check_run', pressed(plan.id, w.head, 'approve', 'mallory'));
  expect(stranger.answer).toMatchObject({ outcome: 'rejected', run_ids: [] });
  expect(stranger.answer.detail).toBe(
    'GitHub user mallory is not mapped to a drydock identity (github.users)',
  );

  // Codertocat opened the pull request: the plan was requested as carol, who may not approve it.
  const author = await w.webhook(d, 'check_run', pressed(plan.id, w.head, 'approve', 'Codertocat'));
  expect(author.answer).toMatchObject({ outcome: 'rejected', run_ids: [] });
  expect(author.answer.detail).toMatch(/^self_approval: carol requested this plan and cannot approve it/);

  // The plan's id from another repository, or on another commit: never acted on.
  const foreign = await w.webhook(
    d,
    'check_run',
    pressed(plan.id, w.head, 'approve', 'Codertocat', 'evil/fork'),
  );
  expect(foreign.answer).toMatchObject({ outcome: 'ignored' });
  expect(foreign.answer.detail).toContain(`names no plan of evil/fork`);
  const otherSha = 'f'.repeat(40);
  const moved = await w.webhook(d, 'check_run', pressed(plan.id, otherSha, 'reject', 'reviewer'));
  expect(moved.answer).toMatchObject({ outcome: 'ignored' });
  expect(moved.answer.detail).toContain(`at ${otherSha.slice(0, 12)}`);
  // The same name and external_id on a check run another App made: not drydock's buttons.
  const spoofed = pressed(plan.id, w.head, 'approve', 'reviewer');
  spoofed.check_run.app.id = APP_ID + 1;
  const other = await w.webhook(d, 'check_run', spoofed);
  expect(other.answer).toMatchObject({ outcome: 'ignored' });
  expect(other.answer.detail).toContain(`made by App ${APP_ID + 1}, not by drydock's`);
  // Another check_run action is ignored at once.
  const created = await w.webhook(d, 'check_run', example('check_run', 'created'));
  expect(created.answer).toMatchObject({ outcome: 'ignored' });

  const now = await planOf(d, plan.id);
  expect(now.status).toBe('pending_approval');
  expect(now.decisions).toEqual([]);
  const runs = (await d.api('GET', '/v1/runs')).body.items;
  expect(runs.map((r: any) => r.phase)).toEqual(['plan']);
  const [check] = w.github.checkRuns();
  expect(check).toMatchObject({ conclusion: 'action_required', updates: 0 });
  expect(check!.actions).toHaveLength(2);
  expect(await d.stop()).toBe(0);
}, 60_000);

it('Reject pressed: the plan is rejected with a reason naming the presser, and its check run ends failure without buttons', async () => {
  const w = await world();
  const d = await w.serve();
  createTokenOffline(w.dataDir, 'alice', 'approver');
  await reviewTrigger(d);
  const plan = await plannedPullRequest(w, d);
  await checkRunSaying(w, w.head, plan.id, 'action_required');

  const r = await w.webhook(d, 'check_run', pressed(plan.id, w.head, 'reject', 'reviewer'));
  expect(r.answer).toMatchObject({
    outcome: 'accepted',
    detail: `reject by alice: plan ${plan.id} is rejected`,
  });
  const now = await planOf(d, plan.id);
  expect(now.status).toBe('rejected');
  expect(now.decisions.map((x: any) => [x.kind, x.identity, x.comment])).toEqual([
    ['reject', 'alice', 'rejected from the GitHub check run by @reviewer'],
  ]);
  const run = await checkRunSaying(w, w.head, plan.id, 'failure');
  expect(run).toMatchObject({ status: 'completed', title: 'Rejected by alice', actions: [] });
  expect(run.summary).toContain('rejected from the GitHub check run by @reviewer');
  expect(w.github.checkRuns()).toHaveLength(1);
  expect(await d.stop()).toBe(0);
}, 60_000);

it('SIGKILLed after GitHub took the check run but before drydock heard: after the restart the plan still has exactly one check run', async () => {
  const w = await world();
  const first = await w.serve();
  await reviewTrigger(first);
  const held = w.github.hold(new RegExp(`^POST /repos/${REPO}/check-runs$`));
  w.model.enqueue(proposes(PLAN, 'p-crash'));
  await w.openPullRequest(first, PR, w.head);
  await held.reached;
  await waitFor(
    async () => (await first.api('GET', '/v1/runs')).body.items[0]?.status === 'planned',
    20_000,
    'the run to end planned',
  );
  await first.kill();
  held.release();
  const [made] = w.github.checkRuns();
  expect(made).toMatchObject({ conclusion: 'action_required', updates: 0 });

  const second = await w.serve();
  // The event is handed over again: the check run is found by its external_id and updated, not made again.
  const again = await w.github.waitFor(
    () => w.github.checkRuns().find((r) => r.updates >= 1),
    20_000,
    'the check run updated',
  );
  expect(w.github.checkRuns()).toHaveLength(1);
  expect(again).toMatchObject({ id: made!.id, externalId: made!.externalId, conclusion: 'action_required' });
  expect(again.actions.map((a) => a.identifier)).toEqual(['approve', 'reject']);
  const plans = (await second.api('GET', '/v1/plans')).body.items;
  expect(plans.map((p: any) => p.id)).toEqual([made!.externalId]);
  const posts = w.github.calls.filter((c) => c.method === 'POST' && c.path === `/repos/${REPO}/check-runs`);
  expect(posts).toHaveLength(1);
  // Looked up by name on the commit, all of them (not only the latest of the name).
  const lists = w.github.calls.filter(
    (c) => c.method === 'GET' && c.path.endsWith(`/commits/${w.head}/check-runs`),
  );
  expect(lists.length).toBeGreaterThanOrEqual(2);
  expect(await second.stop()).toBe(0);
  expect(w.github.checkRuns()).toHaveLength(1);
  expect(w.github.comments(REPO, PR)).toHaveLength(1);
}, 90_000);

it("new commits supersede the plan: its check run on the old head ends cancelled, the new head gets the new plan's", async () => {
  const w = await world();
  const d = await w.serve();
  await reviewTrigger(d);
  const old = await plannedPullRequest(w, d);
  await checkRunSaying(w, w.head, old.id, 'action_required');

  const next = git(w.clone, 'commit-tree', `${w.head}^{tree}`, '-p', w.head, '-m', 'more work');
  const fresh = await plannedPullRequest(w, d, next);
  expect((await planOf(d, old.id)).status).toBe('superseded');
  const cancelled = await checkRunSaying(w, w.head, old.id, 'cancelled');
  expect(cancelled).toMatchObject({ title: 'Superseded: the pull request moved on', actions: [] });
  const waiting = await checkRunSaying(w, next, fresh.id, 'action_required');
  expect(waiting.actions).toHaveLength(2);
  expect(w.github.checkRuns()).toHaveLength(2);
  // A press on the old check run decides nothing: that plan is no longer pending.
  createTokenOffline(w.dataDir, 'alice', 'approver');
  const late = await w.webhook(d, 'check_run', pressed(old.id, w.head, 'approve', 'reviewer'));
  expect(late.answer).toMatchObject({ outcome: 'rejected' });
  expect(late.answer.detail).toMatch(/^conflict: /);
  expect(await d.stop()).toBe(0);
}, 60_000);

it('with a token instead of an App, the commit status reports the plan and no check run is made', async () => {
  const w = await world({ app: false });
  const d = await w.serve();
  const alice = createTokenOffline(w.dataDir, 'alice', 'approver');
  await reviewTrigger(d);
  const plan = await plannedPullRequest(w, d);
  await w.github.waitFor(() => w.github.statuses(w.head)[0], 20_000, 'the pending status');
  w.model.enqueue(calls('w-1', 'Write', { file_path: 'hello.txt', content: 'hello\n' }), says('done'));
  const approved = await d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, alice);
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  await waitFor(async () => (await planOf(d, plan.id)).status === 'executed', 30_000, 'the execution');
  await w.github.waitFor(() => w.github.statuses(w.head).length === 2, 20_000, 'the success status');
  expect(w.github.statuses(w.head).map((s) => [s.context, s.state])).toEqual([
    ['drydock/plan', 'pending'],
    ['drydock/plan', 'success'],
  ]);
  expect(w.github.checkRuns()).toEqual([]);
  expect(w.github.calls.filter((c) => c.path.includes('check-runs'))).toEqual([]);
  expect(await d.stop()).toBe(0);
}, 60_000);
