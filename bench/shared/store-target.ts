import { openPostgresStore } from '../../src/store/postgres/index.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { withClient } from '../../tests/support/postgres.js';

// Where a benchmark's drydock keeps its state for one pass, and opening that store in a bench child the way a
// seeder, a bare-store loop or a read-back needs it (the PostgreSQL database itself is made by
// bench-database.ts). Used by the scheduler and queue benches.

/** The SQLite file in a data directory, or a PostgreSQL database. */
export type StoreTarget =
  | { kind: 'sqlite'; file: string }
  | { kind: 'postgres' /** The bench's own fresh database. */; url: string };

/** The store of a pass; PostgreSQL applies its migrations on open unless `migrate` is false. */
export async function openTarget(target: StoreTarget, migrate: boolean): Promise<Store> {
  if (target.kind === 'sqlite') return new SqliteStore({ file: target.file, migrate });
  return openPostgresStore({ url: target.url, migrate });
}

/**
 * After loading a PostgreSQL database: ANALYZE (a database that has been running has been analysed by autovacuum; one
 * loaded a minute ago may not have been yet, and the planner would guess), then the database's size.
 */
export async function analyzeAndMeasure(url: string): Promise<number> {
  return withClient(url, async (c) => {
    await c.query('ANALYZE');
    const r = await c.query<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes');
    return Number(r.rows[0]!.bytes);
  });
}
