import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhooks } from '@octokit/webhooks';
import examples from '@octokit/webhooks-examples';
import { afterEach, expect, it } from 'vitest';
import { calls, proposes, says } from '../plans/helpers.js';
import { waitFor } from '../support/daemon.js';
import { type FakeGithub, type HeldAnswer, startFakeGithub } from '../support/fake-github.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { createTokenOffline, type DaemonProcess, serveProcess } from '../support/process-daemon.js';
import { settledAnswer } from '../support/webhook-deliveries.js';

// Delivery is a reaction to an executed plan: a daemon killed between GitHub accepting one of its steps (the
// new pull request, the comment on the pull request the plan came from) and learning that it did is followed
// by one on the same data that finishes the delivery at once (it takes back its replica's claim rather than
// wait for the claim to lapse) and GitHub ends with one pull request and one comment.

const GITHUB_TOKEN = 'ghp_FAKEdeliverycrash0123456789abcdefghij';
const SECRET = 'webhook-secret-for-the-delivery-crash-01';
const REPO = 'acme/widgets';
const PR = 7;

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

/** A bare remote linked in the fake GitHub, a clone of it as acme/widgets, and the config delivering to both. */
async function world() {
  model = await startModelServer();
  github = await startFakeGithub({ token: GITHUB_TOKEN });
  const tmp = tempDir('drydock-delivery-crash-');
  dirs.push(tmp);
  const remote = join(tmp.path, 'remote.git');
  const clone = join(tmp.path, 'clone');
  git(tmp.path, 'init', '-q', '--bare', '-b', 'main', remote);
  const head = makeRepo(clone, { 'README.md': '# widgets\n' });
  git(clone, 'remote', 'add', 'origin', remote);
  git(clone, 'push', '-q', 'origin', 'main');
  github.linkRepository(REPO, remote);
  const configFile = join(tmp.path, 'drydock.yaml');
  // The claim's own lapse (push_timeout_ms plus five minutes) is far beyond what the test waits for.
  writeFileSync(
    configFile,
    `github:
  token: ${GITHUB_TOKEN}
  api_url: ${github.url}
  report: false
  webhook_secrets: [${SECRET}]
  repositories:
    ${REPO}: { path: ${clone} }
delivery:
  pull_request: true
  push_timeout_ms: 60000
`,
  );
  const dataDir = join(tmp.path, 'data');
  const serve = () => serveProcess(dataDir, model!.url, children, { DRYDOCK_CONFIG: configFile });
  return { head, dataDir, serve, github, model };
}

type World = Awaited<ReturnType<typeof world>>;

async function openPullRequest(w: World, d: DaemonProcess): Promise<string> {
  const def = (examples as unknown as any[]).find((e) => e.name === 'pull_request');
  const payload = structuredClone(def.examples.find((e: any) => e.action === 'opened'));
  payload.repository.full_name = REPO;
  payload.number = PR;
  payload.pull_request.number = PR;
  payload.pull_request.head.sha = w.head;
  payload.pull_request.head.ref = 'feature';
  payload.pull_request.base.ref = 'main';
  w.github.setPullRequest(REPO, PR, payload.pull_request);
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
  expect(answer.outcome, JSON.stringify(answer)).toBe('accepted');
  return answer.run_ids[0];
}

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
async function killedAt(w: World, held: HeldAnswer): Promise<string> {
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
  const runId = await openPullRequest(w, first);
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
async function deliveredAfterRestart(w: World, planId: string) {
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
  const comments = w.github.comments(REPO, PR);
  expect(comments).toHaveLength(1);
  expect(comments[0]!.body).toContain(`opened pull request #${prs[0]!.number}`);
  expect(plan.delivery.comment_url).toMatch(new RegExp(`/pull/${PR}#issuecomment-\\d+$`));
  return { second, plan };
}

it('SIGKILLed after GitHub opened the pull request: after the restart it is delivered at once, one pull request, one comment', async () => {
  const w = await world();
  const held = w.github.hold(new RegExp(`^POST /repos/${REPO}/pulls$`));
  const planId = await killedAt(w, held);
  expect(w.github.pullRequests(REPO)).toHaveLength(1);
  expect(w.github.comments(REPO, PR)).toEqual([]);

  await deliveredAfterRestart(w, planId);
  // The second daemon was refused a second pull request ("already exists") and took the open one.
  const creates = w.github.calls.filter((c) => c.method === 'POST' && c.path === `/repos/${REPO}/pulls`);
  expect(creates).toHaveLength(2);
  expect(creates[1]!.status).toBe(422);
}, 90_000);

it('SIGKILLed after GitHub took the comment on the pull request: after the restart it is not posted again', async () => {
  const w = await world();
  const held = w.github.hold(new RegExp(`^POST /repos/${REPO}/issues/${PR}/comments$`));
  const planId = await killedAt(w, held);
  expect(w.github.comments(REPO, PR)).toHaveLength(1);

  const { plan } = await deliveredAfterRestart(w, planId);
  expect(w.github.comments(REPO, PR)[0]!.body).toContain(`<!-- drydock:delivery ${planId} -->`);
  const posts = w.github.calls.filter((c) => c.method === 'POST' && c.path.endsWith(`/issues/${PR}/comments`));
  expect(posts).toHaveLength(1);
  expect(plan.delivery.attempts).toBe(2);
}, 90_000);
