import type { ApiToken, UiSession } from '../../domain/types.js';
import { type TokenRow, toToken, toUiSession, type UiSessionRow } from '../rows.js';
import type { StateStore, StoreStats } from '../state.js';
import type { PgDb, Queries } from './db.js';
import { currentVersion } from './migrate.js';

/** API tokens, /ui sessions, the key-value state, the totals of /metrics and the database itself. */
export class PgState implements StateStore {
  constructor(
    private readonly db: PgDb,
    /** How many migrations this build knows. */
    private readonly latest: number,
  ) {}

  // ---- API tokens

  async createToken(t: ApiToken): Promise<void> {
    await this.db.exec(
      `INSERT INTO api_tokens (id, name, identity, role, secret_hash, created_at, revoked_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [t.id, t.name, t.identity, t.role, t.secretHash, t.createdAt, t.revokedAt],
    );
  }

  async findToken(id: string): Promise<ApiToken | null> {
    const row = await this.db.row<TokenRow>('SELECT * FROM api_tokens WHERE id = $1', [id]);
    return row ? toToken(row) : null;
  }

  async rolesOf(identity: string): Promise<ApiToken['role'][]> {
    const rows = await this.db.rows<{ role: ApiToken['role'] }>(
      'SELECT DISTINCT role FROM api_tokens WHERE identity = $1 AND revoked_at IS NULL',
      [identity],
    );
    return rows.map((r) => r.role);
  }

  async countActiveTokens(role?: ApiToken['role']): Promise<number> {
    const n = role
      ? await this.db.value<number>(
          'SELECT COUNT(*) FROM api_tokens WHERE revoked_at IS NULL AND role = $1',
          [role],
        )
      : await this.db.value<number>('SELECT COUNT(*) FROM api_tokens WHERE revoked_at IS NULL');
    return n ?? 0;
  }

  async revokeToken(id: string, now: number): Promise<boolean> {
    return this.db.tx(async (q) => {
      const revoked =
        (await q.exec('UPDATE api_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [
          id,
          now,
        ])) > 0;
      await revokeSessionsOf(q, id, now);
      return revoked;
    });
  }

  // ---- /ui sessions

  async createUiSession(s: Omit<UiSession, 'revokedAt'>): Promise<void> {
    await this.db.exec(
      `INSERT INTO ui_sessions (id_hash, token_id, identity, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
      [s.idHash, s.tokenId, s.identity, s.createdAt, s.expiresAt],
    );
  }

  async findUiSession(idHash: Buffer, now: number): Promise<UiSession | null> {
    const row = await this.db.row<UiSessionRow>(
      'SELECT * FROM ui_sessions WHERE id_hash = $1 AND revoked_at IS NULL AND expires_at > $2',
      [idHash, now],
    );
    return row ? toUiSession(row) : null;
  }

  async revokeUiSession(idHash: Buffer, now: number): Promise<boolean> {
    return (
      (await this.db.exec(
        'UPDATE ui_sessions SET revoked_at = $2 WHERE id_hash = $1 AND revoked_at IS NULL',
        [idHash, now],
      )) > 0
    );
  }

  async revokeTokenUiSessions(tokenId: string, now: number): Promise<number> {
    return revokeSessionsOf(this.db, tokenId, now);
  }

  async pruneUiSessions(now: number, limit: number): Promise<number> {
    return this.db.exec(
      `DELETE FROM ui_sessions WHERE id_hash IN
         (SELECT id_hash FROM ui_sessions WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)`,
      [now, limit],
    );
  }

  // ---- key-value state

  async getState(key: string): Promise<string | null> {
    return (await this.db.value<string>('SELECT value FROM scheduler_state WHERE key = $1', [key])) ?? null;
  }

  async setState(key: string, value: string): Promise<void> {
    await this.db.exec(
      `INSERT INTO scheduler_state (key, value) VALUES ($1, $2)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      [key, value],
    );
  }

  // ---- totals, the database itself

  async stats(): Promise<StoreStats> {
    const group = async (sql: string) =>
      Object.fromEntries((await this.db.rows<{ k: string; n: number }>(sql)).map((r) => [r.k, r.n]));
    const count = async (sql: string) => (await this.db.value<number>(sql)) ?? 0;
    // The sums are numeric, read as numbers (db.ts).
    const tokens = (await this.db.row<StoreStats['tokens'] & { cost: number }>(
      `SELECT COALESCE(SUM((usage->>'input_tokens')::numeric), 0) AS input,
              COALESCE(SUM((usage->>'output_tokens')::numeric), 0) AS output,
              COALESCE(SUM((usage->>'cache_write_5m_tokens')::numeric), 0) AS cache_write_5m,
              COALESCE(SUM((usage->>'cache_write_1h_tokens')::numeric), 0) AS cache_write_1h,
              COALESCE(SUM((usage->>'cache_read_tokens')::numeric), 0) AS cache_read,
              COALESCE(SUM(cost_usd), 0) AS cost
       FROM runs`,
    ))!;
    const { cost, ...tokenTotals } = tokens;
    return {
      runsByStatus: await group('SELECT status AS k, COUNT(*) AS n FROM runs GROUP BY status'),
      runsByPhase: await group('SELECT phase AS k, COUNT(*) AS n FROM runs GROUP BY phase'),
      plansByStatus: await group('SELECT status AS k, COUNT(*) AS n FROM plans GROUP BY status'),
      deliveriesByOutcome: await group('SELECT outcome AS k, COUNT(*) AS n FROM deliveries GROUP BY outcome'),
      slotsByOutcome: await group('SELECT outcome AS k, SUM(slots) AS n FROM job_slots GROUP BY outcome'),
      pendingQuestions: await count(`SELECT COUNT(*) FROM questions WHERE status = 'pending'`),
      pendingToolApprovals: await count(`SELECT COUNT(*) FROM tool_approvals WHERE status = 'pending'`),
      activeJobs: await count(`SELECT COUNT(*) FROM cron_jobs WHERE status = 'active'`),
      tokens: tokenTotals,
      costUsd: cost,
    };
  }

  async schemaVersion(): Promise<{ current: number; latest: number }> {
    return { current: await currentVersion(this.db), latest: this.latest };
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

/** Revokes the live /ui sessions of a token; also runs inside revokeToken's transaction. */
async function revokeSessionsOf(q: Queries, tokenId: string, now: number): Promise<number> {
  return q.exec('UPDATE ui_sessions SET revoked_at = $2 WHERE token_id = $1 AND revoked_at IS NULL', [
    tokenId,
    now,
  ]);
}
