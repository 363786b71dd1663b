import Anthropic from '@anthropic-ai/sdk';
import { afterEach, expect, it } from 'vitest';
import { createModelClient } from '../../src/models/client.js';
import { type ModelServer, script, startModelServer } from '../support/model-server.js';

// The SDK retries every 429 unless told not to; drydock's client tells it not to for a spend limit's 429 only.

let model: ModelServer;
afterEach(async () => {
  await model?.close();
});

const ask = (client: Anthropic) =>
  client.messages.create({
    model: 'claude-sonnet-5-5',
    max_tokens: 64,
    messages: [{ role: 'user', content: 'hi' }],
  });

const config = (url: string) => ({ api_key: 'k', base_url: url, max_retries: 3, request_timeout_ms: 10_000 });

it("a spend limit's 429 is sent once: the SDK's own retries do not fire (the plain SDK would try four times)", async () => {
  model = await startModelServer();
  model.setFallback(script.spendLimitReached());
  const err = await ask(createModelClient(config(model.url))).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(Anthropic.RateLimitError);
  expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
    error: { type: 'rate_limit_error', details: { error_code: 'enforced_spend_limit_reached' } },
  });
  expect(model.requests).toHaveLength(1);

  // The same answer to the SDK as it comes: retried, as the rate-limits page warns.
  const plain = new Anthropic({ apiKey: 'k', baseURL: model.url, maxRetries: 3 });
  await ask(plain).catch(() => {});
  expect(model.requests).toHaveLength(1 + 4);
});

it('an ordinary 429 and a 529 are still retried by the SDK through it', async () => {
  model = await startModelServer();
  model.enqueue(
    script.rateLimited(0.01),
    { ...script.overloaded(), retryAfterSeconds: 0.01 },
    script.text('ok'),
  );
  const reply = await ask(createModelClient(config(model.url)));
  expect(reply.content.at(-1)).toEqual({ type: 'text', text: 'ok' });
  expect(model.requests.map((r) => r.status)).toEqual([429, 529, 200]);
});
