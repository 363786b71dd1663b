import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhooks } from '@octokit/webhooks';
import examples from '@octokit/webhooks-examples';
import { afterEach, expect, it } from 'vitest';
import { waitFor } from '../support/daemon.js';
import { type FakeGithub, type HeldAnswer, startFakeGithub } from '../support/fake-github.js';
import { makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { type DaemonProcess, serveProcess } from '../support/process-daemon.js';
import { settledAnswer } from '../support/webhook-deliveries.js';

// A daemon killed between GitHub accepting a plan comment and learning that it did: the next daemon on the
// same data reports the plan from the stored event log, and GitHub ends with each part of the comment once
// and the pending status once.

const GITHUB_TOKEN = 'ghp_FAKEcrash0123456789abcdefghijklmnopqr';
const SECRET = 'webhook-secret-for-the-crash-test-0123';
const REPO = 'acme/widgets';

let model: ModelServer | undefined;
let github: FakeGithub | undefined;
const children: ChildProcess[] = [];
const dirs: { remove(): void }[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) d.remove();
  await github?.close();
  await model?.close();
});

/** A plan of about `chars` characters: two comment parts for anything past 60,000. */
function bigPlan(chars: number): string {
  let out = '## Plan\n\n';
  for (let i = 0; out.length < chars; i++)
    out += `${i}. Change module ${i}: adjust the handler and its tests.\n`;
  return out;
}

async function openPullRequest(d: DaemonProcess, number: number, head: string): Promise<void> {
  const def = (examples as unknown as any[]).find((e) => e.name === 'pull_request');
  const payload = structuredClone(def.examples.find((e: any) => e.action === 'opened'));
  payload.repository.full_name = REPO;
  payload.number = number;
  payload.pull_request.number = number;
  payload.pull_request.head.sha = head;
  github!.setPullRequest(REPO, number, payload.pull_request);
  const body = JSON.stringify(payload);
  const res = await fetch(`${d.url}/webhooks/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'pull_request',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': await new Webhooks({ secret: SECRET }).sign(body),
    },
    body,
  });
  const answer = await settledAnswer(d.api, res.status, await res.json());
  expect(res.status, JSON.stringify(answer)).toBe(202);
  expect(answer.outcome).toBe('accepted');
}

/** The fake GitHub and model, a clone of acme/widgets, the config pointing at them, and how to serve on it. */
async function world() {
  model = await startModelServer();
  github = await startFakeGithub({ token: GITHUB_TOKEN });
  const tmp = tempDir('drydock-report-crash-');
  dirs.push(tmp);
  const clone = join(tmp.path, 'clone');
  const head = makeRepo(clone, { 'README.md': '# widgets\n' });
  const configFile = join(tmp.path, 'drydock.yaml');
  writeFileSync(
    configFile,
    `github:
  token: ${GITHUB_TOKEN}
  api_url: ${github.url}
  report: true
  webhook_secrets: [${SECRET}]
  repositories:
    ${REPO}: { path: ${clone} }
`,
  );
  const dataDir = join(tmp.path, 'data');
  const serve = () => serveProcess(dataDir, model!.url, children, { DRYDOCK_CONFIG: configFile });
  return { head, serve, github, model };
}

/** A first daemon: a trigger, a pull request whose plan is `markdown`, killed once `held` is reached. */
async function killedAt(
  w: Awaited<ReturnType<typeof world>>,
  held: HeldAnswer,
  markdown: string,
): Promise<void> {
  const first = await w.serve();
  const trigger = await first.api('POST', '/v1/triggers', {
    kind: 'github',
    name: 'review',
    events: ['pull_request.opened'],
    prompt: 'Review {{repository}}#{{number}}',
  });
  expect(trigger.status, JSON.stringify(trigger.body)).toBe(201);
  w.model.enqueue({
    kind: 'message',
    content: [{ type: 'tool_use', id: 'p1', name: 'ExitPlanMode', input: { plan: markdown } }],
  });
  await openPullRequest(first, 2, w.head);
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
  const pending = await github.waitFor(() => github!.statuses(head)[0], 20_000, 'the pending status');
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
