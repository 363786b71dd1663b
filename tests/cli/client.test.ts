import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { issueToken } from '../../src/auth/tokens.js';
import type { Plan } from '../../src/domain/types.js';
import { newId } from '../../src/ids.js';
import { packageRoot } from '../../src/paths.js';
import { ADMIN_TOKEN, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { tempDir } from '../support/harness.js';

// The remote CLI commands (plans, questions, tool-approvals, runs), run as the built binary in a child
// process against a real daemon. No model server runs: runs that start fail quickly, which is fine here.

const CLI = join(packageRoot(), 'dist/src/cli/main.js');
// Each test spawns the CLI several times; leave room for a loaded machine.
vi.setConfig({ testTimeout: 60_000 });
const HOUR = 3_600_000;

let d: TestDaemon;
let workspace: { path: string; remove(): void };
let approver: string;
let viewer: string;
/** Every output of every invocation, checked for tokens at the end (and on the way). */
const outputs: string[] = [];

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI asynchronously (the daemon lives in this process, so spawnSync would deadlock it). */
function cli(
  args: string[],
  opts: { token?: string | null; url?: string | null; env?: Record<string, string> } = {},
): Promise<Result> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
  if (opts.url !== null) env.DRYDOCK_URL = opts.url ?? d.daemon.url;
  if (opts.token !== null) env.DRYDOCK_TOKEN = opts.token ?? ADMIN_TOKEN;
  Object.assign(env, opts.env);
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => {
    stdout += b;
  });
  child.stderr.on('data', (b) => {
    stderr += b;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      outputs.push(stdout, stderr);
      for (const secret of [ADMIN_TOKEN, approver, viewer]) {
        expect(stdout + stderr).not.toContain(secret);
      }
      resolve({ code, stdout, stderr });
    });
  });
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function session(): Promise<string> {
  const res = await d.api('POST', '/v1/sessions', { workspace: workspace.path });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** A run in the given status, as the agent loop would leave it. */
async function seedRun(sessionId: string, status: 'planned' | 'awaiting_input') {
  const now = Date.now();
  const run = await d.daemon.store.createRun({
    id: newId('run'),
    sessionId,
    jobId: null,
    slotAt: null,
    source: 'manual',
    prompt: 'Plan a cache for the API',
    requestedBy: 'admin',
    createdAt: now,
  });
  const fields = status === 'planned' ? { startedAt: now, finishedAt: now } : { startedAt: now };
  expect(await d.daemon.store.transitionRun(run.id, ['queued'], status, fields)).toBe(true);
  return run;
}

/**
 * A run parked on a pending question (of a fresh session). A parked run without one would be read as answered:
 * the queue's sweep resumes it.
 */
async function seedQuestion(first: Record<string, unknown> = {}) {
  const sessionId = await session();
  const run = await seedRun(sessionId, 'awaiting_input');
  const now = Date.now();
  const q = await d.daemon.store.createQuestion({
    id: newId('qst'),
    runId: run.id,
    sessionId,
    toolUseId: 'toolu_ask',
    questions: {
      questions: [
        {
          question: 'Which database should the cache use?',
          header: 'Database',
          options: [
            { label: 'Postgres', description: 'the existing one' },
            { label: 'SQLite', description: 'a local file' },
          ],
          multiSelect: false,
          ...first,
        },
        {
          question: 'Which checks should run?',
          header: 'Checks',
          options: [
            { label: 'Unit', description: 'fast' },
            { label: 'E2E', description: 'slow' },
            { label: 'Lint', description: 'style' },
          ],
          multiSelect: true,
        },
      ],
    },
    priorResults: [],
    createdAt: now,
    expiresAt: now + HOUR,
  });
  return { q, run };
}

/** A pending plan, proposed by a finished plan-phase run (of a fresh session by default), requested by admin. */
async function seedPlan(patch: Partial<Plan> = {}): Promise<Plan> {
  const sessionId = patch.sessionId ?? (await session());
  const run = await seedRun(sessionId, 'planned');
  const markdown =
    patch.markdown ?? '# Add a response cache\n\n1. Add an LRU in front of the handler.\n2. Test it.\n';
  const now = Date.now();
  const plan = await d.daemon.store.createPlan({
    id: newId('pln'),
    runId: run.id,
    sessionId,
    conversationId: run.conversationId ?? run.id,
    toolUseId: 'toolu_plan',
    markdown,
    sha256: sha256(markdown),
    workspaceCommit: null,
    status: 'pending_approval',
    round: 1,
    previousPlanId: null,
    requestedBy: 'admin',
    createdAt: now,
    jobId: null,
    triggerId: null,
    source: 'manual',
    expiresAt: now + 24 * HOUR,
    approvalsRequired: 1,
    allowSelfApproval: false,
    executeMode: 'manual',
    network: [],
    owner: 'admin',
    decidedAt: null,
    failureReason: null,
    subject: null,
    ...patch,
  });
  await d.daemon.store.updateRun(run.id, { planId: plan.id });
  return plan;
}

async function token(name: string, role: 'approver' | 'viewer'): Promise<string> {
  const issued = issueToken(name, name, role, Date.now());
  await d.daemon.store.createToken(issued.record);
  return issued.token;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  workspace = tempDir('drydock-cli-ws-');
  d = await startTestDaemon({ maxRetries: 0, timeoutMs: 2_000 });
  approver = await token('alice', 'approver');
  viewer = await token('victor', 'viewer');
});

afterAll(async () => {
  await d?.stop();
  workspace?.remove();
});

const SUBCOMMANDS: [string, string][] = [
  ['plans', 'list'],
  ['plans', 'show'],
  ['plans', 'approve'],
  ['plans', 'reject'],
  ['plans', 'revise'],
  ['questions', 'list'],
  ['questions', 'show'],
  ['questions', 'answer'],
  ['tool-approvals', 'list'],
  ['tool-approvals', 'show'],
  ['tool-approvals', 'decide'],
  ['runs', 'list'],
  ['runs', 'show'],
  ['runs', 'cancel'],
  ['runs', 'diff'],
];

describe('drydock remote commands: usage', () => {
  it('--help on every subcommand and group prints its usage and exits 0, with no token or daemon', async () => {
    const results = await Promise.all(
      SUBCOMMANDS.map(([group, sub]) => cli([group, sub, '--help'], { token: null, url: null })),
    );
    results.forEach((r, i) => {
      const [group, sub] = SUBCOMMANDS[i]!;
      expect(r.code, `${group} ${sub}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toContain(`usage: drydock ${group} ${sub}`);
      expect(r.stdout).toContain('--url URL');
      expect(r.stdout).toMatch(/exit codes: 0 success; 1 .*; 2 bad usage/);
      expect(r.stderr).toBe('');
    });
    for (const group of ['plans', 'questions', 'tool-approvals', 'runs']) {
      const r = await cli([group, '-h'], { token: null });
      expect(r.code, r.stderr).toBe(0);
      for (const [g, sub] of SUBCOMMANDS.filter(([g]) => g === group)) {
        expect(r.stdout).toContain(`drydock ${g} ${sub}`);
      }
    }
  });

  it('the top-level usage lists the remote commands and their exit codes', async () => {
    const r = await cli(['--help'], { token: null });
    expect(r.code, r.stderr).toBe(0);
    for (const [group, sub] of SUBCOMMANDS) expect(r.stdout).toContain(`${group} ${sub}`);
    expect(r.stdout).toContain('DRYDOCK_URL');
    expect(r.stdout).toContain('DRYDOCK_TOKEN');
    expect(r.stdout).toContain('drydock: <status> <code>: <message>');
  });

  it('a missing group command, unknown subcommand, wrong argument count or bad option is exit 2', async () => {
    const none = await cli(['plans']);
    expect(none.code, none.stderr).toBe(2);
    expect(none.stderr).toContain('plans: expected a command');
    const unknown = await cli(['plans', 'frob']);
    expect(unknown.code, unknown.stderr).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frob"');
    const noId = await cli(['plans', 'show']);
    expect(noId.code, noId.stderr).toBe(2);
    expect(noId.stderr).toContain('plans show expects ID');
    const badOption = await cli(['runs', 'list', '--bogus']);
    expect(badOption.code, badOption.stderr).toBe(2);
    expect(badOption.stderr).toBe(
      'drydock: unknown option --bogus for "runs list" (run "drydock runs list --help" for its options)\n',
    );
    const badStatus = await cli(['plans', 'list', '--status', 'nope']);
    expect(badStatus.code, badStatus.stderr).toBe(2);
    expect(badStatus.stderr).toContain('--status must be one of pending, pending_approval');
    const badLimit = await cli(['plans', 'list', '--limit', '0']);
    expect(badLimit.code, badLimit.stderr).toBe(2);
    expect(badLimit.stderr).toContain('--limit must be a positive integer');
    const badUrl = await cli(['plans', 'list', '--url', 'ftp://example.com']);
    expect(badUrl.code, badUrl.stderr).toBe(2);
    expect(badUrl.stderr).toContain('http:// or https://');
  });

  it('without DRYDOCK_TOKEN or --token it is a usage error (exit 2)', async () => {
    const r = await cli(['plans', 'list'], { token: null });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('no API token: set DRYDOCK_TOKEN (or pass --token)');
    expect(r.stdout).toBe('');
  });

  it('an unreachable daemon is exit 1 and names the URL', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const r = await cli(['plans', 'list'], { url });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`cannot reach the drydock daemon at ${url}`);
    expect(r.stderr).toContain('ECONNREFUSED');
    expect(r.stdout).toBe('');
  });

  it('--url and --token override the environment; a bad token is 401, exit 1, and is not printed', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const flags = await cli(['runs', 'list', '--url', d.daemon.url, '--token', ADMIN_TOKEN], {
      url,
      token: 'wrong-token-0123456789',
    });
    expect(flags.code, flags.stderr).toBe(0);
    const wrong = 'ddk_wrongwrongwrong0.not-the-secret-not-the-secret-not-the-secret00';
    const bad = await cli(['plans', 'list'], { token: wrong });
    expect(bad.code, bad.stderr).toBe(1);
    expect(bad.stderr).toContain('drydock: 401 unauthorized: invalid or revoked token');
    expect(bad.stderr + bad.stdout).not.toContain(wrong);
    const unreachable = await cli(['plans', 'list', '--token', wrong], { url });
    expect(unreachable.code, unreachable.stderr).toBe(1);
    expect(unreachable.stderr + unreachable.stdout).not.toContain(wrong);
    const spaced = await cli(['plans', 'list', '--token', 'two words-secret']);
    expect(spaced.code, spaced.stderr).toBe(2);
    expect(spaced.stderr).not.toContain('words-secret');
  });
});

describe('drydock plans', () => {
  it('list prints a table: id, status, round, approvals, requester, created, title', async () => {
    const plan = await seedPlan();
    const second = await seedPlan({ markdown: '\n\n## Second plan\nbody' });
    const r = await cli(['plans', 'list', '--session', plan.sessionId]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+ROUND\s+APPROVALS\s+REQUESTED_BY\s+CREATED\s+TITLE$/);
    const row = lines.find((l) => l.startsWith(plan.id));
    expect(row).toMatch(
      new RegExp(
        `^${plan.id}\\s+pending_approval\\s+1\\s+0/1\\s+admin\\s+\\d+s ago\\s+Add a response cache$`,
      ),
    );
    expect(r.stdout).not.toContain(second.id);

    const pending = await cli(['plans', 'list', '--status', 'pending_approval', '--limit', '200']);
    expect(pending.code, pending.stderr).toBe(0);
    expect(pending.stdout).toContain(plan.id);
    expect(pending.stdout).toContain(second.id);
    expect(pending.stdout).toMatch(new RegExp(`${second.id}.*Second plan`));

    const empty = await cli(['plans', 'list', '--session', 'ses_nothing']);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout).toBe(
      'no pending plans (pending plans only; drydock plans list --status any lists every plan)\n',
    );
    const none = await cli(['plans', 'list', '--session', 'ses_nothing', '--status', 'any']);
    expect(none.stdout).toBe('no plans\n');
  });

  it('list --json prints exactly the API body', async () => {
    const plan = await seedPlan();
    const r = await cli(['plans', 'list', '--session', plan.sessionId, '--json']);
    expect(r.code, r.stderr).toBe(0);
    // The CLI's defaults, spelled out: pending plans, newest first.
    const direct = await fetch(
      `${d.daemon.url}/v1/plans?status=pending_approval&session_id=${plan.sessionId}&order=newest`,
      {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      },
    );
    expect(r.stdout).toBe(`${await direct.text()}\n`);
    const body = JSON.parse(r.stdout);
    expect(body.items.map((p: any) => p.id)).toEqual([plan.id]);
    expect(body.next_cursor).toBeNull();
  });

  it('list pages with --limit and --cursor', async () => {
    const a = await seedPlan();
    // Oldest first with --order oldest; a later creation time keeps the order certain.
    const b = await seedPlan({ sessionId: a.sessionId, markdown: 'second', createdAt: a.createdAt + 1_000 });
    const first = await cli(['plans', 'list', '--session', a.sessionId, '--order', 'oldest', '--limit', '1']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(a.id);
    expect(first.stdout).not.toContain(b.id);
    // The way to the next page keeps the filters, and works as printed.
    const more = /^more: drydock (plans list --session \S+ --order oldest --limit 1 --cursor \S+)$/m.exec(
      first.stdout,
    )?.[1];
    expect(more, first.stdout).toBeDefined();
    const next = await cli(more!.split(' '));
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toMatch(new RegExp(`^${b.id}\\s.*second$`, 'm'));
    expect(next.stdout).not.toContain(a.id);
    expect(next.stdout).not.toContain('more:');
    // By default: newest first, so b leads and a is on the next page.
    const newest = await cli(['plans', 'list', '--session', a.sessionId, '--limit', '1']);
    expect(newest.stdout).toMatch(new RegExp(`^${b.id}\\s`, 'm'));
    expect(newest.stdout).not.toContain(a.id);
    const rest = /^more: drydock (plans list --session \S+ --limit 1 --cursor \S+)$/m.exec(
      newest.stdout,
    )?.[1];
    expect(rest, newest.stdout).toBeDefined();
    expect((await cli(rest!.split(' '))).stdout).toMatch(new RegExp(`^${a.id}\\s`, 'm'));
  });

  it('show prints fields, decisions, runs and the markdown, without terminal escapes', async () => {
    const markdown = '# Cache plan\n\n- step \u001b[31mred\u001b[0m one\n- step two\n';
    const plan = await seedPlan({ markdown });
    const r = await cli(['plans', 'show', plan.id]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^id\\s+${plan.id}$`, 'm'));
    expect(r.stdout).toMatch(/^title\s+Cache plan$/m);
    expect(r.stdout).toMatch(/^status\s+pending_approval$/m);
    expect(r.stdout).toMatch(/^approvals\s+0\/1$/m);
    expect(r.stdout).toMatch(new RegExp(`^sha256\\s+${plan.sha256}$`, 'm'));
    expect(r.stdout).toMatch(/^decisions:\n {2}none$/m);
    expect(r.stdout).toMatch(
      new RegExp(`^runs:\\n\\s+ID\\s+PHASE\\s+STATUS.*\\n\\s+${plan.runId}\\s+plan\\s+planned`, 'm'),
    );
    expect(r.stdout).toContain('plan:\n\n# Cache plan\n\n- step [31mred[0m one\n- step two\n');
    expect(r.stdout).not.toContain('\u001b');

    const json = await cli(['plans', 'show', plan.id, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const body = JSON.parse(json.stdout);
    expect(body).toEqual((await d.api('GET', `/v1/plans/${plan.id}`)).body);
    expect(body.markdown).toBe(markdown);
  });

  it('show says when a plan is stale (its workspace has no such commit), and why', async () => {
    const plan = await seedPlan({ workspaceCommit: 'c'.repeat(40) });
    const r = await cli(['plans', 'show', plan.id]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `^freshness\\s+stale: plan ${plan.id} is stale: it was made against cccccccccccc, and the workspace has no commit; revise it or plan again$`,
        'm',
      ),
    );
    // A plan of a plain workspace has no commit to be behind: no such line.
    expect((await cli(['plans', 'show', (await seedPlan()).id])).stdout).not.toMatch(/^freshness/m);
  });

  it('an unknown plan id is exit 1 with the API error on stderr', async () => {
    for (const args of [
      ['plans', 'show', 'pln_unknown'],
      ['plans', 'approve', 'pln_unknown'],
      ['plans', 'reject', 'pln_unknown', '--comment', 'no'],
    ]) {
      const r = await cli(args, { token: args[1] === 'show' ? ADMIN_TOKEN : approver });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toBe('drydock: 404 not_found: plan pln_unknown not found\n');
      expect(r.stdout).toBe('');
    }
  });

  it('approve by another person approves the plan and starts its execute run', async () => {
    const plan = await seedPlan();
    const mismatch = await cli(['plans', 'approve', plan.id, '--sha256', 'a'.repeat(64)], {
      token: approver,
    });
    expect(mismatch.code, mismatch.stderr).toBe(1);
    expect(mismatch.stderr).toMatch(/^drydock: 409 sha256_mismatch: /);

    const r = await cli(['plans', 'approve', plan.id, '--sha256', plan.sha256, '--comment', 'ship it'], {
      token: approver,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^plan ${plan.id} approved; execute run run_\\S+ queued\\n`));
    const runId = /execute run (\S+) queued/.exec(r.stdout)![1]!;
    // What happens next: where the execution will wait for people, and how to see it.
    expect(r.stdout.split('\n')[1]).toMatch(
      new RegExp(
        `^execute run ${runId} carries out the plan in \\w+ mode.*drydock tool-approvals list --run ${runId}`,
      ),
    );

    const shown = await d.api('GET', `/v1/plans/${plan.id}`);
    expect(shown.body.decisions).toMatchObject([{ kind: 'approve', identity: 'alice', comment: 'ship it' }]);
    expect(shown.body.runs.find((x: any) => x.phase === 'execute')?.id).toBe(runId);
    // It fails (no model server), which moves the plan on from approved.
    await waitFor(async () => (await d.api('GET', `/v1/runs/${runId}`)).body.finished_at !== null, 15_000);
    const text = await cli(['plans', 'show', plan.id]);
    expect(text.stdout).toMatch(
      /^decisions:\n {2}\S+ {2}approve {2}alice {2}sha256 [0-9a-f]{12}\n {4}ship it$/m,
    );
    expect(text.stdout).toMatch(new RegExp(`^\\s+${runId}\\s+execute\\s+\\S+`, 'm'));
    expect(text.stdout).toMatch(/^approvals\s+1\/1$/m);

    const again = await cli(['plans', 'approve', plan.id], { token: approver });
    expect(again.code, again.stderr).toBe(1);
    expect(again.stderr).toMatch(/^drydock: 409 conflict: /);
  });

  it('approve --json prints the decision body; the requester and a viewer are refused (exit 1)', async () => {
    const plan = await seedPlan({ approvalsRequired: 2 });
    const self = await cli(['plans', 'approve', plan.id]);
    expect(self.code, self.stderr).toBe(1);
    expect(self.stderr).toMatch(/^drydock: 403 self_approval: admin requested this plan/);
    const view = await cli(['plans', 'approve', plan.id], { token: viewer });
    expect(view.code, view.stderr).toBe(1);
    expect(view.stderr).toMatch(/^drydock: 403 forbidden: /);

    const r = await cli(['plans', 'approve', plan.id, '--json'], { token: approver });
    expect(r.code, r.stderr).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body.plan.status).toBe('pending_approval');
    expect(body.decision).toMatchObject({ kind: 'approve', identity: 'alice' });
    expect(body.run).toBeNull();
    const listed = await cli(['plans', 'list', '--session', plan.sessionId]);
    expect(listed.stdout).toMatch(new RegExp(`${plan.id}\\s+pending_approval\\s+1\\s+1/2`));
  });

  it('reject needs --comment (exit 2), then rejects with it', async () => {
    const plan = await seedPlan();
    for (const args of [[], ['--comment', '   ']]) {
      const r = await cli(['plans', 'reject', plan.id, ...args], { token: approver });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('--comment is required');
      expect(r.stderr).toContain('usage: drydock plans reject ID --comment C');
    }
    expect((await d.api('GET', `/v1/plans/${plan.id}`)).body.status).toBe('pending_approval');

    const r = await cli(['plans', 'reject', plan.id, '--comment', 'too risky'], { token: approver });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`plan ${plan.id} rejected\n`);
    const shown = (await d.api('GET', `/v1/plans/${plan.id}`)).body;
    expect(shown.status).toBe('rejected');
    expect(shown.decisions).toMatchObject([{ kind: 'reject', identity: 'alice', comment: 'too risky' }]);
  });

  it('revise needs --feedback, then requests a revision round', async () => {
    const plan = await seedPlan();
    const missing = await cli(['plans', 'revise', plan.id], { token: approver });
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toContain('--feedback is required');

    const r = await cli(
      ['plans', 'revise', plan.id, '--feedback', 'also cover eviction', '--sha256', plan.sha256],
      {
        token: approver,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `^plan ${plan.id}: revision requested; round 2 is planned by run (run_\\S+)\\nrevision run \\1 plans again with the feedback; follow it with drydock runs follow \\1\\n$`,
      ),
    );
    const shown = (await d.api('GET', `/v1/plans/${plan.id}`)).body;
    expect(shown.status).toBe('revision_requested');
    expect(shown.decisions).toMatchObject([{ kind: 'revise', comment: 'also cover eviction' }]);
    expect(shown.runs.some((x: any) => x.revises_plan_id === plan.id)).toBe(true);
  });
});

describe('drydock questions', () => {
  it('list shows the questions with their options; --json is the API body', async () => {
    const { q, run } = await seedQuestion();
    const r = await cli(['questions', 'list', '--run', run.id]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`^${q.id}  pending  run ${run.id}  asked \\d+s ago  expires in \\d+[mh]`),
    );
    expect(r.stdout).toContain('1. [Database] Which database should the cache use? (choose one)');
    expect(r.stdout).toContain('- SQLite: a local file');
    expect(r.stdout).toContain('2. [Checks] Which checks should run? (choose any, separated by |)');

    const json = await cli(['questions', 'list', '--run', run.id, '--status', 'pending', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const direct = await fetch(`${d.daemon.url}/v1/questions?status=pending&run_id=${run.id}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(json.stdout).toBe(`${await direct.text()}\n`);
    expect(JSON.parse(json.stdout).items[0].id).toBe(q.id);

    const shown = await cli(['questions', 'show', q.id]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('Which checks should run?');
  });

  it('answer maps --answer to question texts (by text or header; | for multiSelect) and resumes the run', async () => {
    const { q, run } = await seedQuestion();
    const r = await cli(
      [
        'questions',
        'answer',
        q.id,
        '--answer',
        'Which database should the cache use?=SQLite',
        '--answer',
        'checks=Unit|E2E',
      ],
      { token: approver },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`question ${q.id} answered, by alice (run ${run.id})\n`);
    const stored = await d.daemon.store.getQuestion(q.id);
    expect(stored?.answers).toEqual({
      'Which database should the cache use?': 'SQLite',
      'Which checks should run?': ['Unit', 'E2E'],
    });
    // The run was handed back to the queue (and fails without a model server).
    await waitFor(async () => (await d.daemon.store.getRun(run.id))?.status !== 'awaiting_input', 15_000);

    const listed = await cli(['questions', 'list', '--run', run.id]);
    expect(listed.stdout).toContain('answered by alice:');
    expect(listed.stdout).toContain('Which checks should run? = Unit | E2E');

    const again = await cli(['questions', 'answer', q.id, '--answer', '1=Postgres', '--answer', '2=Lint']);
    expect(again.code, again.stderr).toBe(1);
    expect(again.stderr).toMatch(/^drydock: 409 not_pending: /);
  });

  it('list cuts a long header to 12 characters and shows option previews', async () => {
    const { run } = await seedQuestion({
      header: 'Cache database',
      options: [
        {
          label: 'Postgres',
          description: 'the existing one',
          preview: 'CREATE TABLE cache (\n  key text\n);',
        },
        { label: 'SQLite', description: 'a local file' },
      ],
    });
    const r = await cli(['questions', 'list', '--run', run.id]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('1. [Cache databa…] Which database should the cache use? (choose one)');
    expect(r.stdout).toContain(
      [
        '       - Postgres: the existing one',
        '         | CREATE TABLE cache (',
        '         |   key text',
        '         | );',
      ].join('\n'),
    );
    expect(r.stdout).toContain('       - or an answer of your own');
    // The API keeps the whole header.
    const json = JSON.parse((await cli(['questions', 'list', '--run', run.id, '--json'])).stdout);
    expect(json.items[0].questions[0].header).toBe('Cache database');
  });

  it("answer takes an answer in one's own words (Other), also beside multiSelect labels", async () => {
    const { q } = await seedQuestion();
    const r = await cli(
      [
        'questions',
        'answer',
        q.id,
        '--answer',
        '1=MySQL, we already run it',
        '--answer',
        '2=Unit|Smoke tests',
      ],
      { token: approver },
    );
    expect(r.code, r.stderr).toBe(0);
    expect((await d.daemon.store.getQuestion(q.id))?.answers).toEqual({
      'Which database should the cache use?': 'MySQL, we already run it',
      'Which checks should run?': ['Unit', 'Smoke tests'],
    });
  });

  it('answer: no --answer or an unknown question is exit 2; a blank or a second own answer is 422, exit 1', async () => {
    const { q } = await seedQuestion();
    const none = await cli(['questions', 'answer', q.id]);
    expect(none.code, none.stderr).toBe(2);
    expect(none.stderr).toContain('--answer is required');
    const unknown = await cli(['questions', 'answer', q.id, '--answer', 'Color=Blue']);
    expect(unknown.code, unknown.stderr).toBe(2);
    expect(unknown.stderr).toContain('"Color" names no question');
    const twice = await cli([
      'questions',
      'answer',
      q.id,
      '--answer',
      '1=SQLite',
      '--answer',
      'Database=Postgres',
    ]);
    expect(twice.code, twice.stderr).toBe(2);
    expect(twice.stderr).toContain('answered twice');
    const blank = await cli(['questions', 'answer', q.id, '--answer', '1=  ', '--answer', '2=Unit']);
    expect(blank.code, blank.stderr).toBe(1);
    expect(blank.stderr).toMatch(
      /^drydock: 422 invalid_answers: question "Which database should the cache use\?" has a blank answer/,
    );
    const two = await cli([
      'questions',
      'answer',
      q.id,
      '--answer',
      '1=SQLite',
      '--answer',
      '2=Unit|Fuzz|Soak',
    ]);
    expect(two.code, two.stderr).toBe(1);
    expect(two.stderr).toMatch(
      /^drydock: 422 invalid_answers: question "Which checks should run\?" takes at most one answer of your own/,
    );
    expect((await d.daemon.store.getQuestion(q.id))?.status).toBe('pending');
    const missing = await cli(['questions', 'answer', 'qst_unknown', '--answer', '1=x']);
    expect(missing.code, missing.stderr).toBe(1);
    expect(missing.stderr).toBe('drydock: 404 not_found: question qst_unknown not found\n');
  });
});

describe('drydock tool-approvals', () => {
  async function seedApproval(input: unknown = { command: 'npm test' }) {
    const sessionId = await session();
    const run = await seedRun(sessionId, 'awaiting_input');
    const now = Date.now();
    const a = await d.daemon.store.createToolApproval({
      id: newId('tap'),
      runId: run.id,
      sessionId,
      planId: null,
      toolUseId: 'toolu_bash',
      tool: 'Bash',
      input,
      priorResults: [],
      inputSha256: null,
      createdAt: now,
      expiresAt: now + HOUR,
    });
    return { a, run };
  }

  it('list prints a table and --json the API body', async () => {
    const { a, run } = await seedApproval();
    const r = await cli(['tool-approvals', 'list', '--run', run.id]);
    expect(r.code, r.stderr).toBe(0);
    const [header, row] = r.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+STATUS\s+TOOL\s+RUN\s+PLAN\s+AGE\s+EXPIRES\s+INPUT$/);
    expect(row).toMatch(
      new RegExp(
        `^${a.id}\\s+pending\\s+Bash\\s+${run.id}\\s+-\\s+\\d+s\\s+in \\d+[mh]\\s+\\{"command":"npm test"\\}$`,
      ),
    );
    const json = await cli(['tool-approvals', 'list', '--run', run.id, '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual((await d.api('GET', `/v1/tool-approvals?run_id=${run.id}`)).body);
    const shown = await cli(['tool-approvals', 'show', a.id]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('input:\n{\n  "command": "npm test"\n}');
  });

  it('decide needs exactly one of --allow/--deny; allows, denies with a message, and refuses twice', async () => {
    const first = await seedApproval();
    for (const flags of [[], ['--allow', '--deny']]) {
      const r = await cli(['tool-approvals', 'decide', first.a.id, ...flags], { token: approver });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('exactly one of --allow and --deny');
    }
    const allowed = await cli(['tool-approvals', 'decide', first.a.id, '--allow'], { token: approver });
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toBe(`tool approval ${first.a.id} allowed (Bash, run ${first.run.id})\n`);
    expect((await d.daemon.store.getToolApproval(first.a.id))?.decidedBy).toBe('alice');

    const second = await seedApproval({ command: 'rm -rf build' });
    const denied = await cli([
      'tool-approvals',
      'decide',
      second.a.id,
      '--deny',
      '--message',
      'not that',
      '--json',
    ]);
    expect(denied.code, denied.stderr).toBe(0);
    expect(JSON.parse(denied.stdout)).toMatchObject({
      id: second.a.id,
      status: 'denied',
      message: 'not that',
    });

    const again = await cli(['tool-approvals', 'decide', second.a.id, '--allow']);
    expect(again.code, again.stderr).toBe(1);
    expect(again.stderr).toMatch(/^drydock: 409 not_pending: /);
    const unknown = await cli(['tool-approvals', 'decide', 'tap_unknown', '--allow']);
    expect(unknown.code, unknown.stderr).toBe(1);
    expect(unknown.stderr).toBe('drydock: 404 not_found: tool approval tap_unknown not found\n');
  });
});

describe('drydock runs', () => {
  it('list, show and cancel', async () => {
    const { run } = await seedQuestion();
    const sessionId = run.sessionId;
    const list = await cli(['runs', 'list', '--session', sessionId]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^ID\s+PHASE\s+STATUS\s+SOURCE\s+SESSION\s+AGE\s+DURATION\s+COST\s+PLAN\n/);
    expect(list.stdout).toMatch(new RegExp(`${run.id}\\s+plan\\s+awaiting_input\\s+manual\\s+${sessionId}`));
    const json = await cli(['runs', 'list', '--session', sessionId, '--status', 'awaiting_input', '--json']);
    expect(JSON.parse(json.stdout).items.map((r: any) => r.id)).toEqual([run.id]);

    const show = await cli(['runs', 'show', run.id]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`^run\\s+${run.id}$`, 'm'));
    expect(show.stdout).toMatch(/^status\s+awaiting_input$/m);
    expect(show.stdout).toContain('prompt:\nPlan a cache for the API');
    const showJson = await cli(['runs', 'show', run.id, '--json']);
    expect(JSON.parse(showJson.stdout)).toEqual((await d.api('GET', `/v1/runs/${run.id}`)).body);

    const viewerCancel = await cli(['runs', 'cancel', run.id], { token: viewer });
    expect(viewerCancel.code, viewerCancel.stderr).toBe(1);
    expect(viewerCancel.stderr).toMatch(/^drydock: 403 forbidden: /);
    const cancel = await cli(['runs', 'cancel', run.id]);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout).toBe(`run ${run.id} canceled\n`);
    const again = await cli(['runs', 'cancel', run.id]);
    expect(again.code, again.stderr).toBe(1);
    expect(again.stderr).toBe(`drydock: 409 conflict: run ${run.id} already ended (canceled)\n`);
    const missing = await cli(['runs', 'show', 'run_unknown']);
    expect(missing.code, missing.stderr).toBe(1);
    expect(missing.stderr).toBe('drydock: 404 not_found: run run_unknown not found\n');
  });
});

describe('secrets', () => {
  it('no token ever appeared in any output', () => {
    expect(outputs.length).toBeGreaterThan(50);
    const all = outputs.join('\n');
    for (const secret of [ADMIN_TOKEN, approver, viewer]) expect(all).not.toContain(secret);
  });
});
