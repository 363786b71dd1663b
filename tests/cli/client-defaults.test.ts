import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { issueToken } from '../../src/auth/tokens.js';
import type { Plan, PlanDelivery } from '../../src/domain/types.js';
import { newId } from '../../src/ids.js';
import { ADMIN_TOKEN, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { tempDir } from '../support/harness.js';
import { runCli } from './cli-process.js';

// What the CLI does by default, against a real daemon over loopback: plans list shows the pending plans newest
// first (GET /v1/plans?order=newest), plans show gives the execution and its delivery, approving points to
// `runs follow`, and triggers list and show agree on the hourly cap.

vi.setConfig({ testTimeout: 60_000 });
const HOUR = 3_600_000;

let d: TestDaemon;
let workspace: { path: string; remove(): void };
let approver: string;

const cli = (args: string[], token = ADMIN_TOKEN) =>
  runCli(args, { DRYDOCK_URL: d.daemon.url, DRYDOCK_TOKEN: token });

beforeAll(async () => {
  workspace = tempDir('drydock-cli-defaults-');
  d = await startTestDaemon({ maxRetries: 0, timeoutMs: 2_000 });
  const issued = issueToken('alice', 'alice', 'approver', Date.now());
  await d.daemon.store.createToken(issued.record);
  approver = issued.token;
});

afterAll(async () => {
  await d?.stop();
  workspace?.remove();
});

async function session(): Promise<string> {
  const res = await d.api('POST', '/v1/sessions', { workspace: workspace.path });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** A run of the session that ended as `status`, in `phase`, with `patch` written on it. */
async function seedRun(
  sessionId: string,
  status: 'planned' | 'completed' | 'failed',
  extra: { phase?: 'execute'; executesPlanId?: string } = {},
) {
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
    ...extra,
  });
  expect(
    await d.daemon.store.transitionRun(run.id, ['queued'], status, { startedAt: now, finishedAt: now }),
  ).toBe(true);
  return run;
}

/** A plan proposed by a finished plan run, pending unless `patch` says otherwise. */
async function seedPlan(patch: Partial<Plan> = {}): Promise<Plan> {
  const sessionId = patch.sessionId ?? (await session());
  const run = await seedRun(sessionId, 'planned');
  const markdown = patch.markdown ?? '# Add a response cache\n\n1. Add an LRU.\n';
  const now = Date.now();
  const plan = await d.daemon.store.createPlan({
    id: newId('pln'),
    runId: run.id,
    sessionId,
    conversationId: run.conversationId ?? run.id,
    toolUseId: 'toolu_plan',
    markdown,
    sha256: createHash('sha256').update(markdown).digest('hex'),
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

/** The ids of a listing's rows, in order. */
const ids = (stdout: string) =>
  stdout
    .trimEnd()
    .split('\n')
    .filter((l) => l.startsWith('pln_'))
    .map((l) => l.split(/\s+/)[0]);

describe('drydock plans list: pending plans, newest first', () => {
  it('lists only the pending plans, newest first, and says how to see the others; --status any|all lists all', async () => {
    const sessionId = await session();
    const t = Date.now() - HOUR;
    const older = await seedPlan({ sessionId, createdAt: t, markdown: '# Older pending' });
    const newer = await seedPlan({ sessionId, createdAt: t + 1_000, markdown: '# Newer pending' });
    const rejected = await seedPlan({ sessionId, createdAt: t + 2_000, status: 'rejected' });

    const byDefault = await cli(['plans', 'list', '--session', sessionId]);
    expect(byDefault.code, byDefault.stderr).toBe(0);
    expect(ids(byDefault.stdout)).toEqual([newer.id, older.id]);
    expect(byDefault.stdout.trimEnd().split('\n').at(-1)).toBe(
      '(pending plans only; drydock plans list --status any lists every plan)',
    );
    // `pending` is pending_approval, as the listing says.
    const pending = await cli(['plans', 'list', '--session', sessionId, '--status', 'pending']);
    expect(ids(pending.stdout)).toEqual([newer.id, older.id]);
    expect(pending.stdout).not.toContain('pending plans only');

    for (const any of ['any', 'all']) {
      const every = await cli(['plans', 'list', '--session', sessionId, '--status', any]);
      expect(every.code, every.stderr).toBe(0);
      expect(ids(every.stdout)).toEqual([rejected.id, newer.id, older.id]);
    }
    const oldest = await cli([
      'plans',
      'list',
      '--session',
      sessionId,
      '--status',
      'any',
      '--order',
      'oldest',
    ]);
    expect(ids(oldest.stdout)).toEqual([older.id, newer.id, rejected.id]);
    const one = await cli(['plans', 'list', '--session', sessionId, '--status', 'rejected']);
    expect(ids(one.stdout)).toEqual([rejected.id]);

    const badOrder = await cli(['plans', 'list', '--order', 'sideways']);
    expect(badOrder.code).toBe(2);
    expect(badOrder.stderr).toContain('--order must be one of newest, oldest, got "sideways"');
  });

  it('GET /v1/plans takes order=newest|oldest (oldest by default), validated and in the OpenAPI document', async () => {
    const sessionId = await session();
    const t = Date.now() - HOUR;
    const a = await seedPlan({ sessionId, createdAt: t });
    const b = await seedPlan({ sessionId, createdAt: t + 1_000 });
    const c = await seedPlan({ sessionId, createdAt: t + 2_000 });
    const list = async (q: string) => (await d.api('GET', `/v1/plans?session_id=${sessionId}${q}`)).body;
    expect((await list('')).items.map((p: any) => p.id)).toEqual([a.id, b.id, c.id]);
    expect((await list('&order=oldest')).items.map((p: any) => p.id)).toEqual([a.id, b.id, c.id]);
    expect((await list('&order=newest')).items.map((p: any) => p.id)).toEqual([c.id, b.id, a.id]);
    // A page of the newest-first listing continues with older plans.
    const first = await list('&order=newest&limit=2');
    expect(first.items.map((p: any) => p.id)).toEqual([c.id, b.id]);
    const next = await list(`&order=newest&limit=2&cursor=${encodeURIComponent(first.next_cursor)}`);
    expect(next.items.map((p: any) => p.id)).toEqual([a.id]);
    expect(next.next_cursor).toBeNull();

    const bad = await d.api('GET', '/v1/plans?order=sideways');
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain('order');

    const doc = (await d.api('GET', '/openapi.json')).body;
    const order = doc.paths['/v1/plans'].get.parameters.find((p: any) => p.name === 'order');
    expect(order).toMatchObject({ in: 'query', required: false, schema: { enum: ['oldest', 'newest'] } });
  });

  it('names its columns as plans show names its fields', async () => {
    // Made 90 minutes ago: "1h ago" in both, however long the commands take.
    const plan = await seedPlan({ markdown: '# Cache the API\n\nbody', createdAt: Date.now() - 1.5 * HOUR });
    const [list, show] = await Promise.all([
      cli(['plans', 'list', '--session', plan.sessionId]),
      cli(['plans', 'show', plan.id]),
    ]);
    const [header, row] = list.stdout.split('\n');
    const columns = header!.split(/\s+/);
    expect(columns).toEqual(['ID', 'STATUS', 'ROUND', 'APPROVALS', 'REQUESTED_BY', 'CREATED', 'TITLE']);
    const cells = row!.split(/\s{2,}/);
    for (const [i, column] of columns.entries()) {
      const field = new RegExp(`^${column.toLowerCase()} +(.*)$`, 'm').exec(show.stdout);
      expect(field, `plans show has no ${column.toLowerCase()} field`).not.toBeNull();
      // The same value, but for CREATED: the list says how long ago, show the time and how long ago.
      if (column === 'CREATED') expect(field![1]).toContain(`(${cells[i]})`);
      else expect(field![1]).toBe(cells[i]);
    }
  });
});

/** Writes an executed plan's delivery, whatever the delivery worker made of it first. */
async function setDelivery(planId: string, patch: Partial<PlanDelivery>) {
  const all = [null, 'off', 'pending', 'retrying', 'delivered', 'failed'] as const;
  expect(await d.daemon.store.updatePlanDelivery(planId, all, patch)).toBe(true);
}

/** An executed plan of a git workspace (its commit) and its completed execute run. */
async function executedPlan() {
  const plan = await seedPlan({ status: 'executed', workspaceCommit: 'a'.repeat(40), decidedAt: Date.now() });
  const run = await seedRun(plan.sessionId, 'completed', { phase: 'execute', executesPlanId: plan.id });
  await d.daemon.store.updateRun(run.id, {
    resultCommit: 'b'.repeat(40),
    diffStat: '2 files changed, 10 insertions(+)',
    costUsd: 0.125,
    turns: 4,
  });
  return { plan, run };
}

const DELIVERY_BASE: Partial<PlanDelivery> = {
  target: 'base',
  remote: null,
  commit: null,
  pushedAt: null,
  pullRequestUrl: null,
  pullRequestNumber: null,
  commentUrl: null,
  nextAttemptAt: null,
  claimedUntil: null,
};

describe('drydock plans show: the execution and its delivery', () => {
  it('shows the execute run (id, status, branch, commit, cost) and a failed delivery with its reason', async () => {
    const { plan, run } = await executedPlan();
    await setDelivery(plan.id, {
      ...DELIVERY_BASE,
      status: 'failed',
      branch: `drydock/${plan.id}`,
      attempts: 3,
      lastError: 'git push refused: remote rejected (permission denied)',
      settledAt: Date.now(),
    });
    const r = await cli(['plans', 'show', plan.id]);
    expect(r.code, r.stderr).toBe(0);
    const execution = /^execution:\n((?: {2}.*\n)+)/m.exec(r.stdout)?.[1];
    expect(execution, r.stdout).toBeDefined();
    expect(execution).toMatch(new RegExp(`^ {2}run +${run.id} +\\(drydock runs follow ${run.id}\\)$`, 'm'));
    expect(execution).toMatch(/^ {2}status +completed$/m);
    expect(execution).toMatch(new RegExp(`^ {2}branch +drydock/${plan.id}$`, 'm'));
    expect(execution).toMatch(new RegExp(`^ {2}commit +${'b'.repeat(40)}$`, 'm'));
    expect(execution).toMatch(/^ {2}changes +2 files changed, 10 insertions\(\+\)$/m);
    expect(execution).toMatch(/^ {2}cost +\$0\.1250 \(4 turns\)$/m);
    expect(execution).toMatch(/^ {2}total_cost +\$0\.1250 with planning$/m);
    const delivery = /^delivery:\n((?: {2}.*\n)+)/m.exec(r.stdout)?.[1];
    expect(delivery, r.stdout).toBeDefined();
    expect(delivery).toMatch(/^ {2}status +failed$/m);
    expect(delivery).toMatch(new RegExp(`^ {2}branch +drydock/${plan.id}$`, 'm'));
    expect(delivery).toMatch(/^ {2}reason +git push refused: remote rejected \(permission denied\)$/m);
    // Both come before the decisions, the runs and the plan's context.
    expect(r.stdout.indexOf('execution:')).toBeLessThan(r.stdout.indexOf('decisions:'));
    expect(r.stdout.indexOf('delivery:')).toBeLessThan(r.stdout.indexOf('decisions:'));
  });

  it('shows the pull request of a delivered plan', async () => {
    const { plan } = await executedPlan();
    await setDelivery(plan.id, {
      ...DELIVERY_BASE,
      status: 'delivered',
      branch: `drydock/${plan.id}`,
      commit: 'b'.repeat(40),
      pullRequestUrl: 'https://github.com/acme/api/pull/7',
      pullRequestNumber: 7,
      attempts: 1,
      lastError: null,
      settledAt: Date.now(),
    });
    const r = await cli(['plans', 'show', plan.id]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^delivery:\n {2}status +delivered$/m);
    expect(r.stdout).toMatch(/^ {2}pull_request +#7 https:\/\/github\.com\/acme\/api\/pull\/7$/m);
    expect(r.stdout).not.toMatch(/^ {2}reason/m);
  });

  it('says why a plan has no execution; a pending plan has no such section', async () => {
    const rejected = await seedPlan({ status: 'rejected' });
    const r = await cli(['plans', 'show', rejected.id]);
    expect(r.stdout).toMatch(/^execution:\n {2}none \(the plan is rejected\)$/m);
    const pending = await cli(['plans', 'show', (await seedPlan()).id]);
    expect(pending.code, pending.stderr).toBe(0);
    expect(pending.stdout).not.toContain('execution:');
    expect(pending.stdout).not.toContain('delivery:');
  });
});

describe('drydock plans approve', () => {
  it('points to drydock runs follow for the execute run it started', async () => {
    const plan = await seedPlan();
    const r = await cli(['plans', 'approve', plan.id], approver);
    expect(r.code, r.stderr).toBe(0);
    const runId = /execute run (\S+) queued/.exec(r.stdout)?.[1];
    expect(runId, r.stdout).toBeDefined();
    expect(r.stdout).toContain(`follow the run with drydock runs follow ${runId}`);
    expect(r.stdout).not.toContain('runs show');
    // Its run fails (no model server); wait for it to end so the daemon stops quietly.
    await waitFor(async () => (await d.api('GET', `/v1/runs/${runId}`)).body.finished_at !== null, 15_000);
  });
});

describe('drydock triggers: the hourly cap', () => {
  it('list and show agree: the cap in effect, where it comes from, none for a schedule trigger', async () => {
    const created = async (body: Record<string, unknown>) => {
      const r = await d.api('POST', '/v1/triggers', body);
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body;
    };
    const github = { kind: 'github', prompt: 'p', events: ['pull_request.opened'] };
    const defaulted = await created({ ...github, name: 'cap-default' });
    const own = await created({ ...github, name: 'cap-own', hourly_cap: 5 });
    const schedule = await created({
      kind: 'schedule',
      name: 'cap-schedule',
      prompt: 'p',
      workspace: workspace.path,
      cron: '0 3 * * *',
      timezone: 'UTC',
    });
    expect(defaulted).toMatchObject({ hourly_cap: 30, hourly_cap_from: 'default' });
    expect(own).toMatchObject({ hourly_cap: 5, hourly_cap_from: 'trigger' });
    expect(schedule).toMatchObject({ hourly_cap_from: 'none' });

    const list = await cli(['triggers', 'list']);
    expect(list.code, list.stderr).toBe(0);
    const cap = (id: string) =>
      list.stdout
        .split('\n')
        .find((l) => l.startsWith(id))!
        .split(/\s{2,}/)[4];
    expect(cap(defaulted.id)).toBe('30 (default)');
    expect(cap(own.id)).toBe('5');
    expect(cap(schedule.id)).toBe('-');

    const shown = async (id: string) =>
      /^hourly_cap +(.*)$/m.exec((await cli(['triggers', 'show', id])).stdout)?.[1];
    expect(await shown(defaulted.id)).toBe('30 runs an hour (the default, github.trigger_hourly_cap)');
    expect(await shown(own.id)).toBe('5 runs an hour');
    expect(await shown(schedule.id)).toBe(
      '- (none: a schedule trigger fires on its cron; the hourly cap is for github and generic triggers)',
    );
  });
});
