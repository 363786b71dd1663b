import type { SpendDay, SpendLimits, SpendTally } from '../../domain/spend.js';
import type { NewNotification } from '../../domain/types.js';
import type { SpendState, UsageKey, UsageRow } from '../usage.js';
import type { Dialect, Statement } from './dialect.js';

// The SQL of spend caps and usage that both backends run as written here (`?` placeholders, see dialect.ts).
// Every figure is a SUM or COUNT over runs by created_at (index runs_by_created), counted in the database so
// that replicas agree.

/** The day's runs and receipts by (session, trigger): one row per pair, summed by `toSpendState`. */
export function daySpendStatement(day: SpendDay): Statement {
  return {
    text: `SELECT session_id, trigger_id, COUNT(*) AS runs, COALESCE(SUM(cost_usd), 0) AS cost_usd FROM runs
           WHERE created_at >= ? AND created_at < ? GROUP BY session_id, trigger_id`,
    values: [day.start, day.end],
  };
}

/** Sessions and triggers with caps: a `limits` other than '{}'. */
export const SESSION_LIMITS = `SELECT id, limits FROM sessions WHERE CAST(limits AS TEXT) <> '{}' AND status = 'open'`;
export const TRIGGER_LIMITS = `SELECT id, limits FROM triggers WHERE CAST(limits AS TEXT) <> '{}'`;

export interface DaySpendRow {
  session_id: string;
  trigger_id: string | null;
  runs: number;
  cost_usd: number;
}

export function toSpendState(
  rows: DaySpendRow[],
  sessionLimits: { id: string; limits: string }[],
  triggerLimits: { id: string; limits: string }[],
): SpendState {
  const state: SpendState = {
    global: { runs: 0, costUsd: 0 },
    sessions: new Map(),
    triggers: new Map(),
    sessionLimits: new Map(sessionLimits.map((r) => [r.id, JSON.parse(r.limits) as SpendLimits])),
    triggerLimits: new Map(triggerLimits.map((r) => [r.id, JSON.parse(r.limits) as SpendLimits])),
  };
  const add = (map: Map<string, SpendTally>, key: string, runs: number, cost: number) => {
    const t = map.get(key) ?? { runs: 0, costUsd: 0 };
    map.set(key, { runs: t.runs + runs, costUsd: t.costUsd + cost });
  };
  for (const r of rows) {
    const runs = Number(r.runs);
    const cost = Number(r.cost_usd);
    state.global = { runs: state.global.runs + runs, costUsd: state.global.costUsd + cost };
    add(state.sessions, r.session_id, runs, cost);
    if (r.trigger_id) add(state.triggers, r.trigger_id, runs, cost);
  }
  return state;
}

/** The key column, and the name beside it, of each usage grouping. */
const KEYS: Record<UsageKey, { key: string; name: string; join: string }> = {
  trigger: { key: 'r.trigger_id', name: 't.name', join: 'LEFT JOIN triggers t ON t.id = r.trigger_id' },
  session: { key: 'r.session_id', name: 's.name', join: 'LEFT JOIN sessions s ON s.id = r.session_id' },
  model: { key: 'r.model', name: 'NULL', join: '' },
};

/**
 * Runs and receipts per day and key: the days are a list of (day, start, end) joined to the runs created in
 * them, so each day is counted in the limits zone whatever its length (23 or 25 hours on a change of clocks).
 * Keys in order, runs without one first on both backends (PostgreSQL sorts NULL last); a model has no name
 * column to group by (PostgreSQL refuses a constant in GROUP BY).
 */
export function usageStatement(d: Dialect, by: UsageKey, days: SpendDay[]): Statement {
  const k = KEYS[by];
  const list = days.map(() => '(?, CAST(? AS BIGINT), CAST(? AS BIGINT))').join(', ');
  return {
    text: `WITH days (day, day_start, day_end) AS (VALUES ${list})
           SELECT d.day AS day, ${k.key} AS key, ${k.name} AS name, COUNT(*) AS runs,
             COALESCE(SUM(r.cost_usd), 0) AS cost_usd,
             COALESCE(SUM(${d.jsonNumber('r.usage', 'input_tokens')}), 0) AS input_tokens,
             COALESCE(SUM(${d.jsonNumber('r.usage', 'output_tokens')}), 0) AS output_tokens
           FROM days d JOIN runs r ON r.created_at >= d.day_start AND r.created_at < d.day_end ${k.join}
           GROUP BY d.day, ${k.key}${by === 'model' ? '' : `, ${k.name}`}
           ORDER BY d.day, COALESCE(${k.key}, '')`,
    values: days.flatMap((day) => [day.day, day.start, day.end]),
  };
}

export interface UsageDbRow {
  day: string;
  key: string | null;
  name: string | null;
  runs: number;
  cost_usd: number;
  input_tokens: number;
  output_tokens: number;
}

export const toUsageRow = (r: UsageDbRow): UsageRow => ({
  day: r.day,
  key: r.key,
  name: r.name,
  runs: Number(r.runs),
  costUsd: Number(r.cost_usd),
  inputTokens: Number(r.input_tokens),
  outputTokens: Number(r.output_tokens),
});

/** The first replica to note a scope's cap on a day writes the row; values: scope, id, day, cap, now. */
export const NOTE_SPEND_CAP = `INSERT INTO spend_cap_notices (scope, scope_id, day, cap, at) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (scope, scope_id, day) DO NOTHING`;

/** A notification of no run event (limit.reached), written with the note that announces it. */
export function insertNoticeNotificationStatement(n: NewNotification): Statement {
  return {
    text: `INSERT INTO notifications (id, event_rowid, webhook, webhook_url, event, run_id, plan_id, data, body,
             status, attempts, next_attempt_at, created_at)
           VALUES (?, NULL, ?, ?, ?, NULL, NULL, ?, ?, 'pending', 0, ?, ?)`,
    values: [
      n.id,
      n.webhook,
      n.webhookUrl,
      n.event,
      JSON.stringify(n.data),
      n.body,
      n.nextAttemptAt,
      n.createdAt,
    ],
  };
}
