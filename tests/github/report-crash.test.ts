import { afterEach, expect, it } from 'vitest';
import { waitFor } from '../support/daemon.js';
import type { HeldAnswer } from '../support/fake-github.js';
import { type GithubWorld, githubWorld, REPOSITORY as REPO } from '../support/github-world.js';
import { proposes } from '../triggers/helpers.js';

// A daemon killed between GitHub accepting a plan comment and learning that it did: the next daemon on the
// same data reports the plan from the stored event log, and GitHub ends with each part of the comment once
// and the pending status once.

let current: GithubWorld | undefined;

afterEach(async () => {
  await current?.close();
  current = undefined;
});

/** A plan of about `chars` characters: two comment parts for anything past 60,000. */
function bigPlan(chars: number): string {
  let out = '## Plan\n\n';
  for (let i = 0; out.length < chars; i++)
    out += `${i}. Change module ${i}: adjust the handler and its tests.\n`;
  return out;
}

/** The fake GitHub and model, a clone of acme/widgets, the config pointing at them, and how to serve on it. */
async function world(): Promise<GithubWorld> {
  current = await githubWorld({ name: 'report-crash' });
  return current;
}

/** A first daemon: a trigger, a pull request whose plan is `markdown`, killed once `held` is reached. */
async function killedAt(w: GithubWorld, held: HeldAnswer, markdown: string): Promise<void> {
  const first = await w.serve();
  const trigger = await first.api('POST', '/v1/triggers', {
    kind: 'github',
    name: 'review',
    events: ['pull_request.opened'],
    prompt: 'Review {{repository}}#{{number}}',
  });
  expect(trigger.status, JSON.stringify(trigger.body)).toBe(201);
  w.model.enqueue(proposes(markdown, 'p1'));
  await w.openPullRequest(first, 2, w.head);
  await held.reached;
  // The run itself is over (planned): only the report is cut off by the kill.
  await waitFor(
    async () => (await first.api('GET', '/v1/runs')).body.items[0]?.status === 'planned',
    15_000,
    'the run to end planned',
  );
  await first.kill();
  held.release();
}

it('SIGKILLed after GitHub accepted the first part of a plan comment: after the restart each part is there once, and the status', async () => {
  const w = await world();
  const { head, serve } = w;
  // GitHub takes the first part in, and answers only once the daemon that sent it is dead.
  const held = w.github.hold(new RegExp(`^POST /repos/${REPO}/issues/2/comments$`));
  await killedAt(w, held, bigPlan(90_000));
  const github = w.github;
  expect(github.comments(REPO, 2)).toHaveLength(1);
  expect(github.statuses()).toEqual([]);

  const second = await serve();
  const pending = await github.waitFor(() => github.statuses(head)[0], 20_000, 'the pending status');
  expect(pending).toMatchObject({ repository: REPO, state: 'pending', context: 'drydock/plan' });
  const plans = (await second.api('GET', '/v1/plans')).body.items;
  expect(plans).toHaveLength(1);
  const planId = plans[0].id;
  expect(pending.description).toContain(planId);

  // Each part once, in order, the first the one the dead daemon sent; nothing posted after the status.
  const comments = github.comments(REPO, 2).map((c) => c.body);
  expect(comments).toHaveLength(2);
  comments.forEach((body, i) => {
    expect(body).toContain(`(part ${i + 1} of 2)`);
    expect(body.endsWith(`<!-- drydock:plan ${planId} part ${i + 1} -->`)).toBe(true);
  });
  expect(github.statuses()).toHaveLength(1);
  const posts = github.calls.filter((c) => c.method === 'POST').map((c) => c.path);
  expect(posts).toEqual([
    `/repos/${REPO}/issues/2/comments`,
    `/repos/${REPO}/issues/2/comments`,
    `/repos/${REPO}/statuses/${head}`,
  ]);
  // The second daemon went on through SIGTERM: it stops without reporting anything twice.
  expect(await second.stop()).toBe(0);
  expect(github.comments(REPO, 2)).toHaveLength(2);
  expect(github.statuses()).toHaveLength(1);
}, 90_000);

it('SIGKILLed after GitHub accepted the pending status: after the restart the comment is not posted again', async () => {
  const w = await world();
  const { head, github } = w;
  const held = github.hold(new RegExp(`^POST /repos/${REPO}/statuses/${head}$`));
  await killedAt(w, held, '## Plan\n\n1. one\n');
  expect(github.comments(REPO, 2)).toHaveLength(1);
  expect(github.statuses()).toHaveLength(1);

  const second = await w.serve();
  // The event is handed over again: the comment is found by its marker, the status is set once more.
  await github.waitFor(() => github.statuses().length === 2, 20_000, 'the status set again');
  expect(github.comments(REPO, 2)).toHaveLength(1);
  const [before, again] = github.statuses();
  expect(again).toEqual(before);
  expect(again).toMatchObject({ state: 'pending', context: 'drydock/plan' });
  expect(github.calls.filter((c) => c.method === 'POST' && c.path.endsWith('/comments'))).toHaveLength(1);
  expect(await second.stop()).toBe(0);
}, 90_000);

it("a marker in someone else's comment does not count as posted: after the restart drydock posts the part itself", async () => {
  const w = await world();
  const { head, github } = w;
  const held = github.hold(new RegExp(`^POST /repos/${REPO}/issues/2/comments$`));
  await killedAt(w, held, bigPlan(90_000));
  const [first] = github.comments(REPO, 2);
  expect(first?.login).toBe(github.login);
  const planId = /<!-- drydock:plan (\S+) part 1 -->/.exec(first!.body)?.[1];
  expect(planId).toBeDefined();

  // The pull request's author read part 1 and forges part 2's marker in a comment of their own.
  const ATTACKER_TOKEN = 'ghp_FAKEattacker0123456789abcdefghijklmn';
  github.addUser(ATTACKER_TOKEN, 'mallory');
  const forged = await fetch(`${github.url}/repos/${REPO}/issues/2/comments`, {
    method: 'POST',
    headers: { authorization: `token ${ATTACKER_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ body: `nothing to see\n\n<!-- drydock:plan ${planId} part 2 -->` }),
  });
  expect(forged.status).toBe(201);

  const second = await w.serve();
  await github.waitFor(() => github.statuses(head)[0], 20_000, 'the pending status');
  const comments = github.comments(REPO, 2);
  expect(comments.map((c) => c.login)).toEqual([github.login, 'mallory', github.login]);
  const ours = comments.filter((c) => c.login === github.login).map((c) => c.body);
  ours.forEach((body, i) => {
    expect(body).toContain(`(part ${i + 1} of 2)`);
    expect(body.endsWith(`<!-- drydock:plan ${planId} part ${i + 1} -->`)).toBe(true);
  });
  // drydock asked GitHub who it is (once) with its own token.
  const whoami = github.calls.filter((c) => c.method === 'GET' && c.path === '/user');
  expect(whoami.length).toBeGreaterThanOrEqual(1);
  expect(await second.stop()).toBe(0);
}, 90_000);
