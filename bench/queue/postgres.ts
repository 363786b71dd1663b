import { migrateStore } from '../../src/store/migrate-store.js';
import { withClient } from '../../tests/support/postgres.js';
import { analyzeAndMeasure } from '../shared/store-target.js';
import { CREATE_EXPIRY_INDEX } from './fixtures.js';

// drydock on PostgreSQL (--store postgres or both) starts from the same store as on SQLite: the seeded file,
// copied into the bench's fresh database by `drydock migrate-store`'s code (src/store/migrate-store.ts: the
// PostgreSQL migrations, then every table in one transaction, row counts checked on both sides). So both
// stores hold the same sessions, tokens, plans, runs and decisions, with the same ids, and the pools of plans
// to approve serve both. The what-if index is an index, not a row: made again on the copy when asked for.

export interface SeedCopy {
  /** Rows copied, all tables. */
  rows: number;
  /** migrate-store, and the what-if index if any. */
  copyMs: number;
  /** pg_database_size after ANALYZE. */
  databaseBytes: number;
}

/** Copies the seeded SQLite file into the empty PostgreSQL database at `url`, then ANALYZE. */
export async function copySeed(file: string, url: string, expiryIndex: boolean): Promise<SeedCopy> {
  const t0 = performance.now();
  const copied = await migrateStore({ from: file, to: url, now: Date.now() });
  if (expiryIndex) await withClient(url, (c) => c.query(CREATE_EXPIRY_INDEX));
  const copyMs = performance.now() - t0;
  const databaseBytes = await analyzeAndMeasure(url);
  return { rows: copied.tables.reduce((n, t) => n + t.target, 0), copyMs, databaseBytes };
}
