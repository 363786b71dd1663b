import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page, Plan } from '../../src/domain/types.js';
import { MigrateStoreError, migrateStore } from '../../src/store/migrate-store.js';
import { loadMigrations } from '../../src/store/migrations.js';
import { PgDb } from '../../src/store/postgres/db.js';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { loadPostgresMigrations } from '../../src/store/postgres/migrate.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { DecisionEffect, Store, TriggerFireInput } from '../../src/store/store.js';
import { runCli } from '../cli/cli-process.js';
import { type FreshDatabase, freshDatabase, postgresAvailable } from '../support/postgres.js';
import {
  DAY,
  HOUR,
  jobInput,
  MINUTE,
  planInput,
  runInput,
  sessionInput,
  T0,
  triggerInput,
  webhookDeliveryInput,
} from './contract/fixtures.js';

// drydock migrate-store (src/store/migrate-store.ts): a SQLite store seeded through its own API is copied
// into a fresh PostgreSQL database; the PostgreSQL store must then answer every read as the SQLite store does,
// and every table must hold the same rows. Each test gets an empty database of its own. Skipped with one line
// on stderr when no PostgreSQL server answers (failing instead under DRYDOCK_REQUIRE_POSTGRES=1).

const SUITE = 'migrate-store (PostgreSQL)';
const available = await postgresAvailable(SUITE);

/** Tables of the SQLite schema that each database keeps for itself. */
const OWN_TABLES = new Set(['schema_migrations', 'change_counters']);
/** The PostgreSQL identity columns that hold SQLite's rowid. */
const ROWID_AS: Record<string, string> = { run_events: 'id', deliveries: 'seq' };

const sha = (text: string) => createHash('sha256').update(text).digest();
const SLOT = T0 + DAY;
const DUE = SLOT + 4 * MINUTE;
const SUBJECT = 'acme/app#12';

/** Ids the comparison asks both stores about. */
const IDS = {
  sessions: ['ses_1', 'ses_2', 'ses_s', 'ses_dlv_1', 'ses_missing'],
  jobs: ['job_1', 'job_2', 'job_3', 'job_s'],
  runs: ['run_job1', 'run_job2', 'run_exec1', 'run_pln_2', 'run_pln_3', 'run_dlv_1'],
  plans: ['pln_1', 'pln_2', 'pln_3'],
  triggers: ['trg_gh', 'trg_gen', 'trg_s'],
  deliveries: ['dlv_1', 'dlv_2', 'dlv_3', 'dlv_4'],
  tokens: ['tok_admin', 'tok_bob', 'tok_old'],
  identities: ['admin', 'bob', 'old'],
  cookies: ['cookie-1', 'cookie-2'],
  state: ['auto_mode', 'ui_secret', 'notifications.cursor'],
  questions: ['q_1'],
  toolApprovals: ['ta_1'],
};

const EVENT_TYPES = ['run.started', 'message', 'plan.pending', 'question.pending', 'run.finished'];

/**
 * Fills every table through the Store's methods: tokens and /ui sessions, sessions, jobs advanced so slots
 * exist (fired, coalesced, missed, pending), runs with conversations and events, a question, a plan approved
 * and executed (tool approval, call journal, delivery), a rejected and a pending plan, triggers with
 * deliveries, fires (accepted, capped, filtered) and a schedule (its run claimed by a replica),
 * notifications and state. One session name holds a NUL, which PostgreSQL keeps as U+FFFD.
 */
async function seed(store: Store): Promise<void> {
  await store.createToken({
    id: 'tok_admin',
    name: 'admin',
    identity: 'admin',
    role: 'admin',
    secretHash: sha('admin'),
    createdAt: T0,
    revokedAt: null,
  });
  await store.createToken({
    id: 'tok_bob',
    name: 'bob',
    identity: 'bob',
    role: 'approver',
    secretHash: sha('bob'),
    createdAt: T0 + 1,
    revokedAt: null,
  });
  await store.createToken({
    id: 'tok_old',
    name: 'old',
    identity: 'old',
    role: 'viewer',
    secretHash: sha('old'),
    createdAt: T0 + 2,
    revokedAt: null,
  });
  for (const [cookie, tokenId, identity] of [
    ['cookie-1', 'tok_bob', 'bob'],
    ['cookie-2', 'tok_old', 'old'],
  ] as const) {
    await store.createUiSession({
      idHash: sha(cookie),
      tokenId,
      identity,
      createdAt: T0,
      expiresAt: T0 + DAY,
    });
  }
  await store.revokeToken('tok_old', T0 + MINUTE);
  await store.setState('auto_mode', 'off');
  await store.setState('ui_secret', 'c2VjcmV0LXNlY3JldA');

  // Sessions and jobs: job_1 fires a slot (two coalesced before it, a missed range), job_2 (a one-shot)
  // fires and is gone, job_3 waits with a pending slot until its session closes and deletes it.
  await store.createSession(
    sessionInput('ses_1', {
      name: 'nightly\u0000review',
      defaults: { model: 'claude-sonnet-4-5', approvals_required: 1, thinking: { budget_tokens: 2048 } },
    }),
  );
  await store.createSession(sessionInput('ses_2', { createdAt: T0 + 1 }));
  await store.createJob(jobInput('job_1', 'ses_1', { options: { budget_usd: 2 } }), 50);
  await store.createJob(
    jobInput('job_2', 'ses_1', { recurring: false, approximate: false, expiresAt: null, nextFinal: true }),
    50,
  );
  await store.createJob(jobInput('job_3', 'ses_2'), 50);
  await store.advanceJobs(['job_1'], DUE, (job) => ({
    coalesce: [SLOT - 2 * HOUR, SLOT - HOUR],
    missed: { firstAt: SLOT - 3 * DAY, lastAt: SLOT - 2 * DAY, slots: 2 },
    fire: { slotAt: job.nextNominalAt!, runId: 'run_job1', dueAt: job.nextDueAt },
    pending: null,
    next: { nominalAt: job.nextNominalAt! + DAY, dueAt: job.nextDueAt! + DAY, final: false },
    remove: false,
  }));
  await store.advanceJobs(['job_2'], DUE, (job) => ({
    coalesce: [],
    missed: null,
    fire: { slotAt: job.nextNominalAt!, runId: 'run_job2', dueAt: null },
    pending: null,
    next: null,
    remove: true,
  }));
  await store.advanceJobs(['job_3'], DUE, (job) => ({
    coalesce: [],
    missed: null,
    fire: null,
    pending: { slotAt: job.nextNominalAt!, final: false, coalesced: 1 },
    next: { nominalAt: job.nextNominalAt! + DAY, dueAt: job.nextDueAt! + DAY, final: false },
    remove: false,
  }));
  await store.closeSession('ses_2', DUE + 1);
  await store.renewJob('job_1', DUE + 7 * DAY, 'alice', DUE + 2);

  // A plan-phase run: conversation, events, a question answered, the plan it proposed.
  await store.transitionRun('run_job1', ['queued'], 'running', { startedAt: DUE + 10 });
  await store.updateRun('run_job1', {
    model: 'claude-sonnet-4-5',
    settings: {
      model: 'claude-sonnet-4-5',
      maxTokens: 16000,
      maxTurns: 30,
      budgetUsd: 2,
      thinking: { budget_tokens: 2048 },
      effort: null,
      request: { thinking: { type: 'enabled', budget_tokens: 2048 }, effort: null, notes: [] },
    },
    turns: 3,
    usage: { input_tokens: 1200, output_tokens: 340, cache_read_tokens: 5000 },
    costUsd: 0.012345,
  });
  await store.appendMessages(
    'run_job1',
    'run_job1',
    [
      { role: 'user', content: [{ type: 'text', text: 'Review the nightly build.' }] },
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'Looking \u00e9 \u{1F600} "quoted" \\ back' }],
        stopReason: 'tool_use',
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok\u0000nul' }] },
    ],
    DUE + 20,
  );
  await store.saveFrame(
    'run_job1',
    'run_job1',
    {
      system: [
        'base \u00e9 \u{1F600}',
        '<project-instructions file="CLAUDE.md">be brief</project-instructions>',
      ],
      tools: [{ name: 'Read', description: 'read', input_schema: { type: 'object', properties: {} } }],
      memory: {
        files: ['CLAUDE.md'],
        from: { kind: 'workspace' },
        sha256: 'c'.repeat(64),
        bytes: 8,
        cut: false,
      },
    },
    DUE + 15,
  );
  await store.appendEvent('run_job1', 'run.started', { attempt: 1 }, DUE + 10);
  await store.appendEvent(
    'run_job1',
    'message',
    { text: 'thinking about it', nested: { a: [1, 2] } },
    DUE + 20,
  );
  await store.appendEvent('run_job1', 'question.pending', { questionId: 'q_1' }, DUE + 25);
  await store.createQuestion({
    id: 'q_1',
    runId: 'run_job1',
    sessionId: 'ses_1',
    toolUseId: 'toolu_q1',
    questions: [
      { question: 'Which branch?', header: 'Branch', multiSelect: false, options: [{ label: 'main' }] },
    ],
    priorResults: [{ type: 'tool_result', tool_use_id: 'toolu_0', content: 'read ok' }],
    createdAt: DUE + 25,
    expiresAt: DUE + HOUR,
  });
  await store.answerQuestion('q_1', { 'Which branch?': 'main' }, 'bob', DUE + 30);
  const run1 = (await store.getRun('run_job1'))!;
  await store.createPlan(
    planInput('pln_1', run1, {
      jobId: 'job_1',
      source: 'schedule',
      createdAt: DUE + 40,
      expiresAt: DUE + DAY,
      allowSelfApproval: true,
      network: ['*.github.com', 'registry.npmjs.org'],
      executeMode: 'edits',
      markdown: '# Plan\n\nChange \u00fcberall.',
    }),
  );
  await store.appendEvent('run_job1', 'plan.pending', { planId: 'pln_1' }, DUE + 40);
  await store.transitionRun('run_job1', ['running'], 'planned', { finishedAt: DUE + 41, activeMs: 31 });

  // Approved, executed: the execute run with its tool approval and call journal, then its delivery.
  const approve = (plan: Plan): DecisionEffect => ({
    decision: {
      id: 'dec_1',
      planId: plan.id,
      kind: 'approve',
      identity: 'bob',
      comment: null,
      sha256: plan.sha256,
      createdAt: DUE + 50,
    },
    planStatus: 'approved',
    run: {
      id: 'run_exec1',
      sessionId: plan.sessionId,
      jobId: plan.jobId,
      slotAt: null,
      source: plan.source,
      prompt: 'carry out the approved plan',
      requestedBy: 'bob',
      createdAt: DUE + 50,
      phase: 'execute',
      executesPlanId: plan.id,
    },
  });
  await store.decidePlan('pln_1', approve);
  await store.transitionPlan('pln_1', ['approved'], 'executing');
  await store.transitionRun('run_exec1', ['queued'], 'running', { startedAt: DUE + 60 });
  await store.createToolApproval({
    id: 'ta_1',
    runId: 'run_exec1',
    sessionId: 'ses_1',
    planId: 'pln_1',
    toolUseId: 'toolu_ta1',
    tool: 'Bash',
    input: { command: 'npm test', timeout: 120000 },
    inputSha256: 'sha-ta1',
    priorResults: [],
    createdAt: DUE + 61,
    expiresAt: DUE + HOUR,
  });
  await store.resolveToolApproval('ta_1', 'allowed', 'bob', 'go ahead', DUE + 62);
  await store.startToolCall({
    runId: 'run_exec1',
    toolUseId: 'toolu_w1',
    tool: 'Write',
    inputSha256: 'sha-w1',
    startedAt: DUE + 63,
  });
  await store.finishToolCall('run_exec1', 'toolu_w1', { content: 'written', isError: false }, DUE + 64);
  await store.startToolCall({
    runId: 'run_exec1',
    toolUseId: 'toolu_b1',
    tool: 'Bash',
    inputSha256: 'sha-b1',
    startedAt: DUE + 65,
  });
  await store.recordToolCallProcess('run_exec1', 'toolu_b1', 4242, 'boot-1:12345');
  await store.updateRun('run_exec1', {
    resultCommit: 'c'.repeat(40),
    diffStat: ' 1 file changed, 2 insertions(+)',
    changedFiles: ['src/a.ts'],
    executeMode: 'edits',
  });
  await store.transitionRun('run_exec1', ['running'], 'completed', { finishedAt: DUE + 70, activeMs: 10 });
  await store.appendEvent('run_exec1', 'run.finished', { status: 'completed' }, DUE + 70);
  await store.transitionPlan('pln_1', ['executing'], 'executed');
  await store.updatePlanDelivery('pln_1', [null], {
    status: 'retrying',
    branch: 'drydock/pln_1',
    remote: 'origin https://github.com/acme/app.git',
    attempts: 1,
    lastError: 'HTTP 502',
    nextAttemptAt: DUE + HOUR,
  });

  // A rejected plan and one still pending.
  const run2 = await store.createRun(runInput('run_pln_2', 'ses_1', { createdAt: DUE + 80 }));
  await store.createPlan(planInput('pln_2', run2, { createdAt: DUE + 81 }));
  await store.decidePlan('pln_2', (plan) => ({
    decision: {
      id: 'dec_2',
      planId: plan.id,
      kind: 'reject',
      identity: 'admin',
      comment: 'not now',
      sha256: plan.sha256,
      createdAt: DUE + 82,
    },
    planStatus: 'rejected',
  }));
  const run3 = await store.createRun(runInput('run_pln_3', 'ses_1', { createdAt: DUE + 90 }));
  await store.createPlan(planInput('pln_3', run3, { createdAt: DUE + 91, subject: SUBJECT }));

  // Triggers: a GitHub one fired (accepted, then capped), a generic one with a token, a schedule.
  await store.createTrigger(
    triggerInput('trg_gh', { filters: { repositories: ['acme/app'] }, hourlyCap: 1 }),
  );
  await store.createTrigger(
    triggerInput('trg_gen', {
      kind: 'generic',
      events: [],
      workspace: '/srv/repo',
      options: { execute_mode: 'edits' },
      tokenId: 'tok_trg',
      tokenHash: sha('trigger token'),
      enabled: false,
      createdAt: T0 + 1,
    }),
  );
  await store.createScheduleTrigger({
    trigger: triggerInput('trg_s', {
      kind: 'schedule',
      events: [],
      workspace: '/srv/repo',
      createdAt: T0 + 2,
    }),
    session: {
      id: 'ses_s',
      name: 'nightly',
      workspace: '/srv/repo',
      owner: 'admin',
      defaults: {},
      scopeKey: 'schedule:trg_s',
    },
    job: jobInput('job_s', 'ses_s', { triggerId: 'trg_s', expiresAt: null, createdBy: 'admin' }),
  });
  await store.recordWebhookDelivery(
    webhookDeliveryInput('dlv_1', { receivedAt: DUE }),
    '{"action":"opened"}',
  );
  await store.recordWebhookDeliveries([
    { delivery: webhookDeliveryInput('dlv_2', { receivedAt: DUE + 1 }), payload: '{"action":"labeled"}' },
    { delivery: webhookDeliveryInput('dlv_3', { receivedAt: DUE + 2, source: 'fire', key: 'idem-3' }) },
    { delivery: webhookDeliveryInput('dlv_4', { receivedAt: DUE + 3 }), payload: '{"action":"synchronize"}' },
  ]);
  const fire = (deliveryId: string, now: number): TriggerFireInput => ({
    triggerId: 'trg_gh',
    deliveryId,
    hourlyCap: 1,
    now,
    session: {
      name: `pull request ${SUBJECT}`,
      workspace: '/srv/clones/acme-app',
      owner: 'github:octocat',
      defaults: { approvals_required: 2 },
      scopeKey: SUBJECT,
    },
    run: {
      id: `run_${deliveryId}`,
      jobId: null,
      slotAt: null,
      source: 'delivery',
      prompt: 'review the pull request',
      requestedBy: 'github:octocat',
      createdAt: now,
      triggerId: 'trg_gh',
      deliveryId,
      subject: SUBJECT,
      checkout: {
        repository: 'acme/app',
        clone: '/srv/clones/acme-app',
        headSha: 'a'.repeat(40),
        headRef: 'feature',
        baseRef: 'main',
        number: 12,
      },
    },
  });
  await store.fireTrigger(fire('dlv_1', DUE + 5));
  await store.updateWebhookDelivery('dlv_1', {
    outcome: 'accepted',
    runIds: ['run_dlv_1'],
    triggerId: 'trg_gh',
    subject: SUBJECT,
    payload: null,
    processedAt: DUE + 5,
  });
  await store.fireTrigger(fire('dlv_4', DUE + 6));
  await store.updateWebhookDelivery('dlv_4', { outcome: 'capped', payload: null, processedAt: DUE + 6 });
  await store.recordTriggerFire('trg_gh', 'dlv_2', 'filtered', DUE + 7);
  await store.updateWebhookDelivery('dlv_2', {
    outcome: 'filtered',
    detail: 'label',
    payload: null,
    processedAt: DUE + 7,
  });
  await store.claimWebhookDelivery('dlv_3', DUE + MINUTE, DUE + 8);
  // The pull request's run, started by a replica that holds it until its lease runs out.
  await store.claimRun('run_dlv_1', 'queued', { replica: 'replica-a', leaseUntil: DUE + HOUR }, DUE + 9);

  // Notifications of the event log: one delivered, one pending; the cursor after them.
  const logged = (await store.eventsAfter(0, ['plan.pending', 'question.pending'], 10)).events;
  await store.enqueueNotifications(
    logged.map((e, i) => ({
      id: `ntf_${i}`,
      eventRowid: e.rowid,
      webhook: 'wh_slack',
      webhookUrl: 'https://hooks.example.com/services',
      event: e.type,
      runId: e.runId,
      planId: e.type === 'plan.pending' ? 'pln_1' : null,
      data: { title: `event ${i}` },
      body: JSON.stringify({ event: e.type, i }),
      nextAttemptAt: DUE + 100,
      createdAt: DUE + 100 + i,
    })),
    await store.eventLogEnd(),
  );
  const [claimed] = await store.claimNotifications(DUE + 100, DUE + 130, 1);
  await store.settleNotification(claimed!.id, { status: 'delivered', at: DUE + 101 });

  // Reactions' cursors: one moved past the first event and still held by a replica, one placed at the end.
  const first = logged[0]!.rowid;
  await store.placeReactionCursor('github_report', 0, DUE + 110);
  await store.holdReaction('github_report', 'replica-a', DUE + 111, DUE + HOUR);
  await store.advanceReaction('github_report', 'replica-a', first, DUE + HOUR, DUE + 112);
  await store.placeReactionCursor('plan_settling', await store.eventLogEnd(), DUE + 113);

  // A spend cap noted for the day, with its limit.reached notification (of no run event).
  await store.noteSpendCap('session', 'ses_1', '2026-06-01', 'daily_usd', DUE + 114, [
    {
      id: 'ntf_cap',
      eventRowid: null,
      webhook: 'wh_slack',
      webhookUrl: 'https://hooks.example.com/services',
      event: 'limit.reached',
      runId: null,
      planId: null,
      data: { title: 'spend cap reached' },
      body: JSON.stringify({ event: 'limit.reached' }),
      nextAttemptAt: DUE + 114,
      createdAt: DUE + 114,
    },
  ]);
}

/** Every page of a keyset listing. */
async function allPages<T>(list: (cursor: string | undefined) => Promise<Page<T>>): Promise<T[][]> {
  const pages: T[][] = [];
  let cursor: string | undefined;
  do {
    const page = await list(cursor);
    pages.push(page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return pages;
}

const each = <T>(ids: readonly string[], read: (id: string) => Promise<T>) => Promise.all(ids.map(read));

/** What the Store answers about everything seeded, aggregate by aggregate. */
async function storeView(store: Store) {
  const FAR = DUE + 30 * DAY;
  const plans = (await each(IDS.plans, (id) => store.getPlan(id))).filter((p) => p !== null);
  return {
    sessions: {
      pages: await allPages((cursor) => store.listSessions({ limit: 2, cursor })),
      open: await allPages((cursor) => store.listSessions({ status: 'open', limit: 10, cursor })),
      byId: await each(IDS.sessions, (id) => store.getSession(id)),
    },
    jobs: {
      bySession: await each(IDS.sessions, (id) => store.listJobs(id)),
      byId: await each(IDS.jobs, (id) => store.getJob(id)),
      slots: await each(IDS.jobs, (id) => store.listSlots(id)),
      ofTrigger: await store.jobOfTrigger('trg_s'),
      count: await store.countJobs(),
      due: await store.listDueJobIds(FAR, 100),
      readyPending: await store.listReadyPendingJobIds(100),
      earliestDue: await store.earliestDueAt(),
    },
    runs: {
      pages: await allPages((cursor) => store.listRuns({ limit: 3, cursor })),
      bySession: await each(IDS.sessions, (id) => store.listRuns({ sessionId: id, limit: 100 })),
      byId: await each(IDS.runs, (id) => store.getRun(id)),
      conversations: await each(IDS.runs, (id) => store.loadConversation(id)),
      frames: await each(IDS.runs, (id) => store.loadFrame(id)),
      events: await each(IDS.runs, (id) => store.listEvents(id, 0, 100)),
      log: await store.eventsAfter(0, EVENT_TYPES, 100),
      logEnd: await store.eventLogEnd(),
      openCommands: await store.listOpenCommands(10),
      activeForSubject: await store.activeRunsForSubject(SUBJECT),
      recoverable: {
        own: await store.listRecoverableRuns('replica-a', DUE + 10, 10),
        other: await store.listRecoverableRuns('replica-b', DUE + 10, 10),
        lapsed: await store.listRecoverableRuns('replica-b', DUE + 2 * HOUR, 10),
      },
      claimable: await store.listClaimableRuns(10),
      finishedCall: await store.startToolCall({
        runId: 'run_exec1',
        toolUseId: 'toolu_w1',
        tool: 'Write',
        inputSha256: 'sha-w1',
        startedAt: DUE + 63,
      }),
    },
    approvals: {
      questions: await store.listQuestions({ limit: 100 }),
      question: await each(IDS.questions, (id) => store.getQuestion(id)),
      found: await store.findQuestion('run_job1', 'toolu_q1'),
      toolApprovals: await store.listToolApprovals({ limit: 100 }),
      toolApproval: await each(IDS.toolApprovals, (id) => store.getToolApproval(id)),
    },
    plans: {
      pages: await allPages((cursor) => store.listPlans({ limit: 2, cursor })),
      pending: await allPages((cursor) =>
        store.listPlans({ status: 'pending_approval', activeAt: DUE, limit: 10, cursor }),
      ),
      summaries: await allPages((cursor) => store.listPlans({ summary: true, limit: 10, cursor })),
      byId: plans,
      decisions: await each(IDS.plans, (id) => store.listDecisions(id)),
      runs: await Promise.all(plans.map((p) => store.listPlanRuns(p))),
      forSubject: await store.pendingPlanForSubject(SUBJECT),
      recentExecutions: await store.recentExecutions(0, 10),
    },
    triggers: {
      all: await store.listTriggers({}),
      byId: await each(IDS.triggers, (id) => store.getTrigger(id)),
      byToken: await store.findTriggerByToken('tok_trg'),
      deliveries: await store.listWebhookDeliveries({ limit: 100 }),
      delivery: await each(IDS.deliveries, (id) => store.getWebhookDelivery(id)),
      queued: await store.queuedWebhookDeliveries(100, FAR),
      nextWebhookClaimLapse: await store.nextWebhookClaimLapse(DUE),
      fires: await each(IDS.triggers, (id) => store.listTriggerFires(id, 100)),
    },
    deliveries: {
      undecided: await store.listUndecidedPlanDeliveries(10),
      due: await store.duePlanDeliveries(FAR, 10),
      next: await store.nextPlanDeliveryAt(),
      cursor: await store.notificationCursor(),
      reactions: await each(['github_report', 'plan_settling', 'plan_delivery'], (n) =>
        store.reactionCursor(n),
      ),
      notifications: await allPages((cursor) => store.listNotifications({ limit: 1, cursor })),
      counts: await store.countNotifications(),
      nextDue: await store.nextNotificationDue(),
    },
    state: {
      tokens: await each(IDS.tokens, (id) => store.findToken(id)),
      roles: await each(IDS.identities, (id) => store.rolesOf(id)),
      active: [await store.countActiveTokens(), await store.countActiveTokens('admin')],
      uiSessions: await each(IDS.cookies, (c) => store.findUiSession(sha(c), T0 + 1)),
      values: await each(IDS.state, (k) => store.getState(k)),
      stats: await store.stats(),
    },
  };
}

/** Text as PostgreSQL keeps it: NUL becomes U+FFFD (src/store/postgres/db.ts). */
function asStored(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('\u0000', '\uFFFD');
  if (Buffer.isBuffer(value) || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(asStored);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asStored(v)]));
}

/** The tables of the SQLite schema that are copied. */
function sqliteTables(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (
      db
        .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
        .all() as {
        name: string;
      }[]
    )
      .map((r) => r.name)
      .filter((n) => !OWN_TABLES.has(n))
      .sort();
  } finally {
    db.close();
  }
}

/** A row as text with its columns in name order, to sort rows the same way whatever the column order. */
const canonical = (row: unknown) =>
  JSON.stringify(Object.entries(row as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)));

/** Every row of a SQLite table (with its rowid under the name PostgreSQL gives it), in a fixed order. */
function sqliteRows(file: string, table: string): unknown[] {
  const db = new Database(file, { readonly: true });
  try {
    const rowid = ROWID_AS[table] ? `rowid AS "${ROWID_AS[table]}", ` : '';
    const rows = db.prepare(`SELECT ${rowid}* FROM "${table}"`).all();
    return rows.map(asStored).sort((a, b) => canonical(a).localeCompare(canonical(b)));
  } finally {
    db.close();
  }
}

/** Every row of a PostgreSQL table, read as the store reads rows (numbers, 1/0 booleans, JSON as text). */
async function postgresRows(db: PgDb, table: string): Promise<unknown[]> {
  const rows = await db.rows<Record<string, unknown>>(`SELECT * FROM "${table}"`);
  return rows.sort((a, b) => canonical(a).localeCompare(canonical(b)));
}

async function postgresCounts(db: PgDb, tables: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const t of [...tables, 'schema_migrations']) {
    counts[t] = (await db.value<number>(`SELECT COUNT(*) FROM "${t}"`)) ?? 0;
  }
  return counts;
}

const fileHash = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

describe.skipIf(!available)('drydock migrate-store', () => {
  let dir = '';
  let source = '';
  let tables: string[] = [];
  const cleanup: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'drydock-migrate-store-'));
    source = join(dir, 'drydock.db');
    const store = new SqliteStore({ file: source, now: () => T0 });
    await seed(store);
    await store.close();
    tables = sqliteTables(source);
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const done of cleanup.splice(0).reverse()) await done();
  });

  async function target(): Promise<FreshDatabase> {
    const db = await freshDatabase();
    cleanup.push(() => db.drop());
    return db;
  }
  async function pgDb(url: string): Promise<PgDb> {
    const db = new PgDb({ url, max: 1 });
    cleanup.push(() => db.close());
    return db;
  }
  async function pgStore(url: string): Promise<Store> {
    const store = await openPostgresStore({ url, now: () => T0 });
    cleanup.push(() => store.close());
    return store;
  }
  /** A copy of the seeded source, to change. */
  function sourceCopy(name: string): string {
    const file = join(dir, name);
    copyFileSync(source, file);
    return file;
  }

  it('copies every table; the PostgreSQL store then answers every read as the SQLite store does', async () => {
    const db = await target();
    const before = fileHash(source);
    const report = await migrateStore({ from: source, to: db.url, now: T0, batchRows: 3 });

    expect(report.sourceVersion).toBe(loadMigrations().length);
    expect(report.targetMigrated).toEqual(loadPostgresMigrations().map((m) => m.version));
    // Every table of the SQLite schema, seeded, and counted alike on both sides.
    expect(report.tables.map((t) => t.table).sort()).toEqual(tables);
    for (const t of report.tables) {
      expect(t.source, t.table).toBeGreaterThan(0);
      expect(t.target, t.table).toBe(t.source);
    }
    expect(fileHash(source)).toBe(before);

    const raw = await pgDb(db.url);
    for (const table of tables) {
      expect(await postgresRows(raw, table), table).toEqual(sqliteRows(source, table));
    }

    const sqlite = new SqliteStore({ file: sourceCopy('view.db'), now: () => T0 });
    cleanup.push(() => sqlite.close());
    const postgres = await pgStore(db.url);
    const expected = asStored(await storeView(sqlite));
    expect(asStored(await storeView(postgres))).toEqual(expected);
    expect((await postgres.getSession('ses_1'))?.name).toBe('nightly\uFFFDreview');

    // What is appended next numbers after the copied rows: the event log and the delivery inbox.
    const end = await postgres.eventLogEnd();
    expect(end).toBe(await sqlite.eventLogEnd());
    await postgres.appendEvent('run_job1', 'message', { after: 'copy' }, DUE + 200);
    expect((await postgres.eventsAfter(end, ['message'], 10)).events.map((e) => e.rowid)).toEqual([end + 1]);
    await postgres.recordWebhookDelivery(webhookDeliveryInput('dlv_new', { receivedAt: T0 }), '{}');
    expect((await postgres.listWebhookDeliveries({ limit: 1 }))[0]?.id).toBe('dlv_new');
  });

  it("keeps each event's place in the log and each delivery's place in the inbox, gaps included", async () => {
    // Rowids with a gap before them (the oldest event and delivery gone): numbering the copies afresh would
    // move every later one, and notifications name events by their place in the log.
    const gapped = sourceCopy('gapped.db');
    const edit = new Database(gapped);
    edit.prepare('DELETE FROM run_events WHERE rowid = (SELECT MIN(rowid) FROM run_events)').run();
    edit.prepare(`DELETE FROM deliveries WHERE id = 'dlv_1'`).run();
    edit.close();
    const db = await target();
    // A batch of one row each time: every table is read on from where the last batch ended, by rowid or by
    // its primary key (a blob, a pair).
    await migrateStore({ from: gapped, to: db.url, now: T0, batchBytes: 1 });

    const raw = await pgDb(db.url);
    for (const table of tables) {
      expect(await postgresRows(raw, table), table).toEqual(sqliteRows(gapped, table));
    }
    expect(await raw.value('SELECT MIN(id) FROM run_events')).toBe(2);
    const sqlite = new SqliteStore({ file: gapped, now: () => T0 });
    cleanup.push(() => sqlite.close());
    const postgres = await pgStore(db.url);
    expect(await postgres.eventsAfter(0, EVENT_TYPES, 100)).toEqual(
      await sqlite.eventsAfter(0, EVENT_TYPES, 100),
    );
    expect(await postgres.listWebhookDeliveries({ limit: 2, before: 'dlv_4' })).toEqual(
      await sqlite.listWebhookDeliveries({ limit: 2, before: 'dlv_4' }),
    );
    expect(await postgres.notificationCursor()).toBe(await sqlite.notificationCursor());
  });

  it('refuses a target that holds rows, and changes nothing in it', async () => {
    const db = await target();
    await migrateStore({ from: source, to: db.url, now: T0 });
    const raw = await pgDb(db.url);
    const counts = await postgresCounts(raw, tables);
    const rows = await postgresRows(raw, 'runs');

    const again = migrateStore({ from: source, to: db.url, now: T0 + 1 });
    await expect(again).rejects.toBeInstanceOf(MigrateStoreError);
    await expect(again).rejects.toThrow(
      /is not empty \(rows in api_tokens, ui_sessions, sessions, .*\): .*nothing was changed/,
    );
    expect(await postgresCounts(raw, tables)).toEqual(counts);
    expect(await postgresRows(raw, 'runs')).toEqual(rows);

    // One row anywhere is enough.
    const other = await target();
    const store = await pgStore(other.url);
    await store.setState('auto_mode', 'on');
    await expect(migrateStore({ from: source, to: other.url, now: T0 })).rejects.toThrow(
      /is not empty \(rows in scheduler_state\)/,
    );
    expect(await store.getState('auto_mode')).toBe('on');
    expect(await store.getSession('ses_1')).toBeNull();
  });

  it('of two copies into one database at once, one copies and the other finds it not empty', async () => {
    const db = await target();
    // The schema first, so that both copies go straight to the tables.
    await (await openPostgresStore({ url: db.url, now: () => T0 })).close();
    const results = await Promise.allSettled([
      migrateStore({ from: source, to: db.url, now: T0, batchRows: 2 }),
      migrateStore({ from: source, to: db.url, now: T0, batchRows: 2 }),
    ]);
    const copied = results.filter((r) => r.status === 'fulfilled');
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
    expect(copied).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(MigrateStoreError);
    expect(refused[0]?.message).toMatch(/is not empty \(rows in api_tokens, /);
    const raw = await pgDb(db.url);
    for (const t of copied[0]!.value.tables) {
      expect((await postgresCounts(raw, [t.table]))[t.table], t.table).toBe(t.source);
    }
  });

  it('leaves the target empty when the copy fails midway, and a later copy into it succeeds', async () => {
    const broken = sourceCopy('broken.db');
    const edit = new Database(broken);
    // Text SQLite takes and PostgreSQL's json type refuses, in the next to last table copied.
    edit.prepare(`UPDATE notifications SET data = 'not json' WHERE id = 'ntf_1'`).run();
    edit.close();
    const db = await target();

    const failed = migrateStore({ from: broken, to: db.url, now: T0, batchRows: 2 });
    await expect(failed).rejects.toBeInstanceOf(MigrateStoreError);
    await expect(failed).rejects.toThrow(/failed at table notifications, nothing was written: .*json/);
    const raw = await pgDb(db.url);
    const counts = await postgresCounts(raw, tables);
    expect(counts).toEqual({
      ...Object.fromEntries(tables.map((t) => [t, 0])),
      schema_migrations: loadPostgresMigrations().length,
    });
    // The event log's sequence did not move either: the first event appended gets id 1.
    const store = await pgStore(db.url);
    await store.createSession(sessionInput('ses_x'));
    await store.createRun(runInput('run_x', 'ses_x'));
    await store.appendEvent('run_x', 'message', {}, T0);
    expect((await store.eventsAfter(0, ['message'], 10)).events.map((e) => e.rowid)).toEqual([1]);

    const clean = await target();
    const report = await migrateStore({ from: source, to: clean.url, now: T0 });
    expect(report.tables.every((t) => t.target === t.source && t.source > 0)).toBe(true);
  });

  it('refuses a source behind or ahead of this build, before touching the target', async () => {
    const behind = join(dir, 'behind.db');
    const old = new SqliteStore({ file: behind, migrations: loadMigrations().slice(0, 12), now: () => T0 });
    await old.close();
    const ahead = sourceCopy('ahead.db');
    const edit = new Database(ahead);
    edit
      .prepare(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future', 0)`)
      .run(loadMigrations().length + 1);
    edit.close();
    const db = await target();

    await expect(migrateStore({ from: behind, to: db.url, now: T0 })).rejects.toThrow(
      new RegExp(`at schema version 12, .*run \`drydock migrate --data-dir ${dir}\``),
    );
    await expect(migrateStore({ from: ahead, to: db.url, now: T0 })).rejects.toThrow(
      /at schema version \d+, newer than this drydock knows/,
    );
    await expect(migrateStore({ from: join(dir, 'missing.db'), to: db.url, now: T0 })).rejects.toThrow(
      /the source .*missing\.db cannot be opened/,
    );
    const raw = await pgDb(db.url);
    expect(await raw.value(`SELECT to_regclass('schema_migrations')::text`)).toBeNull();
  });

  it('through the built CLI: prints each table in both; never the password; a second run exits 1 in one line', async () => {
    const db = await target();
    const url = new URL(db.url);
    // With trust authentication the server does not ask for the password; it is only there to be hidden.
    if (!url.password) url.password = 'pw-migrate-secret';
    const password = decodeURIComponent(url.password);

    const first = await runCli(['migrate-store', '--from', source, '--to', url.toString()]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const lines = first.stdout.trimEnd().split('\n');
    expect(lines[0]).toContain(`copied ${source} (schema version ${loadMigrations().length}) into `);
    expect(lines[0]).toContain(':***@');
    expect(lines[1]).toMatch(/^table\s+source\s+target$/);
    const printed = new Map(
      lines.slice(2).map((l) => {
        const [name, inSource, inTarget] = l.trim().split(/\s+/);
        return [name!, [Number(inSource), Number(inTarget)]];
      }),
    );
    const raw = await pgDb(db.url);
    const counts = await postgresCounts(raw, tables);
    for (const table of tables) expect(printed.get(table), table).toEqual([counts[table], counts[table]]);
    const total = tables.reduce((n, t) => n + counts[t]!, 0);
    expect(printed.get('total')).toEqual([total, total]);

    // The URL from the environment this time.
    const second = await runCli(['migrate-store', '--from', source], { DATABASE_URL: url.toString() });
    expect(second.code).toBe(1);
    expect(second.stdout).toBe('');
    expect(second.stderr).toMatch(
      /^drydock: migrate-store: the target postgres:\/\/.*:\*\*\*@.* is not empty .*\n$/,
    );
    expect(second.stderr.split('\n')).toHaveLength(2);
    for (const out of [first.stdout, first.stderr, second.stdout, second.stderr]) {
      expect(out).not.toContain(password);
    }

    // Without a source it is a usage error, before anything is opened.
    const usage = await runCli(['migrate-store', '--to', url.toString()]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('drydock: migrate-store: --from FILE (the SQLite database) is required');
    expect(usage.stderr).not.toContain(password);
  });
});
