import { type Fence, FencedError } from '../leases.js';
import type { PgDb, Queries } from './db.js';

/**
 * Throws FencedError unless `fence` (when given) still holds its run; called inside the write's transaction.
 * FOR SHARE holds the run's row to the end of the transaction: a takeover (an UPDATE of the claim) waits for
 * the write to commit, or the check, waiting for the takeover, reads the row it left and fails.
 */
export async function checkFence(q: Queries, fence: Fence | undefined): Promise<void> {
  if (!fence) return;
  const held = await q.value(
    `SELECT 1 FROM runs WHERE id = $1 AND status = 'running' AND claimed_by = $2 AND claim_epoch = $3
     FOR SHARE`,
    [fence.runId, fence.replica, fence.epoch],
  );
  if (held === undefined) throw new FencedError(fence);
}

/** `fn` in one transaction that first checks `fence` (see Fence); without a fence, `fn` on the pool. */
export function fencedWrite<T>(
  db: PgDb,
  fence: Fence | undefined,
  fn: (q: Queries) => Promise<T>,
): Promise<T> {
  if (!fence) return fn(db);
  return db.tx(async (q) => {
    await checkFence(q, fence);
    return fn(q);
  });
}
