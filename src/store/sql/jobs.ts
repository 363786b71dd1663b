import type { SlotTransition } from '../../domain/slot-transition.js';
import type { CronJob, JobStatus } from '../../domain/types.js';
import type { NewJob } from '../jobs.js';
import { ACTIVE_STATUSES } from '../leases.js';
import type { RunRow } from '../rows.js';
import { flag, type Statement } from './dialect.js';
import { insertRunStatement } from './runs.js';

// The SQL of cron jobs and their slots that both backends run as written here (`?` placeholders, see
// dialect.ts). Booleans are written as 1 and 0 (PostgreSQL reads them as booleans) and conditions as
// boolean expressions, which SQLite stores as 1 and 0. How a transaction locks jobs and sessions stays with
// each backend.

export const SELECT_JOB = 'SELECT * FROM cron_jobs WHERE id = ?';
export const SELECT_JOB_OF_TRIGGER = 'SELECT * FROM cron_jobs WHERE trigger_id = ?';
export const SELECT_JOBS_OF_SESSION = 'SELECT * FROM cron_jobs WHERE session_id = ? ORDER BY created_at, id';
export const COUNT_JOBS = 'SELECT COUNT(*) AS n FROM cron_jobs';
export const COUNT_JOBS_OF_SESSION = 'SELECT COUNT(*) AS n FROM cron_jobs WHERE session_id = ?';
export const DELETE_JOB = 'DELETE FROM cron_jobs WHERE id = ?';
export const SELECT_SLOTS = 'SELECT * FROM job_slots WHERE job_id = ? ORDER BY slot_at';

/** Inserts a job, returning its row; also inside createScheduleTrigger's transaction. */
export function insertJobStatement(j: NewJob, status: JobStatus): Statement {
  return {
    text: `INSERT INTO cron_jobs (id, session_id, cron, effective_cron, timezone, prompt, recurring, approximate,
         options, status, created_by, created_at, expires_at, next_nominal_at, next_due_at, next_final, trigger_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
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

/** A scheduled trigger's job takes its trigger's new definition; its history stays. */
export function redefineJobStatement(j: NewJob, status: JobStatus): Statement {
  return {
    text: `UPDATE cron_jobs SET cron = ?, effective_cron = ?, timezone = ?, prompt = ?, approximate = ?, options = ?,
           status = ?, expires_at = ?, next_nominal_at = ?, next_due_at = ?, next_final = ?,
           pending_slot_at = NULL, pending_count = 0, pending_final = FALSE
         WHERE id = ?`,
    values: [
      j.cron,
      j.effectiveCron,
      j.timezone,
      j.prompt,
      flag(j.approximate),
      JSON.stringify(j.options),
      status,
      j.expiresAt,
      j.nextNominalAt,
      j.nextDueAt,
      flag(j.nextFinal),
      j.id,
    ],
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

/** Whether a session has an active run. Values: session id. */
export const SESSION_BUSY = `SELECT 1 FROM runs WHERE session_id = ? AND status IN (${ACTIVE_STATUSES}) LIMIT 1`;

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
 * Applies one SlotTransition, inside advanceJobs' transaction: the statements, in order, as steps a backend
 * runs (synchronously on SQLite, awaiting each on PostgreSQL) and answers with their result. Returns the row
 * of the run it fired, if any.
 */
export function* transitionSteps(
  job: CronJob,
  t: SlotTransition,
  now: number,
): Generator<Step, RunRow | null, unknown> {
  const slot = (
    slotAt: number,
    lastAt: number,
    slots: number,
    outcome: string,
    runId: string | null,
  ): Step => ({
    statement: {
      text: `INSERT INTO job_slots (job_id, slot_at, last_slot_at, slots, outcome, run_id, recorded_at)
             VALUES (?, ?, ?, ?, ?, ?, ?)`,
      values: [job.id, slotAt, lastAt, slots, outcome, runId, now],
    },
    want: 'changes',
  });
  for (const s of t.coalesce) yield slot(s, s, 1, 'coalesced', null);
  if (t.missed) yield slot(t.missed.firstAt, t.missed.lastAt, t.missed.slots, 'missed', null);
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
    yield slot(t.fire.slotAt, t.fire.slotAt, 1, 'fired', t.fire.runId);
  }
  if (t.capped) yield slot(t.capped.slotAt, t.capped.slotAt, 1, 'capped', null);
  if (t.remove) {
    yield { statement: { text: DELETE_JOB, values: [job.id] }, want: 'changes' };
    return run;
  }
  yield {
    statement: {
      text: `UPDATE cron_jobs SET status = ?, next_nominal_at = ?, next_due_at = ?, next_final = ?,
               pending_slot_at = ?, pending_count = ?, pending_final = ?,
               last_slot_at = COALESCE(?, last_slot_at), fire_count = fire_count + ?
             WHERE id = ?`,
      values: [
        t.status ?? job.status,
        t.next?.nominalAt ?? null,
        t.next?.dueAt ?? null,
        flag(t.next?.final ?? false),
        t.pending?.slotAt ?? null,
        t.pending?.coalesced ?? 0,
        flag(t.pending?.final ?? false),
        t.fire?.slotAt ?? t.capped?.slotAt ?? null,
        t.fire ? 1 : 0,
        job.id,
      ],
    },
    want: 'changes',
  };
  return run;
}
