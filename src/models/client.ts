import Anthropic from '@anthropic-ai/sdk';
import { errorCodeOf, isSpendLimitCode } from './errors.js';

/** What the Messages API client is built from (config.anthropic's fields of it). */
export interface ModelClientConfig {
  api_key: string | null;
  base_url: string | null;
  max_retries: number;
  request_timeout_ms: number;
}

type Fetch = typeof globalThis.fetch;

/**
 * The Messages API client drydock uses: the SDK, with a fetch that marks a spend limit's 429 as not to be
 * retried. The SDK retries every 429 (`maxRetries` times) unless the response says `x-should-retry: false`,
 * which it obeys over its own rule (SDK 1.14, client.js shouldRetry); a spend limit's 429 fails until access
 * resumes (Rate limits page, see errors.ts), so that one request is the only one. Nothing else changes: an
 * ordinary rate limit (429 without the spend-limit code) and 5xx keep the SDK's retries.
 */
export function createModelClient(
  config: ModelClientConfig,
  overrides: { maxRetries?: number; timeout?: number } = {},
): Anthropic {
  return new Anthropic({
    apiKey: config.api_key,
    baseURL: config.base_url,
    maxRetries: overrides.maxRetries ?? config.max_retries,
    timeout: overrides.timeout ?? config.request_timeout_ms,
    fetch: spendLimitFinal(globalThis.fetch),
  });
}

/** `fetch`, with `x-should-retry: false` added to a 429 whose body names a spend limit. */
export function spendLimitFinal(inner: Fetch): Fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    if (response.status !== 429 || response.headers.get('x-should-retry') === 'false') return response;
    const text = await response.text();
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: not the API's spend-limit answer.
    }
    const headers = new Headers(response.headers);
    if (isSpendLimitCode(errorCodeOf(body))) headers.set('x-should-retry', 'false');
    return new Response(text, { status: response.status, statusText: response.statusText, headers });
  };
}
