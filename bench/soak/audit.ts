import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { AuditDb } from './audit-db.js';
import { failureList } from './failures.js';
import type { AckedAnswer, AckedDecision, CreatedJob, DeliveryRecord } from './load.js';
import { bump } from './stats.js';
import { auditRetention, type RetentionInput, type RetentionResult } from './worktrees.js';

// The audit: the store read directly after the daemons exited (the SQLite file read-only, or the PostgreSQL
// database, through audit-db.ts: the same queries for both), held to what the scheduling semantics promise and
// to everything the API acknowledged during the soak.

const MINUTE = 60_000;
/** Default jitter of a recurring job: up to 10 % of the gap to its next slot, at most 15 minutes. */
const JITTER_FRACTION = 0.1;
const JITTER_CAP_MS = 15 * MINUTE;

/** Computed here, independently of src/scheduler: first 32 bits of sha256(id) / 2^32. */
export function jitterDelay(jobId: string, gapMs = MINUTE): number {
  const frac = createHash('sha256').update(jobId, 'utf8').digest().readUInt32BE(0) / 2 ** 32;
  return Math.floor(Math.min(frac * JITTER_FRACTION * gapMs, JITTER_CAP_MS));
}

export interface AuditInput {
  jobs: CreatedJob[];
  decisions: AckedDecision[];
  answers: AckedAnswer[];
  deliveries: DeliveryRecord[];
  triggerId: string;
  approver: string;
  /** Date.now() when SIGTERM was sent: slots due after it are not owed. */
  stopAt: number;
  /** Slots due in (stopAt - edgeMs, stopAt] may be covered or not. */
  edgeMs: number;
  /** Worktrees, branches and checkouts sampled during the soak, judged against retention's configuration. */
  retention?: RetentionInput;
}

export interface SlotTally {
  jobs: number;
  /** Due (jittered due time <= stopAt - edgeMs): must be covered exactly once. */
  due: number;
  fired: number;
  coalesced: number;
  missed: number;
  /** Waiting in cron_jobs.pending_slot_at for their session to go idle. */
  pendingAtStop: number;
  uncovered: number;
  doublyCovered: number;
  /** Due within the edge window before the stop: covered or not, both fine. */
  edgeCovered: number;
  edgeUncovered: number;
  /** Covered although not yet due at the stop, or not a slot of the job at all. */
  coveredEarly: number;
  stray: number;
  duplicateRuns: number;
  /** job_slots 'fired' rows and schedule runs that do not match one to one. */
  firedRowMismatches: number;
  coalescedCountMismatches: number;
  missedRangeMismatches: number;
  jitterMismatches: number;
  jobsMissingInStore: number;
}

export interface AuditResult {
  slots: SlotTally;
  runsByStatus: Record<string, number>;
  runsBySourcePhase: Record<string, number>;
  attempts: Record<string, number>;
  plansByStatus: Record<string, number>;
  questionsByStatus: Record<string, number>;
  deliveriesByOutcome: Record<string, number>;
  plans: {
    plannedRunsWithoutPlan: number;
    runsWithSeveralPlans: number;
    plansNotLinked: number;
    /** Informational: revision rounds of pull request plans that lost their pull request (subject). */
    revisedPullRequestPlansWithoutSubject: number;
    revisedPullRequestPlans: number;
  };
  decisions: {
    acknowledged: number;
    found: number;
    mismatched: number;
    byKind: Record<string, number>;
    /** In the store by the approver but never acknowledged (the answer was lost to a kill). */
    unacknowledgedInStore: number;
    approveWithoutOneExecuteRun: number;
    reviseWithoutOneRound: number;
    planStatusWrong: number;
  };
  answers: { acknowledged: number; found: number; mismatched: number; unacknowledgedInStore: number };
  deliveries: {
    sent: number;
    acknowledged: number;
    acknowledged202: number;
    acknowledgedDuplicate: number;
    neverAcknowledged: number;
    refused: number;
    found: number;
    withOneRun: number;
    acknowledgedWithoutRun: number;
    severalRunsPerTrigger: number;
    notAccepted: number;
  };
  activeAtStop: number;
  /** run_interrupted events with retrying: a run cut off by a kill, retried on the next start. */
  retriedAfterKill: number;
  /** Failed runs by error (ids and paths folded): the scripted model never fails, so each is the daemon's. */
  failedRuns: Record<string, number>;
  /** Retention's bound on worktrees, branches and checkouts (null when nothing was sampled). */
  retention: RetentionResult | null;
  /** Every check that failed, one line each (capped per check). */
  failures: string[];
}

interface SlotRow {
  job_id: string;
  slot_at: number;
  last_slot_at: number;
  slots: number;
  outcome: 'fired' | 'coalesced' | 'missed';
  run_id: string | null;
}

export async function audit(db: AuditDb, input: AuditInput): Promise<AuditResult> {
  const { failures, fail } = failureList();
  const group = async (sql: string) =>
    Object.fromEntries((await db.all<{ k: string; n: number }>(sql)).map((r) => [String(r.k), r.n]));
  const count = async (sql: string, ...args: unknown[]) => (await db.get<{ n: number }>(sql, ...args))!.n;

  // ---- slots -------------------------------------------------------------------------------------------
  const s: SlotTally = {
    jobs: 0,
    due: 0,
    fired: 0,
    coalesced: 0,
    missed: 0,
    pendingAtStop: 0,
    uncovered: 0,
    doublyCovered: 0,
    edgeCovered: 0,
    edgeUncovered: 0,
    coveredEarly: 0,
    stray: 0,
    duplicateRuns: 0,
    firedRowMismatches: 0,
    coalescedCountMismatches: 0,
    missedRangeMismatches: 0,
    jitterMismatches: 0,
    jobsMissingInStore: 0,
  };
  const storeJobs = new Map(
    (
      await db.all<{
        id: string;
        created_at: number;
        effective_cron: string;
        timezone: string;
        pending_slot_at: number | null;
      }>('SELECT id, created_at, effective_cron, timezone, pending_slot_at FROM cron_jobs')
    ).map((j) => [j.id, j]),
  );
  const runsBySlot = new Map<string, Map<number, number>>();
  for (const r of await db.all<{ job_id: string; slot_at: number; n: number }>(
    `SELECT job_id, slot_at, COUNT(*) AS n FROM runs WHERE job_id IS NOT NULL AND slot_at IS NOT NULL
     GROUP BY job_id, slot_at`,
  )) {
    const m = runsBySlot.get(r.job_id) ?? new Map<number, number>();
    runsBySlot.set(r.job_id, m);
    m.set(r.slot_at, r.n);
  }
  const dupes = await db.all<{ job_id: string; slot_at: number; n: number }>(
    `SELECT job_id, slot_at, COUNT(*) AS n FROM runs WHERE job_id IS NOT NULL AND slot_at IS NOT NULL
     GROUP BY job_id, slot_at HAVING COUNT(*) > 1`,
  );
  s.duplicateRuns = dupes.length;
  for (const d of dupes) fail('duplicate runs', `${d.job_id} slot ${iso(d.slot_at)}: ${d.n} runs`);

  const slotRows = new Map<string, SlotRow[]>();
  for (const row of await db.all<SlotRow>('SELECT * FROM job_slots')) {
    const list = slotRows.get(row.job_id) ?? [];
    slotRows.set(row.job_id, list);
    list.push(row);
  }

  // fired rows <-> schedule runs, one to one.
  const firedWithoutRun = await db.all<{ job_id: string; slot_at: number }>(
    `SELECT s.job_id, s.slot_at FROM job_slots s LEFT JOIN runs r ON r.id = s.run_id
     WHERE s.outcome = 'fired'
       AND (r.id IS NULL OR r.job_id IS DISTINCT FROM s.job_id OR r.slot_at IS DISTINCT FROM s.slot_at)`,
  );
  const runWithoutFired = await db.all<{ id: string; job_id: string; slot_at: number }>(
    `SELECT r.id, r.job_id, r.slot_at FROM runs r WHERE r.source = 'schedule' AND r.slot_at IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM job_slots s WHERE s.job_id = r.job_id AND s.slot_at = r.slot_at
                     AND s.outcome = 'fired' AND s.run_id = r.id)`,
  );
  s.firedRowMismatches = firedWithoutRun.length + runWithoutFired.length;
  for (const f of firedWithoutRun) fail('fired row without its run', `${f.job_id} ${iso(f.slot_at)}`);
  for (const r of runWithoutFired)
    fail('schedule run without fired row', `${r.id} (${r.job_id} ${iso(r.slot_at)})`);

  // A fire's coalesced_slots equals the coalesced rows that point at it.
  const coalescedMismatch = await db.all<{ id: string; c: number; rows: number }>(
    `SELECT r.id, r.coalesced_slots AS c,
       (SELECT COUNT(*) FROM job_slots s WHERE s.run_id = r.id AND s.outcome = 'coalesced') AS rows
     FROM runs r WHERE r.source = 'schedule'
       AND r.coalesced_slots != (SELECT COUNT(*) FROM job_slots s WHERE s.run_id = r.id AND s.outcome = 'coalesced')`,
  );
  s.coalescedCountMismatches = coalescedMismatch.length;
  for (const m of coalescedMismatch) fail('coalesced_slots mismatch', `${m.id}: ${m.c} vs ${m.rows} rows`);

  const jobsById = new Map(input.jobs.map((j) => [j.id, j]));
  s.jobs = input.jobs.length;
  for (const id of storeJobs.keys()) {
    if (!jobsById.has(id)) fail('job in store not created by the soak', id);
  }
  for (const job of input.jobs) {
    const stored = storeJobs.get(job.id);
    if (!stored) {
      s.jobsMissingInStore += 1;
      fail('job missing in store', job.id);
    } else if (stored.created_at !== job.createdAt) {
      fail('job created_at differs from the API answer', `${job.id}`);
    }
    const delay = jitterDelay(job.id);
    const first = Math.floor(job.createdAt / MINUTE) * MINUTE + MINUTE;
    if (first !== job.firstSlotAt || first + delay !== job.firstDueAt) {
      s.jitterMismatches += 1;
      fail(
        'first slot / due time differs from the API answer',
        `${job.id}: computed ${iso(first)} due ${iso(first + delay)}, API ${iso(job.firstSlotAt)} due ${iso(job.firstDueAt)}`,
      );
    }
    // Coverage of each nominal minute.
    const cover = new Map<number, string[]>();
    const add = (slot: number, how: string) => {
      const l = cover.get(slot) ?? [];
      cover.set(slot, l);
      l.push(how);
    };
    for (const [slot, n] of runsBySlot.get(job.id) ?? []) for (let i = 0; i < n; i++) add(slot, 'run');
    for (const row of slotRows.get(job.id) ?? []) {
      if (row.outcome === 'coalesced') add(row.slot_at, 'coalesced');
      else if (row.outcome === 'missed') {
        let k = 0;
        for (let t = row.slot_at; t <= row.last_slot_at; t += MINUTE) {
          add(t, 'missed');
          k += 1;
        }
        if (k !== row.slots || (row.last_slot_at - row.slot_at) % MINUTE !== 0) {
          s.missedRangeMismatches += 1;
          fail(
            'missed range',
            `${job.id} ${iso(row.slot_at)}..${iso(row.last_slot_at)} says ${row.slots} slots`,
          );
        }
      }
    }
    if (stored?.pending_slot_at != null) add(stored.pending_slot_at, 'pending');

    const last = input.stopAt + 2 * MINUTE;
    const seen = new Set<number>();
    for (let slot = first; slot + delay <= last; slot += MINUTE) {
      seen.add(slot);
      const due = slot + delay;
      const how = cover.get(slot) ?? [];
      if (due > input.stopAt) {
        if (how.length) {
          s.coveredEarly += 1;
          fail('covered before due', `${job.id} ${iso(slot)} (due ${iso(due)}): ${how.join('+')}`);
        }
        continue;
      }
      const edge = due > input.stopAt - input.edgeMs;
      if (how.length > 1) {
        s.doublyCovered += 1;
        fail('slot covered twice', `${job.id} ${iso(slot)}: ${how.join('+')}`);
      } else if (how.length === 0) {
        if (edge) s.edgeUncovered += 1;
        else {
          s.uncovered += 1;
          fail('slot not covered', `${job.id} ${iso(slot)} (due ${iso(due)})`);
        }
        continue;
      }
      if (edge) s.edgeCovered += 1;
      else s.due += 1;
      const kind = how[0];
      if (kind === 'run') s.fired += 1;
      else if (kind === 'coalesced') s.coalesced += 1;
      else if (kind === 'missed') s.missed += 1;
      else s.pendingAtStop += 1;
    }
    for (const [slot, how] of cover) {
      if (!seen.has(slot)) {
        s.stray += 1;
        fail('covered slot is no slot of the job', `${job.id} ${iso(slot)}: ${how.join('+')}`);
      }
    }
  }
  // `due` counts every owed slot, whatever covered it (or not).
  s.due += s.uncovered;

  // ---- runs, plans, questions ------------------------------------------------------------------------
  const runsByStatus = await group('SELECT status AS k, COUNT(*) AS n FROM runs GROUP BY status');
  const runsBySourcePhase = await group(
    `SELECT source || ' ' || phase AS k, COUNT(*) AS n FROM runs GROUP BY source, phase`,
  );
  const attempts = await group(`SELECT 'attempt ' || attempt AS k, COUNT(*) AS n FROM runs GROUP BY attempt`);
  const plansByStatus = await group('SELECT status AS k, COUNT(*) AS n FROM plans GROUP BY status');
  const questionsByStatus = await group('SELECT status AS k, COUNT(*) AS n FROM questions GROUP BY status');
  const deliveriesByOutcome = await group(
    'SELECT outcome AS k, COUNT(*) AS n FROM deliveries GROUP BY outcome',
  );
  const activeAtStop = runsByStatus.running ?? 0;
  if (activeAtStop) fail('runs still running after a clean stop', `${activeAtStop}`);

  const failedRuns: Record<string, number> = {};
  for (const r of await db.all<{ id: string; phase: string; error: string | null }>(
    `SELECT id, phase, error FROM runs WHERE status = 'failed'`,
  )) {
    const folded = `${r.phase}: ${foldError(r.error)}`;
    bump(failedRuns, folded);
    // The error's last line too: a failed git command's message comes after the long command line.
    const lastLine = (r.error ?? '').trim().split('\n').at(-1) ?? '';
    fail(
      'run failed',
      `${r.id} ${folded}${lastLine && !folded.includes(lastLine) ? ` ... ${lastLine}` : ''}`,
    );
  }
  const plannedRunsWithoutPlan = await count(
    `SELECT COUNT(*) AS n FROM runs r WHERE r.phase = 'plan' AND r.status = 'planned'
       AND NOT EXISTS (SELECT 1 FROM plans p WHERE p.run_id = r.id)`,
  );
  const severalPlans = await db.all<{ run_id: string; status: string; attempt: number; plans: string }>(
    `SELECT p.run_id, r.status, r.attempt, p.id || ' ' || p.status || ' round ' || p.round AS plans
     FROM plans p JOIN runs r ON r.id = p.run_id
     WHERE p.run_id IN (SELECT run_id FROM plans GROUP BY run_id HAVING COUNT(*) > 1)
     ORDER BY p.run_id, p.created_at, p.id`,
  );
  const runsWithSeveralPlans = new Set(severalPlans.map((x) => x.run_id)).size;
  const unlinked = await db.all<{ id: string; status: string; run_id: string; run_plan: string | null }>(
    `SELECT p.id, p.status, p.run_id, r.plan_id AS run_plan FROM plans p LEFT JOIN runs r ON r.id = p.run_id
     WHERE r.id IS NULL OR r.plan_id IS DISTINCT FROM p.id`,
  );
  const plansNotLinked = unlinked.length;
  const revisedPullRequestPlans = await count(
    `SELECT COUNT(*) AS n FROM plans WHERE source = 'delivery' AND round > 1`,
  );
  const revisedPullRequestPlansWithoutSubject = await count(
    `SELECT COUNT(*) AS n FROM plans WHERE source = 'delivery' AND round > 1 AND subject IS NULL`,
  );
  if (plannedRunsWithoutPlan) fail('planned runs without a plan (lost plan)', `${plannedRunsWithoutPlan}`);
  for (const runId of new Set(severalPlans.map((x) => x.run_id))) {
    const mine = severalPlans.filter((x) => x.run_id === runId);
    fail(
      'run with more than one plan',
      `${runId} (${mine[0]!.status}, attempt ${mine[0]!.attempt}): ${mine.map((x) => x.plans).join('; ')}`,
    );
  }
  for (const u of unlinked) {
    fail(
      'plan whose run does not name it',
      `${u.id} (${u.status}) of ${u.run_id}, which names ${u.run_plan ?? 'none'}`,
    );
  }

  // ---- decisions -------------------------------------------------------------------------------------
  const dec = {
    acknowledged: input.decisions.length,
    found: 0,
    mismatched: 0,
    byKind: {} as Record<string, number>,
    unacknowledgedInStore: 0,
    approveWithoutOneExecuteRun: 0,
    reviseWithoutOneRound: 0,
    planStatusWrong: 0,
  };
  const ackedIds = new Set<string>();
  for (const d of input.decisions) {
    bump(dec.byKind, d.kind);
    ackedIds.add(d.id);
    const row = await db.get<{
      plan_id: string;
      kind: string;
      identity: string;
      comment: string | null;
      sha256: string;
    }>('SELECT * FROM decisions WHERE id = ?', d.id);
    if (!row) {
      fail('acknowledged decision missing (lost decision)', `${d.id} ${d.kind} of ${d.planId}`);
      continue;
    }
    dec.found += 1;
    if (
      row.plan_id !== d.planId ||
      row.kind !== d.kind ||
      row.identity !== d.identity ||
      (row.comment ?? null) !== d.comment ||
      row.sha256 !== d.sha256
    ) {
      dec.mismatched += 1;
      fail('decision differs from what was acknowledged', `${d.id}`);
    }
    const plan = await db.get<{ status: string }>('SELECT id, status FROM plans WHERE id = ?', d.planId);
    const ok =
      d.kind === 'approve'
        ? ['approved', 'executing', 'executed', 'execution_failed'].includes(plan?.status ?? '')
        : d.kind === 'reject'
          ? plan?.status === 'rejected'
          : plan?.status === 'revision_requested';
    if (!ok) {
      dec.planStatusWrong += 1;
      fail('plan status after an acknowledged decision', `${d.kind} of ${d.planId}: plan is ${plan?.status}`);
    }
    if (
      d.kind === 'approve' &&
      (await count('SELECT COUNT(*) AS n FROM runs WHERE executes_plan_id = ?', d.planId)) !== 1
    ) {
      dec.approveWithoutOneExecuteRun += 1;
      fail('approved plan without exactly one execute run', d.planId);
    }
    if (
      d.kind === 'revise' &&
      (await count('SELECT COUNT(*) AS n FROM runs WHERE revises_plan_id = ?', d.planId)) !== 1
    ) {
      dec.reviseWithoutOneRound += 1;
      fail('revised plan without exactly one revision run', d.planId);
    }
  }
  for (const r of await db.all<{ id: string }>(
    'SELECT id FROM decisions WHERE identity = ?',
    input.approver,
  )) {
    if (!ackedIds.has(r.id)) dec.unacknowledgedInStore += 1;
  }

  // ---- answers ---------------------------------------------------------------------------------------
  const ans = { acknowledged: input.answers.length, found: 0, mismatched: 0, unacknowledgedInStore: 0 };
  const ackedQuestions = new Set<string>();
  for (const a of input.answers) {
    ackedQuestions.add(a.questionId);
    const row = await db.get<{ status: string; answers: string | null; answered_by: string | null }>(
      'SELECT status, answers, answered_by FROM questions WHERE id = ?',
      a.questionId,
    );
    if (!row) {
      fail('acknowledged answer: question missing', a.questionId);
      continue;
    }
    if (row.status !== 'answered' || !row.answers) {
      fail('acknowledged answer lost', `${a.questionId} is ${row.status}`);
      continue;
    }
    ans.found += 1;
    if (!isDeepStrictEqual(JSON.parse(row.answers), a.answers) || row.answered_by !== a.by) {
      ans.mismatched += 1;
      fail('stored answers differ from the acknowledged ones', `${a.questionId}: ${row.answers}`);
    }
  }
  for (const r of await db.all<{ id: string }>(
    `SELECT id FROM questions WHERE status = 'answered' AND answered_by = ?`,
    input.approver,
  )) {
    if (!ackedQuestions.has(r.id)) ans.unacknowledgedInStore += 1;
  }

  // ---- deliveries ------------------------------------------------------------------------------------
  const del = {
    sent: input.deliveries.length,
    acknowledged: 0,
    acknowledged202: 0,
    acknowledgedDuplicate: 0,
    neverAcknowledged: 0,
    refused: 0,
    found: 0,
    withOneRun: 0,
    acknowledgedWithoutRun: 0,
    severalRunsPerTrigger: 0,
    notAccepted: 0,
  };
  for (const d of input.deliveries) {
    if (d.refusedWith !== null) {
      del.refused += 1;
      fail('delivery refused', `${d.key}: HTTP ${d.refusedWith}`);
      continue;
    }
    if (!d.ack) {
      del.neverAcknowledged += 1;
      continue;
    }
    del.acknowledged += 1;
    if (d.ack.status === 202) del.acknowledged202 += 1;
    else del.acknowledgedDuplicate += 1;
    const row = await db.get<{ id: string; outcome: string; run_ids: string }>(
      `SELECT * FROM deliveries WHERE source = 'github' AND key = ?`,
      d.key,
    );
    if (!row) {
      fail('acknowledged delivery missing (lost delivery)', d.key);
      continue;
    }
    del.found += 1;
    if (d.ack.status === 202 && row.id !== d.ack.deliveryId) fail('delivery id differs', d.key);
    if (row.outcome !== 'accepted') {
      del.notAccepted += 1;
      fail('acknowledged delivery not accepted', `${d.key} (#${d.number}): ${row.outcome}`);
    }
    const runIds = JSON.parse(row.run_ids) as string[];
    const fire = await db.get<{ outcome: string; run_id: string | null }>(
      'SELECT outcome, run_id FROM trigger_fires WHERE trigger_id = ? AND delivery_id = ?',
      input.triggerId,
      row.id,
    );
    const run =
      runIds.length === 1
        ? await db.get<{ delivery_id: string; trigger_id: string }>(
            'SELECT id, delivery_id, trigger_id FROM runs WHERE id = ?',
            runIds[0],
          )
        : undefined;
    if (
      runIds.length === 1 &&
      run?.delivery_id === row.id &&
      run.trigger_id === input.triggerId &&
      fire?.outcome === 'accepted' &&
      fire.run_id === runIds[0]
    ) {
      del.withOneRun += 1;
    } else {
      del.acknowledgedWithoutRun += 1;
      fail(
        'acknowledged delivery without its one run',
        `${d.key} (#${d.number}, ack ${d.ack.status}${d.ack.duplicate ? ' duplicate' : ''}): outcome ${row.outcome}, run_ids ${row.run_ids}, trigger_fires ${fire ? `${fire.outcome} ${fire.run_id}` : 'none'}`,
      );
    }
  }
  const several = await db.all<{ delivery_id: string; trigger_id: string; n: number }>(
    `SELECT delivery_id, trigger_id, COUNT(*) AS n FROM runs WHERE delivery_id IS NOT NULL
     GROUP BY delivery_id, trigger_id HAVING COUNT(*) > 1`,
  );
  del.severalRunsPerTrigger = several.length;
  for (const r of several)
    fail('delivery with several runs for one trigger', `${r.delivery_id}: ${r.n} runs`);

  // ---- retention ---------------------------------------------------------------------------------------
  const retention = input.retention ? await auditRetention(db, input.retention) : null;
  for (const f of retention?.failures ?? []) failures.push(`retention: ${f}`);

  return {
    slots: s,
    runsByStatus,
    runsBySourcePhase,
    attempts,
    plansByStatus,
    questionsByStatus,
    deliveriesByOutcome,
    plans: {
      plannedRunsWithoutPlan,
      runsWithSeveralPlans,
      plansNotLinked,
      revisedPullRequestPlans,
      revisedPullRequestPlansWithoutSubject,
    },
    decisions: dec,
    answers: ans,
    deliveries: del,
    activeAtStop,
    retriedAfterKill: (
      await db.all<{ data: string }>(`SELECT data FROM run_events WHERE type = 'run_interrupted'`)
    ).filter((e) => (JSON.parse(e.data) as { retrying?: boolean }).retrying === true).length,
    failedRuns,
    retention,
    failures,
  };
}

/** A run's error with ids, paths and commits folded, so errors of one kind count together. */
export function foldError(error: string | null): string {
  return (error ?? '')
    .replace(/\/[^\s:]+/g, '<path>')
    .replace(/\b(pln|run|ses|job|dlv)_[\w-]+/g, '$1_…')
    .replace(/\b[0-9a-f]{40}\b/g, '<sha>')
    .replace(/\s+/g, ' ')
    .slice(0, 200);
}

function iso(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}
