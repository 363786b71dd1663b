import { expect } from 'vitest';
import type { CronJob } from '../../src/domain/types.js';
import { newId } from '../../src/ids.js';
import type { SlotTransition, Store } from '../../src/store/store.js';
import { sha256 } from './helpers.js';

// What the Schedules page is tested with: a session's job whose last slots were missed while the daemon was
// down, and a scheduled trigger whose job fired (a coalesced slot folded into the fire) and whose run
// proposed a plan. Made through the API, the slots through the store's own transition (as the scheduler
// records them), so the page and the browser test read what a daemon would have written.

const DAY = 86_400_000;

export interface ScheduleSeedTarget {
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  store: Store;
  now(): number;
  workspace: string;
}

export interface SeededSchedules {
  sessionId: string;
  jobId: string;
  triggerId: string;
  triggerJobId: string;
  runId: string;
  planId: string;
}

async function ok(t: ScheduleSeedTarget, method: string, path: string, body?: unknown) {
  const res = await t.api(method, path, body);
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body;
}

/** A transition that records slots and leaves the job's next slot as it is. */
const keeping = (job: CronJob, t: Partial<SlotTransition>): SlotTransition => ({
  coalesce: [],
  missed: null,
  fire: null,
  pending: null,
  next:
    job.nextNominalAt === null || job.nextDueAt === null
      ? null
      : { nominalAt: job.nextNominalAt, dueAt: job.nextDueAt, final: job.nextFinal },
  remove: false,
  ...t,
});

export async function seedSchedules(t: ScheduleSeedTarget): Promise<SeededSchedules> {
  const now = t.now();
  const session = await ok(t, 'POST', '/v1/sessions', { workspace: t.workspace, name: 'docs team' });
  const job = await ok(t, 'POST', `/v1/sessions/${session.id}/jobs`, {
    name: 'daily review',
    cron: '0 9 * * *',
    timezone: 'UTC',
    prompt: 'Review yesterday’s commits',
  });
  const trigger = await ok(t, 'POST', '/v1/triggers', {
    kind: 'schedule',
    name: 'nightly review',
    cron: '0 3 * * *',
    timezone: 'UTC',
    prompt: 'Review what changed yesterday.',
    workspace: t.workspace,
  });
  const triggerJobId = trigger.schedule.job_id as string;
  const runId = newId('run');
  const [coalescedAt, firedAt] = [now - 2 * DAY, now - DAY];
  await t.store.advanceJobs([triggerJobId], now, (j) =>
    keeping(j, { coalesce: [coalescedAt], fire: { slotAt: firedAt, runId, dueAt: firedAt } }),
  );
  await t.store.advanceJobs([job.id], now, (j) =>
    keeping(j, { missed: { firstAt: now - 3 * DAY, lastAt: now - DAY, slots: 3 } }),
  );
  const run = (await t.store.getRun(runId))!;
  await t.store.transitionRun(runId, ['queued'], 'planned', { startedAt: now, finishedAt: now });
  const planId = await proposePlan(t, run.id, run.sessionId, triggerJobId, trigger.id);
  return { sessionId: session.id, jobId: job.id, triggerId: trigger.id, triggerJobId, runId, planId };
}

/** The plan the fired run proposed. */
async function proposePlan(
  t: ScheduleSeedTarget,
  runId: string,
  sessionId: string,
  jobId: string,
  triggerId: string,
): Promise<string> {
  const now = t.now();
  const markdown = '# Tidy the changelog\n\n1. Sort the entries.\n';
  const plan = await t.store.createPlan({
    id: newId('pln'),
    runId,
    sessionId,
    conversationId: runId,
    toolUseId: 'toolu_plan',
    markdown,
    sha256: sha256(markdown),
    workspaceCommit: null,
    status: 'pending_approval',
    round: 1,
    previousPlanId: null,
    requestedBy: 'admin',
    createdAt: now,
    jobId,
    triggerId,
    source: 'schedule',
    expiresAt: now + DAY,
    approvalsRequired: 1,
    allowSelfApproval: false,
    executeMode: 'manual',
    network: [],
    owner: 'admin',
    decidedAt: null,
    failureReason: null,
    subject: null,
  });
  await t.store.updateRun(runId, { planId: plan.id });
  return plan.id;
}
