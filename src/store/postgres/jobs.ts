import type { NewRun } from '../../domain/new-run.js';
import type { DecideFn, SessionRun, SlotTransition } from '../../domain/slot-transition.js';
import type { CronJob, JobStatus, Page, Run, SlotRecord } from '../../domain/types.js';
import type {
  AdvanceResult,
  BackfillDecideFn,
  BackfillResult,
  JobFilter,
  JobStore,
  NewJob,
  RecentSlot,
} from '../jobs.js';
import { ACTIVE_STATUSES } from '../leases.js';
import { page } from '../paging.js';
import { type JobRow, recentSlotsByJob, type SlotRow, toJob, toRun, toSlot } from '../rows.js';
import * as sql from '../sql/jobs.js';
import { ConflictError, duplicateJobName as duplicateName, JobLimitError, NotFoundError } from '../store.js';
import type { PgDb, Queries } from './db.js';
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
      const n = (await q.value<number>(sql.COUNT_JOBS_OF_SESSION, [j.sessionId])) ?? 0;
      if (n >= maxPerSession) throw new JobLimitError(maxPerSession);
      // Under the session's lock too: two creations of one name take turns, the second finds the first.
      const same = j.name ? await q.value<string>(sql.SELECT_JOB_NAMED, [j.sessionId, j.name]) : null;
      if (same) throw duplicateName(j, same);
      return toJob(await insertJob(q, j, 'active'));
    });
  }

  async renewJob(id: string, expiresAt: number, by: string, now: number): Promise<CronJob | null> {
    const { text, values } = sql.renewJobStatement(id, expiresAt, by, now);
    await this.db.exec(text, values);
    return this.getJob(id);
  }

  async jobOfTrigger(triggerId: string): Promise<CronJob | null> {
    const row = await this.db.row<JobRow>(sql.SELECT_JOB_OF_TRIGGER, [triggerId]);
    return row ? toJob(row) : null;
  }

  async redefineJob(j: NewJob, status: JobStatus): Promise<CronJob | null> {
    await this.db.tx(async (q) => {
      for (const { text, values } of [
        sql.dropBufferedStatement(j.id, j.createdAt),
        sql.redefineJobStatement(j, status),
      ]) {
        await q.exec(text, values);
      }
    });
    return this.getJob(j.id);
  }

  async getJob(id: string): Promise<CronJob | null> {
    const row = await this.db.row<JobRow>(sql.SELECT_JOB, [id]);
    return row ? toJob(row) : null;
  }

  async listJobs(sessionId: string): Promise<CronJob[]> {
    return (await this.db.rows<JobRow>(sql.SELECT_JOBS_OF_SESSION, [sessionId])).map(toJob);
  }

  async listJobPage(f: JobFilter): Promise<Page<CronJob>> {
    const { text, values } = sql.listJobsStatement(f);
    return page((await this.db.rows<JobRow>(text, values)).map(toJob), f.limit);
  }

  async countJobs(): Promise<number> {
    return (await this.db.value<number>(sql.COUNT_JOBS)) ?? 0;
  }

  async deleteJob(id: string): Promise<boolean> {
    return (await this.db.exec(sql.DELETE_JOB, [id])) === 1;
  }

  async updateJobSchedule(
    id: string,
    status: JobStatus,
    next: { nominalAt: number; dueAt: number; final: boolean } | null,
  ): Promise<CronJob | null> {
    const { text, values } = sql.updateJobScheduleStatement(id, status, next);
    const row = await this.db.row<JobRow>(text, values);
    return row ? toJob(row) : null;
  }

  // ---- the scheduler pass

  async listDueJobIds(now: number, limit: number): Promise<string[]> {
    const { text, values } = sql.dueJobIdsStatement(now, limit);
    return (await this.db.rows<{ id: string }>(text, values)).map((r) => r.id);
  }

  async listReadyPendingJobIds(limit: number): Promise<string[]> {
    return (await this.db.rows<{ id: string }>(sql.READY_PENDING_JOB_IDS, [limit])).map((r) => r.id);
  }

  async earliestDueAt(): Promise<number | null> {
    return (await this.db.value<number>(sql.EARLIEST_DUE_AT)) ?? null;
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
      // 3. Their active runs, read after the session locks (a new snapshot under READ COMMITTED); a run fired
      //    below joins its session's list for the jobs after it, as in one SQLite transaction.
      const active = await activeRuns(q, sessionIds);
      const repeated = new Set(jobIds.filter((id, i) => jobIds.indexOf(id) !== i));
      const results: AdvanceResult[] = [];
      for (const id of jobIds) {
        const job = jobs.get(id);
        if (!job) continue;
        const runs = active.get(job.sessionId) ?? [];
        const t = decide(job, runs.length > 0, runs);
        if (!t) continue;
        const run = await applyTransition(q, job, t, now);
        if (run) active.set(job.sessionId, [...runs, run]);
        results.push({ jobId: id, run, transition: t });
        if (repeated.has(id)) {
          // An id given twice is decided again on the job as this transition left it.
          const after = t.remove ? undefined : await q.row<JobRow>(sql.SELECT_JOB, [id]);
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
        const slot = sql.firedMissedSlotStatement(jobId, job.nextNominalAt, run.id, r.createdAt);
        await q.exec(slot.text, slot.values);
        await q.exec(sql.DELETE_JOB, [jobId]);
        return run;
      }
      return insertRun(q, { ...r, jobId, slotAt: null, source: 'manual' }, 0);
    });
  }

  async listSlots(jobId: string): Promise<SlotRecord[]> {
    return (await this.db.rows<SlotRow>(sql.SELECT_SLOTS, [jobId])).map(toSlot);
  }

  async recentSlots(jobIds: readonly string[], perJob: number): Promise<Map<string, RecentSlot[]>> {
    if (!jobIds.length) return new Map();
    const { text, values } = sql.recentSlotsStatement(jobIds, perJob);
    return recentSlotsByJob(await this.db.rows<SlotRow & { plan_id: string | null }>(text, values));
  }

  async backfillJob(
    jobId: string,
    slots: number[],
    now: number,
    decide: BackfillDecideFn,
  ): Promise<BackfillResult | null> {
    return this.db.tx(async (q) => {
      // The job's row, then its session's, as advanceJobs takes them (waiting here, not skipping: a person
      // asked for this), so a scheduler pass on another replica and this backfill take turns on the job.
      let row = await q.row<JobRow>('SELECT * FROM cron_jobs WHERE id = $1 FOR UPDATE', [jobId]);
      if (!row) return null;
      await q.rows('SELECT id FROM sessions WHERE id = $1 FOR NO KEY UPDATE', [row.session_id]);
      const already: number[] = [];
      const results: AdvanceResult[] = [];
      for (const slotAt of slots) {
        if (!row) break;
        const job = toJob(row);
        if (
          sql.leftToSchedule(job, slotAt) ||
          (await q.rows(sql.SLOT_HANDLED, [jobId, slotAt, jobId, slotAt])).length
        ) {
          already.push(slotAt);
          continue;
        }
        const runs = (await activeRuns(q, [job.sessionId])).get(job.sessionId) ?? [];
        const t = decide(job, runs, slotAt);
        if (!t) continue;
        results.push({ jobId, run: await applyTransition(q, job, t, now), transition: t });
        row = await q.row<JobRow>(sql.SELECT_JOB, [jobId]);
      }
      return { already, results, job: row ? toJob(row) : null };
    });
  }
}

/** The active runs of these sessions, by session (oldest first). */
async function activeRuns(q: Queries, sessionIds: string[]): Promise<Map<string, SessionRun[]>> {
  const rows = await q.rows<sql.SessionRunRow & { session_id: string }>(
    `SELECT session_id, id, job_id, source, slot_at FROM runs
     WHERE session_id = ANY($1::text[]) AND status IN (${ACTIVE_STATUSES}) ORDER BY created_at, id`,
    [sessionIds],
  );
  const bySession = new Map<string, SessionRun[]>();
  for (const r of rows)
    bySession.set(r.session_id, [...(bySession.get(r.session_id) ?? []), sql.toSessionRun(r)]);
  return bySession;
}

/** Inserts a job, returning its row; also inside createScheduleTrigger's transaction. */
export async function insertJob(q: Queries, j: NewJob, status: JobStatus): Promise<JobRow> {
  const { text, values } = sql.insertJobStatement(j, status);
  return (await q.row<JobRow>(text, values))!;
}

/** Applies one SlotTransition, holding the job's row in advanceJobs' transaction: the steps of sql/jobs.ts. */
async function applyTransition(
  q: Queries,
  job: CronJob,
  t: SlotTransition,
  now: number,
): Promise<Run | null> {
  const steps = sql.transitionSteps(job, t, now);
  let result: unknown;
  for (;;) {
    const next = steps.next(result);
    if (next.done) return next.value ? toRun(next.value) : null;
    const { statement, want } = next.value;
    result =
      want === 'row'
        ? await q.row(statement.text, statement.values)
        : await q.exec(statement.text, statement.values);
  }
}
