import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Webhooks } from '@octokit/webhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { calls, proposes, says } from '../plans/helpers.js';
import { waitFor } from '../support/daemon.js';
import { git } from '../support/git-repo.js';
import {
  type GithubWorld,
  githubWorld,
  REPOSITORY as REPO,
  WEBHOOK_SECRET,
} from '../support/github-world.js';
import { createTokenOffline, type DaemonProcess } from '../support/process-daemon.js';
import { settledAnswer } from '../support/webhook-deliveries.js';
import { prPayload } from './helpers.js';

// Clone on demand, end to end: `drydock serve` processes configured with no local clone of the repository, the
// repository on a git smart-HTTP remote (git http-backend) that asks for the token as GitHub does, the fake
// GitHub linked to it. A pull request webhook makes drydock clone it into <work root>/repos, plan at the head,
// fetch (not clone again) for the next push, execute and deliver from the cache; a wrong token, an oversize
// repository and a remote that stops answering fail the run within the limits, leaving no clone.

const TRIGGER = {
  kind: 'github',
  name: 'review',
  events: ['pull_request.opened', 'pull_request.synchronize'],
  prompt: 'Review {{repository}}#{{number}}.',
};

let w: GithubWorld | undefined;

afterEach(async () => {
  await w?.close();
  w = undefined;
});

/** A commit on branch `pr` of the world's own repository (off main the first time, or when `fresh`). */
function prCommit(world: GithubWorld, files: Record<string, string | Buffer>, fresh = false): string {
  let onPr = !fresh;
  try {
    git(world.clone, 'rev-parse', '--verify', '-q', 'refs/heads/pr');
  } catch {
    onPr = false;
  }
  git(world.clone, 'checkout', '-q', '-B', 'pr', onPr ? 'pr' : 'main');
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(world.clone, path)), { recursive: true });
    writeFileSync(join(world.clone, path), content);
  }
  git(world.clone, 'add', '-A');
  git(world.clone, 'commit', '-q', '-m', 'pull request work');
  const sha = git(world.clone, 'rev-parse', 'HEAD');
  git(world.clone, 'checkout', '-q', 'main');
  return sha;
}

const until = (d: DaemonProcess, path: string, ok: (body: any) => boolean, what: string, ms = 60_000) =>
  waitFor(
    async () => {
      const r = await d.api('GET', path);
      return ok(r.body) ? r.body : undefined;
    },
    ms,
    what,
  );

const ended = (d: DaemonProcess, runId: string) =>
  until(d, `/v1/runs/${runId}`, (r) => ['planned', 'failed', 'completed'].includes(r.status), `run ${runId}`);

async function withTrigger(d: DaemonProcess, extra: Record<string, unknown> = {}): Promise<void> {
  const r = await d.api('POST', '/v1/triggers', { ...TRIGGER, ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

/** The text of the tool result `id` in the newest request the model got. */
function toolResult(world: GithubWorld, id: string): string {
  const blocks = world.model.requests
    .at(-1)!
    .body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : []));
  return blocks.find((b: any) => b.type === 'tool_result' && b.tool_use_id === id)?.content ?? '';
}

const cachePath = (world: GithubWorld, root = world.dataDir) => join(root, 'repos', 'acme', 'widgets.git');

/** No clone of the repository, and nothing half-made of one, under `root`. */
function noClone(world: GithubWorld, root = world.dataDir): void {
  expect(existsSync(cachePath(world, root))).toBe(false);
  const incoming = join(root, 'repos', '.incoming');
  expect(existsSync(incoming) ? readdirSync(incoming) : []).toEqual([]);
}

describe('a pull request on a repository drydock has no clone of', () => {
  it('is cloned and planned at its head; the next push is fetched into the same clone, not cloned again', async () => {
    w = await githubWorld({ name: 'clone-plan', cloneOnDemand: true });
    const d = await w.serve();
    await withTrigger(d);
    const head = prCommit(w, { 'only-on-branch.txt': 'marker 51c2: only at the pull request head\n' });
    w.model.enqueue(calls('toolu_read', 'Read', { file_path: 'only-on-branch.txt' }), proposes('p-1'));
    const first = await ended(d, (await w.openPullRequest(d, 2, head)).run_ids[0]);
    expect(first.status, first.error).toBe('planned');
    expect(toolResult(w, 'toolu_read')).toContain('marker 51c2');
    const plan = (await d.api('GET', `/v1/plans/${first.plan_id}`)).body;
    expect(plan.workspace_commit).toBe(head);

    const cache = cachePath(w);
    expect(git(cache, 'rev-parse', '--is-bare-repository')).toBe('true');
    expect(git(cache, 'rev-parse', 'refs/drydock/pull/2/head')).toBe(head);
    // One clone: the first fetch, which had nothing to offer. (The example payload's base commit exists
    // nowhere: a later fetch asks for it by id, offering what the clone has, and the run goes on without it.)
    const clones = w.git!.fetches(REPO).filter((f) => f.haves === 0);
    expect(clones).toHaveLength(1);
    expect(w.git!.fetches(REPO)[0]).toMatchObject({ haves: 0, user: 'x-access-token' });
    const before = w.git!.fetches(REPO).length;
    const inode = statSync(cache).ino;

    const next = prCommit(w, { 'only-on-branch.txt': 'marker 9e0d: the second push\n' });
    w.model.enqueue(calls('toolu_again', 'Read', { file_path: 'only-on-branch.txt' }), proposes('p-2'));
    const second = await ended(d, (await w.openPullRequest(d, 2, next, 'synchronize')).run_ids[0]);
    expect(second.status, second.error).toBe('planned');
    expect(toolResult(w, 'toolu_again')).toContain('marker 9e0d');
    // The remote served a fetch that offered the commits the clone had: not a second clone.
    const fetches = w.git!.fetches(REPO).slice(before);
    expect(fetches.length).toBeGreaterThan(0);
    expect(fetches.every((f) => f.haves > 0)).toBe(true);
    expect(w.git!.fetches(REPO).filter((f) => f.haves === 0)).toHaveLength(1);
    expect(statSync(cache).ino).toBe(inode);
    expect(git(cache, 'rev-parse', 'refs/drydock/pull/2/head')).toBe(next);
  }, 120_000);

  it("approved, executes in a worktree of the clone and is delivered: pushed onto the pull request's branch on the remote", async () => {
    w = await githubWorld({
      name: 'clone-deliver',
      cloneOnDemand: true,
      config: 'delivery:\n  pull_request: true\n  push_timeout_ms: 60000\n',
    });
    const d = await w.serve();
    await withTrigger(d, { options: { execute_mode: 'auto', deliver: true } });
    const head = prCommit(w, { 'feature.txt': 'the pull request\n' });
    w.model.enqueue(
      proposes('p-1'),
      calls('w-1', 'Write', { file_path: 'hello.txt', content: 'hello\n' }),
      says('done'),
    );
    const planned = await ended(d, (await w.openPullRequest(d, 2, head)).run_ids[0]);
    expect(planned.status, planned.error).toBe('planned');
    const plan = (await d.api('GET', `/v1/plans/${planned.plan_id}`)).body;
    const alice = createTokenOffline(w.dataDir, 'alice', 'approver');
    const approved = await d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, alice);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const done = await until(
      d,
      `/v1/plans/${plan.id}`,
      (p) =>
        p.delivery?.status === 'delivered' ||
        p.delivery?.status === 'failed' ||
        p.status === 'execution_failed',
      'the delivery to end',
      90_000,
    );
    expect(done.status, done.failure_reason).toBe('executed');
    expect(done.delivery.status, done.delivery.last_error).toBe('delivered');

    // The pull request's branch is in the repository itself, so (pr_target null) the commit went from the
    // clone's cache onto that branch on the remote, as one commit on the planned head; no pull request opened.
    expect(done.delivery).toMatchObject({ target: 'head', branch: 'pr-2' });
    expect(git(w.remote!, 'show', 'pr-2:hello.txt')).toBe('hello');
    expect(git(w.remote!, 'show', 'pr-2:feature.txt')).toBe('the pull request');
    expect(git(w.remote!, 'rev-parse', 'pr-2^')).toBe(head);
    expect(done.delivery.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(git(w.remote!, 'rev-parse', 'pr-2')).toBe(done.delivery.commit);
    expect(w.git!.requests.some((q) => q.service === 'git-receive-pack' && q.user === 'x-access-token')).toBe(
      true,
    );
    expect(w.github.pullRequests(REPO)).toEqual([]);
  }, 150_000);
});

describe('a clone that fails fails the run, clearly, within the limits', () => {
  it('a token the remote refuses: the run names the repository and the refusal, and no token is in it or the logs', async () => {
    const other = 'ghs_OTHERtoken0123456789abcdefghijklmnopq';
    w = await githubWorld({ name: 'clone-token', cloneOnDemand: { gitToken: other } });
    const d = await w.serve();
    await withTrigger(d);
    const head = prCommit(w, { 'feature.txt': 'x\n' });
    const run = await ended(d, (await w.openPullRequest(d, 2, head)).run_ids[0]);
    expect(run.status).toBe('failed');
    expect(run.error).toContain('cloning acme/widgets from');
    expect(run.error).toContain('the credentials for it were refused');
    expect(w.model.requests).toHaveLength(0);
    noClone(w);
    const said = [run.error, d.stdout(), d.stderr(), ...w.github.comments().map((c) => c.body)].join('\n');
    expect(said).not.toContain('ghp_FAKEworld');
    expect(said).not.toContain(other);
  }, 120_000);

  it('a repository over max_bytes, and a remote that stops answering: each run fails at its limit and leaves no clone', async () => {
    w = await githubWorld({
      name: 'clone-limits',
      cloneOnDemand: true,
      github: '  clone:\n    timeout_ms: 3000\n    max_bytes: 300000',
    });
    const d = await w.serve();
    await withTrigger(d);
    const big = prCommit(w, { 'big.bin': randomBytes(1_500_000) });
    const large = await ended(d, (await w.openPullRequest(d, 2, big)).run_ids[0]);
    expect(large.status).toBe('failed');
    expect(large.error).toContain('cloning acme/widgets');
    expect(large.error).toContain('larger than github.clone.max_bytes (300000 bytes)');
    noClone(w);

    w.git!.hang(/git-upload-pack/);
    const small = prCommit(w, { 'small.txt': 'x\n' }, true);
    const hung = await ended(d, (await w.openPullRequest(d, 3, small)).run_ids[0]);
    expect(hung.status).toBe('failed');
    expect(hung.error).toContain('it took longer than github.clone.timeout_ms (3000 ms)');
    noClone(w);
    expect(w.model.requests).toHaveLength(0);
  }, 120_000);
});

describe('replicas sharing work_dir', () => {
  it('two daemons racing for one repository clone it once: the second waits for the first, then plans too', async () => {
    w = await githubWorld({ name: 'clone-race', cloneOnDemand: true });
    const work = join(w.dir, 'work');
    const a = await w.serve({ data: 'a', env: { DRYDOCK_WORK_DIR: work } });
    const b = await w.serve({ data: 'b', env: { DRYDOCK_WORK_DIR: work, DRYDOCK_LOG_LEVEL: 'info' } });
    await withTrigger(a);
    await withTrigger(b);
    const head = prCommit(w, { 'feature.txt': 'x\n' });
    w.model.enqueue(proposes('p-a'), proposes('p-b'));
    // The first daemon's clone is held at the remote's first answer ...
    const held = w.git!.hold(/^GET \/acme\/widgets\.git\/info\/refs/);
    const runA = (await w.openPullRequest(a, 2, head)).run_ids[0];
    await held.reached;
    // ... while the second one, on the same work_dir, waits for it rather than clone too.
    const runB = (await w.openPullRequest(b, 2, head)).run_ids[0];
    await waitFor(
      async () => (b.stdout() + b.stderr()).includes('waiting for another clone or fetch of this repository'),
      60_000,
      'the second daemon to wait for the first',
    );
    held.release();
    expect((await ended(a, runA)).status).toBe('planned');
    expect((await ended(b, runB)).status).toBe('planned');
    expect(w.git!.fetches(REPO).filter((f) => f.haves === 0)).toHaveLength(1);
    expect(git(cachePath(w, work), 'rev-parse', 'refs/drydock/pull/2/head')).toBe(head);
    expect(existsSync(join(w.dataDir, 'repos'))).toBe(false);
  }, 150_000);
});

describe('a repository name a payload makes up', () => {
  it('a full_name that would lead out of the cache is refused: no run, nothing made', async () => {
    w = await githubWorld({ name: 'clone-names', cloneOnDemand: true });
    const d = await w.serve();
    await withTrigger(d);
    for (const name of ['acme/..', '../..', '..-x/..']) {
      const payload = prPayload('opened', { sha: w.head });
      payload.repository.full_name = name;
      const body = JSON.stringify(payload);
      const res = await fetch(`${d.url}/webhooks/github`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'pull_request',
          'x-github-delivery': randomUUID(),
          'x-hub-signature-256': await new Webhooks({ secret: WEBHOOK_SECRET }).sign(body),
        },
        body,
      });
      expect(res.status).toBe(202);
      const answer = await settledAnswer(d.api, res.status, await res.json());
      expect(answer.outcome, name).toBe('rejected');
      expect(answer.detail).toContain('refusing to clone');
      expect(answer.run_ids).toEqual([]);
    }
    expect(existsSync(join(w.dataDir, 'repos'))).toBe(false);
    expect(existsSync(join(w.dir, 'acme'))).toBe(false);
    expect(w.git!.requests).toEqual([]);
  }, 60_000);
});
