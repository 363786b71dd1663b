import { join } from 'node:path';
import { packageRoot } from '../../paths.js';
import { loadMigrations, type Migration } from '../migrations.js';
import { SchemaTooNewError } from '../store.js';
import { LOCK, type PgDb, type Queries } from './db.js';

/** The PostgreSQL store's migrations: migrations/postgres/000001_name.sql, numbered from 1 without gaps. */
export function loadPostgresMigrations(dir = join(packageRoot(), 'migrations', 'postgres')): Migration[] {
  return loadMigrations(dir);
}

const SCHEMA_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`;

/** The schema version of the database: 0 before the first migration (no schema_migrations table yet). */
export async function currentVersion(q: Queries): Promise<number> {
  const exists = await q.value<string | null>(`SELECT to_regclass('schema_migrations')::text`);
  if (!exists) return 0;
  return (await q.value<number | null>('SELECT MAX(version) FROM schema_migrations')) ?? 0;
}

/**
 * Applies pending migrations in order, each in its own transaction that records the version first, so a
 * crash mid-migration leaves the schema at the previous version (PostgreSQL's DDL is transactional). Refuses
 * a schema newer than this build (SchemaTooNewError).
 *
 * Several processes may start at once against one database: the first to take the session-level advisory
 * lock LOCK.migrate migrates, the others wait for it (pg_advisory_lock waits until the lock is free, and a
 * session-level lock is held until it is released or the session ends, even across the transactions below;
 * functions-admin, "Advisory Lock Functions"), then find nothing left to do. A process that dies holding the
 * lock loses its connection, and with it the lock.
 */
export async function migrate(db: PgDb, migrations: Migration[], now: number): Promise<number[]> {
  const latest = migrations.length;
  const { client, release } = await db.checkout();
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1::int, 0)', [LOCK.migrate]);
    try {
      await client.query(SCHEMA_TABLE);
      const { rows } = await client.query<{ v: number | null }>(
        'SELECT MAX(version) AS v FROM schema_migrations',
      );
      const current = rows[0]?.v ?? 0;
      if (current > latest) throw new SchemaTooNewError(current, latest);
      const applied: number[] = [];
      for (const m of migrations.slice(current)) {
        await client.query('BEGIN');
        try {
          await client.query(
            'INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)',
            [m.version, m.name, now],
          );
          // Without parameters node-postgres sends the text as one simple query, which may hold several
          // statements (a migration file); they all run in the transaction begun above.
          await client.query(m.sql);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch((rollback: Error) => {
            broken = rollback;
          });
          throw new Error(`migration ${m.version} (${m.name}) failed: ${(err as Error).message}`, {
            cause: err,
          });
        }
        applied.push(m.version);
      }
      return applied;
    } finally {
      if (!broken) {
        await client.query('SELECT pg_advisory_unlock($1::int, 0)', [LOCK.migrate]).catch((unlock: Error) => {
          broken = unlock;
        });
      }
    }
  } finally {
    release(broken);
  }
}
