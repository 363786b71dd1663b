import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import type { Run, RunSettings, Session } from '../store/types.js';

const DEFAULT_THINKING_BUDGET = 4096;

/**
 * What a run is carried out with: the job's (or trigger's) options, then the session's defaults, then the
 * configuration. Thinking is always explicit: on with a budget, or off.
 */
export function resolveSettings(run: Run, session: Session, config: Config): RunSettings {
  const o = run.overrides;
  const d = session.defaults;
  const thinking = o.thinking ?? d.thinking;
  const budgetTokens = thinking?.budget_tokens ?? DEFAULT_THINKING_BUDGET;
  const maxTokens = config.anthropic.max_tokens;
  return {
    model: o.model ?? d.model ?? config.anthropic.model,
    // The API requires max_tokens above the thinking budget.
    maxTokens: thinking?.enabled ? Math.max(maxTokens, budgetTokens + 1024) : maxTokens,
    maxTurns: o.max_turns ?? d.max_turns ?? config.anthropic.max_turns,
    budgetUsd: o.budget_usd ?? d.budget_usd ?? config.runs.default_budget_usd,
    thinking: thinking?.enabled ? { enabled: true, budgetTokens } : { enabled: false },
  };
}

/** Where a pull request run's worktree lives while it plans. */
export const checkoutPath = (config: Config, runId: string) => join(config.data_dir, 'checkouts', runId);
