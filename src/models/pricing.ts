import type { TokenUsage } from '../domain/types.js';
import { type ModelSpec, priceFor } from './catalogue.js';

/** The usage block of a Messages API response, as much of it as pricing needs. */
export interface ApiUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation?: {
    ephemeral_5m_input_tokens?: number | null;
    ephemeral_1h_input_tokens?: number | null;
  } | null;
}

/** Splits an API usage block into the kinds that are priced differently. */
export function tokensOf(u: ApiUsage): Required<TokenUsage> {
  const created = u.cache_creation_input_tokens ?? 0;
  const oneHour = u.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  // Without a breakdown every cache write counts as a 5-minute write (the default TTL).
  const fiveMinutes = u.cache_creation ? (u.cache_creation.ephemeral_5m_input_tokens ?? 0) : created;
  return {
    input_tokens: u.input_tokens ?? 0,
    output_tokens: u.output_tokens ?? 0,
    cache_write_5m_tokens: fiveMinutes,
    cache_write_1h_tokens: oneHour,
    cache_read_tokens: u.cache_read_input_tokens ?? 0,
  };
}

export function addUsage(a: TokenUsage, b: TokenUsage): Required<TokenUsage> {
  return {
    input_tokens: (a.input_tokens ?? 0) + (b.input_tokens ?? 0),
    output_tokens: (a.output_tokens ?? 0) + (b.output_tokens ?? 0),
    cache_write_5m_tokens: (a.cache_write_5m_tokens ?? 0) + (b.cache_write_5m_tokens ?? 0),
    cache_write_1h_tokens: (a.cache_write_1h_tokens ?? 0) + (b.cache_write_1h_tokens ?? 0),
    cache_read_tokens: (a.cache_read_tokens ?? 0) + (b.cache_read_tokens ?? 0),
  };
}

/** The prompt of one request: what long-prompt price bands are decided on (input, cache reads and writes). */
export function promptTokensOf(t: TokenUsage): number {
  return (
    (t.input_tokens ?? 0) +
    (t.cache_read_tokens ?? 0) +
    (t.cache_write_5m_tokens ?? 0) +
    (t.cache_write_1h_tokens ?? 0)
  );
}

/**
 * USD for the tokens of one request (or a sum of them) at the model's prices per million tokens; a model
 * with a long-prompt band charges every token of a request above the threshold at the band's prices.
 */
export function costOf(
  t: TokenUsage,
  model: Pick<ModelSpec, 'price' | 'long_prompt'>,
  promptTokens: number,
): number {
  const p = priceFor(model, promptTokens);
  const usd =
    ((t.input_tokens ?? 0) * p.input +
      (t.output_tokens ?? 0) * p.output +
      (t.cache_write_5m_tokens ?? 0) * p.cache_write_5m +
      (t.cache_write_1h_tokens ?? 0) * p.cache_write_1h +
      (t.cache_read_tokens ?? 0) * p.cache_read) /
    1_000_000;
  // Stored and shown to a millionth of a dollar.
  return Math.round(usd * 1e6) / 1e6;
}
