import { type Fence, FencedError, fenceCheck } from '../leases.js';
import { SQLITE } from '../sql/dialect.js';
import type { SqliteDb } from './db.js';

/** Throws FencedError unless `fence` (when given) still holds its run; called inside the write's transaction. */
export function checkFence(db: SqliteDb, fence: Fence | undefined): void {
  if (!fence) return;
  const { text, values } = fenceCheck(SQLITE, fence);
  if (db.pluck(text).get(...values) === undefined) throw new FencedError(fence);
}

/**
 * `fn` as one write transaction that first checks `fence` (see Fence): SQLite writers take turns on the file,
 * so no takeover falls between the check and the write. Without a fence, `fn` as it is.
 */
export function fencedWrite<T>(db: SqliteDb, fence: Fence | undefined, fn: () => T): T {
  if (!fence) return fn();
  return db.write(() => {
    checkFence(db, fence);
    return fn();
  });
}
