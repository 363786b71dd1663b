import type Database from 'better-sqlite3';
import type { Migration } from '../migrations.js';
import { SchemaTooNewError } from '../store.js';

export function currentVersion(db: Database.Database): number {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
  const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
  return row.v ?? 0;
}

/**
 * Applies pending migrations in order, each in its own transaction that records the version first, so a
 * crash mid-migration leaves the schema at the previous version. Refuses a schema newer than this build.
 */
export function migrate(db: Database.Database, migrations: Migration[], now: number): number[] {
  const latest = migrations.length;
  const current = currentVersion(db);
  if (current > latest) throw new SchemaTooNewError(current, latest);
  const applied: number[] = [];
  for (const m of migrations.slice(current)) {
    // A migration that rebuilds a table other tables refer to (SQLite cannot alter a CHECK constraint) says
    // so on its first line; foreign keys are off while it runs (the switch only works outside a
    // transaction), and checked before it commits.
    const rebuilds = m.sql.startsWith(REBUILDS_TABLES);
    const enforced = rebuilds && db.pragma('foreign_keys', { simple: true }) === 1;
    if (enforced) db.pragma('foreign_keys = OFF');
    try {
      db.transaction(() => {
        db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
          m.version,
          m.name,
          now,
        );
        db.exec(m.sql);
        if (rebuilds) {
          const broken = db.pragma('foreign_key_check') as unknown[];
          if (broken.length > 0) {
            throw new Error(`migration ${m.version} (${m.name}) left ${broken.length} broken references`);
          }
        }
      }).immediate();
    } finally {
      if (enforced) db.pragma('foreign_keys = ON');
    }
    applied.push(m.version);
  }
  return applied;
}

/** The first line of a migration that rebuilds tables which other tables reference. */
export const REBUILDS_TABLES = '-- rebuilds tables';
