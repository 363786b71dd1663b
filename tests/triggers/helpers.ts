import { spawnSync } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import examples from '@octokit/webhooks-examples';
import { expect } from 'vitest';
import { issueToken } from '../../src/auth/tokens.js';
import type { Config } from '../../src/config/schema.js';
import type { WebhookDelivery } from '../../src/domain/types.js';
import { startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { git } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';
import { type ModelServer, type ScriptedResponse, startModelServer } from '../support/model-server.js';
import { processedWebhookDelivery, settledAnswer } from '../support/webhook-deliveries.js';

export const SECRET = 'drydock-test-webhook-secret-0123456789';
export const REPO = 'Codertocat/Hello-World';
/** The pull request number of the pull_request examples (issue_comment examples are on issue #1). */
export const PR_NUMBER = 2;
export const PLAN_MD = '## Review the pull request\n\n1. Read the changed files\n2. Report findings\n';

// ---- payloads ------------------------------------------------------------------------------------------

/** A deep copy of the first example of `name` (with `action`, and passing `pick`) from @octokit/webhooks-examples. */
export function example(name: string, action?: string, pick: (p: any) => boolean = () => true): any {
  const def = (examples as unknown as { name: string; examples: any[] }[]).find((e) => e.name === name);
  const found = def?.examples.find((p) => (action === undefined || p.action === action) && pick(p));
  if (!found) throw new Error(`no ${name}${action ? `.${action}` : ''} example`);
  return structuredClone(found);
}

/** A real pull_request payload with its head moved to `sha`/`ref` (the examples' sha exists in no repository). */
export function prPayload(
  action: 'opened' | 'synchronize' | 'closed',
  head: { sha: string; ref?: string },
): any {
  const p = example('pull_request', action, (x) => x.pull_request.labels.length === 0 || action !== 'opened');
  p.pull_request.head.sha = head.sha;
  p.pull_request.head.ref = head.ref ?? 'changes';
  return p;
}

/** A real issue_comment.created payload, moved onto pull request `number` (the examples are on an issue). */
export function commentPayload(body: string, login: string, number = PR_NUMBER): any {
  const p = example('issue_comment', 'created');
  p.issue.number = number;
  p.issue.pull_request = {
    url: `https://api.github.com/repos/${REPO}/pulls/${number}`,
    html_url: `https://github.com/${REPO}/pull/${number}`,
    diff_url: `https://github.com/${REPO}/pull/${number}.diff`,
    patch_url: `https://github.com/${REPO}/pull/${number}.patch`,
  };
  p.comment.body = body;
  p.comment.user.login = login;
  p.sender.login = login;
  return p;
}

/**
 * A github delivery as the store keeps it, `queued` and received now unless `over` says otherwise: for
 * writing straight into the store what a daemon that died (or an older version) left behind.
 */
export function storedWebhookDelivery(key: string, over: Partial<WebhookDelivery> = {}): WebhookDelivery {
  return {
    id: `dlv_${key}`,
    source: 'github',
    key,
    event: 'pull_request.opened',
    triggerId: null,
    outcome: 'queued',
    detail: null,
    subject: null,
    runIds: [],
    receivedAt: Date.now(),
    processedAt: null,
    ...over,
  };
}

// ---- signing and sending -------------------------------------------------------------------------------

/** `sha256=` + HMAC-SHA256 hex of the raw body, as GitHub signs it. */
export function sign(body: string, secret = SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export interface Delivered {
  status: number;
  /**
   * The answer; for a delivery answered `queued`, unless `wait` is false, its fields as the inbox settled them
   * (outcome, detail, run_ids) over the answer's.
   */
  body: any;
  /** The HTTP answer itself. */
  answer: any;
  /** Wall time of the request, ms. */
  ms: number;
  delivery: string;
}

/**
 * POSTs a webhook to the daemon's real HTTP server. `payload` is serialized unless it is a string; it is signed
 * with `secret` unless `signature` is given (null: no signature header). `headers` override the rest (a null
 * value drops that header). A delivery answered `queued` is then followed over GET /v1/deliveries/:id until
 * the inbox processed it (`wait: false` returns at the answer).
 */
export async function deliver(
  d: TestDaemon,
  event: string | null,
  payload: unknown,
  opts: {
    delivery?: string | null;
    secret?: string;
    signature?: string | null;
    headers?: Record<string, string | null>;
    wait?: boolean;
  } = {},
): Promise<Delivered> {
  const raw = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const delivery = opts.delivery === undefined ? randomUUID() : opts.delivery;
  const signature = opts.signature === undefined ? sign(raw, opts.secret) : opts.signature;
  const headers: Record<string, string | null> = {
    'content-type': 'application/json',
    'user-agent': 'GitHub-Hookshot/044aadd',
    'x-github-event': event,
    'x-github-delivery': delivery,
    'x-hub-signature-256': signature,
    ...opts.headers,
  };
  const sent: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== null) sent[k] = v;
  const started = performance.now();
  const res = await fetch(`${d.daemon.url}/webhooks/github`, { method: 'POST', headers: sent, body: raw });
  const text = await res.text();
  const ms = performance.now() - started;
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // keep the text
  }
  const answer = body;
  if (opts.wait !== false) body = await settledAnswer(d.api, res.status, answer);
  return { status: res.status, body, answer, ms, delivery: delivery ?? '' };
}

/** Waits until the inbox processed delivery `id` (its outcome is no longer `queued`); returns it. */
export const processed = (d: TestDaemon, id: string, ms?: number) => processedWebhookDelivery(d.api, id, ms);

// ---- the model -----------------------------------------------------------------------------------------

export const proposes = (markdown = PLAN_MD, id?: string): ScriptedResponse => ({
  kind: 'message',
  content: [{ type: 'tool_use', ...(id ? { id } : {}), name: 'ExitPlanMode', input: { plan: markdown } }],
});

export const says = (text: string): ScriptedResponse => ({
  kind: 'message',
  content: [{ type: 'text', text }],
});

export const calls = (id: string, name: string, input: unknown): ScriptedResponse => ({
  kind: 'message',
  content: [{ type: 'tool_use', id, name, input }],
});

/**
 * Answers any unscripted request: a plan-mode turn proposes a plan, an execute-phase turn (Bash is offered)
 * ends with a summary, so background runs finish quietly.
 */
export const autopilot: ScriptedResponse = (req) =>
  (req.body?.tools ?? []).some((t: any) => t.name === 'Bash')
    ? says('Done: the plan is carried out.')
    : proposes();

/** The text of the first user message of a recorded Messages request (the run's prompt). */
export function firstUserText(body: any): string {
  const first = body.messages[0];
  return typeof first.content === 'string'
    ? first.content
    : first.content
        .filter((b: any) => b.type === 'text')
        .map((b: any) => b.text)
        .join('\n');
}

// ---- git: a "remote" and the daemon's clone of it -------------------------------------------------------

export interface GitWorld {
  dir: string;
  /** A bare repository standing in for GitHub. */
  remote: string;
  /** The local clone drydock is configured with (github.repositories). */
  clone: string;
  /** The commit main points at in both. */
  base: string;
  /** Commits `files` on a new branch off main in a scratch repository and pushes it to the remote only. */
  pushBranch(branch: string, files: Record<string, string>): string;
  remove(): void;
}

export function gitWorld(files: Record<string, string> = { 'README.md': '# Hello-World\n' }): GitWorld {
  const tmp = tempDir('drydock-gh-');
  const remote = join(tmp.path, 'remote.git');
  const seed = join(tmp.path, 'seed');
  const clone = join(tmp.path, 'clone');
  git(tmp.path, 'init', '-q', '--bare', '-b', 'main', remote);
  git(tmp.path, 'init', '-q', '-b', 'main', seed);
  for (const [path, content] of Object.entries(files)) writeFileSync(join(seed, path), content);
  git(seed, 'add', '-A');
  git(seed, 'commit', '-q', '-m', 'initial');
  git(seed, 'remote', 'add', 'origin', remote);
  git(seed, 'push', '-q', 'origin', 'main');
  git(tmp.path, 'clone', '-q', remote, clone);
  const base = git(clone, 'rev-parse', 'HEAD');
  return {
    dir: tmp.path,
    remote,
    clone,
    base,
    pushBranch(branch, branchFiles) {
      git(seed, 'checkout', '-q', '-B', branch, 'main');
      for (const [path, content] of Object.entries(branchFiles)) {
        mkdirSync(dirname(join(seed, path)), { recursive: true });
        writeFileSync(join(seed, path), content);
      }
      git(seed, 'add', '-A');
      git(seed, 'commit', '-q', '-m', `work on ${branch}`);
      git(seed, 'push', '-q', '-f', 'origin', branch);
      const sha = git(seed, 'rev-parse', 'HEAD');
      git(seed, 'checkout', '-q', 'main');
      return sha;
    },
    remove: tmp.remove,
  };
}

/** True when `sha` is a commit of the repository at `dir`. */
export function hasCommit(dir: string, sha: string): boolean {
  const r = spawnSync('git', ['-C', dir, 'cat-file', '-e', `${sha}^{commit}`], { stdio: 'ignore' });
  return r.status === 0;
}

// ---- the whole world -----------------------------------------------------------------------------------

export interface TriggerWorld {
  model: ModelServer;
  d: TestDaemon;
  repo: GitWorld;
  /** Creates a trigger over HTTP (admin token); expects 201. */
  trigger(body: Record<string, unknown>): Promise<any>;
  close(): Promise<void>;
}

/**
 * A scripted model server (answering anything unscripted through `autopilot`), a git remote with a clone
 * configured for Codertocat/Hello-World, and a daemon that verifies webhooks with SECRET.
 */
export async function triggerWorld(
  opts: { patch?: (c: Config) => void; users?: Record<string, string>; files?: Record<string, string> } = {},
): Promise<TriggerWorld> {
  const model = await startModelServer();
  model.setFallback(autopilot);
  const repo = gitWorld(opts.files);
  let d: TestDaemon;
  try {
    d = await startTestDaemon({
      modelUrl: model.url,
      patch: (c) => {
        c.github.webhook_secrets = [SECRET];
        c.github.repositories = { [REPO]: { path: repo.clone } };
        c.github.users = opts.users ?? {};
        opts.patch?.(c);
      },
    });
  } catch (err) {
    await model.close();
    repo.remove();
    throw err;
  }
  // Mapped GitHub users act as drydock identities; to decide plans those identities need an approver token.
  for (const identity of new Set(Object.values(opts.users ?? {}))) {
    await d.daemon.store.createToken(issueToken(identity, identity, 'approver', Date.now()).record);
  }
  return {
    model,
    d,
    repo,
    async trigger(body) {
      const r = await d.api('POST', '/v1/triggers', { kind: 'github', ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body;
    },
    async close() {
      await d.stop();
      await model.close();
      repo.remove();
    },
  };
}

export async function getRun(d: TestDaemon, id: string): Promise<any> {
  const r = await d.api('GET', `/v1/runs/${id}`);
  expect(r.status).toBe(200);
  return r.body;
}

/** Waits until the run reaches one of `statuses`. */
export async function runUntil(d: TestDaemon, id: string, statuses: string[], ms = 15_000): Promise<any> {
  return waitFor(
    async () => {
      const run = await getRun(d, id);
      return statuses.includes(run.status) ? run : undefined;
    },
    ms,
    `run ${id} to reach ${statuses.join('/')}`,
  );
}

/** Waits until the run is planned and returns its plan. */
export async function plannedPlan(d: TestDaemon, runId: string): Promise<any> {
  const run = await runUntil(d, runId, ['planned', 'failed', 'canceled', 'budget_exceeded']);
  expect(run.status, run.error ?? '').toBe('planned');
  const plan = await d.api('GET', `/v1/plans/${run.plan_id}`);
  expect(plan.status).toBe(200);
  return plan.body;
}

export async function getPlan(d: TestDaemon, id: string): Promise<any> {
  const r = await d.api('GET', `/v1/plans/${id}`);
  expect(r.status).toBe(200);
  return r.body;
}

/** Every run (newest first; the tests make far fewer than the page size). */
export async function allRuns(d: TestDaemon): Promise<any[]> {
  const r = await d.api('GET', '/v1/runs?limit=200');
  expect(r.status).toBe(200);
  return r.body.items;
}

/** Waits until no run is queued or running. */
export async function settled(d: TestDaemon, ms = 15_000): Promise<any[]> {
  return waitFor(
    async () => {
      const runs = await allRuns(d);
      return runs.every((r) => !['queued', 'running'].includes(r.status)) ? runs : undefined;
    },
    ms,
    'every run to settle',
  );
}
