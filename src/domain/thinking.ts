import { z } from 'zod';
import type { ThinkingOption } from './types.js';

// The thinking option a person may ask for, as the configuration and the API both accept it.

export const thinkingOptionSchema = z.union(
  [z.enum(['off', 'adaptive']), z.strictObject({ budget_tokens: z.int().min(1024).max(128_000) })],
  { error: 'expected off, adaptive or {budget_tokens: N} with N 1024-128000' },
);

/**
 * The shape before thinking became off | adaptive | {budget_tokens}, in the new one:
 * enabled with a budget keeps the budget, enabled without one is adaptive, disabled is off.
 */
export function fromLegacyThinking(v: {
  enabled: boolean;
  budget_tokens?: number | undefined;
}): ThinkingOption {
  if (!v.enabled) return 'off';
  return v.budget_tokens !== undefined ? { budget_tokens: v.budget_tokens } : 'adaptive';
}
