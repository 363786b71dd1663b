import { join, resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

export function databaseFile(config: Config): string {
  return resolve(join(config.data_dir, 'drydock.db'));
}

/** Opens the configured store and applies pending migrations (throws SchemaTooNewError on a newer schema). */
export function openStore(
  config: Config,
  now: number,
  migrate = true,
): Store & { migrateNow(now: number): number[] } {
  return new SqliteStore({ file: databaseFile(config), migrate, now: () => now });
}
