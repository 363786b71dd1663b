import {
  ACTIVE_RUN_STATUSES,
  type Run,
  type RunEvent,
  type RunStatus,
  type RunWait,
} from '../domain/types.js';
import { type Dialect, flag, marks, type Statement } from './sql/dialect.js';

// Claims and leases on running runs, one module for both backends: what a claim is (RunClaim, Fence), the
// rules written as SQL (a claim that holds, a run that may be recovered, a session that is busy) and the
// statements that claim a run, renew leases, take lapsed runs over and check a fence. The backends only run
// these statements, each in its own driver's transaction (docs/replicas.md;
// src/runs/queue.ts holds and renews the claims).

/** Which replica executes a run, and until when it holds it unless it renews the lease (ms). */
export interface RunClaim {
  replica: string;
  leaseUntil: number;
}

/**
 * A writer's proof that it still executes a run: the claim `claimRun` gave it. The epoch grows at every
 * claim of the run, so a process that lost the run (its lease lapsed and another took it over, or a restart
 * of the same replica took it back) holds an epoch no longer current, even under the same replica name.
 *
 * Every write made on behalf of a claimed run (its events, messages, call journal, questions, approvals, plan,
 * status) may carry its fence: the store then applies it only if, in the same transaction, the run is still
 * running with that claim; else it writes nothing and throws FencedError. The fence is the writer's claim on
 * its own run: it is checked whichever rows the write touches.
 */
export interface Fence {
  runId: string;
  replica: string;
  epoch: number;
}

/** A fenced write found that its writer no longer holds the run: nothing was written. */
export class FencedError extends Error {
  override name = 'FencedError';
  constructor(readonly fence: Fence) {
    super(`replica ${fence.replica} no longer holds run ${fence.runId} (claim ${fence.epoch})`);
  }
}

/**
 * An event written in the transaction that moves a run, when the move applies: run_finished when it ends the
 * run (a reader who sees the run ended finds its receipt in the log), run_interrupted when it goes back to the
 * queue (no event of its next holder comes before it).
 */
export interface Receipt {
  /** When it is written (ms). */
  at: number;
  /** The event, made from the run as the transaction left it. */
  event(run: Run): { type: string; data: Record<string, unknown> };
  /** Called with the stored event once the transaction committed. */
  stored(event: RunEvent): void;
}

/** The statuses of a run that is not finished, as an SQL list: `status IN (${ACTIVE_STATUSES})`. */
export const ACTIVE_STATUSES = ACTIVE_RUN_STATUSES.map((s) => `'${s}'`).join(', ');

/** A run that `fence` still holds: running, with that claim. Values: replica, epoch. */
const HOLDS = "status = 'running' AND claimed_by = ? AND claim_epoch = ?";

/**
 * A running run that may be taken over at `now`: no claim, a lease that ran out before `now`, or claimed by
 * `own` (this replica restarted: the runs it held before are its to take back). Values: now, own.
 */
const RECOVERABLE =
  "status = 'running' AND (claimed_by IS NULL OR lease_until IS NULL OR lease_until < ? OR claimed_by = ?)";

/**
 * Another run of run `r`'s session is running or awaiting input (one run at a time per session, across every
 * replica). Written "active but not queued": SQLite uses the partial index runs_active_by_session only when
 * the query repeats its condition (status IN the active statuses) word for word; PostgreSQL proves the
 * index's condition from it as well.
 */
export function sessionBusy(r: string): string {
  return `EXISTS (SELECT 1 FROM runs o WHERE o.session_id = ${r}.session_id AND o.id <> ${r}.id
                    AND o.status IN (${ACTIVE_STATUSES}) AND o.status <> 'queued')`;
}

/** Throws FencedError when `fence` is one of another run than `runId` (a claim proves nothing for another run). */
export function checkFenceOf(runId: string, fence: Fence | undefined): void {
  if (fence && fence.runId !== runId) throw new FencedError(fence);
}

/**
 * Selects a row when `fence` still holds its run, inside the write's transaction (nothing: throw FencedError).
 * On PostgreSQL FOR SHARE holds the run's row to the end of the transaction: a takeover (an UPDATE of the
 * claim) waits for the write to commit, or the check, waiting for the takeover, reads the row it left and
 * fails. On SQLite writers take turns on the file, so no takeover falls between the check and the write.
 */
export function fenceCheck(d: Dialect, fence: Fence): Statement {
  return {
    text: `SELECT 1 FROM runs WHERE id = ? AND ${HOLDS}${d.lock('share')}`,
    values: [fence.runId, fence.replica, fence.epoch],
  };
}

/**
 * The claim of run `id` (see RunStore.claimRun): from `from` to running with the claim and its lease,
 * started_at set if it has none, a new claim epoch, the wait ended; unless its session is busy. Returns
 * claim_epoch when it applied. On PostgreSQL `lock` runs first, in the same transaction.
 *
 * LOUD: on PostgreSQL, claims of one session take turns on the session's row (FOR NO KEY UPDATE, as
 * advanceJobs and closeSession lock it; it does not hold up the inserts of runs that refer to it). Under READ
 * COMMITTED the UPDATE begins after the lock is granted, so it sees every claim of the session committed
 * before: two replicas starting two runs of one session cannot both find the session idle. On SQLite the
 * UPDATE is one statement, so one step: the check of the session's other runs and the move see one state.
 */
export function claimStatements(
  d: Dialect,
  id: string,
  from: 'queued' | 'awaiting_input',
  claim: RunClaim,
  now: number,
): { lock: Statement | null; claim: Statement } {
  return {
    lock:
      d.name === 'postgres'
        ? {
            text: 'SELECT s.id FROM sessions s JOIN runs r ON r.session_id = s.id WHERE r.id = ? FOR NO KEY UPDATE OF s',
            values: [id],
          }
        : null,
    claim: {
      text: `UPDATE runs SET status = 'running', claimed_by = ?, lease_until = ?, started_at = COALESCE(started_at, ?),
           claim_epoch = claim_epoch + 1, waiting_on = NULL, waiting_until = NULL
         WHERE id = ? AND status = ? AND (waiting_on IS NULL OR waiting_until <= ?) AND NOT ${sessionBusy('runs')}
         RETURNING claim_epoch`,
      values: [claim.replica, claim.leaseUntil, now, id, from, now],
    },
  };
}

/** The fence a claim statement gave (its claim_epoch), or null when it did not apply. */
export function claimedFence(id: string, claim: RunClaim, epoch: number | undefined): Fence | null {
  return epoch === undefined ? null : { runId: id, replica: claim.replica, epoch };
}

/** A renewed lease, as the renewal statements return it. */
export interface Renewed {
  id: string;
  replica: string;
  epoch: number;
}

/**
 * Moves the lease of each claim in `held` that still holds to `leaseUntil`; each statement returns the
 * claims it renewed (Renewed rows). One statement for all on PostgreSQL; one per claim on SQLite (run them in
 * one write transaction).
 */
export function renewStatements(d: Dialect, held: readonly Fence[], leaseUntil: number): Statement[] {
  if (!held.length) return [];
  if (d.name === 'postgres')
    return [
      {
        text: `UPDATE runs SET lease_until = ?
           FROM unnest(CAST(? AS text[]), CAST(? AS text[]), CAST(? AS int[])) AS h(id, replica, epoch)
           WHERE runs.id = h.id AND runs.status = 'running' AND runs.claimed_by = h.replica
             AND runs.claim_epoch = h.epoch
           RETURNING runs.id, h.replica, h.epoch`,
        values: [leaseUntil, held.map((f) => f.runId), held.map((f) => f.replica), held.map((f) => f.epoch)],
      },
    ];
  return held.map((f) => ({
    text: `UPDATE runs SET lease_until = ? WHERE id = ? AND ${HOLDS}
           RETURNING id, claimed_by AS replica, claim_epoch AS epoch`,
    values: [leaseUntil, f.runId, f.replica, f.epoch],
  }));
}

/** The run ids of `held` whose claim was renewed (in the order of `held`). */
export function renewedRunIds(held: readonly Fence[], renewed: readonly Renewed[]): string[] {
  const key = (r: Renewed) => `${r.epoch} ${r.replica} ${r.id}`;
  const done = new Set(renewed.map(key));
  return held
    .filter((f) => done.has(key({ id: f.runId, replica: f.replica, epoch: f.epoch })))
    .map((f) => f.runId);
}

/** The runs the sweep may take over at `now` (RECOVERABLE), oldest first, at most `limit`. */
export function recoverableStatement(own: string | null, now: number, limit: number): Statement {
  return {
    text: `SELECT * FROM runs WHERE ${RECOVERABLE} ORDER BY created_at, id LIMIT ?`,
    values: [now, own, limit],
  };
}

/**
 * Takes back run `id` if it may still be recovered at `now` (RECOVERABLE, checked again by the UPDATE that
 * moves it: of two replicas releasing at once, the second finds it no longer running) and moves it to `to`,
 * clearing the claim. Returns the run's row when it applied.
 */
export function releaseStatement(
  id: string,
  own: string | null,
  now: number,
  to: 'queued' | 'interrupted',
  fields: { attempt?: number; finishedAt?: number; error?: string | null },
): Statement {
  return {
    text: `UPDATE runs SET status = ?, claimed_by = NULL, lease_until = NULL, finished_at = COALESCE(?, finished_at),
           error = CASE WHEN ? THEN ? ELSE error END, attempt = COALESCE(?, attempt)
         WHERE id = ? AND ${RECOVERABLE}
         RETURNING *`,
    values: [
      to,
      fields.finishedAt ?? null,
      flag(fields.error !== undefined),
      fields.error ?? null,
      fields.attempt ?? null,
      id,
      now,
      own,
    ],
  };
}

/** What a transition writes besides the status (RunStore.transitionRun's fields, the receipt aside). */
export interface TransitionFields {
  /** Kept only if the run has none yet: started_at is the first start. */
  startedAt?: number;
  finishedAt?: number;
  error?: string | null;
  attempt?: number;
  /** Added to the run's active time. */
  activeMs?: number;
  /** Applies only while this claim still holds the run (the queue's own end of a run it executes). */
  fence?: Fence;
  /** To awaiting_input: what the run waits on besides a person. Every other move clears the wait. */
  waitingOn?: RunWait;
}

/**
 * Moves run `id` from one of `from` to `to` (RunStore.transitionRun). started_at is the first start: a resumed
 * or retried run keeps it. A move out of running clears the claim; with a fence, the move applies only while
 * that claim holds the run. Every move ends a wait on the account, unless it starts one. Returns the run's row
 * when it applied: a concurrent transition of the same run finds its status no longer in `from` (or its
 * claim gone) and changes nothing.
 */
export function transitionStatement(
  id: string,
  from: readonly RunStatus[],
  to: RunStatus,
  fields: TransitionFields,
): Statement {
  const { fence } = fields;
  const running = flag(to === 'running');
  return {
    text: `UPDATE runs SET status = ?, started_at = COALESCE(started_at, ?), finished_at = COALESCE(?, finished_at),
           error = CASE WHEN ? THEN ? ELSE error END, attempt = COALESCE(?, attempt), active_ms = active_ms + ?,
           claimed_by = CASE WHEN ? THEN claimed_by END, lease_until = CASE WHEN ? THEN lease_until END,
           waiting_on = ?, waiting_until = ?
         WHERE id = ? AND status IN (${marks(from)})${fence ? ' AND claimed_by = ? AND claim_epoch = ?' : ''}
         RETURNING *`,
    values: [
      to,
      fields.startedAt ?? null,
      fields.finishedAt ?? null,
      flag(fields.error !== undefined),
      fields.error ?? null,
      fields.attempt ?? null,
      Math.max(0, Math.round(fields.activeMs ?? 0)),
      running,
      running,
      fields.waitingOn?.on ?? null,
      fields.waitingOn?.until ?? null,
      id,
      ...from,
      ...(fence ? [fence.replica, fence.epoch] : []),
    ],
  };
}
