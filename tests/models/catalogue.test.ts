import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/load.js';
import type { ThinkingOption } from '../../src/domain/types.js';
import { findModel, modelProblems, readThinkingOption, shapeThinking } from '../../src/models/catalogue.js';
import { classifyModelError } from '../../src/models/errors.js';
import { costOf } from '../../src/models/pricing.js';

/** The day this catalogue was checked against the docs. */
const NOW = Date.UTC(2026, 11, 4);

const config = defaultConfig();
const shape = (model: string, thinking: ThinkingOption, effort: string | null = null, maxTokens = 32_000) =>
  shapeThinking(findModel(config, model), { thinking, effort: effort as never, maxTokens });

describe('thinking and effort, translated per model', () => {
  it('Sonnet 5.5: adaptive is displayed; off is between_tools (no display, effort at most high); no budgets', () => {
    expect(shape('claude-sonnet-5-5', 'adaptive')).toEqual({
      thinking: { type: 'adaptive', display: 'summarized' },
      max_tokens: 32_000,
      notes: [],
    });
    expect(shape('claude-sonnet-5-5', 'off', 'max')).toEqual({
      thinking: { type: 'between_tools' },
      output_config: { effort: 'high' },
      max_tokens: 32_000,
      notes: ['claude-sonnet-5-5 takes effort high at most with thinking off; high is used instead of max'],
    });
    const budget = shape('claude-sonnet-5-5', { budget_tokens: 8000 }, 'low');
    expect(budget.thinking).toEqual({ type: 'adaptive', display: 'summarized' });
    expect(budget.output_config).toEqual({ effort: 'low' });
    expect(budget.notes[0]).toMatch(/takes no thinking budget/);
  });

  it('Opus 5.5 always thinks: off is adaptive at the lowest effort, with a note', () => {
    const s = shape('claude-opus-5-5', 'off');
    expect(s.thinking).toEqual({ type: 'adaptive', display: 'summarized' });
    expect(s.output_config).toEqual({ effort: 'low' });
    expect(s.notes).toEqual([
      'claude-opus-5-5 always thinks; thinking "off" runs adaptive thinking at low effort',
    ]);
  });

  it('Haiku 4.5: enabled with a budget or disabled; max_tokens capped at 64K and kept above the budget', () => {
    expect(shape('claude-haiku-4-5', 'off')).toEqual({
      thinking: { type: 'disabled' },
      max_tokens: 32_000,
      notes: [],
    });
    expect(shape('claude-haiku-4-5', 'adaptive').thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
    const big = shape('claude-haiku-4-5', { budget_tokens: 100_000 }, 'high', 200_000);
    expect(big.max_tokens).toBe(64_000);
    expect(big.thinking?.budget_tokens).toBe(64_000 - 1024);
    expect(big.notes).toEqual([
      'max_tokens lowered to 64000, the output cap of claude-haiku-4-5',
      'thinking budget lowered to 62976 to stay below the output cap of claude-haiku-4-5 (64000)',
      'claude-haiku-4-5 takes no effort setting; effort high is not sent',
    ]);
    const small = shape('claude-haiku-4-5', { budget_tokens: 2048 }, null, 1500);
    expect(small.thinking?.budget_tokens).toBe(2048);
    expect(small.max_tokens).toBeGreaterThan(2048);
    // The dated alias resolves to the same entry.
    expect(findModel(config, 'claude-haiku-4-5-20251001').id).toBe('claude-haiku-4-5');
  });

  it('Sonnet 5: off is disabled; effort xhigh is kept where the model has it, mapped where it does not', () => {
    expect(shape('claude-sonnet-5', 'off').thinking).toEqual({ type: 'disabled' });
    expect(shape('claude-sonnet-5', 'adaptive', 'xhigh').output_config).toEqual({ effort: 'xhigh' });
    const opus45 = shape('claude-opus-4-5', 'adaptive', 'xhigh');
    expect(opus45.output_config).toEqual({ effort: 'high' });
    expect(opus45.notes).toEqual(['claude-opus-4-5 has no xhigh effort; high is used']);
  });

  it('an unknown model gets no thinking or effort settings at all', () => {
    const unknown = shapeThinking(findModel(config, 'claude-next'), {
      thinking: 'adaptive',
      effort: 'high',
      maxTokens: 9000,
    });
    expect(unknown.thinking).toBeUndefined();
    expect(unknown.output_config).toBeUndefined();
    expect(unknown.max_tokens).toBe(9000);
  });

  it('reads stored options in the old {enabled, budget_tokens} shape', () => {
    expect(readThinkingOption({ enabled: false })).toBe('off');
    expect(readThinkingOption({ enabled: true })).toBe('adaptive');
    expect(readThinkingOption({ enabled: true, budget_tokens: 2048 })).toEqual({ budget_tokens: 2048 });
    expect(readThinkingOption('off')).toBe('off');
    expect(readThinkingOption({ budget_tokens: 3000 })).toEqual({ budget_tokens: 3000 });
    expect(readThinkingOption(42)).toBeUndefined();
  });
});

describe('prices', () => {
  it('Sonnet 5.5 at the current price list (cache reads 0.10 since 2026-10-07)', () => {
    const m = findModel(config, 'claude-sonnet-5-5');
    const usd = costOf(
      {
        input_tokens: 1_000_000,
        output_tokens: 1_000_000,
        cache_read_tokens: 1_000_000,
        cache_write_5m_tokens: 1_000_000,
      },
      m,
      3_000_000,
    );
    expect(usd).toBeCloseTo(2 + 10 + 0.1 + 2.5, 6);
  });

  it('Haiku 5.5 charges every token of a request whose prompt is above 100,000 tokens at the higher band', () => {
    const m = findModel(config, 'claude-haiku-5-5');
    const small = { input_tokens: 50_000, cache_read_tokens: 50_000, output_tokens: 1_000 };
    expect(costOf(small, m, 100_000)).toBeCloseTo((50_000 * 0.1 + 50_000 * 0.01 + 1_000 * 0.5) / 1e6, 5);
    const large = { input_tokens: 50_001, cache_read_tokens: 50_000, output_tokens: 1_000 };
    expect(costOf(large, m, 100_001)).toBeCloseTo((50_001 * 0.5 + 50_000 * 0.05 + 1_000 * 2.5) / 1e6, 5);
  });
});

describe('models described in the configuration', () => {
  const custom = {
    models: {
      'budget-only': {
        thinking: ['enabled' as const],
        price: { input: 1, output: 1, cache_write_5m: 1, cache_write_1h: 1, cache_read: 1 },
      },
      'no-price': { thinking: ['adaptive' as const] },
    },
    pricing: {},
  };

  it('each wish goes to a thinking type the model accepts, or to none with a note', () => {
    const m = findModel(custom, 'budget-only');
    const off = shapeThinking(m, { thinking: 'off', effort: null, maxTokens: 8000 });
    expect(off.thinking).toBeUndefined();
    expect(off.notes).toEqual(['budget-only cannot turn thinking off; no thinking setting is sent']);
    expect(shapeThinking(m, { thinking: 'adaptive', effort: null, maxTokens: 8000 }).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 4096,
    });
  });

  it('a described model without a price is an error, as an unknown one is', () => {
    expect(modelProblems(custom, 'no-price', NOW).errors).toEqual([
      'no-price has no price; add models.no-price.price (budgets are enforced from it)',
    ]);
    expect(modelProblems(custom, 'budget-only', NOW)).toEqual({ errors: [], warnings: [], notes: [] });
  });
});

describe('model failures', () => {
  it('retries the network and the API, never a failure of its own', () => {
    const terminated = new TypeError('terminated');
    expect(classifyModelError(terminated, 'm')).toMatchObject({ retry: true });
    expect(classifyModelError(new Anthropic.APIConnectionError({ message: 'reset' }), 'm')).toMatchObject({
      retry: true,
    });
    const own = classifyModelError(new Error('SQLITE_FULL: database or disk is full'), 'm');
    expect(own.retry).toBe(false);
    expect(own.reason).toBe(
      "an unexpected error while reading the model's reply (Error: SQLITE_FULL: database or disk is full)",
    );
  });
});
