import type { ApiToken, UiSession } from '../domain/types.js';

/** API tokens, /ui sessions, key-value state, totals for /metrics and the database itself. */
export interface StateStore {
  // ---- API tokens
  createToken(token: ApiToken): Promise<void>;
  findToken(id: string): Promise<ApiToken | null>;
  /** The roles of an identity's active tokens (an identity may hold several). */
  rolesOf(identity: string): Promise<ApiToken['role'][]>;
  countActiveTokens(role?: ApiToken['role']): Promise<number>;
  /**
   * Revokes a token and, in the same transaction, every /ui session signed in with it. False when the
   * token is unknown or was already revoked.
   */
  revokeToken(id: string, now: number): Promise<boolean>;

  // ---- /ui sessions
  createUiSession(session: Omit<UiSession, 'revokedAt'>): Promise<void>;
  /** The session stored under this id hash, unless it is revoked or expired at `now`. */
  findUiSession(idHash: Buffer, now: number): Promise<UiSession | null>;
  /** Revokes one session; false when it is unknown or already revoked. */
  revokeUiSession(idHash: Buffer, now: number): Promise<boolean>;
  /** Revokes every live session of a token; how many. */
  revokeTokenUiSessions(tokenId: string, now: number): Promise<number>;
  /** Deletes up to `limit` sessions expired at `now` (revoked ones stay until they expire); how many. */
  pruneUiSessions(now: number, limit: number): Promise<number>;

  // ---- key-value state, totals, the database itself
  getState(key: string): Promise<string | null>;
  setState(key: string, value: string): Promise<void>;
  /** Totals for /metrics: counts by status and outcome, tokens and cost over all runs. */
  stats(): Promise<StoreStats>;
  /** Current schema version and the newest one this build knows. */
  schemaVersion(): Promise<{ current: number; latest: number }>;
  close(): Promise<void>;
}

export interface StoreStats {
  runsByStatus: Record<string, number>;
  runsByPhase: Record<string, number>;
  plansByStatus: Record<string, number>;
  deliveriesByOutcome: Record<string, number>;
  slotsByOutcome: Record<string, number>;
  pendingQuestions: number;
  pendingToolApprovals: number;
  activeJobs: number;
  tokens: {
    input: number;
    output: number;
    cache_write_5m: number;
    cache_write_1h: number;
    cache_read: number;
  };
  costUsd: number;
}
