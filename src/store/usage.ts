import type { SpendCap, SpendDay, SpendLimits, SpendScope, SpendTally, UsageKey } from '../domain/spend.js';
import type { NewNotification } from '../domain/types.js';

/** What a day's spend caps are checked against: every scope's tally of that day, and which scopes have caps. */
export interface SpendState {
  global: SpendTally;
  sessions: Map<string, SpendTally>;
  triggers: Map<string, SpendTally>;
  /** The caps of the sessions and triggers that have any (others have none). */
  sessionLimits: Map<string, SpendLimits>;
  triggerLimits: Map<string, SpendLimits>;
}

export type { UsageKey } from '../domain/spend.js';

/** One key's runs and receipts on one day (`key` null: runs without a trigger, or without a model yet). */
export interface UsageRow {
  day: string;
  key: string | null;
  /** The trigger's or session's name (null when it is gone, or for a model). */
  name: string | null;
  runs: number;
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
}

/**
 * Spend and usage, counted from the runs' receipts (runs.cost_usd, runs.usage) by the day a run was created
 * in, so that every replica on one database sees the same figures.
 */
export interface UsageStore {
  /** The tallies of one day (one statement over the day's runs) and the caps of sessions and triggers. */
  spendState(day: SpendDay): Promise<SpendState>;
  /** Per day and key, the runs created and their receipts, days in order. */
  usage(by: UsageKey, days: SpendDay[]): Promise<UsageRow[]>;
  /**
   * Records that a scope reached a cap on a day, and with it, in the same transaction, the notifications
   * that announce it (limit.reached); true for the first to record it, false when it was recorded before (by
   * this or another replica: then nothing is written, so it is announced once).
   */
  noteSpendCap(
    scope: SpendScope,
    id: string | null,
    day: string,
    cap: SpendCap,
    now: number,
    notifications?: NewNotification[],
  ): Promise<boolean>;
}
