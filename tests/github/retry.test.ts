import { describe, expect, it } from 'vitest';
import { REPORT_RETRY, type RetryPolicy, retryDelay } from '../../src/github/client.js';

const NOW = Date.parse('2026-06-01T08:00:00.000Z');
const policy: RetryPolicy = { ...REPORT_RETRY, baseDelayMs: 1_000, maxDelayMs: 60_000 };

/** Shaped like Octokit's RequestError (status, response.headers), which retryDelay reads. */
function failed(status: number, headers: Record<string, string> = {}, message = 'failed'): Error {
  return Object.assign(new Error(message), { status, response: { status, headers, data: { message } } });
}

describe('retryDelay', () => {
  it('backs off on 5xx and network failures, doubling per try with jitter', () => {
    for (const status of [500, 502, 503]) {
      const first = retryDelay(failed(status), 1, policy, NOW)!;
      expect(first).toBeGreaterThanOrEqual(500);
      expect(first).toBeLessThanOrEqual(1_000);
      const third = retryDelay(failed(status), 3, policy, NOW)!;
      expect(third).toBeGreaterThanOrEqual(2_000);
      expect(third).toBeLessThanOrEqual(4_000);
    }
  });

  it('obeys retry-after (seconds or a date) on 429 and on a 403 secondary rate limit', () => {
    expect(retryDelay(failed(429, { 'retry-after': '3' }), 1, policy, NOW)).toBe(3_000);
    expect(retryDelay(failed(403, { 'retry-after': '2' }), 1, policy, NOW)).toBe(2_000);
    const date = new Date(NOW + 5_000).toUTCString();
    expect(retryDelay(failed(503, { 'retry-after': date }), 1, policy, NOW)).toBe(5_000);
  });

  it('waits for the rate-limit reset when none remain, and a minute for a bare secondary limit', () => {
    const reset = String(Math.floor(NOW / 1000) + 30);
    expect(
      retryDelay(failed(403, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset }), 1, policy, NOW),
    ).toBe(30_000);
    expect(
      retryDelay(failed(403, {}, 'You have exceeded a secondary rate limit. Please wait.'), 1, policy, NOW),
    ).toBe(60_000);
  });

  it('gives up rather than call early when GitHub asks for a longer wait than the cap', () => {
    expect(retryDelay(failed(403, { 'retry-after': '3600' }), 1, policy, NOW)).toBeNull();
    const short = { ...policy, maxDelayMs: 10_000 };
    expect(retryDelay(failed(403, {}, 'secondary rate limit'), 1, short, NOW)).toBeNull();
  });

  it('does not retry what a retry cannot fix', () => {
    for (const status of [400, 401, 404, 422]) expect(retryDelay(failed(status), 1, policy, NOW)).toBeNull();
    expect(retryDelay(failed(403, {}, 'Resource not accessible by integration'), 1, policy, NOW)).toBeNull();
    expect(retryDelay(new Error('not an HTTP error'), 1, policy, NOW)).toBeNull();
  });
});
