import type { Config } from '../config/schema.js';
import { type ExecuteMode, isFailedRunStatus } from '../domain/types.js';
import type { PlanStore, StateStore } from '../store/store.js';

export const AUTO_MODE_KEY = 'auto_mode';

export interface BreakerState {
  /** The admin switch (POST /v1/admin/auto-mode). */
  autoModeEnabled: boolean;
  recentExecutions: number;
  recentFailures: number;
  /** True when `edits` and `auto` may be used now. */
  closed: boolean;
  reason: string | null;
}

/**
 * The circuit breaker in front of the unattended modes. Between planning and execution the world may have
 * changed: an admin may have switched unattended execution off, or executions may have started failing.
 * Either way an execution asked to run in `edits` or `auto` falls back to `manual`.
 */
export async function breakerState(
  store: PlanStore & StateStore,
  config: Config,
  now: number,
): Promise<BreakerState> {
  const b = config.execute.breaker;
  const autoModeEnabled = (await store.getState(AUTO_MODE_KEY)) !== 'off';
  const statuses = await store.recentExecutions(now - b.window_ms, 100);
  const failures = statuses.filter(isFailedRunStatus).length;
  const tripped = statuses.length >= b.min_executions && failures / statuses.length >= b.max_failure_ratio;
  const reason = !autoModeEnabled
    ? 'unattended execution is switched off by an admin'
    : tripped
      ? `${failures} of the last ${statuses.length} executions failed`
      : null;
  return {
    autoModeEnabled,
    recentExecutions: statuses.length,
    recentFailures: failures,
    closed: reason === null,
    reason,
  };
}

export async function effectiveMode(
  store: PlanStore & StateStore,
  config: Config,
  wanted: ExecuteMode,
  now: number,
): Promise<{ mode: ExecuteMode; fallback: string | null }> {
  if (wanted === 'manual') return { mode: 'manual', fallback: null };
  const state = await breakerState(store, config, now);
  return state.closed ? { mode: wanted, fallback: null } : { mode: 'manual', fallback: state.reason };
}
