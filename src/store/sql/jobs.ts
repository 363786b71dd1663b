import type { SessionRun, SlotTransition } from '../../domain/slot-transition.js';
import type { CronJob, JobStatus, SlotOutcome } from '../../domain/types.js';
import type { JobFilter, NewJob } from '../jobs.js';
import { ACTIVE_STATUSES } from '../leases.js';
import type { RunRow } from '../rows.js';
import { flag, type Statement } from './dialect.js';
import { addCursor, equalities, whereSql } from './query.js';
import { insertRunStatement } from './runs.js';

// The SQL of cron jobs and their slots that both backends run as written here (`?` placeholders, see
// dialect.ts). Booleans are written as 1 and 0 (PostgreSQL reads them as booleans) and conditions as
// boolean expressions, which SQLite stores as 1 and 0. How a transaction locks jobs and sessions stays with
// each backend.

export const SELECT_JOB = 'SELECT * FROM cron_jobs WHERE id = ?';
/** The job of a name in a session, if any (names are unique within a session). Values: session id, name. */
export const SELECT_JOB_NAMED = 'SELECT id FROM cron_jobs WHERE session_id = ? AND name = ?';
export const SELECT_JOB_OF_TRIGGER = 'SELECT * FROM cron_jobs WHERE trigger_id = ?';
export const SELECT_JOBS_OF_SESSION = 'SELECT * FROM cron_jobs WHERE session_id = ? ORDER BY created_at, id';
export const COUNT_JOBS = 'SELECT COUNT(*) AS n FROM cron_jobs';
export const COUNT_JOBS_OF_SESSION = 'SELECT COUNT(*) AS n FROM cron_jobs WHERE session_id = ?';
export const DELETE_JOB = 'DELETE FROM cron_jobs WHERE id = ?';
export const SELECT_SLOTS = 'SELECT * FROM job_slots WHERE job_id = ? ORDER BY slot_at';

/**
 * Whether a job fires as things stand: active, and, for a scheduled trigger's job, its trigger enabled (a
 * disabled trigger pauses its job, but the flag is the trigger's word).
 */
const JOB_ENABLED = `(status = 'active' AND (trigger_id IS NULL OR EXISTS (
    SELECT 1 FROM triggers t WHERE t.id = cron_jobs.trigger_id AND t.enabled)))`;

/**
 * A page of jobs across sessions (GET /v1/jobs), in the order they were created, (created_at, id), so that
 * a cursor stays valid while jobs fire and their next times move; one row more than the page, to tell
 * whether another follows. No index serves it: jobs are few (scheduler.max_jobs_per_session a session).
 */
export function listJobsStatement(f: JobFilter): Statement {
  const { where, values } = equalities([
    ['session_id', f.sessionId],
    ['trigger_id', f.triggerId],
  ]);
  if (f.enabled !== undefined) where.push(f.enabled ? JOB_ENABLED : `NOT ${JOB_ENABLED}`);
  if (f.ofTrigger !== undefined) where.push(f.ofTrigger ? 'trigger_id IS NOT NULL' : 'trigger_id IS NULL');
  if (f.expiringBefore !== undefined) {
    where.push('expires_at IS NOT NULL AND expires_at < ?');
    values.push(f.expiringBefore);
  }
  addCursor(f.cursor, where, values, 'asc');
  return {
    text: `SELECT * FROM cron_jobs ${whereSql(where)} ORDER BY created_at, id LIMIT ?`,
    values: [...values, f.limit + 1],
  };
}

/**
 * The latest `perJob` slots of each of the jobs, newest first, with the plan each slot's run proposed: one
 * statement for a page of jobs (the slots' primary key (job_id, slot_at) serves the window). Empty `jobIds`
 * is the caller's to skip.
 */
export function recentSlotsStatement(jobIds: readonly string[], perJob: number): Statement {
  return {
    text: `SELECT s.job_id, s.slot_at, s.last_slot_at, s.slots, s.outcome, s.run_id, s.recorded_at, r.plan_id
      FROM (SELECT job_slots.*, ROW_NUMBER() OVER (PARTITION BY job_id ORDER BY slot_at DESC) AS n
              FROM job_slots WHERE job_id IN (${jobIds.map(() => '?').join(', ')})) s
      LEFT JOIN runs r ON r.id = s.run_id
      WHERE s.n <= ?
      ORDER BY s.job_id, s.slot_at DESC`,
    values: [...jobIds, perJob],
  };
}

/** Inserts a job, returning its row; also inside createScheduleTrigger's transaction. */
export function insertJobStatement(j: NewJob, status: JobStatus): Statement {
  return {
    text: `INSERT INTO cron_jobs (id, session_id, cron, effective_cron, timezone, prompt, recurring, approximate,
         options, status, created_by, created_at, expires_at, next_nominal_at, next_due_at, next_final, trigger_id,
         name, overlap, jitter_max_seconds)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       RETURNING *`,
    values: [
      j.id,
      j.sessionId,
      j.cron,
      j.effectiveCron,
      j.timezone,
      j.prompt,
      flag(j.recurring),
      flag(j.approximate),
      JSON.stringify(j.options),
      status,
      j.createdBy,
      j.createdAt,
      j.expiresAt,
      j.nextNominalAt,
      j.nextDueAt,
      flag(j.nextFinal),
      j.triggerId ?? null,
      j.name ?? null,
      j.overlap,
      j.jitterMaxSeconds,
    ],
  };
}

/** Another expiry period: the next (and pending) slot is final again only if it falls at or after it. */
export function renewJobStatement(id: string, expiresAt: number, by: string, now: number): Statement {
  return {
    text: `UPDATE cron_jobs SET expires_at = ?,
           next_final = (next_nominal_at IS NOT NULL AND next_nominal_at >= ?),
           pending_final = (pending_slot_at IS NOT NULL AND pending_slot_at >= ?),
           renewals = renewals + 1, renewed_at = ?, renewed_by = ?
         WHERE id = ? AND recurring`,
    values: [expiresAt, expiresAt, expiresAt, now, by, id],
  };
}

/**
 * A job takes a new definition (a scheduled trigger's, or PATCH /v1/jobs/:id); its name and history stay.
 * What waited is dropped (the new schedule starts from now): run with `dropBufferedStatement` before it, in
 * one transaction.
 */
export function redefineJobStatement(j: NewJob, status: JobStatus): Statement {
  return {
    text: `UPDATE cron_jobs SET cron = ?, effective_cron = ?, timezone = ?, prompt = ?, approximate = ?, options = ?,
           recurring = ?, status = ?, expires_at = ?, next_nominal_at = ?, next_due_at = ?, next_final = ?,
           pending_slot_at = NULL, pending_count = 0, pending_final = FALSE, buffered_slots = '[]',
           overlap = ?, jitter_max_seconds = ?
         WHERE id = ?`,
    values: [
      j.cron,
      j.effectiveCron,
      j.timezone,
      j.prompt,
      flag(j.approximate),
      JSON.stringify(j.options),
      flag(j.recurring),
      status,
      j.expiresAt,
      j.nextNominalAt,
      j.nextDueAt,
      flag(j.nextFinal),
      j.overlap,
      j.jitterMaxSeconds,
      j.id,
    ],
  };
}

/** The slots a `buffer_all` job held when it is redefined are dropped: their rows say `skipped`. */
export function dropBufferedStatement(jobId: string, now: number): Statement {
  return {
    text: `UPDATE job_slots SET outcome = 'skipped', recorded_at = ? WHERE job_id = ? AND outcome = 'buffered'`,
    values: [now, jobId],
  };
}

/** Pauses, resumes or reschedules a job; returns its row. */
export function updateJobScheduleStatement(
  id: string,
  status: JobStatus,
  next: { nominalAt: number; dueAt: number; final: boolean } | null,
): Statement {
  return {
    text: 'UPDATE cron_jobs SET status = ?, next_nominal_at = ?, next_due_at = ?, next_final = ? WHERE id = ? RETURNING *',
    values: [status, next?.nominalAt ?? null, next?.dueAt ?? null, flag(next?.final ?? false), id],
  };
}

export function dueJobIdsStatement(now: number, limit: number): Statement {
  return {
    text: `SELECT id FROM cron_jobs WHERE status = 'active' AND next_due_at IS NOT NULL AND next_due_at <= ?
           ORDER BY next_due_at LIMIT ?`,
    values: [now, limit],
  };
}

/** Jobs holding a pending slot whose session has no active run, oldest pending slot first. Values: limit. */
export const READY_PENDING_JOB_IDS = `SELECT j.id FROM cron_jobs j WHERE j.pending_slot_at IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.session_id = j.session_id AND r.status IN (${ACTIVE_STATUSES}))
  ORDER BY j.pending_slot_at LIMIT ?`;

export const EARLIEST_DUE_AT = `SELECT next_due_at AS t FROM cron_jobs WHERE status = 'active' AND next_due_at IS NOT NULL
  ORDER BY next_due_at LIMIT 1`;

/** A session's active runs, as the overlap policy sees them (SessionRun). Values: session id. */
export const SESSION_RUNS = `SELECT id, job_id, source, slot_at FROM runs
  WHERE session_id = ? AND status IN (${ACTIVE_STATUSES}) ORDER BY created_at, id`;

export interface SessionRunRow {
  id: string;
  job_id: string | null;
  source: SessionRun['source'];
  slot_at: number | null;
}

export const toSessionRun = (r: SessionRunRow): SessionRun => ({
  id: r.id,
  jobId: r.job_id,
  source: r.source,
  slotAt: r.slot_at,
});

/**
 * Whether a backfilled slot is the schedule's still (not offered): it waits already (pending, or buffered), or
 * it is the job's next slot or later, which the scheduler fires itself (it may be due a few minutes after its
 * nominal time, with jitter).
 */
export const leftToSchedule = (job: CronJob, slotAt: number): boolean =>
  slotAt === job.pendingSlotAt ||
  job.bufferedSlots.includes(slotAt) ||
  (job.nextNominalAt !== null && slotAt >= job.nextNominalAt);

/**
 * Whether a slot of a job was handled already (backfill): it has a run, or a recorded outcome other than
 * `missed` (a slot missed while the daemon was down is what a backfill is for). Values: job id, slot, job
 * id, slot.
 */
export const SLOT_HANDLED = `SELECT 1 WHERE EXISTS (SELECT 1 FROM runs WHERE job_id = ? AND slot_at = ?)
  OR EXISTS (SELECT 1 FROM job_slots WHERE job_id = ? AND slot_at = ? AND outcome <> 'missed')`;

/** A missed one-shot's slot, fired by a person (runJobNow): recorded once, whatever was recorded before. */
export function firedMissedSlotStatement(
  jobId: string,
  slotAt: number,
  runId: string,
  at: number,
): Statement {
  return {
    text: `INSERT INTO job_slots (job_id, slot_at, last_slot_at, slots, outcome, run_id, recorded_at)
           VALUES (?, ?, ?, 1, 'fired', ?, ?)
           ON CONFLICT (job_id, slot_at) DO UPDATE SET outcome = 'fired', run_id = excluded.run_id,
             recorded_at = excluded.recorded_at`,
    values: [jobId, slotAt, slotAt, runId, at],
  };
}

/**
 * One statement of a transition and what its driver hands back: how many rows it wrote (`changes`) or the
 * row it returned (`row`).
 */
export type Step = { statement: Statement; want: 'changes' } | { statement: Statement; want: 'row' };

/**
 * Records what one slot became. A row a slot already has is replaced only while it is provisional: `buffered`
 * (it waited, and now fires or is dropped) or `missed` (a backfill fires a slot missed during downtime; a
 * missed range's row is keyed by its first slot, so the range's record gives way to that slot's). Anything
 * else stays: a slot is recorded once.
 */
function recordSlot(
  jobId: string,
  slotAt: number,
  outcome: SlotOutcome,
  runId: string | null,
  now: number,
): Step {
  return {
    statement: {
      text: `INSERT INTO job_slots (job_id, slot_at, last_slot_at, slots, outcome, run_id, recorded_at)
             VALUES (?, ?, ?, 1, ?, ?, ?)
             ON CONFLICT (job_id, slot_at) DO UPDATE SET last_slot_at = excluded.last_slot_at, slots = 1,
               outcome = excluded.outcome, run_id = excluded.run_id, recorded_at = excluded.recorded_at
             WHERE job_slots.outcome IN ('buffered', 'missed')`,
      values: [jobId, slotAt, slotAt, outcome, runId, now],
    },
    want: 'changes',
  };
}

/** What the overlap policy recorded: slots dropped, slots waiting, and the job's runs canceled. */
function* overlapSteps(job: CronJob, t: SlotTransition, now: number): Generator<Step, void, unknown> {
  for (const s of t.skip ?? []) yield recordSlot(job.id, s, 'skipped', null, now);
  for (const s of t.buffer ?? []) yield recordSlot(job.id, s, 'buffered', null, now);
  for (const c of t.cancel ?? []) {
    yield {
      statement: {
        text: `UPDATE job_slots SET outcome = 'canceled', recorded_at = ?
               WHERE job_id = ? AND run_id = ? AND outcome = 'fired'`,
        values: [now, job.id, c.runId],
      },
      want: 'changes',
    };
  }
}

/** A slot a spend cap stopped, and the slots folded into it: recorded `capped`, no run. */
function* cappedSteps(jobId: string, slotAt: number, now: number): Generator<Step, void, unknown> {
  // A slot buffer_all held waiting becomes capped in its own row, as it would have become fired.
  yield recordSlot(jobId, slotAt, 'capped', null, now);
  // The slots folded into it are capped with it: left coalesced and unlinked, a later fire would claim them.
  yield {
    statement: {
      text: `UPDATE job_slots SET outcome = 'capped' WHERE job_id = ? AND outcome = 'coalesced' AND run_id IS NULL`,
      values: [jobId],
    },
    want: 'changes',
  };
}

/**
 * Applies one SlotTransition, inside advanceJobs' transaction: the statements, in order, as steps a backend
 * runs (synchronously on SQLite, awaiting each on PostgreSQL) and answers with their result. Returns the row
 * of the run it fired, if any.
 */
export function* transitionSteps(
  job: CronJob,
  t: SlotTransition,
  now: number,
): Generator<Step, RunRow | null, unknown> {
  for (const s of t.coalesce) yield recordSlot(job.id, s, 'coalesced', null, now);
  if (t.missed) {
    yield {
      statement: {
        text: `INSERT INTO job_slots (job_id, slot_at, last_slot_at, slots, outcome, run_id, recorded_at)
               VALUES (?, ?, ?, ?, 'missed', NULL, ?)`,
        values: [job.id, t.missed.firstAt, t.missed.lastAt, t.missed.slots, now],
      },
      want: 'changes',
    };
  }
  yield* overlapSteps(job, t, now);
  let run: RunRow | null = null;
  if (t.fire) {
    // The slots coalesced so far are linked to the run that fires, and counted on it.
    const coalesced = (yield {
      statement: {
        text: `UPDATE job_slots SET run_id = ? WHERE job_id = ? AND outcome = 'coalesced' AND run_id IS NULL`,
        values: [t.fire.runId, job.id],
      },
      want: 'changes',
    }) as number;
    const newRun = {
      id: t.fire.runId,
      sessionId: job.sessionId,
      jobId: job.id,
      slotAt: t.fire.slotAt,
      source: 'schedule' as const,
      prompt: job.prompt,
      requestedBy: job.createdBy,
      createdAt: now,
      overrides: job.options,
      ...(job.triggerId ? { triggerId: job.triggerId } : {}),
    };
    run = (yield { statement: insertRunStatement(newRun, coalesced), want: 'row' }) as RunRow;
    yield recordSlot(job.id, t.fire.slotAt, 'fired', t.fire.runId, now);
  }
  if (t.capped) yield* cappedSteps(job.id, t.capped.slotAt, now);
  if (t.remove) {
    yield { statement: { text: DELETE_JOB, values: [job.id] }, want: 'changes' };
    return run;
  }
  yield {
    statement: {
      text: `UPDATE cron_jobs SET status = ?, next_nominal_at = ?, next_due_at = ?, next_final = ?,
               pending_slot_at = ?, pending_count = ?, pending_final = ?, buffered_slots = ?,
               last_slot_at = CASE WHEN last_slot_at IS NULL OR ? > last_slot_at THEN ? ELSE last_slot_at END,
               fire_count = fire_count + ?
             WHERE id = ?`,
      values: [
        t.status ?? job.status,
        t.next?.nominalAt ?? null,
        t.next?.dueAt ?? null,
        flag(t.next?.final ?? false),
        t.pending?.slotAt ?? null,
        t.pending?.coalesced ?? 0,
        flag(t.pending?.final ?? false),
        JSON.stringify(t.queue ?? []),
        // A backfilled slot may be older than the last one fired: last_slot_at only moves forward.
        t.fire?.slotAt ?? t.capped?.slotAt ?? null,
        t.fire?.slotAt ?? t.capped?.slotAt ?? null,
        t.fire ? 1 : 0,
        job.id,
      ],
    },
    want: 'changes',
  };
  return run;
}
