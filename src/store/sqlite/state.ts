import type { ApiToken, UiSession } from '../../domain/types.js';
import type { Migration } from '../migrations.js';
import { type TokenRow, toToken, toUiSession, type UiSessionRow } from '../rows.js';
import { SQLITE, type Statement } from '../sql/dialect.js';
import * as sql from '../sql/state.js';
import type { StateStore, StoreStats } from '../state.js';
import type { SqliteDb } from './db.js';
import { currentVersion } from './migrate.js';

/** API tokens, /ui sessions, the key-value state, the totals of /metrics and the database (sql/state.ts). */
export class SqliteState implements StateStore {
  constructor(
    private readonly db: SqliteDb,
    /** The migrations this build knows, applied by the store when it opens (sqlite-store.ts). */
    private readonly migrations: readonly Migration[],
  ) {}

  async schemaVersion(): Promise<{ current: number; latest: number }> {
    return { current: currentVersion(this.db.connection), latest: this.migrations.length };
  }

  async close(): Promise<void> {
    this.db.close();
  }

  // ---- tokens

  async createToken(t: ApiToken): Promise<void> {
    writes(this.db, sql.insertTokenStatement(t));
  }

  async findToken(id: string): Promise<ApiToken | null> {
    const row = this.db.sql(sql.SELECT_TOKEN).get(id) as TokenRow | undefined;
    return row ? toToken(row) : null;
  }

  async rolesOf(identity: string): Promise<ApiToken['role'][]> {
    return this.db.pluck(sql.ROLES_OF).all(identity) as ApiToken['role'][];
  }

  async countActiveTokens(role?: ApiToken['role']): Promise<number> {
    const { text, values } = sql.countActiveTokensStatement(role);
    return (this.db.sql(text).get(...values) as { n: number }).n;
  }

  async revokeToken(id: string, now: number): Promise<boolean> {
    return this.db.write(() => {
      const revoked = writes(this.db, sql.revokeTokenStatement(id, now)) > 0;
      writes(this.db, sql.revokeTokenUiSessionsStatement(id, now));
      return revoked;
    });
  }

  // ---- /ui sessions

  async createUiSession(s: Omit<UiSession, 'revokedAt'>): Promise<void> {
    writes(this.db, sql.insertUiSessionStatement(s));
  }

  async findUiSession(idHash: Buffer, now: number): Promise<UiSession | null> {
    const { text, values } = sql.liveUiSessionStatement(idHash, now);
    const row = this.db.sql(text).get(...values) as UiSessionRow | undefined;
    return row ? toUiSession(row) : null;
  }

  async revokeUiSession(idHash: Buffer, now: number): Promise<boolean> {
    return writes(this.db, sql.revokeUiSessionStatement(idHash, now)) > 0;
  }

  async revokeTokenUiSessions(tokenId: string, now: number): Promise<number> {
    return writes(this.db, sql.revokeTokenUiSessionsStatement(tokenId, now));
  }

  async pruneUiSessions(now: number, limit: number): Promise<number> {
    return writes(this.db, sql.pruneUiSessionsStatement(now, limit));
  }

  async stats(): Promise<StoreStats> {
    const group = (text: string) => this.db.sql(text).all() as { k: string; n: number }[];
    const count = (text: string) => (this.db.sql(text).get() as { n: number }).n;
    return sql.storeStats(
      mapValues(sql.STATS_GROUPS, group),
      mapValues(sql.STATS_COUNTS, count),
      this.db.sql(sql.tokenTotals(SQLITE)).get() as StoreStats['tokens'] & { cost: number },
    );
  }

  // ---- state

  async getState(key: string): Promise<string | null> {
    return (this.db.pluck(sql.GET_STATE).get(key) as string | undefined) ?? null;
  }

  async setState(key: string, value: string): Promise<void> {
    writes(this.db, sql.setStateStatement(key, value));
  }
}

/** Runs a writing statement; how many rows it wrote. */
function writes(db: SqliteDb, { text, values }: Statement): number {
  return db.sql(text).run(...values).changes;
}

function mapValues<K extends string, V>(record: Record<K, string>, f: (text: string) => V): Record<K, V> {
  return Object.fromEntries(Object.entries<string>(record).map(([k, text]) => [k, f(text)])) as Record<K, V>;
}
