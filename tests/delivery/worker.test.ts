import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { Webhooks } from '@octokit/webhooks';
import examples from '@octokit/webhooks-examples';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/auth/tokens.js';
import type { Config } from '../../src/config/schema.js';
import { type Daemon, startDaemon } from '../../src/daemon.js';
import { scrub, withoutCredentials } from '../../src/delivery/scrub.js';
import { nextAttemptAt } from '../../src/delivery/worker.js';
import { githubHosts, githubRepositoryOfUrl } from '../../src/github/target.js';
import { createLogger } from '../../src/logger.js';
import { collectGarbage } from '../../src/workspace/retention.js';
import { runCli } from '../cli/cli-process.js';
import { calls, PLAN_MD, proposes, says } from '../plans/helpers.js';
import { ADMIN_TOKEN, waitFor } from '../support/daemon.js';
import { type FakeGithub, startFakeGithub } from '../support/fake-github.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir, testConfig } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { settledAnswer } from '../support/webhook-deliveries.js';

// Delivering an executed plan's result, end to end: a real daemon, the real git pushing to a local bare
// repository standing in for the remote, Octokit against the fake GitHub REST server, the real pino logger
// writing into a list the tests search for secrets.

const GITHUB_TOKEN = 'ghp_DELIVERYtoken0123456789abcdefghijklmn';
const PUSH_TOKEN = 'ghp_PUSHsecret9876543210zyxwvutsrqponmlk';
const WEBHOOK_SECRET = 'delivery-webhook-secret-0123456789';
const REPO = 'acme/widgets';
const PUBLIC_URL = 'https://drydock.example.test';

interface Booted {
  daemon: Daemon;
  logs: string[];
  api(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }>;
  halt(): Promise<void>;
}

interface World {
  dir: string;
  /** The bare repository standing in for the remote ("origin"). */
  remote: string;
  /** The workspace: a clone of the remote, configured as acme/widgets. */
  repo: string;
  d: Booted;
  alice: string;
  patch: (c: Config) => void;
  boot(): Promise<Booted>;
  close(): Promise<void>;
}

let model: ModelServer;
let github: FakeGithub;
let w: World | undefined;
const servers: Server[] = [];

beforeEach(async () => {
  model = await startModelServer();
  github = await startFakeGithub({ token: GITHUB_TOKEN });
});
afterEach(async () => {
  await w?.close();
  w = undefined;
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
  await github.close();
  await model.close();
});

async function boot(dir: string, patch: (c: Config) => void): Promise<Booted> {
  const config = testConfig(join(dir, 'data'), (c) => {
    c.server.port = 0;
    c.admin_token = ADMIN_TOKEN;
    c.server.shutdown_grace_ms = 2_000;
    c.server.public_url = PUBLIC_URL;
    c.log_level = 'debug';
    c.github.token = GITHUB_TOKEN;
    c.github.api_url = github.url;
    c.delivery.token = PUSH_TOKEN;
    c.delivery.retry_base_ms = 50;
    c.delivery.retry_max_ms = 200;
    c.delivery.attempts = 3;
    c.delivery.push_timeout_ms = 10_000;
    patch(c);
  });
  const logs: string[] = [];
  const daemon = await startDaemon({
    config,
    logger: createLogger('debug', { write: (line: string) => void logs.push(line) }),
    model: new Anthropic({ apiKey: 'test-key', baseURL: model.url, maxRetries: 0, timeout: 10_000 }),
    announce: () => {},
  });
  let halted = false;
  return {
    daemon,
    logs,
    async api(method, path, body, token = ADMIN_TOKEN) {
      const res = await fetch(`${daemon.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
    async halt() {
      if (halted) return;
      halted = true;
      await daemon.stop();
    },
  };
}

/** A bare remote with `main`, the workspace cloned from it (acme/widgets), and a daemon delivering to GitHub. */
async function world(patch: (c: Config) => void = () => {}): Promise<World> {
  const tmp = tempDir('drydock-delivery-');
  const remote = join(tmp.path, 'remote.git');
  const repo = join(tmp.path, 'repo');
  git(tmp.path, 'init', '-q', '--bare', '-b', 'main', remote);
  makeRepo(repo, { 'README.md': '# widgets\n' });
  git(repo, 'remote', 'add', 'origin', remote);
  git(repo, 'push', '-q', 'origin', 'main');
  github.linkRepository(REPO, remote);
  const full = (c: Config) => {
    c.github.repositories = { [REPO]: { path: repo } };
    patch(c);
  };
  const d = await boot(tmp.path, full);
  const issued = issueToken('alice', 'alice', 'approver', Date.now());
  await d.daemon.store.createToken(issued.record);
  const world: World = {
    dir: tmp.path,
    remote,
    repo,
    d,
    alice: issued.token,
    patch: full,
    async boot() {
      world.d = await boot(tmp.path, full);
      return world.d;
    },
    async close() {
      await world.d.halt();
      tmp.remove();
    },
  };
  return world;
}

async function runUntil(d: Booted, runId: string, statuses: string[]): Promise<any> {
  return waitFor(
    async () => {
      const r = await d.api('GET', `/v1/runs/${runId}`);
      return statuses.includes(r.body.status) ? r.body : undefined;
    },
    15_000,
    `run ${runId} to reach ${statuses.join('/')}`,
  );
}

async function deliveryUntil(d: Booted, planId: string, statuses: string[], ms = 15_000): Promise<any> {
  return waitFor(
    async () => {
      const p = await d.api('GET', `/v1/plans/${planId}`);
      return statuses.includes(p.body.delivery?.status) ? p.body : undefined;
    },
    ms,
    `plan ${planId}'s delivery to reach ${statuses.join('/')}`,
  );
}

/** A session with `defaults`, one job, its plan proposed, approved by alice and executed (one Write). */
async function executedPlan(
  world: World,
  defaults: Record<string, unknown>,
): Promise<{ plan: any; exec: any }> {
  const { d } = world;
  const s = await d.api('POST', '/v1/sessions', { workspace: world.repo, defaults });
  expect(s.status, JSON.stringify(s.body)).toBe(201);
  const j = await d.api('POST', `/v1/sessions/${s.body.id}/jobs`, {
    cron: '0 9 * * *',
    prompt: 'Add a greeting',
  });
  expect(j.status).toBe(201);
  model.enqueue(
    proposes(`p-${randomUUID()}`),
    calls(`w-${randomUUID()}`, 'Write', { file_path: 'hello.txt', content: 'hello\n' }),
    says('done'),
  );
  const fired = await d.api('POST', `/v1/jobs/${j.body.id}/run`);
  const planned = await runUntil(d, fired.body.id, ['planned', 'failed']);
  expect(planned.status, planned.error).toBe('planned');
  const plan = (await d.api('GET', `/v1/plans/${planned.plan_id}`)).body;
  const approved = await d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, world.alice);
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  const exec = await runUntil(d, approved.body.run.id, ['completed', 'failed']);
  expect(exec.status, exec.error).toBe('completed');
  return { plan, exec };
}

async function eventsOf(d: Booted, runId: string): Promise<any[]> {
  const res = await fetch(`${d.daemon.url}/v1/runs/${runId}/events`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, accept: 'text/event-stream' },
    signal: AbortSignal.timeout(2_000),
  }).catch(() => null);
  if (!res) return [];
  const text = await res.text().catch(() => '');
  return text
    .split('\n\n')
    .map((frame) => /^data: (.*)$/m.exec(frame)?.[1])
    .filter((data): data is string => !!data)
    .map((data) => JSON.parse(data));
}

function expectNoSecrets(text: string): void {
  expect(text).not.toContain(GITHUB_TOKEN);
  expect(text).not.toContain(PUSH_TOKEN);
}

/**
 * A git "remote" over HTTP that answers every request with `status`: 401 wants Basic credentials and refuses
 * them, 503 is a remote that is down for now. Records the credentials it was sent.
 */
async function refusingRemote(status = 401): Promise<{ url: string; authorizations: string[] }> {
  const authorizations: string[] = [];
  const server = createServer((req, res) => {
    if (req.headers.authorization) authorizations.push(req.headers.authorization);
    const auth = status === 401 ? { 'www-authenticate': 'Basic realm="remote"' } : {};
    res.writeHead(status, { ...auth, 'content-type': 'text/plain' });
    res.end('refused\n');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/acme/widgets.git`,
    authorizations,
  };
}

/** A git "remote" over HTTP that accepts a connection and never answers. */
async function hangingRemote(): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer(() => {
    requests += 1;
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/acme/widgets.git`,
    requests: () => requests,
  };
}

describe('scrub', () => {
  it('removes secrets and credentials inside URLs, and cuts long text', () => {
    const text = `fatal: unable to access 'https://someone:${PUSH_TOKEN}@github.com/acme/widgets.git/': token ${GITHUB_TOKEN}`;
    const out = scrub(text, [GITHUB_TOKEN, null, PUSH_TOKEN]);
    expect(out).toBe(
      "fatal: unable to access 'https://[redacted]@github.com/acme/widgets.git/': token [redacted]",
    );
    expect(withoutCredentials('https://u:p@github.com/a/b.git')).toBe('https://github.com/a/b.git');
    expect(withoutCredentials('/srv/remote.git')).toBe('/srv/remote.git');
    expect(scrub('x'.repeat(50), [], 10)).toHaveLength(10);
  });
});

describe('which GitHub repository', () => {
  it('reads owner/repo from https, ssh and scp-like remotes on GitHub and a GitHub Enterprise host', () => {
    const hosts = githubHosts('https://ghe.example.com/api/v3');
    expect(hosts).toEqual(['github.com', 'ghe.example.com']);
    expect(githubRepositoryOfUrl('https://github.com/acme/widgets.git', hosts)).toBe('acme/widgets');
    expect(githubRepositoryOfUrl('https://x-access-token@github.com/acme/widgets', hosts)).toBe(
      'acme/widgets',
    );
    expect(githubRepositoryOfUrl('git@github.com:acme/widgets.git', hosts)).toBe('acme/widgets');
    expect(githubRepositoryOfUrl('ssh://git@ghe.example.com/acme/widgets.git', hosts)).toBe('acme/widgets');
    expect(githubRepositoryOfUrl('https://gitlab.com/acme/widgets.git', hosts)).toBeNull();
    expect(githubRepositoryOfUrl('/srv/remote.git', hosts)).toBeNull();
  });
});

describe('backoff', () => {
  it('doubles from the base delay, caps at the maximum, and ends after the last attempt', () => {
    const policy = { attempts: 5, retryBaseMs: 1_000, retryMaxMs: 5_000 };
    expect([1, 2, 3, 4].map((n) => nextAttemptAt(n, policy, 10_000))).toEqual([
      11_000, 12_000, 14_000, 15_000,
    ]);
    expect(nextAttemptAt(5, policy, 10_000)).toBeNull();
  });
});

describe('delivering an executed plan', () => {
  it('pushes the branch to the remote, opens a pull request with the plan, receipts and link, and shows it', async () => {
    w = await world();
    // GitHub answers the first pull request call with a 500: it is tried again, and one pull request opens.
    github.fail({ status: 500, match: /^POST \/repos\/acme\/widgets\/pulls$/ });
    const { plan, exec } = await executedPlan(w, { execute_mode: 'auto', deliver: true });
    const shown = await deliveryUntil(w.d, plan.id, ['delivered', 'failed']);
    const d = shown.delivery;
    expect(d.status, d.last_error).toBe('delivered');
    const branch = `drydock/${plan.id}`;
    expect(d).toMatchObject({
      branch,
      commit: exec.result_commit,
      pull_request_url: `https://github.com/${REPO}/pull/100`,
      pull_request_number: 100,
      comment_url: null,
      attempts: 1,
      last_error: null,
      next_attempt_at: null,
    });
    expect(d.remote).toBe(`origin ${w.remote}`);
    expect(Date.parse(d.pushed_at)).toBeGreaterThan(0);

    // The branch is on the remote with the execution's commit, and stays local too.
    expect(git(w.remote, 'rev-parse', `refs/heads/${branch}`)).toBe(exec.result_commit);
    expect(git(w.repo, 'rev-parse', `refs/heads/${branch}`)).toBe(exec.result_commit);
    expect(git(w.remote, 'show', `${branch}:hello.txt`)).toBe('hello');

    const prs = github.pullRequests(REPO);
    expect(prs).toHaveLength(1);
    const pr = prs[0]!;
    expect(pr).toMatchObject({ head: branch, base: 'main', title: 'drydock: Add a greeting' });
    expect(pr.body.startsWith(PLAN_MD.trimEnd())).toBe(true);
    expect(pr.body).toContain(`(${PUBLIC_URL}/ui/plans/${plan.id})`);
    expect(pr.body).toContain('approved by `alice`');
    expect(pr.body).toMatch(/\| plan \| `run_[^`]+` \| 1 \|/);
    expect(pr.body).toMatch(/\| execute \| `run_[^`]+` \| \d+ \|/);
    expect(pr.body).toMatch(/\| total \|.*\| \d+\.\d{4} \|/);
    const creates = github.calls.filter((c) => c.method === 'POST' && c.path === `/repos/${REPO}/pulls`);
    expect(creates.map((c) => c.status)).toEqual([500, 201]);

    const events = await eventsOf(w.d, exec.id);
    expect(events.find((e) => e.type === 'delivery_completed')).toMatchObject({
      plan_id: plan.id,
      branch,
      pull_request_url: pr.html_url,
    });
    const metrics = await (
      await fetch(`${w.d.daemon.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).text();
    expect(metrics).toMatch(/^drydock_deliveries_total\{outcome="delivered"\} 1$/m);

    // Delivered is final: a manual delivery is refused.
    const again = await w.d.api('POST', `/v1/plans/${plan.id}/deliver`, undefined, w.alice);
    expect(again.status).toBe(409);
    expect(again.body.error.message).toContain('delivered already');

    // A crash after GitHub opened the pull request but before it was recorded: the retry finds the open one
    // (GitHub answers 422 "A pull request already exists") instead of failing or opening a second.
    await w.d.daemon.store.updatePlanDelivery(plan.id, ['delivered'], {
      status: 'pending',
      pullRequestUrl: null,
      pullRequestNumber: null,
      settledAt: null,
    });
    const retried = await w.d.api('POST', `/v1/plans/${plan.id}/deliver`, undefined, w.alice);
    expect(retried.status, JSON.stringify(retried.body)).toBe(202);
    const redelivered = (await deliveryUntil(w.d, plan.id, ['delivered', 'failed'])).delivery;
    expect(redelivered).toMatchObject({
      status: 'delivered',
      pull_request_url: pr.html_url,
      pull_request_number: 100,
    });
    expect(github.pullRequests(REPO)).toHaveLength(1);
    const answers = github.calls.filter((c) => c.method === 'POST' && c.path === `/repos/${REPO}/pulls`);
    expect(answers.at(-1)?.status).toBe(422);

    const all = w.d.logs.join('');
    expect(all).toContain('plan delivered');
    expectNoSecrets(all);
  });

  it('leaves a plan undelivered when neither its session nor the configuration asks for it', async () => {
    w = await world();
    const { plan } = await executedPlan(w, { execute_mode: 'auto' });
    // The worker looked at it (the retention pass may now settle it) and delivered nothing.
    await waitFor(
      async () => (await w!.d.daemon.store.getPlan(plan.id))?.delivery?.status === 'off' || undefined,
      10_000,
      'the worker to look at the plan',
    );
    expect((await w.d.api('GET', `/v1/plans/${plan.id}`)).body.delivery).toBeNull();
    expect(git(w.remote, 'branch', '--list', 'drydock/*')).toBe('');
    expect(github.pullRequests()).toHaveLength(0);

    // A person can still deliver it: drydock plans deliver.
    const cli = await runCli(['plans', 'deliver', plan.id, '--url', w.d.daemon.url], {
      DRYDOCK_TOKEN: w.alice,
    });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain(`plan ${plan.id}: delivery pending (branch drydock/${plan.id})`);
    expect((await deliveryUntil(w.d, plan.id, ['delivered', 'failed'])).delivery.status).toBe('delivered');
    expect(github.pullRequests(REPO)).toHaveLength(1);
  });

  it('fails at once when the remote refuses the credentials, saying what to check; a person retries once mended', async () => {
    w = await world();
    const refusing = await refusingRemote(401);
    git(w.repo, 'remote', 'set-url', 'origin', refusing.url);
    const { plan, exec } = await executedPlan(w, { execute_mode: 'auto', deliver: true });
    const shown = await deliveryUntil(w.d, plan.id, ['failed', 'delivered']);
    const d = shown.delivery;
    expect(d).toMatchObject({
      status: 'failed',
      attempts: 1,
      pushed_at: null,
      pull_request_url: null,
      next_attempt_at: null,
    });
    expect(d.last_error).toContain('git push to origin http://127.0.0.1:');
    expect(d.last_error).toContain('the remote refused the credentials: check delivery.token');
    expectNoSecrets(JSON.stringify(shown));

    // git was given the token through GIT_ASKPASS and sent it (the remote refused it).
    expect(refusing.authorizations.length).toBeGreaterThan(0);
    const [user, password] = Buffer.from(refusing.authorizations[0]!.replace(/^Basic /, ''), 'base64')
      .toString('utf8')
      .split(':');
    expect(user).toBe('x-access-token');
    expect(password).toBe(PUSH_TOKEN);

    const failedEvent = (await eventsOf(w.d, exec.id)).find((e) => e.type === 'delivery_failed');
    expect(failedEvent).toMatchObject({ plan_id: plan.id, attempts: 1 });
    expect(failedEvent.error).toBe(d.last_error);
    expect(git(w.repo, 'rev-parse', `refs/heads/drydock/${plan.id}`)).toBe(exec.result_commit);
    expect(github.pullRequests()).toHaveLength(0);
    const metrics = await (
      await fetch(`${w.d.daemon.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).text();
    expect(metrics).not.toMatch(/^drydock_deliveries_total\{outcome="retry"\} [1-9]/m);
    expect(metrics).toMatch(/^drydock_deliveries_total\{outcome="failed"\} 1$/m);
    const all = w.d.logs.join('');
    expect(all).not.toContain('plan delivery failed; retrying');
    expectNoSecrets(all);
    const stored = await w.d.daemon.store.getPlan(plan.id);
    expect(JSON.stringify(stored)).not.toContain(PUSH_TOKEN);

    // Once the remote is fixed, a person retries it.
    git(w.repo, 'remote', 'set-url', 'origin', w.remote);
    expect((await w.d.api('POST', `/v1/plans/${plan.id}/deliver`, undefined, w.alice)).status).toBe(202);
    const fixed = (await deliveryUntil(w.d, plan.id, ['delivered', 'failed'])).delivery;
    expect(fixed).toMatchObject({ status: 'delivered', attempts: 1, last_error: null });
  });

  it('retries a remote that is down (503) with backoff, then fails with a scrubbed error and a delivery_failed event', async () => {
    w = await world();
    const down = await refusingRemote(503);
    git(w.repo, 'remote', 'set-url', 'origin', down.url);
    const { plan, exec } = await executedPlan(w, { execute_mode: 'auto', deliver: true });
    const shown = await deliveryUntil(w.d, plan.id, ['failed', 'delivered']);
    const d = shown.delivery;
    expect(d).toMatchObject({ status: 'failed', attempts: 3, pushed_at: null, next_attempt_at: null });
    expect(d.last_error).toContain('git push to origin http://127.0.0.1:');
    expect(d.last_error).toContain('503');
    expectNoSecrets(JSON.stringify(shown));
    const failedEvent = (await eventsOf(w.d, exec.id)).find((e) => e.type === 'delivery_failed');
    expect(failedEvent).toMatchObject({ plan_id: plan.id, attempts: 3, error: d.last_error });
    const metrics = await (
      await fetch(`${w.d.daemon.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).text();
    expect(metrics).toMatch(/^drydock_deliveries_total\{outcome="retry"\} 2$/m);
    expect(metrics).toMatch(/^drydock_deliveries_total\{outcome="failed"\} 1$/m);
    const all = w.d.logs.join('');
    expect(all).toContain('plan delivery failed; retrying');
    expectNoSecrets(all);
  });

  it('delivers after a restart what a stopped daemon left pending', async () => {
    w = await world();
    const hanging = await hangingRemote();
    git(w.repo, 'remote', 'set-url', 'origin', hanging.url);
    const { plan } = await executedPlan(w, { execute_mode: 'auto', deliver: true });
    // The push is under way (git reached the remote) when the daemon stops.
    await waitFor(async () => hanging.requests() > 0 || undefined, 10_000, 'git to reach the remote');
    await w.d.halt();

    git(w.repo, 'remote', 'set-url', 'origin', w.remote);
    const d = await w.boot();
    const left = await d.daemon.store.getPlan(plan.id);
    expect(['pending', 'delivered']).toContain(left?.delivery?.status);
    const shown = (await deliveryUntil(d, plan.id, ['delivered', 'failed'])).delivery;
    expect(shown, shown.last_error).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(git(w.remote, 'rev-parse', `refs/heads/drydock/${plan.id}`)).toBe(shown.commit);
    expect(github.pullRequests(REPO)).toHaveLength(1);
  });
});

describe('a delivery that cannot work as configured', () => {
  it('fails at once when the repository has no remote named origin, saying how to add one', async () => {
    w = await world();
    git(w.repo, 'remote', 'remove', 'origin');
    const { plan } = await executedPlan(w, { execute_mode: 'auto', deliver: true });
    const d = (await deliveryUntil(w.d, plan.id, ['failed', 'delivered'])).delivery;
    expect(d).toMatchObject({ status: 'failed', attempts: 1, pushed_at: null, next_attempt_at: null });
    expect(d.last_error).toBe(
      `the repository ${w.repo} has no remote named origin: add one (git -C ${w.repo} remote add origin <url>) or set delivery.remote to a remote it has`,
    );
    expect(w.d.logs.join('')).not.toContain('plan delivery failed; retrying');
  });

  it('with pull_request and no GitHub credentials: warns at start, and a delivery fails at once pushing nothing', async () => {
    w = await world((c) => {
      c.github.token = null;
      c.delivery.enabled = true;
    });
    const warning =
      'delivery.pull_request is true but neither github.token (GITHUB_TOKEN) nor github.app is set, so no pull request can be opened: set one of them, or set delivery.pull_request: false to push the branch only';
    const start = w.d.logs.find((line) => line.includes(warning));
    expect(start, 'the start warning').toBeDefined();
    expect(JSON.parse(start!).level).toBe(40);

    const { plan } = await executedPlan(w, { execute_mode: 'auto' });
    const d = (await deliveryUntil(w.d, plan.id, ['failed', 'delivered'])).delivery;
    expect(d).toMatchObject({ status: 'failed', attempts: 1, pushed_at: null, pull_request_url: null });
    expect(d.last_error).toBe(`${REPO}: ${warning}; nothing was pushed`);
    expect(git(w.remote, 'branch', '--list', 'drydock/*')).toBe('');
    expect(github.calls).toHaveLength(0);
  });

  it('with pull_request false and no GitHub credentials: the branch is delivered, no pull request, no warning', async () => {
    w = await world((c) => {
      c.github.token = null;
      c.delivery.enabled = true;
      c.delivery.pull_request = false;
    });
    expect(w.d.logs.join('')).not.toContain('delivery.pull_request is true');
    const { plan, exec } = await executedPlan(w, { execute_mode: 'auto' });
    const d = (await deliveryUntil(w.d, plan.id, ['failed', 'delivered'])).delivery;
    expect(d, d.last_error).toMatchObject({ status: 'delivered', pull_request_url: null });
    expect(git(w.remote, 'rev-parse', `refs/heads/drydock/${plan.id}`)).toBe(exec.result_commit);
    expect(github.calls).toHaveLength(0);
  });

  it('fails at once when GitHub refuses the pull request for good (404), saying what to check', async () => {
    w = await world();
    github.fail({ status: 404, match: /^POST \/repos\/acme\/widgets\/pulls$/, times: 10 });
    const { plan, exec } = await executedPlan(w, { execute_mode: 'auto', deliver: true });
    const d = (await deliveryUntil(w.d, plan.id, ['failed', 'delivered'])).delivery;
    expect(d).toMatchObject({ status: 'failed', attempts: 1, pull_request_url: null, next_attempt_at: null });
    // The branch went (recorded), only the pull request failed.
    expect(Date.parse(d.pushed_at)).toBeGreaterThan(0);
    expect(git(w.remote, 'rev-parse', `refs/heads/drydock/${plan.id}`)).toBe(exec.result_commit);
    expect(d.last_error).toContain('404');
    expect(d.last_error).toContain("GitHub does not show the repository or branch to drydock's credentials");
    const creates = github.calls.filter((c) => c.method === 'POST' && c.path === `/repos/${REPO}/pulls`);
    expect(creates.map((c) => c.status)).toEqual([404]);
  });
});

describe('retention and delivery', () => {
  it("keeps an executed plan's worktree and branch while its delivery waits, and removes them once it ended", async () => {
    w = await world();
    const { plan } = await executedPlan(w, { execute_mode: 'auto' });
    const store = w.d.daemon.store;
    await waitFor(async () => (await store.getPlan(plan.id))?.delivery?.status === 'off' || undefined);
    const workRoot = join(w.dir, 'data');
    const tree = join(workRoot, 'worktrees', plan.id);
    const later = Date.now() + 2 * 3_600_000;
    // A delivery waiting for its next try: the branch it would push stays, however old the execution.
    await store.updatePlanDelivery(plan.id, ['off'], { status: 'retrying', nextAttemptAt: later * 2 });
    const kept = await collectGarbage({ store, workRoot }, { ttlMs: 3_600_000, now: later });
    expect(kept).toMatchObject({ worktrees: [], kept: 1, failed: [] });
    expect(existsSync(tree)).toBe(true);
    // Ended (failed) just now: settled, but not for the retention time yet.
    await store.updatePlanDelivery(plan.id, ['retrying'], {
      status: 'failed',
      nextAttemptAt: null,
      settledAt: later,
    });
    expect((await collectGarbage({ store, workRoot }, { ttlMs: 3_600_000, now: later })).kept).toBe(1);
    const gone = await collectGarbage({ store, workRoot }, { ttlMs: 3_600_000, now: later + 2 * 3_600_000 });
    expect(gone.worktrees).toEqual([plan.id]);
    expect(existsSync(tree)).toBe(false);
    expect(git(w.repo, 'branch', '--list', 'drydock/*')).toBe('');
  });
});

describe('delivering a plan a pull request started', () => {
  // Where a pull request's result goes (its own branch, a stacked pull request, the base) is in pr-target.test.ts.
  it("opens a fork's pull request into its base and comments on the original pull request with its link", async () => {
    w = await world((c) => {
      c.github.webhook_secrets = [WEBHOOK_SECRET];
    });
    const trigger = await w.d.api('POST', '/v1/triggers', {
      kind: 'github',
      name: 'review',
      events: ['pull_request.opened'],
      prompt: 'Improve {{repository}}#{{number}}',
      options: { execute_mode: 'auto', deliver: true },
    });
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(201);

    const def = (examples as unknown as any[]).find((e) => e.name === 'pull_request');
    const payload = structuredClone(def.examples.find((e: any) => e.action === 'opened'));
    payload.repository.full_name = REPO;
    payload.number = 7;
    payload.pull_request.number = 7;
    payload.pull_request.head.sha = git(w.repo, 'rev-parse', 'HEAD');
    payload.pull_request.head.ref = 'feature';
    // From a fork: drydock's commit alone goes into a pull request into the base.
    payload.pull_request.head.repo.full_name = 'someone/widgets';
    payload.pull_request.base.ref = 'main';
    // GitHub knows the pull request the webhook speaks of: its comments can be listed.
    github.setPullRequest(REPO, 7, payload.pull_request);
    model.enqueue(
      proposes('p-pr'),
      calls('w-pr', 'Write', { file_path: 'hello.txt', content: 'hello\n' }),
      says('done'),
    );
    const body = JSON.stringify(payload);
    const res = await fetch(`${w.d.daemon.url}/webhooks/github`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'pull_request',
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': await new Webhooks({ secret: WEBHOOK_SECRET }).sign(body),
      },
      body,
    });
    const answer = await settledAnswer(w.d.api, res.status, await res.json());
    expect(answer.outcome, JSON.stringify(answer)).toBe('accepted');
    const planned = await runUntil(w.d, answer.run_ids[0], ['planned', 'failed']);
    expect(planned.status, planned.error).toBe('planned');
    const plan = (await w.d.api('GET', `/v1/plans/${planned.plan_id}`)).body;
    const approved = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, w.alice);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const exec = await runUntil(w.d, approved.body.run.id, ['completed', 'failed']);
    expect(exec.status, exec.error).toBe('completed');

    const d = (await deliveryUntil(w.d, plan.id, ['delivered', 'failed'])).delivery;
    expect(d.status, d.last_error).toBe('delivered');
    const pr = github.pullRequests(REPO)[0]!;
    expect(pr).toMatchObject({ head: `drydock/${plan.id}`, base: 'main' });
    expect(d.target).toBe('base');
    expect(git(w.remote, 'rev-parse', `drydock/${plan.id}^`)).toBe(payload.pull_request.head.sha);
    const comments = github.comments(REPO, 7);
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain(`opened pull request #${pr.number} (${pr.html_url})`);
    expect(comments[0]!.body).toContain(`${PUBLIC_URL}/ui/plans/${plan.id}`);
    expect(d.comment_url).toMatch(new RegExp(`^https://github.com/${REPO}/pull/7#issuecomment-\\d+$`));
    expectNoSecrets(w.d.logs.join(''));
  });
});
