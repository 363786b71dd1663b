import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhooks } from '@octokit/webhooks';
import examples from '@octokit/webhooks-examples';
import { expect } from 'vitest';
import { type FakeGithub, startFakeGithub } from './fake-github.js';
import { type Access, appKeyPair, FULL_APP_PERMISSIONS } from './fake-github-app.js';
import { type GitHttp, startGitHttp } from './git-http.js';
import { git, makeRepo } from './git-repo.js';
import { type TestStore, tempDir } from './harness.js';
import { type ModelServer, startModelServer } from './model-server.js';
import { type DaemonProcess, serveProcess } from './process-daemon.js';
import { settledAnswer } from './webhook-deliveries.js';

// drydock as `drydock serve` processes working for one GitHub repository: the Messages API stand-in, the
// fake GitHub, a clone of the repository and a configuration file that points the daemons at all three
// (reports on, the webhook secret set). For tests that kill a daemon and start another on the same data, or
// run several on one PostgreSQL database.
//
//   const w = await githubWorld({ name: 'report-crash' });
//   const d = await w.serve();
//   await w.openPullRequest(d, 2, w.head);
//   ...
//   await w.close(); // in afterEach
//
// An approver's token for a daemon on the default data directory: createTokenOffline(w.dataDir, 'alice',
// 'approver') (process-daemon.ts).

/** The repository the clone stands for, in drydock's configuration and in the fake GitHub. */
export const REPOSITORY = 'acme/widgets';
const GITHUB_TOKEN = 'ghp_FAKEworld0123456789abcdefghijklmnopqrs';
/** The secret the world's daemons verify webhooks with. */
export const WEBHOOK_SECRET = 'webhook-secret-of-the-github-world-0123';
/** The GitHub App of option `app`: its id, and the installation that holds REPOSITORY. */
export const APP_ID = 4242;
export const INSTALLATION_ID = 77;
/** What the App's installation may do unless option `app` says otherwise: all drydock asks for. */
export const APP_PERMISSIONS: Readonly<Record<string, Access>> = FULL_APP_PERMISSIONS;

export interface GithubWorldOptions {
  /** Names the temporary directory, `drydock-<name>-…` (default `github-world`). */
  name?: string;
  /**
   * More configuration, YAML written after the `github:` section: whole top-level sections such as
   * `delivery:` or `notifications:` (default: none).
   */
  config?: string;
  /**
   * Gives the clone an `origin`: a bare repository (`remote`) holding its `main`, linked in the fake GitHub,
   * which then checks the pull requests drydock opens against its branches (default false).
   */
  origin?: boolean;
  /**
   * The repository lives on a git smart-HTTP remote (tests/support/git-http.ts) and drydock has no clone of it:
   * the configuration maps none (drydock clones it on demand) and points github.git_url at the remote, which
   * takes github.token unless `gitToken` names another. `main` is there, the fake GitHub is linked to it, and
   * `openPullRequest` pushes the head to refs/pull/<n>/head first, as GitHub does. `clone` stays the test's
   * own repository to commit in.
   */
  cloneOnDemand?: boolean | { gitToken?: string };
  /** More keys of the `github:` section, YAML lines indented by two spaces (e.g. `  clone: {timeout_ms: 5000}`). */
  github?: string;
  /**
   * drydock acts as a GitHub App instead of with a token: the fake GitHub plays the App (tests/support/
   * fake-github-app.ts) with one installation holding REPOSITORY (with `permissions`, default APP_PERMISSIONS),
   * the App's key is written to a file of the world's directory, and the configuration has `github.app {id,
   * private_key_file, webhook_secret}` (the secret: WEBHOOK_SECRET) instead of `github.token`. Not with
   * `cloneOnDemand`.
   */
  app?: boolean | { permissions?: Record<string, Access> };
}

export interface ServeOptions {
  /** The data directory, a folder of the world's directory (default `data`: `dataDir`). */
  data?: string;
  /**
   * Where the state lives (see serveProcess): the SQLite file in the data directory (default), a fresh
   * PostgreSQL database (`'postgres'`, dropped by `close()`), or the database of a daemon served before.
   */
  store?: TestStore;
  /** More environment for the process (DRYDOCK_REPLICA_ID, DRYDOCK_WORK_DIR, ...). */
  env?: Record<string, string>;
}

export interface GithubWorld {
  model: ModelServer;
  github: FakeGithub;
  /** The temporary directory that holds the clone, the configuration and the data directories. */
  dir: string;
  /** The clone of REPOSITORY drydock works in: a git repository on `main`. */
  clone: string;
  /** The commit `main` points at. */
  head: string;
  /** The bare repository that is the clone's `origin` (option `origin`), or the git remote's, else null. */
  remote: string | null;
  /** The git smart-HTTP remote (option `cloneOnDemand`), else null. */
  git: GitHttp | null;
  /** The data directory `serve()` uses unless told otherwise. */
  dataDir: string;
  /** Starts `drydock serve` on the world's configuration; resolves once it listens. */
  serve(opts?: ServeOptions): Promise<DaemonProcess>;
  /**
   * Opens pull request `number` of REPOSITORY from its branch `pr-<number>`, its head at `headSha` and its base
   * `main`: the branch is pushed to the origin (option `origin`), GitHub knows the pull request (GET /pulls/:n),
   * and `daemon` receives its signed `pull_request.opened` webhook (the example of @octokit/webhooks-examples,
   * moved onto REPOSITORY: head and base in it). Expects the webhook accepted; resolves with the answer as the
   * inbox settled it.
   */
  openPullRequest(
    daemon: DaemonProcess,
    number: number,
    headSha: string,
    action?: 'opened' | 'synchronize',
  ): Promise<any>;
  /**
   * Sends `daemon` a webhook of `event` signed with WEBHOOK_SECRET, as GitHub would (`delivery`: its
   * X-GitHub-Delivery, default a new one). Resolves with the HTTP status and the answer as the inbox settled
   * it (for a delivery answered queued: its outcome, detail and run ids once processed).
   */
  webhook(
    daemon: DaemonProcess,
    event: string,
    payload: unknown,
    delivery?: string,
  ): Promise<{ status: number; answer: any }>;
  /**
   * Stops the daemons (the last served first: a database the first one made is dropped after the others are
   * gone), removes the directory, closes the fake GitHub and the model.
   */
  close(): Promise<void>;
}

export async function githubWorld(opts: GithubWorldOptions = {}): Promise<GithubWorld> {
  if (opts.app && opts.cloneOnDemand)
    throw new Error('github-world: option app does not go with cloneOnDemand');
  const keys = opts.app ? appKeyPair() : null;
  const permissions = (typeof opts.app === 'object' && opts.app.permissions) || APP_PERMISSIONS;
  const model = await startModelServer();
  const github = await startFakeGithub({
    token: GITHUB_TOKEN,
    ...(keys
      ? {
          app: {
            id: APP_ID,
            publicKey: keys.publicKey,
            installations: [
              {
                id: INSTALLATION_ID,
                account: 'acme',
                repositories: [REPOSITORY],
                permissions: { ...permissions },
              },
            ],
          },
        }
      : {}),
  });
  const tmp = tempDir(`drydock-${opts.name ?? 'github-world'}-`);
  const clone = join(tmp.path, 'clone');
  const head = makeRepo(clone, { 'README.md': '# widgets\n' });
  const onDemand = opts.cloneOnDemand ? (opts.cloneOnDemand === true ? {} : opts.cloneOnDemand) : null;
  const gitHttp = onDemand ? await startGitHttp({ token: onDemand.gitToken ?? GITHUB_TOKEN }) : null;
  const remote = gitHttp
    ? httpRemote(clone, gitHttp, github)
    : opts.origin
      ? bareOrigin(clone, join(tmp.path, 'remote.git'), github)
      : null;
  const configFile = join(tmp.path, 'drydock.yaml');
  const repositories = gitHttp
    ? `  git_url: ${gitHttp.url}\n`
    : `  repositories:\n    ${REPOSITORY}: { path: ${clone} }\n`;
  let credentials = `  token: ${GITHUB_TOKEN}\n  webhook_secrets: [${WEBHOOK_SECRET}]\n`;
  if (keys) {
    const keyFile = join(tmp.path, 'github-app.pem');
    writeFileSync(keyFile, keys.privateKey, { mode: 0o600 });
    credentials = `  app:\n    id: ${APP_ID}\n    private_key_file: ${keyFile}\n    webhook_secret: ${WEBHOOK_SECRET}\n`;
  }
  writeFileSync(
    configFile,
    `github:
${credentials}  api_url: ${github.url}
  report: true
${repositories}${opts.github ? `${opts.github}\n` : ''}${opts.config ?? ''}`,
  );
  const children: ChildProcess[] = [];
  const daemons: DaemonProcess[] = [];
  return {
    model,
    github,
    dir: tmp.path,
    clone,
    head,
    remote,
    git: gitHttp,
    dataDir: join(tmp.path, 'data'),
    async serve(s = {}) {
      const env = { DRYDOCK_CONFIG: configFile, ...s.env };
      const dataDir = join(tmp.path, s.data ?? 'data');
      const d = await serveProcess(dataDir, model.url, children, env, { store: s.store ?? 'sqlite' });
      daemons.push(d);
      return d;
    },
    openPullRequest(daemon, number, headSha, action = 'opened') {
      if (remote) {
        // The pull request's branch (a branch of the repository itself), and where GitHub keeps its head:
        // refs/pull/<n>/head of the base repository.
        git(clone, 'push', '-q', '-f', remote, `${headSha}:refs/heads/pr-${number}`);
        if (gitHttp) git(clone, 'push', '-q', '-f', remote, `${headSha}:refs/pull/${number}/head`);
      }
      return openPullRequest(github, daemon, number, headSha, action);
    },
    async webhook(daemon, event, payload, delivery = randomUUID()) {
      const res = await signedPost(daemon, event, payload, delivery);
      return { status: res.status, answer: await settledAnswer(daemon.api, res.status, res.body) };
    },
    async close() {
      for (const d of daemons.splice(0).reverse()) await d.close();
      for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      tmp.remove();
      await gitHttp?.close();
      await github.close();
      await model.close();
    },
  };
}

/** A bare repository at `remote` holding `clone`'s main, added to the clone as `origin` and linked in GitHub. */
function bareOrigin(clone: string, remote: string, github: FakeGithub): string {
  git(clone, 'init', '-q', '--bare', '-b', 'main', remote);
  git(clone, 'remote', 'add', 'origin', remote);
  git(clone, 'push', '-q', 'origin', 'main');
  github.linkRepository(REPOSITORY, remote);
  return remote;
}

/** REPOSITORY on the git smart-HTTP remote, holding the clone's main, linked in GitHub; its git directory. */
function httpRemote(clone: string, gitHttp: GitHttp, github: FakeGithub): string {
  const remote = gitHttp.repository(REPOSITORY);
  git(clone, 'push', '-q', remote, 'main');
  github.linkRepository(REPOSITORY, remote);
  return remote;
}

async function openPullRequest(
  github: FakeGithub,
  daemon: DaemonProcess,
  number: number,
  headSha: string,
  action: 'opened' | 'synchronize',
): Promise<any> {
  const def = (examples as unknown as any[]).find((e) => e.name === 'pull_request');
  const payload = structuredClone(def.examples.find((e: any) => e.action === action));
  payload.repository.full_name = REPOSITORY;
  payload.number = number;
  payload.pull_request.number = number;
  payload.pull_request.head.sha = headSha;
  payload.pull_request.head.ref = `pr-${number}`;
  // A branch of the repository itself (the example's head and base are another repository).
  payload.pull_request.head.repo.full_name = REPOSITORY;
  payload.pull_request.base.repo.full_name = REPOSITORY;
  // The clone's branch (the example's is `master`): a pull request drydock opens for this one goes into it.
  payload.pull_request.base.ref = 'main';
  github.setPullRequest(REPOSITORY, number, payload.pull_request);
  const res = await signedPost(daemon, 'pull_request', payload, randomUUID());
  const answer = await settledAnswer(daemon.api, res.status, res.body);
  expect(res.status, JSON.stringify(answer)).toBe(202);
  expect(answer.outcome).toBe('accepted');
  return answer;
}

/** POSTs `payload` to the daemon's webhook route as GitHub does, signed with WEBHOOK_SECRET. */
async function signedPost(
  daemon: DaemonProcess,
  event: string,
  payload: unknown,
  delivery: string,
): Promise<{ status: number; body: any }> {
  const body = JSON.stringify(payload);
  const res = await fetch(`${daemon.url}/webhooks/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': event,
      'x-github-delivery': delivery,
      'x-hub-signature-256': await new Webhooks({ secret: WEBHOOK_SECRET }).sign(body),
    },
    body,
  });
  return { status: res.status, body: await res.json() };
}
