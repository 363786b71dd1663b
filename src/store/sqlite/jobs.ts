import type { NewRun } from '../../domain/new-run.js';
import type { DecideFn, SlotTransition } from '../../domain/slot-transition.js';
import type { CronJob, JobStatus, Run, SlotRecord } from '../../domain/types.js';
import type { AdvanceResult, JobStore, NewJob } from '../jobs.js';
import { ACTIVE_STATUSES } from '../leases.js';
import { type JobRow, type SlotRow, toJob, toSlot } from '../rows.js';
import { ConflictError, JobLimitError, NotFoundError } from '../store.js';
import type { SqliteDb } from './db.js';
import { insertRun } from './runs.js';

/** Jobs and their slots. A fired slot's run is written by the transaction that advances the job. */
export class SqliteJobs implements JobStore {
  constructor(private readonly db: SqliteDb) {}

  async createJob(j: NewJob, maxPerSession: number): Promise<CronJob> {
    this.db.write(() => {
      const session = this.db.sql('SELECT status FROM sessions WHERE id = ?').get(j.sessionId) as
        | { status: string }
        | undefined;
      if (!session) throw new NotFoundError(`session ${j.sessionId} not found`);
      if (session.status !== 'open') throw new ConflictError(`session ${j.sessionId} is closed`);
      const { n } = this.db
        .sql('SELECT COUNT(*) AS n FROM cron_jobs WHERE session_id = ?')
        .get(j.sessionId) as { n: number };
      if (n >= maxPerSession) throw new JobLimitError(maxPerSession);
      insertJob(this.db, j, 'active');
    });
    return (await this.getJob(j.id))!;
  }

  async renewJob(id: string, expiresAt: number, by: string, now: number): Promise<CronJob | null> {
    this.db
      .sql(
        `UPDATE cron_jobs SET expires_at = ?,
           next_final = CASE WHEN next_nominal_at IS NOT NULL AND next_nominal_at >= ? THEN 1 ELSE 0 END,
           pending_final = CASE WHEN pending_slot_at IS NOT NULL AND pending_slot_at >= ? THEN 1 ELSE 0 END,
           renewals = renewals + 1, renewed_at = ?, renewed_by = ?
         WHERE id = ? AND recurring = 1`,
      )
      .run(expiresAt, expiresAt, expiresAt, now, by, id);
    return this.getJob(id);
  }

  async jobOfTrigger(triggerId: string): Promise<CronJob | null> {
    const row = this.db.sql('SELECT * FROM cron_jobs WHERE trigger_id = ?').get(triggerId) as
      | JobRow
      | undefined;
    return row ? toJob(row) : null;
  }

  async redefineJob(j: NewJob, status: JobStatus): Promise<CronJob | null> {
    this.db
      .sql(
        `UPDATE cron_jobs SET cron = ?, effective_cron = ?, timezone = ?, prompt = ?, approximate = ?, options = ?,
           status = ?, expires_at = ?, next_nominal_at = ?, next_due_at = ?, next_final = ?,
           pending_slot_at = NULL, pending_count = 0, pending_final = 0
         WHERE id = ?`,
      )
      .run(
        j.cron,
        j.effectiveCron,
        j.timezone,
        j.prompt,
        j.approximate ? 1 : 0,
        JSON.stringify(j.options),
        status,
        j.expiresAt,
        j.nextNominalAt,
        j.nextDueAt,
        j.nextFinal ? 1 : 0,
        j.id,
      );
    return this.getJob(j.id);
  }

  async getJob(id: string): Promise<CronJob | null> {
    const row = this.db.sql('SELECT * FROM cron_jobs WHERE id = ?').get(id) as JobRow | undefined;
    return row ? toJob(row) : null;
  }

  async listJobs(sessionId: string): Promise<CronJob[]> {
    const rows = this.db
      .sql('SELECT * FROM cron_jobs WHERE session_id = ? ORDER BY created_at, id')
      .all(sessionId) as JobRow[];
    return rows.map(toJob);
  }

  async countJobs(): Promise<number> {
    return (this.db.sql('SELECT COUNT(*) AS n FROM cron_jobs').get() as { n: number }).n;
  }

  async deleteJob(id: string): Promise<boolean> {
    return this.db.sql('DELETE FROM cron_jobs WHERE id = ?').run(id).changes === 1;
  }

  async updateJobSchedule(
    id: string,
    status: JobStatus,
    next: { nominalAt: number; dueAt: number; final: boolean } | null,
  ): Promise<CronJob | null> {
    this.db
      .sql(
        `UPDATE cron_jobs SET status = ?, next_nominal_at = ?, next_due_at = ?, next_final = ? WHERE id = ?`,
      )
      .run(status, next?.nominalAt ?? null, next?.dueAt ?? null, next?.final ? 1 : 0, id);
    return this.getJob(id);
  }

  async listDueJobIds(now: number, limit: number): Promise<string[]> {
    return this.db
      .pluck(
        `SELECT id FROM cron_jobs WHERE status = 'active' AND next_due_at IS NOT NULL AND next_due_at <= ?
         ORDER BY next_due_at LIMIT ?`,
      )
      .all(now, limit) as string[];
  }

  async listReadyPendingJobIds(limit: number): Promise<string[]> {
    return this.db
      .pluck(
        `SELECT j.id FROM cron_jobs j WHERE j.pending_slot_at IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.session_id = j.session_id AND r.status IN (${ACTIVE_STATUSES}))
         ORDER BY j.pending_slot_at LIMIT ?`,
      )
      .all(limit) as string[];
  }

  async earliestDueAt(): Promise<number | null> {
    const row = this.db
      .sql(
        `SELECT next_due_at AS t FROM cron_jobs WHERE status = 'active' AND next_due_at IS NOT NULL
         ORDER BY next_due_at LIMIT 1`,
      )
      .get() as { t: number } | undefined;
    return row?.t ?? null;
  }

  async advanceJobs(jobIds: string[], now: number, decide: DecideFn): Promise<AdvanceResult[]> {
    const getJob = this.db.sql('SELECT * FROM cron_jobs WHERE id = ?');
    return this.db.write(() => {
      const results: AdvanceResult[] = [];
      for (const id of jobIds) {
        const row = getJob.get(id) as JobRow | undefined;
        if (!row) continue;
        const job = toJob(row);
        const t = decide(job, sessionBusy(this.db, job.sessionId));
        if (!t) continue;
        results.push({ jobId: id, run: applyTransition(this.db, job, t, now), transition: t });
      }
      return results;
    });
  }

  async runJobNow(jobId: string, r: NewRun): Promise<Run | null> {
    return this.db.write(() => {
      const row = this.db.sql('SELECT * FROM cron_jobs WHERE id = ?').get(jobId) as JobRow | undefined;
      if (!row) return null;
      const job = toJob(row);
      if (job.status === 'missed' && job.nextNominalAt !== null) {
        // A missed one-shot: a person fires its slot now, exactly once, and the job is done.
        const run = insertRun(this.db, { ...r, jobId, slotAt: job.nextNominalAt, source: 'manual' }, 0);
        this.db
          .sql(
            `INSERT INTO job_slots (job_id, slot_at, last_slot_at, slots, outcome, run_id, recorded_at)
               VALUES (?, ?, ?, 1, 'fired', ?, ?)
               ON CONFLICT (job_id, slot_at) DO UPDATE SET outcome = 'fired', run_id = excluded.run_id,
                 recorded_at = excluded.recorded_at`,
          )
          .run(jobId, job.nextNominalAt, job.nextNominalAt, run.id, r.createdAt);
        this.db.sql('DELETE FROM cron_jobs WHERE id = ?').run(jobId);
        return run;
      }
      return insertRun(this.db, { ...r, jobId, slotAt: null, source: 'manual' }, 0);
    });
  }

  async listSlots(jobId: string): Promise<SlotRecord[]> {
    const rows = this.db
      .sql('SELECT * FROM job_slots WHERE job_id = ? ORDER BY slot_at')
      .all(jobId) as SlotRow[];
    return rows.map(toSlot);
  }
}

/** Also runs inside createScheduleTrigger's transaction. */
export function insertJob(db: SqliteDb, j: NewJob, status: JobStatus): void {
  db.sql(
    `INSERT INTO cron_jobs (id, session_id, cron, effective_cron, timezone, prompt, recurring, approximate,
         options, status, created_by, created_at, expires_at, next_nominal_at, next_due_at, next_final, trigger_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    j.id,
    j.sessionId,
    j.cron,
    j.effectiveCron,
    j.timezone,
    j.prompt,
    j.recurring ? 1 : 0,
    j.approximate ? 1 : 0,
    JSON.stringify(j.options),
    status,
    j.createdBy,
    j.createdAt,
    j.expiresAt,
    j.nextNominalAt,
    j.nextDueAt,
    j.nextFinal ? 1 : 0,
    j.triggerId ?? null,
  );
}

/** Runs inside advanceJobs' transaction. */
function applyTransition(db: SqliteDb, job: CronJob, t: SlotTransition, now: number): Run | null {
  const insertSlot = db.sql(
    `INSERT INTO job_slots (job_id, slot_at, last_slot_at, slots, outcome, run_id, recorded_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const slot of t.coalesce) insertSlot.run(job.id, slot, slot, 1, 'coalesced', null, now);
  if (t.missed)
    insertSlot.run(job.id, t.missed.firstAt, t.missed.lastAt, t.missed.slots, 'missed', null, now);
  let run: Run | null = null;
  if (t.fire) {
    const coalesced = db
      .sql(`UPDATE job_slots SET run_id = ? WHERE job_id = ? AND outcome = 'coalesced' AND run_id IS NULL`)
      .run(t.fire.runId, job.id).changes;
    run = insertRun(
      db,
      {
        id: t.fire.runId,
        sessionId: job.sessionId,
        jobId: job.id,
        slotAt: t.fire.slotAt,
        source: 'schedule',
        prompt: job.prompt,
        requestedBy: job.createdBy,
        createdAt: now,
        overrides: job.options,
        ...(job.triggerId ? { triggerId: job.triggerId } : {}),
      },
      coalesced,
    );
    insertSlot.run(job.id, t.fire.slotAt, t.fire.slotAt, 1, 'fired', t.fire.runId, now);
  }
  if (t.remove) {
    db.sql('DELETE FROM cron_jobs WHERE id = ?').run(job.id);
    return run;
  }
  db.sql(
    `UPDATE cron_jobs SET status = ?, next_nominal_at = ?, next_due_at = ?, next_final = ?,
         pending_slot_at = ?, pending_count = ?, pending_final = ?,
         last_slot_at = COALESCE(?, last_slot_at), fire_count = fire_count + ?
       WHERE id = ?`,
  ).run(
    t.status ?? job.status,
    t.next?.nominalAt ?? null,
    t.next?.dueAt ?? null,
    t.next?.final ? 1 : 0,
    t.pending?.slotAt ?? null,
    t.pending?.coalesced ?? 0,
    t.pending?.final ? 1 : 0,
    t.fire?.slotAt ?? null,
    t.fire ? 1 : 0,
    job.id,
  );
  return run;
}

function sessionBusy(db: SqliteDb, sessionId: string): boolean {
  return (
    db
      .sql(`SELECT 1 FROM runs WHERE session_id = ? AND status IN (${ACTIVE_STATUSES}) LIMIT 1`)
      .get(sessionId) !== undefined
  );
}
