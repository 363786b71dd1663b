import type { NewRun } from '../domain/new-run.js';
import type { DecideFn, SessionRun, SlotTransition } from '../domain/slot-transition.js';
import type { CronJob, JobStatus, Page, Run, SlotRecord } from '../domain/types.js';

export type NewJob = Omit<
  CronJob,
  | 'status'
  | 'pendingSlotAt'
  | 'pendingFinal'
  | 'pendingCoalesced'
  | 'lastSlotAt'
  | 'fireCount'
  | 'triggerId'
  | 'renewals'
  | 'renewedAt'
  | 'renewedBy'
  | 'name'
  | 'bufferedSlots'
> & { triggerId?: string | null; name?: string | null };

export interface AdvanceResult {
  jobId: string;
  /** The run created for a fired slot, if any. */
  run: Run | null;
  transition: SlotTransition;
}

/** Which jobs a listing across sessions shows (GET /v1/jobs, the Schedules page); undefined: any. */
export interface JobFilter {
  sessionId?: string | undefined;
  /** The job of this scheduled trigger. */
  triggerId?: string | undefined;
  /**
   * true: jobs that fire as things stand (active, and a scheduled trigger's job only while its trigger is
   * enabled); false: the others (paused, missed, or of a disabled trigger).
   */
  enabled?: boolean | undefined;
  /** Only jobs that expire before this time; jobs that never expire are left out. */
  expiringBefore?: number | undefined;
  /** true: only scheduled triggers' jobs; false: only sessions' own jobs. */
  ofTrigger?: boolean | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** A slot as a listing of recent outcomes shows it: with the plan its run proposed, if any. */
export interface RecentSlot extends SlotRecord {
  planId: string | null;
}

/** Cron jobs and their slots; a fired slot's run is created in the transaction that advances the job. */
export interface JobStore {
  /**
   * Inserts the job unless its session already has `maxPerSession` jobs (JobLimitError), is closed, or holds
   * a job of the same name (ConflictError naming it).
   */
  createJob(job: NewJob, maxPerSession: number): Promise<CronJob>;
  /**
   * Another expiry period for a recurring job: `expiresAt` from now; its next (and pending) slot is final
   * again only if it falls at or after the new expiry. Null when the job is gone.
   */
  renewJob(id: string, expiresAt: number, by: string, now: number): Promise<CronJob | null>;
  /** The job a scheduled trigger fires through. */
  jobOfTrigger(triggerId: string): Promise<CronJob | null>;
  /**
   * A job takes a new definition (expression, zone, prompt, options, recurring, expiry) and the next slot
   * planned for it; its name and history (slots, fire count) stay. A scheduled trigger's job follows its
   * trigger this way; a session's job is changed so by PATCH /v1/jobs/:id.
   */
  redefineJob(job: NewJob, status: JobStatus): Promise<CronJob | null>;
  getJob(id: string): Promise<CronJob | null>;
  listJobs(sessionId: string): Promise<CronJob[]>;
  /** A page of jobs across sessions, oldest first by (created_at, id); InvalidCursorError for a bad cursor. */
  listJobPage(filter: JobFilter): Promise<Page<CronJob>>;
  countJobs(): Promise<number>;
  deleteJob(id: string): Promise<boolean>;
  /** Pause, resume (with a freshly computed next slot) or otherwise reschedule a job. */
  updateJobSchedule(
    id: string,
    status: JobStatus,
    next: { nominalAt: number; dueAt: number; final: boolean } | null,
  ): Promise<CronJob | null>;

  // ---- the scheduler pass
  /** Ids of active jobs whose due time is at or before `now`, earliest first. */
  listDueJobIds(now: number, limit: number): Promise<string[]>;
  /** Ids of jobs holding a pending slot whose session has no active run, oldest pending slot first. */
  listReadyPendingJobIds(limit: number): Promise<string[]>;
  /** Earliest due time of any active job, or null. */
  earliestDueAt(): Promise<number | null>;
  /**
   * For each job id: in one transaction, re-read the job and whether its session is busy, call `decide`,
   * and apply the transition. Jobs that vanished or for which `decide` returns null are skipped.
   */
  advanceJobs(jobIds: string[], now: number, decide: DecideFn): Promise<AdvanceResult[]>;
  /** A person runs a job now (POST /v1/jobs/:id/run). A missed one-shot fires its slot and is deleted. */
  runJobNow(jobId: string, run: NewRun): Promise<Run | null>;
  listSlots(jobId: string): Promise<SlotRecord[]>;
  /** The latest `perJob` slots of each job, newest first, keyed by job id (a job without slots is absent). */
  recentSlots(jobIds: readonly string[], perJob: number): Promise<Map<string, RecentSlot[]>>;
  /**
   * Backfill (POST /v1/jobs/:id/backfill): in one transaction, offers the job each slot of `slots` (oldest
   * first) as if it came due now. A slot that already has a run or a recorded outcome (other than `missed`) is
   * left alone and listed in `already`, as is one the schedule still holds (`leftToSchedule`); for the others `decide` is called with the job as the slots before it
   * left it and the session's active runs (a run fired here counts), and its transition applied. Null when
   * the job is gone.
   */
  backfillJob(
    jobId: string,
    slots: number[],
    now: number,
    decide: BackfillDecideFn,
  ): Promise<BackfillResult | null>;
}

/** Pure and synchronous, as DecideFn: what one backfilled slot does to the job. */
export type BackfillDecideFn = (
  job: CronJob,
  sessionRuns: readonly SessionRun[],
  slotAt: number,
) => SlotTransition | null;

export interface BackfillResult {
  /** Slots that had a run or an outcome already: not offered again. */
  already: number[];
  /** What each offered slot did, in order; `run` when it fired one. */
  results: AdvanceResult[];
  /** The job afterwards (null when a transition removed it). */
  job: CronJob | null;
}
