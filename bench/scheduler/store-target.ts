import { openPostgresStore } from '../../src/store/postgres/index.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { type FreshDatabase, freshDatabase, withClient } from '../../tests/support/postgres.js';
import type { StoreTarget } from './protocol.js';

// The two stores the benchmark can run drydock on: opening one the way the seeder and the read-back need
// it, and making (then dropping) the PostgreSQL database a pass runs on.
//
// node-postgres: `new Client({ connectionString })`, `connect()`, `query(text)`, `end()`. PostgreSQL:
// CREATE DATABASE and DROP DATABASE run outside a transaction block (a lone query on a client is);
// DROP DATABASE ... WITH (FORCE) (13 and later) ends the sessions still connected to it first.

export const STORE_LABEL = { sqlite: 'SQLite', postgres: 'PostgreSQL' } as const;

/** The store of a pass; PostgreSQL applies its migrations on open unless `migrate` is false. */
export async function openTarget(target: StoreTarget, migrate: boolean): Promise<Store> {
  if (target.kind === 'sqlite') return new SqliteStore({ file: target.file, migrate });
  return openPostgresStore({ url: target.url, migrate });
}

/** A new empty database of a unique name on the server of `maintenanceUrl`. */
export const createBenchDatabase = (maintenanceUrl: string): Promise<FreshDatabase> =>
  freshDatabase({ server: maintenanceUrl, prefix: 'drydock_bench_scheduler' });

/**
 * After seeding PostgreSQL: ANALYZE (a database that has been running has been analysed by autovacuum; one
 * loaded a minute ago may not have been yet, and the planner would guess), then the database's size.
 */
export async function analyzeAndMeasure(url: string): Promise<number> {
  return withClient(url, async (c) => {
    await c.query('ANALYZE');
    const r = await c.query<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes');
    return Number(r.rows[0]!.bytes);
  });
}
