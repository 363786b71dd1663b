import type { ApiToken, UiSession } from '../../domain/types.js';
import type { StoreStats } from '../state.js';
import type { Dialect, Statement } from './dialect.js';

// The SQL of API tokens, /ui sessions, the key-value state and the totals of /metrics that both backends run
// as written here (`?` placeholders, see dialect.ts).

export function insertTokenStatement(t: ApiToken): Statement {
  return {
    text: `INSERT INTO api_tokens (id, name, identity, role, secret_hash, created_at, revoked_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
    values: [t.id, t.name, t.identity, t.role, t.secretHash, t.createdAt, t.revokedAt],
  };
}

export const SELECT_TOKEN = 'SELECT * FROM api_tokens WHERE id = ?';

/** The roles of an identity's active tokens. Values: identity. */
export const ROLES_OF = 'SELECT DISTINCT role FROM api_tokens WHERE identity = ? AND revoked_at IS NULL';

export function countActiveTokensStatement(role?: ApiToken['role']): Statement {
  return role
    ? { text: 'SELECT COUNT(*) AS n FROM api_tokens WHERE revoked_at IS NULL AND role = ?', values: [role] }
    : { text: 'SELECT COUNT(*) AS n FROM api_tokens WHERE revoked_at IS NULL', values: [] };
}

export function revokeTokenStatement(id: string, now: number): Statement {
  return {
    text: 'UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
    values: [now, id],
  };
}

// ---- /ui sessions

export function insertUiSessionStatement(s: Omit<UiSession, 'revokedAt'>): Statement {
  return {
    text: 'INSERT INTO ui_sessions (id_hash, token_id, identity, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
    values: [s.idHash, s.tokenId, s.identity, s.createdAt, s.expiresAt],
  };
}

export function liveUiSessionStatement(idHash: Buffer, now: number): Statement {
  return {
    text: 'SELECT * FROM ui_sessions WHERE id_hash = ? AND revoked_at IS NULL AND expires_at > ?',
    values: [idHash, now],
  };
}

export function revokeUiSessionStatement(idHash: Buffer, now: number): Statement {
  return {
    text: 'UPDATE ui_sessions SET revoked_at = ? WHERE id_hash = ? AND revoked_at IS NULL',
    values: [now, idHash],
  };
}

/** Revokes the live /ui sessions of a token; also inside revokeToken's transaction. */
export function revokeTokenUiSessionsStatement(tokenId: string, now: number): Statement {
  return {
    text: 'UPDATE ui_sessions SET revoked_at = ? WHERE token_id = ? AND revoked_at IS NULL',
    values: [now, tokenId],
  };
}

export function pruneUiSessionsStatement(now: number, limit: number): Statement {
  return {
    text: `DELETE FROM ui_sessions WHERE id_hash IN
             (SELECT id_hash FROM ui_sessions WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`,
    values: [now, limit],
  };
}

// ---- key-value state

export const GET_STATE = 'SELECT value FROM scheduler_state WHERE key = ?';

export function setStateStatement(key: string, value: string): Statement {
  return {
    text: 'INSERT INTO scheduler_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    values: [key, value],
  };
}

// ---- totals for /metrics

type Grouped = 'runsByStatus' | 'runsByPhase' | 'plansByStatus' | 'deliveriesByOutcome' | 'slotsByOutcome';
type Counted = 'pendingQuestions' | 'pendingToolApprovals' | 'activeJobs';

/** Counts by a column: rows of (k, n). */
export const STATS_GROUPS: Record<Grouped, string> = {
  runsByStatus: 'SELECT status AS k, COUNT(*) AS n FROM runs GROUP BY status',
  runsByPhase: 'SELECT phase AS k, COUNT(*) AS n FROM runs GROUP BY phase',
  plansByStatus: 'SELECT status AS k, COUNT(*) AS n FROM plans GROUP BY status',
  deliveriesByOutcome: 'SELECT outcome AS k, COUNT(*) AS n FROM deliveries GROUP BY outcome',
  slotsByOutcome: 'SELECT outcome AS k, SUM(slots) AS n FROM job_slots GROUP BY outcome',
};

/** Single counts: one row (n). */
export const STATS_COUNTS: Record<Counted, string> = {
  pendingQuestions: `SELECT COUNT(*) AS n FROM questions WHERE status = 'pending'`,
  pendingToolApprovals: `SELECT COUNT(*) AS n FROM tool_approvals WHERE status = 'pending'`,
  activeJobs: `SELECT COUNT(*) AS n FROM cron_jobs WHERE status = 'active'`,
};

/** Tokens and cost over all runs: one row of StoreStats['tokens'] and `cost`. */
export function tokenTotals(d: Dialect): string {
  const sum = (field: string, as: string) => `COALESCE(SUM(${d.jsonNumber('usage', field)}), 0) AS ${as}`;
  return `SELECT ${sum('input_tokens', 'input')}, ${sum('output_tokens', 'output')},
            ${sum('cache_write_5m_tokens', 'cache_write_5m')}, ${sum('cache_write_1h_tokens', 'cache_write_1h')},
            ${sum('cache_read_tokens', 'cache_read')}, COALESCE(SUM(cost_usd), 0) AS cost
          FROM runs`;
}

/** StoreStats from the results of the queries above. */
export function storeStats(
  groups: Record<Grouped, { k: string; n: number }[]>,
  counts: Record<Counted, number>,
  tokens: StoreStats['tokens'] & { cost: number },
): StoreStats {
  const byKey = (rows: { k: string; n: number }[]) => Object.fromEntries(rows.map((r) => [r.k, r.n]));
  const { cost, ...tokenSums } = tokens;
  return {
    runsByStatus: byKey(groups.runsByStatus),
    runsByPhase: byKey(groups.runsByPhase),
    plansByStatus: byKey(groups.plansByStatus),
    deliveriesByOutcome: byKey(groups.deliveriesByOutcome),
    slotsByOutcome: byKey(groups.slotsByOutcome),
    ...counts,
    tokens: tokenSums,
    costUsd: cost,
  };
}
