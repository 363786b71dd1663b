import { afterEach, expect, it } from 'vitest';
import { calls, proposes, says } from '../plans/helpers.js';
import { waitFor } from '../support/daemon.js';
import type { HeldAnswer } from '../support/fake-github.js';
import { git } from '../support/git-repo.js';
import { type GithubWorld, githubWorld, REPOSITORY as REPO } from '../support/github-world.js';
import { createTokenOffline, type DaemonProcess } from '../support/process-daemon.js';

// Delivery is a reaction to an executed plan: a daemon killed between GitHub accepting one of its steps (the
// new pull request, the comment on the pull request the plan came from) and learning that it did is followed
// by one on the same data that finishes the delivery at once (it takes back its replica's claim rather than
// wait for the claim to lapse) and GitHub ends with one pull request and one delivery comment.

const PR = 7;

let w: GithubWorld | undefined;

afterEach(async () => {
  await w?.close();
  w = undefined;
});

/**
 * A clone with an origin linked in the fake GitHub; the claim's own lapse is far beyond the test's waits.
 * `pr_target`: where the pull request's result goes (base: a pull request into main holding drydock's
 * commit, replayed onto main; null: onto the pull request's own branch).
 */
const world = (prTarget: 'base' | null = 'base') =>
  githubWorld({
    name: 'delivery-crash',
    origin: true,
    config: `delivery:\n  pull_request: true\n  push_timeout_ms: 60000\n  pr_target: ${prTarget ?? 'null'}\n`,
  });

/** The comments the delivery posted on the pull request (the plan's report comments are there too). */
const deliveryComments = (w: GithubWorld) =>
  w.github.comments(REPO, PR).filter((c) => c.body.includes('<!-- drydock:delivery '));

const until = (d: DaemonProcess, path: string, ok: (body: any) => boolean, what: string) =>
  waitFor(
    async () => {
      const r = await d.api('GET', path);
      return ok(r.body) ? r.body : undefined;
    },
    30_000,
    what,
  );

/**
 * A first daemon: a pull request's plan, approved and executed; killed once GitHub carried out the request
 * `held` stands for and keeps its answer back. Returns the plan's id.
 */
async function killedAt(w: GithubWorld, held: HeldAnswer): Promise<string> {
  const first = await w.serve();
  const trigger = await first.api('POST', '/v1/triggers', {
    kind: 'github',
    name: 'improve',
    events: ['pull_request.opened'],
    prompt: 'Improve {{repository}}#{{number}}',
    options: { execute_mode: 'auto', deliver: true },
  });
  expect(trigger.status, JSON.stringify(trigger.body)).toBe(201);
  w.model.enqueue(
    proposes('p-1'),
    calls('w-1', 'Write', { file_path: 'hello.txt', content: 'hello\n' }),
    says('done'),
  );
  const runId = (await w.openPullRequest(first, PR, w.head)).run_ids[0];
  const planned = await until(first, `/v1/runs/${runId}`, (r) => r.status === 'planned', 'the plan');
  const plan = (await first.api('GET', `/v1/plans/${planned.plan_id}`)).body;
  const alice = createTokenOffline(w.dataDir, 'alice', 'approver');
  const approved = await first.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, alice);
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  await held.reached;
  await first.kill();
  held.release();
  return plan.id;
}

/** The second daemon on the same data: the delivery ends delivered, with GitHub's one pull request. */
async function deliveredAfterRestart(w: GithubWorld, planId: string) {
  const second = await w.serve();
  const plan = await until(
    second,
    `/v1/plans/${planId}`,
    (p) => p.delivery?.status === 'delivered' || p.delivery?.status === 'failed',
    'the delivery to end',
  );
  expect(plan.delivery.status, plan.delivery.last_error).toBe('delivered');
  const prs = w.github.pullRequests(REPO);
  expect(prs).toHaveLength(1);
  expect(prs[0]).toMatchObject({ head: `drydock/${planId}`, base: 'main' });
  expect(plan.delivery.pull_request_url).toBe(prs[0]!.html_url);
  const comments = deliveryComments(w);
  expect(comments).toHaveLength(1);
  expect(comments[0]!.body).toContain(`opened pull request #${prs[0]!.number}`);
  expect(plan.delivery.comment_url).toMatch(new RegExp(`/pull/${PR}#issuecomment-\\d+$`));
  return { second, plan };
}

it('SIGKILLed after GitHub opened the pull request: after the restart it is delivered at once, one pull request, one comment', async () => {
  w = await world();
  const held = w.github.hold(new RegExp(`^POST /repos/${REPO}/pulls$`));
  const planId = await killedAt(w, held);
  expect(w.github.pullRequests(REPO)).toHaveLength(1);
  expect(deliveryComments(w)).toEqual([]);

  await deliveredAfterRestart(w, planId);
  // The second daemon was refused a second pull request ("already exists") and took the open one.
  const creates = w.github.calls.filter((c) => c.method === 'POST' && c.path === `/repos/${REPO}/pulls`);
  expect(creates).toHaveLength(2);
  expect(creates[1]!.status).toBe(422);
}, 90_000);

it('SIGKILLed after GitHub took the comment on the pull request: after the restart it is not posted again', async () => {
  w = await world();
  const held = w.github.hold(new RegExp(`^POST /repos/${REPO}/issues/${PR}/comments$`), (body) =>
    body.body.includes('drydock:delivery'),
  );
  const planId = await killedAt(w, held);
  expect(deliveryComments(w)).toHaveLength(1);

  const { plan } = await deliveredAfterRestart(w, planId);
  expect(deliveryComments(w)[0]!.body).toContain(`<!-- drydock:delivery ${planId} -->`);
  const posts = w.github.calls.filter(
    (c) =>
      c.method === 'POST' &&
      c.path.endsWith(`/issues/${PR}/comments`) &&
      c.body.body.includes('drydock:delivery'),
  );
  expect(posts).toHaveLength(1);
  expect(plan.delivery.attempts).toBe(2);
}, 90_000);

it("SIGKILLed after GitHub took the comment on a result pushed onto the pull request's branch: after the restart nothing is pushed or posted again", async () => {
  w = await world(null);
  const held = w.github.hold(new RegExp(`^POST /repos/${REPO}/issues/${PR}/comments$`), (body) =>
    body.body.includes('drydock:delivery'),
  );
  const planId = await killedAt(w, held);
  const remote = w.remote!;
  const tip = git(remote, 'rev-parse', `refs/heads/pr-${PR}`);
  expect(git(remote, 'rev-parse', `${tip}^@`)).toBe(w.head);
  expect(deliveryComments(w)).toHaveLength(1);

  const second = await w.serve();
  const plan = await until(
    second,
    `/v1/plans/${planId}`,
    (p) => p.delivery?.status === 'delivered' || p.delivery?.status === 'failed',
    'the delivery to end',
  );
  expect(plan.delivery, plan.delivery.last_error).toMatchObject({
    status: 'delivered',
    target: 'head',
    branch: `pr-${PR}`,
    commit: tip,
    attempts: 2,
  });
  expect(git(remote, 'rev-parse', `refs/heads/pr-${PR}`)).toBe(tip);
  expect(w.github.pullRequests()).toEqual([]);
  expect(deliveryComments(w)).toHaveLength(1);
  expect(deliveryComments(w)[0]!.body).toContain("onto this pull request's branch `pr-7`");
}, 90_000);
