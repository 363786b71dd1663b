import type { NewRun } from '../../domain/new-run.js';
import type { DecideFn, SlotTransition } from '../../domain/slot-transition.js';
import type { CronJob, JobStatus, Run, SlotRecord } from '../../domain/types.js';
import type { AdvanceResult, JobStore, NewJob } from '../jobs.js';
import { ACTIVE_STATUSES } from '../leases.js';
import { type JobRow, type SlotRow, toJob, toSlot } from '../rows.js';
import { ConflictError, JobLimitError, NotFoundError } from '../store.js';
import { json, type PgDb, type Queries } from './db.js';
import { insertRun } from './runs.js';

/**
 * Cron jobs and their slots; a fired slot's run is created in the transaction that advances the job.
 *
 * Lock order, the same in every transaction that takes both: a job's row, then its session's row
 * (advanceJobs, closeSession). The scheduler takes job rows with SKIP LOCKED, so two schedulers (two
 * replicas) never wait on each other's jobs and never both handle one.
 */
export class PgJobs implements JobStore {
  constructor(private readonly db: PgDb) {}

  async createJob(j: NewJob, maxPerSession: number): Promise<CronJob> {
    return this.db.tx(async (q) => {
      // The session row is locked while its jobs are counted: two creations (or a creation and the
      // session's close) take turns, so the limit holds and no job joins a closed session.
      const session = await q.row<{ status: string }>(
        'SELECT status FROM sessions WHERE id = $1 FOR NO KEY UPDATE',
        [j.sessionId],
      );
      if (!session) throw new NotFoundError(`session ${j.sessionId} not found`);
      if (session.status !== 'open') throw new ConflictError(`session ${j.sessionId} is closed`);
      const n =
        (await q.value<number>('SELECT COUNT(*) FROM cron_jobs WHERE session_id = $1', [j.sessionId])) ?? 0;
      if (n >= maxPerSession) throw new JobLimitError(maxPerSession);
      return toJob(await insertJob(q, j, 'active'));
    });
  }

  async renewJob(id: string, expiresAt: number, by: string, now: number): Promise<CronJob | null> {
    await this.db.exec(
      `UPDATE cron_jobs SET expires_at = $2,
           next_final = (next_nominal_at IS NOT NULL AND next_nominal_at >= $2),
           pending_final = (pending_slot_at IS NOT NULL AND pending_slot_at >= $2),
           renewals = renewals + 1, renewed_at = $3, renewed_by = $4
         WHERE id = $1 AND recurring`,
      [id, expiresAt, now, by],
    );
    return this.getJob(id);
  }

  async jobOfTrigger(triggerId: string): Promise<CronJob | null> {
    const row = await this.db.row<JobRow>('SELECT * FROM cron_jobs WHERE trigger_id = $1', [triggerId]);
    return row ? toJob(row) : null;
  }

  async redefineJob(j: NewJob, status: JobStatus): Promise<CronJob | null> {
    await this.db.exec(
      `UPDATE cron_jobs SET cron = $2, effective_cron = $3, timezone = $4, prompt = $5, approximate = $6, options = $7,
           status = $8, expires_at = $9, next_nominal_at = $10, next_due_at = $11, next_final = $12,
           pending_slot_at = NULL, pending_count = 0, pending_final = false
         WHERE id = $1`,
      [
        j.id,
        j.cron,
        j.effectiveCron,
        j.timezone,
        j.prompt,
        j.approximate,
        json(j.options),
        status,
        j.expiresAt,
        j.nextNominalAt,
        j.nextDueAt,
        j.nextFinal,
      ],
    );
    return this.getJob(j.id);
  }

  async getJob(id: string): Promise<CronJob | null> {
    const row = await this.db.row<JobRow>('SELECT * FROM cron_jobs WHERE id = $1', [id]);
    return row ? toJob(row) : null;
  }

  async listJobs(sessionId: string): Promise<CronJob[]> {
    const rows = await this.db.rows<JobRow>(
      'SELECT * FROM cron_jobs WHERE session_id = $1 ORDER BY created_at, id',
      [sessionId],
    );
    return rows.map(toJob);
  }

  async countJobs(): Promise<number> {
    return (await this.db.value<number>('SELECT COUNT(*) FROM cron_jobs')) ?? 0;
  }

  async deleteJob(id: string): Promise<boolean> {
    return (await this.db.exec('DELETE FROM cron_jobs WHERE id = $1', [id])) === 1;
  }

  async updateJobSchedule(
    id: string,
    status: JobStatus,
    next: { nominalAt: number; dueAt: number; final: boolean } | null,
  ): Promise<CronJob | null> {
    const row = await this.db.row<JobRow>(
      `UPDATE cron_jobs SET status = $2, next_nominal_at = $3, next_due_at = $4, next_final = $5 WHERE id = $1
       RETURNING *`,
      [id, status, next?.nominalAt ?? null, next?.dueAt ?? null, next?.final ?? false],
    );
    return row ? toJob(row) : null;
  }

  // ---- the scheduler pass

  async listDueJobIds(now: number, limit: number): Promise<string[]> {
    const rows = await this.db.rows<{ id: string }>(
      `SELECT id FROM cron_jobs WHERE status = 'active' AND next_due_at IS NOT NULL AND next_due_at <= $1
       ORDER BY next_due_at LIMIT $2`,
      [now, limit],
    );
    return rows.map((r) => r.id);
  }

  async listReadyPendingJobIds(limit: number): Promise<string[]> {
    const rows = await this.db.rows<{ id: string }>(
      `SELECT j.id FROM cron_jobs j WHERE j.pending_slot_at IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.session_id = j.session_id AND r.status IN (${ACTIVE_STATUSES}))
       ORDER BY j.pending_slot_at LIMIT $1`,
      [limit],
    );
    return rows.map((r) => r.id);
  }

  async earliestDueAt(): Promise<number | null> {
    return (
      (await this.db.value<number>(
        `SELECT next_due_at FROM cron_jobs WHERE status = 'active' AND next_due_at IS NOT NULL
         ORDER BY next_due_at LIMIT 1`,
      )) ?? null
    );
  }

  async advanceJobs(jobIds: string[], now: number, decide: DecideFn): Promise<AdvanceResult[]> {
    if (!jobIds.length) return [];
    return this.db.tx(async (q) => {
      // LOUD: the order of this transaction is what keeps two schedulers apart.
      // 1. The jobs, locked; a job another transaction holds (another replica advancing it, a person
      //    pausing it) is skipped, not waited for: SKIP LOCKED leaves out rows that cannot be locked at once
      //    (sql-select, "The Locking Clause"). A skipped job is still due and comes up in a later pass; a job
      //    read here is the freshest version, as the row lock waits for no one.
      const rows = await q.rows<JobRow>(
        'SELECT * FROM cron_jobs WHERE id = ANY($1::text[]) FOR UPDATE SKIP LOCKED',
        [jobIds],
      );
      if (!rows.length) return [];
      const jobs = new Map(rows.map((r) => [r.id, toJob(r)]));
      // 2. Their sessions, locked in id order: two schedulers whose jobs share a session decide on it one
      //    after the other, and the second sees the run the first fired (busy). Sessions are only ever
      //    waited for after jobs, never the other way round (see closeSession).
      const sessionIds = [...new Set(rows.map((r) => r.session_id))].sort();
      await q.rows('SELECT id FROM sessions WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE', [
        sessionIds,
      ]);
      // 3. Which sessions are busy, read after the session locks (a new snapshot under READ COMMITTED);
      //    a run fired below makes its session busy for the jobs after it, as in one SQLite transaction.
      const busy = new Set(
        (
          await q.rows<{ session_id: string }>(
            `SELECT DISTINCT session_id FROM runs WHERE session_id = ANY($1::text[]) AND status IN (${ACTIVE_STATUSES})`,
            [sessionIds],
          )
        ).map((r) => r.session_id),
      );
      const repeated = new Set(jobIds.filter((id, i) => jobIds.indexOf(id) !== i));
      const results: AdvanceResult[] = [];
      for (const id of jobIds) {
        const job = jobs.get(id);
        if (!job) continue;
        const t = decide(job, busy.has(job.sessionId));
        if (!t) continue;
        const run = await applyTransition(q, job, t, now);
        if (run) busy.add(job.sessionId);
        results.push({ jobId: id, run, transition: t });
        if (repeated.has(id)) {
          // An id given twice is decided again on the job as this transition left it.
          const after = t.remove
            ? undefined
            : await q.row<JobRow>('SELECT * FROM cron_jobs WHERE id = $1', [id]);
          if (after) jobs.set(id, toJob(after));
          else jobs.delete(id);
        }
      }
      return results;
    });
  }

  async runJobNow(jobId: string, r: NewRun): Promise<Run | null> {
    return this.db.tx(async (q) => {
      const row = await q.row<JobRow>('SELECT * FROM cron_jobs WHERE id = $1 FOR UPDATE', [jobId]);
      if (!row) return null;
      const job = toJob(row);
      if (job.status === 'missed' && job.nextNominalAt !== null) {
        // A missed one-shot: a person fires its slot now, exactly once, and the job is done.
        const run = await insertRun(q, { ...r, jobId, slotAt: job.nextNominalAt, source: 'manual' }, 0);
        await q.exec(
          `INSERT INTO job_slots (job_id, slot_at, last_slot_at, slots, outcome, run_id, recorded_at)
           VALUES ($1, $2, $2, 1, 'fired', $3, $4)
           ON CONFLICT (job_id, slot_at) DO UPDATE SET outcome = 'fired', run_id = excluded.run_id,
             recorded_at = excluded.recorded_at`,
          [jobId, job.nextNominalAt, run.id, r.createdAt],
        );
        await q.exec('DELETE FROM cron_jobs WHERE id = $1', [jobId]);
        return run;
      }
      return insertRun(q, { ...r, jobId, slotAt: null, source: 'manual' }, 0);
    });
  }

  async listSlots(jobId: string): Promise<SlotRecord[]> {
    const rows = await this.db.rows<SlotRow>('SELECT * FROM job_slots WHERE job_id = $1 ORDER BY slot_at', [
      jobId,
    ]);
    return rows.map(toSlot);
  }
}

/** Inserts a job; also inside createScheduleTrigger's transaction. */
export async function insertJob(q: Queries, j: NewJob, status: JobStatus): Promise<JobRow> {
  const row = await q.row<JobRow>(
    `INSERT INTO cron_jobs (id, session_id, cron, effective_cron, timezone, prompt, recurring, approximate,
         options, status, created_by, created_at, expires_at, next_nominal_at, next_due_at, next_final, trigger_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
     RETURNING *`,
    [
      j.id,
      j.sessionId,
      j.cron,
      j.effectiveCron,
      j.timezone,
      j.prompt,
      j.recurring,
      j.approximate,
      json(j.options),
      status,
      j.createdBy,
      j.createdAt,
      j.expiresAt,
      j.nextNominalAt,
      j.nextDueAt,
      j.nextFinal,
      j.triggerId ?? null,
    ],
  );
  return row!;
}

/** Applies one SlotTransition; runs inside advanceJobs' transaction, holding the job's row. */
async function applyTransition(
  q: Queries,
  job: CronJob,
  t: SlotTransition,
  now: number,
): Promise<Run | null> {
  const insertSlot = (slotAt: number, lastAt: number, slots: number, outcome: string, runId: string | null) =>
    q.exec(
      `INSERT INTO job_slots (job_id, slot_at, last_slot_at, slots, outcome, run_id, recorded_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [job.id, slotAt, lastAt, slots, outcome, runId, now],
    );
  for (const slot of t.coalesce) await insertSlot(slot, slot, 1, 'coalesced', null);
  if (t.missed) await insertSlot(t.missed.firstAt, t.missed.lastAt, t.missed.slots, 'missed', null);
  let run: Run | null = null;
  if (t.fire) {
    const coalesced = await q.exec(
      `UPDATE job_slots SET run_id = $2 WHERE job_id = $1 AND outcome = 'coalesced' AND run_id IS NULL`,
      [job.id, t.fire.runId],
    );
    run = await insertRun(
      q,
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
    await insertSlot(t.fire.slotAt, t.fire.slotAt, 1, 'fired', t.fire.runId);
  }
  if (t.remove) {
    await q.exec('DELETE FROM cron_jobs WHERE id = $1', [job.id]);
    return run;
  }
  await q.exec(
    `UPDATE cron_jobs SET status = $2, next_nominal_at = $3, next_due_at = $4, next_final = $5,
         pending_slot_at = $6, pending_count = $7, pending_final = $8,
         last_slot_at = COALESCE($9, last_slot_at), fire_count = fire_count + $10
     WHERE id = $1`,
    [
      job.id,
      t.status ?? job.status,
      t.next?.nominalAt ?? null,
      t.next?.dueAt ?? null,
      t.next?.final ?? false,
      t.pending?.slotAt ?? null,
      t.pending?.coalesced ?? 0,
      t.pending?.final ?? false,
      t.fire?.slotAt ?? null,
      t.fire ? 1 : 0,
    ],
  );
  return run;
}
