import type { Run, RunEvent } from '../domain/types.js';

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
