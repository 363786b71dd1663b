import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../paths.js';

// The numbered SQL files of a store's schema, read in order: `migrations/` for SQLite, `migrations/postgres/`
// for PostgreSQL (each store's migrator applies them: sqlite/migrate.ts, postgres/migrate.ts).

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const FILE = /^(\d{6})_([a-z0-9_]+)\.sql$/;

export function loadMigrations(dir = join(packageRoot(), 'migrations')): Migration[] {
  const migrations = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((file) => {
      const m = FILE.exec(file);
      if (!m) throw new Error(`migrations: file name "${file}" must look like 000001_name.sql`);
      return { version: Number(m[1]), name: m[2]!, sql: readFileSync(join(dir, file), 'utf8') };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new Error(`migrations: expected version ${i + 1}, found ${m.version} (${m.name})`);
  });
  return migrations;
}
