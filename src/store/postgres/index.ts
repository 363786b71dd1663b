import { composeStore } from '../compose.js';
import type { Migration } from '../migrations.js';
import type { Store } from '../store.js';
import { PgApprovals } from './approvals.js';
import { PgReactionCursors } from './cursors.js';
import { PgDb } from './db.js';
import { PgJobs } from './jobs.js';
import { listenerOf, PgWakes } from './listen.js';
import { loadPostgresMigrations, migrate } from './migrate.js';
import type { OutageEvent } from './outage.js';
import { PgOutbox } from './outbox.js';
import { PgPlans, readPlansVersion } from './plans.js';
import { PgRuns } from './runs.js';
import { PgSessions } from './sessions.js';
import { PgState } from './state.js';
import { TOKEN_CACHE_MS, TokenCache } from './token-cache.js';
import { PgTriggers } from './triggers.js';
import { PgUsage } from './usage.js';
import { PlansVersion } from './versions.js';

export interface PostgresStoreOptions {
  /** postgres://user:password@host:port/database */
  url: string;
  /** Apply pending migrations on open (default true); with false, `migrateNow` applies them. */
  migrate?: boolean;
  now?: () => number;
  /**
   * The clock of what the store keeps between reads (default Date.now): a token found is used for
   * `tokenCacheMs`, the plans version while nothing is heard of (versions.ts) for at most a second.
   */
  clock?: () => number;
  /** How long a token found is used before it is read again (default TOKEN_CACHE_MS, 2 s; 0: never kept). */
  tokenCacheMs?: number;
  migrations?: Migration[];
  /**
   * What a plan made before network lists (migration 5) with the network allowed reads as: the configured
   * execute.network_default_domains (default: the built-in list).
   */
  legacyNetworkDomains?: readonly string[];
  /** Connections at most (default 10). */
  poolSize?: number;
  /**
   * Told when a pooled connection is lost (default: ignored; the pool makes another when needed), and when
   * the wake-up listener's connection fails or is lost (it connects again by itself).
   */
  onConnectionError?: (err: Error) => void;
  /**
   * Told once when statements start failing to reach the database, and once when one is answered again, with
   * how long that took and how many operations failed meanwhile (default: ignored; `logOutages` in outage.ts
   * makes log lines of it).
   */
  onOutage?: (event: OutageEvent) => void;
}

export interface PostgresStore extends Store {
  /** Applies pending migrations now; the versions applied. */
  migrateNow(now: number): Promise<number[]>;
}

/**
 * The PostgreSQL store: one pool, one part per aggregate, composed into one Store, and the connection that
 * listens for wake-ups (listen.ts), made on the first onWake. Applies pending
 * migrations first (throws SchemaTooNewError on a newer schema) unless `migrate` is false.
 */
export async function openPostgresStore(opts: PostgresStoreOptions): Promise<PostgresStore> {
  const migrations = opts.migrations ?? loadPostgresMigrations();
  const db = new PgDb({
    url: opts.url,
    ...(opts.poolSize !== undefined ? { max: opts.poolSize } : {}),
    ...(opts.onConnectionError ? { onConnectionError: opts.onConnectionError } : {}),
    ...(opts.onOutage ? { onOutage: opts.onOutage } : {}),
  });
  try {
    if (opts.migrate !== false) await migrate(db, migrations, (opts.now ?? Date.now)());
  } catch (err) {
    await db.close();
    throw err;
  }
  // The wake-up listener connects on the first onWake and is ended by close() (PgState.close ends the db); a
  // statement answered while its connection is down makes it listen again at once.
  const listener = listenerOf(db, opts.onConnectionError ? { onError: opts.onConnectionError } : {});
  const clock = opts.clock ?? Date.now;
  // The plans version is read again after this process writes, and when the listener hears of a change.
  const version = new PlansVersion(() => readPlansVersion(db), listener, clock);
  db.onWrite(() => version.changed());
  const tokens = new TokenCache(clock, opts.tokenCacheMs ?? TOKEN_CACHE_MS);
  return composeStore(
    {
      sessions: new PgSessions(db),
      jobs: new PgJobs(db),
      runs: new PgRuns(db),
      approvals: new PgApprovals(db),
      plans: new PgPlans(db, opts.legacyNetworkDomains, version),
      triggers: new PgTriggers(db),
      outbox: new PgOutbox(db, opts.legacyNetworkDomains),
      state: new PgState(db, migrations.length, tokens),
      wakes: new PgWakes(listener),
      cursors: new PgReactionCursors(db),
      usage: new PgUsage(db),
    },
    { migrateNow: (now: number) => migrate(db, migrations, now) },
  );
}
