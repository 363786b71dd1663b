import type Database from 'better-sqlite3';
import { composeStore } from '../compose.js';
import { loadMigrations, type Migration } from '../migrations.js';
import type { Store } from '../store.js';
import { SqliteApprovals } from './approvals.js';
import { SqliteReactionCursors } from './cursors.js';
import { SqliteDb } from './db.js';
import { SqliteJobs } from './jobs.js';
import { migrate } from './migrate.js';
import { SqliteOutbox } from './outbox.js';
import { SqlitePlans } from './plans.js';
import { SqliteRuns } from './runs.js';
import { SqliteSessions } from './sessions.js';
import { SqliteState } from './state.js';
import { SqliteTriggers } from './triggers.js';
import { SqliteUsage } from './usage.js';
import { SqliteWakes } from './wakes.js';

export interface SqliteStoreOptions {
  /** Path of the database file; ':memory:' is not allowed (tests use real files). */
  file: string;
  /** Apply pending migrations on open (default true). `drydock migrate` opens with false, then migrates. */
  migrate?: boolean;
  now?: () => number;
  migrations?: Migration[];
  /**
   * What a plan made before network lists (schema 15) with the network allowed reads as: the configured
   * execute.network_default_domains (default: the built-in list).
   */
  legacyNetworkDomains?: readonly string[];
}

/**
 * The Store's methods, which the constructor puts on each instance (composeStore); this declaration gives
 * the class their types.
 */
export interface SqliteStore extends Store {}

/**
 * The embedded store: one SQLite file (db.ts) and one part per aggregate over it (sessions.ts, jobs.ts,
 * runs.ts, approvals.ts, plans.ts, triggers.ts, outbox.ts, state.ts, wakes.ts), composed into one Store. Also
 * `db`, the connection itself, and `migrateNow`, for `drydock migrate`, the tests and the benchmarks.
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: composeStore puts every Store method on the instance, and its StoreParts argument is type-checked to hold a full implementation of each part.
export class SqliteStore {
  readonly db: Database.Database;
  private readonly migrations: Migration[];

  constructor(opts: SqliteStoreOptions) {
    const db = new SqliteDb(opts.file);
    this.db = db.connection;
    this.migrations = opts.migrations ?? loadMigrations();
    composeStore(
      {
        sessions: new SqliteSessions(db),
        jobs: new SqliteJobs(db),
        runs: new SqliteRuns(db),
        approvals: new SqliteApprovals(db),
        plans: new SqlitePlans(db, opts.legacyNetworkDomains),
        triggers: new SqliteTriggers(db),
        outbox: new SqliteOutbox(db, opts.legacyNetworkDomains),
        state: new SqliteState(db, this.migrations),
        wakes: new SqliteWakes(),
        cursors: new SqliteReactionCursors(db),
        usage: new SqliteUsage(db),
      },
      this,
    );
    if (opts.migrate !== false) this.migrateNow((opts.now ?? Date.now)());
  }

  migrateNow(now: number): number[] {
    return migrate(this.db, this.migrations, now);
  }
}
