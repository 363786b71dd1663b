import type { ApiToken, UiSession } from '../../domain/types.js';
import type { Migration } from '../migrations.js';
import { type TokenRow, toToken, toUiSession, type UiSessionRow } from '../rows.js';
import type { StateStore, StoreStats } from '../state.js';
import type { SqliteDb } from './db.js';
import { currentVersion } from './migrate.js';

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
    this.db
      .sql(
        `INSERT INTO api_tokens (id, name, identity, role, secret_hash, created_at, revoked_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(t.id, t.name, t.identity, t.role, t.secretHash, t.createdAt, t.revokedAt);
  }

  async findToken(id: string): Promise<ApiToken | null> {
    const row = this.db.sql('SELECT * FROM api_tokens WHERE id = ?').get(id) as TokenRow | undefined;
    return row ? toToken(row) : null;
  }

  async rolesOf(identity: string): Promise<ApiToken['role'][]> {
    return this.db
      .pluck('SELECT DISTINCT role FROM api_tokens WHERE identity = ? AND revoked_at IS NULL')
      .all(identity) as ApiToken['role'][];
  }

  async countActiveTokens(role?: ApiToken['role']): Promise<number> {
    const row = (
      role
        ? this.db.sql('SELECT COUNT(*) AS n FROM api_tokens WHERE revoked_at IS NULL AND role = ?').get(role)
        : this.db.sql('SELECT COUNT(*) AS n FROM api_tokens WHERE revoked_at IS NULL').get()
    ) as { n: number };
    return row.n;
  }

  async revokeToken(id: string, now: number): Promise<boolean> {
    return this.db.write(() => {
      const revoked =
        this.db.sql('UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now, id)
          .changes > 0;
      revokeSessionsOf(this.db, id, now);
      return revoked;
    });
  }

  // ---- /ui sessions

  async createUiSession(s: Omit<UiSession, 'revokedAt'>): Promise<void> {
    this.db
      .sql(
        `INSERT INTO ui_sessions (id_hash, token_id, identity, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?)`,
      )
      .run(s.idHash, s.tokenId, s.identity, s.createdAt, s.expiresAt);
  }

  async findUiSession(idHash: Buffer, now: number): Promise<UiSession | null> {
    const row = this.db
      .sql('SELECT * FROM ui_sessions WHERE id_hash = ? AND revoked_at IS NULL AND expires_at > ?')
      .get(idHash, now) as UiSessionRow | undefined;
    return row ? toUiSession(row) : null;
  }

  async revokeUiSession(idHash: Buffer, now: number): Promise<boolean> {
    return (
      this.db
        .sql('UPDATE ui_sessions SET revoked_at = ? WHERE id_hash = ? AND revoked_at IS NULL')
        .run(now, idHash).changes > 0
    );
  }

  async revokeTokenUiSessions(tokenId: string, now: number): Promise<number> {
    return revokeSessionsOf(this.db, tokenId, now);
  }

  async pruneUiSessions(now: number, limit: number): Promise<number> {
    return this.db
      .sql(
        `DELETE FROM ui_sessions WHERE id_hash IN
         (SELECT id_hash FROM ui_sessions WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`,
      )
      .run(now, limit).changes;
  }

  async stats(): Promise<StoreStats> {
    const group = (sql: string) =>
      Object.fromEntries((this.db.sql(sql).all() as { k: string; n: number }[]).map((r) => [r.k, r.n]));
    const tokens = this.db
      .sql(
        `SELECT COALESCE(SUM(json_extract(usage, '$.input_tokens')), 0) AS input,
              COALESCE(SUM(json_extract(usage, '$.output_tokens')), 0) AS output,
              COALESCE(SUM(json_extract(usage, '$.cache_write_5m_tokens')), 0) AS cache_write_5m,
              COALESCE(SUM(json_extract(usage, '$.cache_write_1h_tokens')), 0) AS cache_write_1h,
              COALESCE(SUM(json_extract(usage, '$.cache_read_tokens')), 0) AS cache_read,
              COALESCE(SUM(cost_usd), 0) AS cost
       FROM runs`,
      )
      .get() as StoreStats['tokens'] & { cost: number };
    const count = (sql: string) => (this.db.sql(sql).get() as { n: number }).n;
    const { cost, ...tokenTotals } = tokens;
    return {
      runsByStatus: group('SELECT status AS k, COUNT(*) AS n FROM runs GROUP BY status'),
      runsByPhase: group('SELECT phase AS k, COUNT(*) AS n FROM runs GROUP BY phase'),
      plansByStatus: group('SELECT status AS k, COUNT(*) AS n FROM plans GROUP BY status'),
      deliveriesByOutcome: group('SELECT outcome AS k, COUNT(*) AS n FROM deliveries GROUP BY outcome'),
      slotsByOutcome: group('SELECT outcome AS k, SUM(slots) AS n FROM job_slots GROUP BY outcome'),
      pendingQuestions: count(`SELECT COUNT(*) AS n FROM questions WHERE status = 'pending'`),
      pendingToolApprovals: count(`SELECT COUNT(*) AS n FROM tool_approvals WHERE status = 'pending'`),
      activeJobs: count(`SELECT COUNT(*) AS n FROM cron_jobs WHERE status = 'active'`),
      tokens: tokenTotals,
      costUsd: cost,
    };
  }

  // ---- state

  async getState(key: string): Promise<string | null> {
    const row = this.db.sql('SELECT value FROM scheduler_state WHERE key = ?').get(key) as
      | { value: string }
      | undefined;
    return row?.value ?? null;
  }

  async setState(key: string, value: string): Promise<void> {
    this.db
      .sql(
        'INSERT INTO scheduler_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      )
      .run(key, value);
  }
}

/** Also runs inside revokeToken's transaction. */
function revokeSessionsOf(db: SqliteDb, tokenId: string, now: number): number {
  return db
    .sql('UPDATE ui_sessions SET revoked_at = ? WHERE token_id = ? AND revoked_at IS NULL')
    .run(now, tokenId).changes;
}
