import type { ApiToken, UiSession } from '../../domain/types.js';
import { type TokenRow, toToken, toUiSession, type UiSessionRow } from '../rows.js';
import { POSTGRES, type Statement } from '../sql/dialect.js';
import * as sql from '../sql/state.js';
import type { StateStore, StoreStats } from '../state.js';
import type { PgDb, Queries } from './db.js';
import { currentVersion } from './migrate.js';
import { TokenCache } from './token-cache.js';

/** API tokens, /ui sessions, the key-value state, the totals of /metrics and the database (sql/state.ts). */
export class PgState implements StateStore {
  constructor(
    private readonly db: PgDb,
    /** How many migrations this build knows. */
    private readonly latest: number,
    /** Tokens read in the last few seconds (token-cache.ts): a request's bearer token costs no round trip. */
    private readonly tokens: TokenCache = new TokenCache(Date.now),
  ) {}

  // ---- API tokens

  async createToken(t: ApiToken): Promise<void> {
    this.tokens.forget(t.id);
    await writes(this.db, sql.insertTokenStatement(t));
  }

  async findToken(id: string): Promise<ApiToken | null> {
    const cached = this.tokens.get(id);
    if (cached) return cached;
    // Kept from the time the read began: a revocation committed after it is seen within the bound.
    const read = this.tokens.begin();
    const row = await this.db.row<TokenRow>(sql.SELECT_TOKEN, [id]);
    if (!row) return null;
    const token = toToken(row);
    this.tokens.set(token, read);
    return token;
  }

  async rolesOf(identity: string): Promise<ApiToken['role'][]> {
    return (await this.db.rows<{ role: ApiToken['role'] }>(sql.ROLES_OF, [identity])).map((r) => r.role);
  }

  async countActiveTokens(role?: ApiToken['role']): Promise<number> {
    const { text, values } = sql.countActiveTokensStatement(role);
    return (await this.db.value<number>(text, values)) ?? 0;
  }

  async revokeToken(id: string, now: number): Promise<boolean> {
    // Forgotten before and after: a read that began meanwhile is not kept (TokenCache.begin).
    this.tokens.forget(id);
    try {
      return await this.db.tx(async (q) => {
        const revoked = (await writes(q, sql.revokeTokenStatement(id, now))) > 0;
        await writes(q, sql.revokeTokenUiSessionsStatement(id, now));
        return revoked;
      });
    } finally {
      this.tokens.forget(id);
    }
  }

  // ---- /ui sessions

  async createUiSession(s: Omit<UiSession, 'revokedAt'>): Promise<void> {
    await writes(this.db, sql.insertUiSessionStatement(s));
  }

  async findUiSession(idHash: Buffer, now: number): Promise<UiSession | null> {
    const { text, values } = sql.liveUiSessionStatement(idHash, now);
    const row = await this.db.row<UiSessionRow>(text, values);
    return row ? toUiSession(row) : null;
  }

  async revokeUiSession(idHash: Buffer, now: number): Promise<boolean> {
    return (await writes(this.db, sql.revokeUiSessionStatement(idHash, now))) > 0;
  }

  async revokeTokenUiSessions(tokenId: string, now: number): Promise<number> {
    return writes(this.db, sql.revokeTokenUiSessionsStatement(tokenId, now));
  }

  async pruneUiSessions(now: number, limit: number): Promise<number> {
    return writes(this.db, sql.pruneUiSessionsStatement(now, limit));
  }

  // ---- key-value state

  async getState(key: string): Promise<string | null> {
    return (await this.db.value<string>(sql.GET_STATE, [key])) ?? null;
  }

  async setState(key: string, value: string): Promise<void> {
    await writes(this.db, sql.setStateStatement(key, value));
  }

  // ---- totals, the database itself

  async stats(): Promise<StoreStats> {
    const groups = {} as Record<keyof typeof sql.STATS_GROUPS, { k: string; n: number }[]>;
    for (const [k, text] of Object.entries(sql.STATS_GROUPS) as [keyof typeof sql.STATS_GROUPS, string][])
      groups[k] = await this.db.rows<{ k: string; n: number }>(text);
    const counts = {} as Record<keyof typeof sql.STATS_COUNTS, number>;
    for (const [k, text] of Object.entries(sql.STATS_COUNTS) as [keyof typeof sql.STATS_COUNTS, string][])
      counts[k] = (await this.db.value<number>(text)) ?? 0;
    // The sums are numeric, read as numbers (db.ts).
    const tokens = await this.db.row<StoreStats['tokens'] & { cost: number }>(sql.tokenTotals(POSTGRES));
    return sql.storeStats(groups, counts, tokens!);
  }

  async schemaVersion(): Promise<{ current: number; latest: number }> {
    return { current: await currentVersion(this.db), latest: this.latest };
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

/** Runs a writing statement; how many rows it wrote. */
function writes(q: Queries, { text, values }: Statement): Promise<number> {
  return q.exec(text, values);
}
