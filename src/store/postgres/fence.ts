import { type Fence, FencedError, fenceCheck } from '../leases.js';
import { POSTGRES } from '../sql/dialect.js';
import type { PgDb, Queries } from './db.js';

/**
 * Throws FencedError unless `fence` (when given) still holds its run; called inside the write's transaction
 * (fenceCheck holds the run's row to its end).
 */
export async function checkFence(q: Queries, fence: Fence | undefined): Promise<void> {
  if (!fence) return;
  const { text, values } = fenceCheck(POSTGRES, fence);
  if ((await q.value(text, values)) === undefined) throw new FencedError(fence);
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
