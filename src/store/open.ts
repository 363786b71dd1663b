import { join, resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import type { Logger } from '../logger.js';
import { logOutages } from './postgres/outage.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

/** A store as opened for the daemon and the local commands: its migrations can be applied on demand. */
export type OpenedStore = Store & { migrateNow(now: number): number[] | Promise<number[]> };

export function databaseFile(config: Config): string {
  return resolve(join(config.data_dir, 'drydock.db'));
}

/**
 * Where the store lives, for messages and logs: the SQLite file, or the PostgreSQL URL with its password
 * replaced by `***`.
 */
export function storeLocation(config: Config): string {
  if (config.database_url === null) return databaseFile(config);
  return shownUrl(config.database_url);
}

/** A database URL as it may be shown: the password (if any) replaced by `***`. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the configured database_url';
  }
}

/**
 * Opens the configured store — PostgreSQL when `database_url` is set, else the SQLite file in data_dir — and
 * applies pending migrations unless `migrate` is false (throws SchemaTooNewError on a newer schema). With a
 * `logger`, the PostgreSQL store logs each outage of its database: one warning when it stops answering, one
 * line when it answers again.
 */
export async function openStore(
  config: Config,
  now: number,
  migrate = true,
  logger?: Logger,
): Promise<OpenedStore> {
  // A plan made before network lists, with the network allowed, reads as today's default list (rows.ts).
  const legacyNetworkDomains = config.execute.network_default_domains;
  if (config.database_url !== null) {
    // Loaded only when asked for: the embedded default never loads the PostgreSQL driver.
    const { openPostgresStore } = await import('./postgres/index.js');
    return openPostgresStore({
      url: config.database_url,
      migrate,
      now: () => now,
      legacyNetworkDomains,
      ...(logger ? { onOutage: logOutages(logger) } : {}),
    });
  }
  return new SqliteStore({ file: databaseFile(config), migrate, now: () => now, legacyNetworkDomains });
}
