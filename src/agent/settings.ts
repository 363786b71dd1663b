import type { Config } from '../config/schema.js';
import type { Run, RunSettings, Session } from '../domain/types.js';
import { findModel, readThinkingOption, shapeThinking } from '../models/catalogue.js';

/**
 * What a run is carried out with: the job's (or trigger's) options, then the session's defaults, then the
 * configuration; thinking and effort translated to what the model accepts (models/catalogue.ts).
 */
export function resolveSettings(run: Run, session: Session, config: Config): RunSettings {
  const o = run.overrides;
  const d = session.defaults;
  const model = o.model ?? d.model ?? config.anthropic.model;
  // Stored options may predate the current shape of `thinking`.
  const thinking =
    readThinkingOption(o.thinking) ?? readThinkingOption(d.thinking) ?? config.anthropic.thinking;
  const effort = o.effort ?? d.effort ?? config.anthropic.effort;
  const shape = shapeThinking(findModel(config, model), {
    thinking,
    effort,
    maxTokens: config.anthropic.max_tokens,
  });
  return {
    model,
    maxTokens: shape.max_tokens,
    maxTurns: o.max_turns ?? d.max_turns ?? config.anthropic.max_turns,
    budgetUsd: o.budget_usd ?? d.budget_usd ?? config.runs.default_budget_usd,
    thinking,
    effort,
    request: {
      thinking: shape.thinking ?? null,
      effort: shape.output_config?.effort ?? null,
      notes: shape.notes,
    },
  };
}

/** Where a pull request run's worktree lives while it plans. */
