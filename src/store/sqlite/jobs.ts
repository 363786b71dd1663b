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
import { page } from '../paging.js';
import { type JobRow, recentSlotsByJob, type SlotRow, toJob, toRun, toSlot } from '../rows.js';
import * as sql from '../sql/jobs.js';
import { ConflictError, duplicateJobName as duplicateName, JobLimitError, NotFoundError } from '../store.js';
import type { SqliteDb } from './db.js';
import { insertRun } from './runs.js';

/** Jobs and their slots. A fired slot's run is written by the transaction that advances the job. */
export class SqliteJobs implements JobStore {
  constructor(private readonly db: SqliteDb) {}

  async createJob(j: NewJob, maxPerSession: number): Promise<CronJob> {
    return this.db.write(() => {
      const session = this.db.sql('SELECT status FROM sessions WHERE id = ?').get(j.sessionId) as
        | { status: string }
        | undefined;
      if (!session) throw new NotFoundError(`session ${j.sessionId} not found`);
      if (session.status !== 'open') throw new ConflictError(`session ${j.sessionId} is closed`);
      const { n } = this.db.sql(sql.COUNT_JOBS_OF_SESSION).get(j.sessionId) as { n: number };
      if (n >= maxPerSession) throw new JobLimitError(maxPerSession);
      const same = j.name
        ? (this.db.sql(sql.SELECT_JOB_NAMED).get(j.sessionId, j.name) as { id: string } | undefined)
        : undefined;
      if (same) throw duplicateName(j, same.id);
      return toJob(insertJob(this.db, j, 'active'));
    });
  }

  async renewJob(id: string, expiresAt: number, by: string, now: number): Promise<CronJob | null> {
    const { text, values } = sql.renewJobStatement(id, expiresAt, by, now);
    this.db.sql(text).run(...values);
    return this.getJob(id);
  }

  async jobOfTrigger(triggerId: string): Promise<CronJob | null> {
    const row = this.db.sql(sql.SELECT_JOB_OF_TRIGGER).get(triggerId) as JobRow | undefined;
    return row ? toJob(row) : null;
  }

  async redefineJob(j: NewJob, status: JobStatus): Promise<CronJob | null> {
    this.db.write(() => {
      for (const { text, values } of [
        sql.dropBufferedStatement(j.id, j.createdAt),
        sql.redefineJobStatement(j, status),
      ]) {
        this.db.sql(text).run(...values);
      }
    });
    return this.getJob(j.id);
  }

  async getJob(id: string): Promise<CronJob | null> {
    const row = this.db.sql(sql.SELECT_JOB).get(id) as JobRow | undefined;
    return row ? toJob(row) : null;
  }

  async listJobs(sessionId: string): Promise<CronJob[]> {
    return (this.db.sql(sql.SELECT_JOBS_OF_SESSION).all(sessionId) as JobRow[]).map(toJob);
  }

  async listJobPage(f: JobFilter): Promise<Page<CronJob>> {
    const { text, values } = sql.listJobsStatement(f);
    return page((this.db.sql(text).all(...values) as JobRow[]).map(toJob), f.limit);
  }

  async countJobs(): Promise<number> {
    return (this.db.sql(sql.COUNT_JOBS).get() as { n: number }).n;
  }

  async deleteJob(id: string): Promise<boolean> {
    return this.db.sql(sql.DELETE_JOB).run(id).changes === 1;
  }

  async updateJobSchedule(
    id: string,
    status: JobStatus,
    next: { nominalAt: number; dueAt: number; final: boolean } | null,
  ): Promise<CronJob | null> {
    const { text, values } = sql.updateJobScheduleStatement(id, status, next);
    const row = this.db.sql(text).get(...values) as JobRow | undefined;
    return row ? toJob(row) : null;
  }

  async listDueJobIds(now: number, limit: number): Promise<string[]> {
    const { text, values } = sql.dueJobIdsStatement(now, limit);
    return this.db.pluck(text).all(...values) as string[];
  }

  async listReadyPendingJobIds(limit: number): Promise<string[]> {
    return this.db.pluck(sql.READY_PENDING_JOB_IDS).all(limit) as string[];
  }

  async earliestDueAt(): Promise<number | null> {
    const row = this.db.sql(sql.EARLIEST_DUE_AT).get() as { t: number } | undefined;
    return row?.t ?? null;
  }

  async advanceJobs(jobIds: string[], now: number, decide: DecideFn): Promise<AdvanceResult[]> {
    const getJob = this.db.sql(sql.SELECT_JOB);
    return this.db.write(() => {
      const results: AdvanceResult[] = [];
      for (const id of jobIds) {
        const row = getJob.get(id) as JobRow | undefined;
        if (!row) continue;
        const job = toJob(row);
        const runs = sessionRuns(this.db, job.sessionId);
        const t = decide(job, runs.length > 0, runs);
        if (!t) continue;
        results.push({ jobId: id, run: applyTransition(this.db, job, t, now), transition: t });
      }
      return results;
    });
  }

  async runJobNow(jobId: string, r: NewRun): Promise<Run | null> {
    return this.db.write(() => {
      const row = this.db.sql(sql.SELECT_JOB).get(jobId) as JobRow | undefined;
      if (!row) return null;
      const job = toJob(row);
      if (job.status === 'missed' && job.nextNominalAt !== null) {
        // A missed one-shot: a person fires its slot now, exactly once, and the job is done.
        const run = insertRun(this.db, { ...r, jobId, slotAt: job.nextNominalAt, source: 'manual' }, 0);
        const slot = sql.firedMissedSlotStatement(jobId, job.nextNominalAt, run.id, r.createdAt);
        this.db.sql(slot.text).run(...slot.values);
        this.db.sql(sql.DELETE_JOB).run(jobId);
        return run;
      }
      return insertRun(this.db, { ...r, jobId, slotAt: null, source: 'manual' }, 0);
    });
  }

  async listSlots(jobId: string): Promise<SlotRecord[]> {
    return (this.db.sql(sql.SELECT_SLOTS).all(jobId) as SlotRow[]).map(toSlot);
  }

  async recentSlots(jobIds: readonly string[], perJob: number): Promise<Map<string, RecentSlot[]>> {
    if (!jobIds.length) return new Map();
    const { text, values } = sql.recentSlotsStatement(jobIds, perJob);
    return recentSlotsByJob(this.db.sql(text).all(...values) as (SlotRow & { plan_id: string | null })[]);
  }

  async backfillJob(
    jobId: string,
    slots: number[],
    now: number,
    decide: BackfillDecideFn,
  ): Promise<BackfillResult | null> {
    const getJob = this.db.sql(sql.SELECT_JOB);
    const handled = this.db.sql(sql.SLOT_HANDLED);
    return this.db.write(() => {
      let row = getJob.get(jobId) as JobRow | undefined;
      if (!row) return null;
      const already: number[] = [];
      const results: AdvanceResult[] = [];
      for (const slotAt of slots) {
        if (!row) break;
        const job = toJob(row);
        if (sql.leftToSchedule(job, slotAt) || handled.get(jobId, slotAt, jobId, slotAt) !== undefined) {
          already.push(slotAt);
          continue;
        }
        const t = decide(job, sessionRuns(this.db, job.sessionId), slotAt);
        if (!t) continue;
        results.push({ jobId, run: applyTransition(this.db, job, t, now), transition: t });
        row = getJob.get(jobId) as JobRow | undefined;
      }
      return { already, results, job: row ? toJob(row) : null };
    });
  }
}

/** Inserts a job, returning its row; also inside createScheduleTrigger's transaction. */
export function insertJob(db: SqliteDb, j: NewJob, status: JobStatus): JobRow {
  const { text, values } = sql.insertJobStatement(j, status);
  return db.sql(text).get(...values) as JobRow;
}

/** Runs inside advanceJobs' transaction: the steps of sql/jobs.ts, each in turn. */
function applyTransition(db: SqliteDb, job: CronJob, t: SlotTransition, now: number): Run | null {
  const steps = sql.transitionSteps(job, t, now);
  let result: unknown;
  for (;;) {
    const next = steps.next(result);
    if (next.done) return next.value ? toRun(next.value) : null;
    const { statement, want } = next.value;
    const stmt = db.sql(statement.text);
    result = want === 'row' ? stmt.get(...statement.values) : stmt.run(...statement.values).changes;
  }
}

/** The session's active runs (a run fired earlier in the same transaction among them). */
function sessionRuns(db: SqliteDb, sessionId: string): SessionRun[] {
  return (db.sql(sql.SESSION_RUNS).all(sessionId) as sql.SessionRunRow[]).map(sql.toSessionRun);
}
