import type { CronJob, JobStatus, RunSource } from './types.js';

/**
 * Everything the scheduler decided about one job at one moment, applied by the store in one transaction.
 * The scheduler computes it from a fresh copy of the job read inside that transaction (see `advanceJobs`).
 */
export interface SlotTransition {
  /** Slots superseded by a newer one (idle-only coalescing); recorded now, linked to the run that fires. */
  coalesce: number[];
  /** Slots that passed while the daemon was down, outside the catch-up window. */
  missed: { firstAt: number; lastAt: number; slots: number } | null;
  /** Fire this slot now: one run keyed by (job, slot). `dueAt` is its jittered due time when it fires on
   *  time (null when it waited for an idle session), for lateness figures. */
  fire: { slotAt: number; runId: string; dueAt: number | null } | null;
  /**
   * A slot that would have fired, stopped by a spend cap (docs/spend-caps.md): recorded `capped`, no run; the
   * job moves on to its next slot. Set by the scheduler's loop in place of `fire`, never with it.
   */
  capped?: { slotAt: number } | undefined;
  /** The slot that waits for the session to become idle (null: nothing waits). */
  pending: { slotAt: number; final: boolean; coalesced: number } | null;
  /** The next slot to act on (null: none is left). */
  next: { nominalAt: number; dueAt: number; final: boolean } | null;
  /** Slots dropped by the overlap policy (`skip`, or past `buffer_all`'s limit): recorded `skipped`. */
  skip?: number[];
  /** Slots that wait their turn under `buffer_all`: recorded `buffered`, their row becoming `fired` later. */
  buffer?: number[];
  /** `buffer_all`: what waits behind `pending` afterwards, oldest first (absent: nothing). */
  queue?: number[];
  /** `cancel_other`: the job's own runs in the session to cancel; the slots they were running recorded `canceled`. */
  cancel?: { runId: string; slotAt: number | null }[];
  /** Set when a one-shot was missed while the daemon was down: it waits for a person. */
  status?: JobStatus;
  /** Delete the job after applying (a one-shot fired, or a recurring job's final fire). */
  remove: boolean;
}

/** An active run of the job's session, as the overlap policy `cancel_other` needs to see it. */
export interface SessionRun {
  id: string;
  jobId: string | null;
  source: RunSource;
  slotAt: number | null;
}

/**
 * Called inside the store's transaction with the freshest job row, whether its session is busy and the
 * session's active runs (the store passes them; `sessionBusy` is `sessionRuns.length > 0`); must be pure and
 * synchronous.
 */
export type DecideFn = (
  job: CronJob,
  sessionBusy: boolean,
  sessionRuns: readonly SessionRun[],
) => SlotTransition | null;
