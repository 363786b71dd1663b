import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/auth/tokens.js';
import type { Config } from '../../src/config/schema.js';
import { createLogger } from '../../src/logger.js';
import { calls, proposes, says } from '../plans/helpers.js';
import { startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { type FakeGithub, startFakeGithub } from '../support/fake-github.js';
import { appKeyPair, FULL_APP_PERMISSIONS } from '../support/fake-github-app.js';
import { type GitHttp, startGitHttp } from '../support/git-http.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';

// Delivering as a GitHub App, end to end: a real daemon pushes over smart HTTP to a git remote that, like GitHub,
// takes only a live installation token of the repository's installation as the password of `x-access-token`
// (tests/support/git-http.ts asks the fake GitHub), and opens the pull request through the fake GitHub's REST API
// with the same token. The token reaches git only through GIT_ASKPASS, and never a log, the store or an answer.

const REPO = 'acme/widgets';
const APP_ID = 5151;
const keys = appKeyPair();

let model: ModelServer;
let github: FakeGithub;
let remote: GitHttp | undefined;
let d: TestDaemon | undefined;
let tmp: ReturnType<typeof tempDir>;
const servers: Server[] = [];

beforeEach(async () => {
  model = await startModelServer();
  github = await startFakeGithub({
    token: 'ghp_PATnotused0123456789abcdefghijklmnop',
    app: {
      id: APP_ID,
      publicKey: keys.publicKey,
      installations: [
        { id: 31, account: 'acme', repositories: [REPO], permissions: { ...FULL_APP_PERMISSIONS } },
      ],
    },
  });
  tmp = tempDir('drydock-app-delivery-');
});
afterEach(async () => {
  await d?.stop();
  d = undefined;
  await remote?.close();
  remote = undefined;
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
  await github.close();
  await model.close();
  tmp.remove();
});

/** The bare repository behind the HTTP remote, the workspace cloned from it, and a daemon delivering to it. */
async function world(patch: (c: Config) => void) {
  const bare = join(tmp.path, 'remotes', 'acme', 'widgets.git');
  mkdirSync(join(tmp.path, 'remotes', 'acme'), { recursive: true });
  git(tmp.path, 'init', '-q', '--bare', '-b', 'main', bare);
  const repo = join(tmp.path, 'repo');
  makeRepo(repo, { 'README.md': '# widgets\n' });
  git(repo, 'remote', 'add', 'origin', bare);
  git(repo, 'push', '-q', 'origin', 'main');
  github.linkRepository(REPO, bare);
  remote = await startGitHttp({
    root: join(tmp.path, 'remotes'),
    check: (user, password, repository, access) =>
      user === 'x-access-token' && github.app!.acceptsForGit(password, repository, access),
  });
  git(repo, 'remote', 'set-url', 'origin', remote.urlOf(REPO));
  const logs: string[] = [];
  d = await startTestDaemon({
    modelUrl: model.url,
    dir: join(tmp.path, 'daemon'),
    logger: createLogger('debug', { write: (line: string) => void logs.push(line) }),
    patch: (c) => {
      c.server.public_url = 'https://drydock.example.test';
      c.github.api_url = github.url;
      c.github.repositories = { [REPO]: { path: repo } };
      c.delivery.retry_base_ms = 50;
      c.delivery.retry_max_ms = 200;
      c.delivery.attempts = 2;
      c.delivery.push_timeout_ms = 20_000;
      patch(c);
    },
  });
  const alice = issueToken('alice', 'alice', 'approver', Date.now());
  await d.daemon.store.createToken(alice.record);
  return { bare, repo, logs, alice: alice.token, d };
}

function asApp(c: Config): void {
  const keyFile = join(tmp.path, 'app.pem');
  writeFileSync(keyFile, keys.privateKey, { mode: 0o600 });
  c.github.app = { id: APP_ID, private_key_file: keyFile, webhook_secret: null };
}

/** A session delivering its results, a plan made and approved by alice, executed (one Write); its delivery settled. */
async function deliveredPlan(w: Awaited<ReturnType<typeof world>>): Promise<{ plan: any; delivery: any }> {
  const s = await w.d.api('POST', '/v1/sessions', {
    workspace: w.repo,
    defaults: { execute_mode: 'auto', deliver: true },
  });
  expect(s.status, JSON.stringify(s.body)).toBe(201);
  const j = await w.d.api('POST', `/v1/sessions/${s.body.id}/jobs`, { cron: '0 9 * * *', prompt: 'Greet' });
  const file = `hello-${randomUUID().slice(0, 8)}.txt`;
  model.enqueue(
    proposes(`p-${randomUUID()}`),
    calls(`w-${randomUUID()}`, 'Write', { file_path: file, content: 'hi\n' }),
    says('done'),
  );
  const fired = await w.d.api('POST', `/v1/jobs/${j.body.id}/run`);
  const planned = await runStatus(w.d, fired.body.id, ['planned', 'failed']);
  expect(planned.status, planned.error).toBe('planned');
  const plan = (await w.d.api('GET', `/v1/plans/${planned.plan_id}`)).body;
  const approved = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, w.alice);
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  const exec = await runStatus(w.d, approved.body.run.id, ['completed', 'failed']);
  expect(exec.status, exec.error).toBe('completed');
  const shown = await waitFor(
    async () => {
      const p = await w.d.api('GET', `/v1/plans/${plan.id}`);
      return ['delivered', 'failed'].includes(p.body.delivery?.status) ? p.body : undefined;
    },
    20_000,
    'the delivery to settle',
  );
  return { plan: shown, delivery: shown.delivery };
}

async function runStatus(client: TestDaemon, runId: string, statuses: string[]): Promise<any> {
  return waitFor(
    async () => {
      const r = await client.api('GET', `/v1/runs/${runId}`);
      return statuses.includes(r.body.status) ? r.body : undefined;
    },
    15_000,
    `run ${runId} to reach ${statuses.join('/')}`,
  );
}

/** Every file of the data directory (the SQLite database and its WAL): no token may be in any of them. */
function storedBytes(dir: string): string {
  return readdirSync(join(dir, 'data'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /drydock\.db/.test(e.name))
    .map((e) => readFileSync(join(e.parentPath, e.name)).toString('latin1'))
    .join('');
}

describe('delivering as a GitHub App', () => {
  it("pushes with the repository's installation token through askpass and opens the pull request with it", async () => {
    const w = await world(asApp);
    const { plan, delivery } = await deliveredPlan(w);
    expect(delivery.status, delivery.last_error).toBe('delivered');
    expect(git(w.bare, 'rev-parse', `refs/heads/drydock/${plan.id}`)).toBe(delivery.commit);

    const [token] = github.app!.issued().map((t) => t.token);
    expect(github.app!.issued()).toMatchObject([{ installation: 31 }]);
    // git was challenged, asked GIT_ASKPASS, and pushed with the token as x-access-token's password.
    const pushes = remote!.requests.filter((r) => r.access === 'write');
    expect(pushes.at(0)?.status).toBe(401);
    expect(pushes.filter((r) => r.status === 200).map((r) => [r.username, r.password])).toContainEqual([
      'x-access-token',
      token,
    ]);
    // The REST calls about the repository carried the same installation token; none asked GET /user.
    const opened = github.calls.filter((c) => c.method === 'POST' && c.path === `/repos/${REPO}/pulls`);
    expect(opened.map((c) => [c.headers.authorization, c.status])).toEqual([[`token ${token}`, 201]]);
    expect(github.pullRequests(REPO)).toMatchObject([{ head: `drydock/${plan.id}`, base: 'main' }]);
    expect(github.calls.filter((c) => c.path === '/user')).toHaveLength(0);

    // The token is nowhere drydock writes: logs, the store, the API.
    const said = [w.logs.join(''), storedBytes(w.d.dir), JSON.stringify(plan)].join('\n');
    expect(said).not.toContain(token!);
    expect(said).not.toContain(keys.privateKey.split('\n')[1]!);
    expect(w.logs.join('')).toContain('plan delivered');
  });

  it('pushes again with a new token when the remote refuses one drydock still held', async () => {
    const w = await world(asApp);
    expect((await deliveredPlan(w)).delivery.status).toBe('delivered');
    // GitHub lets the held token lapse early: the next push is refused once, the token renewed, the push made.
    github.app!.expireTokens();
    const { plan, delivery } = await deliveredPlan(w);
    expect(delivery, delivery.last_error).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(git(w.bare, 'rev-parse', `refs/heads/drydock/${plan.id}`)).toBe(delivery.commit);
    const [first, second] = github.app!.issued().map((t) => t.token);
    const refused = remote!.requests.filter((r) => r.password === first && r.status === 401);
    expect(refused.length).toBeGreaterThan(0);
    expect(remote!.requests.filter((r) => r.password === second && r.status === 200).length).toBeGreaterThan(
      0,
    );
    const said = [w.logs.join(''), storedBytes(w.d.dir), JSON.stringify(plan)].join('\n');
    for (const token of [first!, second!]) expect(said).not.toContain(token);
  });
});

describe('a GitHub credential goes to GitHub only', () => {
  it('never hands github.token to a remote on another host', async () => {
    // The attack: a workspace whose remote points elsewhere (a contributor's repository config, a typo) would
    // collect drydock's GitHub token from git's askpass. Only delivery.token, set on purpose, goes to any host.
    const authorizations: string[] = [];
    const server = createServer((req, res) => {
      if (req.headers.authorization) authorizations.push(req.headers.authorization);
      res.writeHead(401, { 'www-authenticate': 'Basic realm="elsewhere"' }).end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const w = await world((c) => {
      c.github.token = github.token;
    });
    // `localhost` is not the GitHub API's host (127.0.0.1 here), though it is the same machine.
    git(
      w.repo,
      'remote',
      'set-url',
      'origin',
      `http://localhost:${(server.address() as AddressInfo).port}/acme/widgets.git`,
    );
    const { delivery } = await deliveredPlan(w);
    expect(delivery.status).toBe('failed');
    expect(delivery.last_error).toContain('git push to origin http://localhost:');
    expect(authorizations).toEqual([]);
    expect(w.logs.join('')).not.toContain(github.token);
  });
});
