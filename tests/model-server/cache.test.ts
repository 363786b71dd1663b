/**
 * Prompt-cache accounting of the stand-in: breakpoints write the prefix up to their block, a later request
 * reads the longest live prefix within 20 blocks of one of its breakpoints, prefixes under the model's
 * minimum are never cached, entries expire after their TTL (refreshed on read).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ModelServer, promptTokens, script, startModelServer } from '../support/model-server.js';
import { assistant, sdk, user } from './helpers.js';

const MODEL = 'claude-sonnet-5-5'; // minimum cacheable prefix: 512 tokens
const BIG = `You are drydock. ${'Follow the repository conventions closely. '.repeat(100)}`; // ~1,100 tokens
const CC = { type: 'ephemeral' as const };
const MINUTE = 60_000;

type Usage = Anthropic.Usage;

describe('prompt-cache accounting', () => {
  let server: ModelServer;
  let t: number;

  beforeEach(async () => {
    t = 1_000_000;
    server = await startModelServer({ now: () => t });
    server.setFallback(script.text('noted'));
  });

  afterEach(async () => {
    await server.close();
  });

  async function ask(
    body: Record<string, unknown>,
  ): Promise<{ usage: Usage; total: number; content: any[] }> {
    const res = await sdk(server).messages.create({ model: MODEL, max_tokens: 1024, ...body } as any);
    const total = promptTokens(server.requests.at(-1)!.body);
    const u = res.usage;
    // Every input token is read, written or plain input, exactly once.
    expect(u.input_tokens + u.cache_read_input_tokens! + u.cache_creation_input_tokens!).toBe(total);
    expect(u.cache_creation!.ephemeral_5m_input_tokens + u.cache_creation!.ephemeral_1h_input_tokens).toBe(
      u.cache_creation_input_tokens,
    );
    return { usage: u, total, content: res.content };
  }

  function turn1Body(): Record<string, unknown> {
    return {
      system: BIG,
      messages: [user([{ type: 'text', text: 'What does this repo do?', cache_control: CC }])],
    };
  }

  it('turn 2 of an append-only conversation reads the prefix turn 1 wrote', async () => {
    const first = await ask(turn1Body());
    expect(first.usage).toMatchObject({
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: first.total,
      input_tokens: 0,
    });
    // The breakpoint moves to the newest message; the marker itself is not part of the prefix.
    const second = await ask({
      system: BIG,
      messages: [
        user([{ type: 'text', text: 'What does this repo do?' }]),
        assistant(first.content),
        user([{ type: 'text', text: 'And how is it tested?', cache_control: CC }]),
      ],
    });
    expect(second.usage.cache_read_input_tokens).toBe(first.total);
    expect(second.usage.cache_creation_input_tokens).toBe(second.total - first.total);
    expect(second.usage.cache_creation!.ephemeral_5m_input_tokens).toBe(second.total - first.total);
    expect(second.usage.input_tokens).toBe(0);

    // Tokens after the last breakpoint are plain input.
    const third = await ask({
      system: BIG,
      messages: [
        user('What does this repo do?'),
        assistant(first.content),
        user([
          { type: 'text', text: 'And how is it tested?', cache_control: CC },
          { type: 'text', text: 'Answer briefly.' },
        ]),
      ],
    });
    expect(third.usage.cache_read_input_tokens).toBe(second.total);
    expect(third.usage.cache_creation_input_tokens).toBe(0);
    expect(third.usage.input_tokens).toBe(third.total - second.total);
  });

  it('never caches a prefix under the model minimum', async () => {
    const small = {
      system: 'Be brief.',
      messages: [user([{ type: 'text', text: 'hi', cache_control: CC }])],
    };
    for (let i = 0; i < 2; i++) {
      const r = await ask(small);
      expect(r.usage).toMatchObject({
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
        input_tokens: r.total,
      });
      expect(r.total).toBeLessThan(512);
    }
    // ~1,100 tokens is cached on Sonnet 5.5 (512) but not on Haiku 4.5 (4096).
    const haiku = await ask({ ...turn1Body(), model: 'claude-haiku-4-5' });
    expect(haiku.total).toBeGreaterThan(512);
    expect(haiku.usage.cache_creation_input_tokens).toBe(0);
    expect((await ask(turn1Body())).usage.cache_creation_input_tokens).toBeGreaterThan(0);
  });

  it('a short first breakpoint folds into the next one that reaches the minimum', async () => {
    const r = await ask({
      system: [{ type: 'text', text: 'Short.', cache_control: CC }],
      messages: [user([{ type: 'text', text: BIG, cache_control: CC }])],
    });
    expect(r.usage.cache_creation_input_tokens).toBe(r.total);
  });

  it('a changed system prompt writes anew', async () => {
    const first = await ask(turn1Body());
    const changed = await ask({ ...turn1Body(), system: `${BIG} Today is Monday.` });
    expect(changed.usage.cache_read_input_tokens).toBe(0);
    expect(changed.usage.cache_creation_input_tokens).toBe(changed.total);
    expect(changed.total).toBeGreaterThan(first.total);
  });

  it('caches per model', async () => {
    await ask(turn1Body());
    const other = await ask({ ...turn1Body(), model: 'claude-opus-5-5' });
    expect(other.usage.cache_read_input_tokens).toBe(0);
  });

  it('5-minute entries expire, and a read refreshes them', async () => {
    const first = await ask(turn1Body());
    t += 4 * MINUTE;
    expect((await ask(turn1Body())).usage.cache_read_input_tokens).toBe(first.total);
    t += 4 * MINUTE; // 8 minutes after the write, 4 after the refreshing read
    expect((await ask(turn1Body())).usage.cache_read_input_tokens).toBe(first.total);
    t += 5 * MINUTE + 1;
    const expired = await ask(turn1Body());
    expect(expired.usage.cache_read_input_tokens).toBe(0);
    expect(expired.usage.cache_creation_input_tokens).toBe(first.total);
  });

  it('1-hour entries outlive 5 minutes and are counted as 1h writes', async () => {
    const system = [{ type: 'text', text: BIG, cache_control: { type: 'ephemeral', ttl: '1h' } }];
    const messages = [user([{ type: 'text', text: 'Summarise.', cache_control: CC }])];
    const first = await ask({ system, messages });
    const systemOnly = promptTokens({ system, messages: [] });
    expect(first.usage.cache_creation!.ephemeral_1h_input_tokens).toBe(systemOnly);
    expect(first.usage.cache_creation!.ephemeral_5m_input_tokens).toBe(first.total - systemOnly);
    t += 30 * MINUTE;
    const later = await ask({ system, messages });
    expect(later.usage.cache_read_input_tokens).toBe(systemOnly);
    expect(later.usage.cache_creation!.ephemeral_5m_input_tokens).toBe(first.total - systemOnly);
    t += 61 * MINUTE; // an hour after the refreshing read
    expect((await ask({ system, messages })).usage.cache_read_input_tokens).toBe(0);
  });

  it('looks back 20 blocks from a breakpoint, no further', async () => {
    const first = await ask(turn1Body());
    const withBlocks = (n: number) => ({
      system: BIG,
      messages: [
        user('What does this repo do?'),
        assistant(Array.from({ length: n }, (_v, i) => ({ type: 'text', text: `part ${i}` }))),
        user([{ type: 'text', text: 'Go on.', cache_control: CC }]),
      ],
    });
    // The new breakpoint is n + 1 blocks after the old one: n = 18 puts the old one at the 20th position
    // checked (the breakpoint's own block is the first), n = 19 one past it.
    expect((await ask(withBlocks(18))).usage.cache_read_input_tokens).toBe(first.total);
    expect((await ask(withBlocks(19))).usage.cache_read_input_tokens).toBe(0);
  });

  it('top-level cache_control caches up to the last block', async () => {
    const first = await ask({ system: BIG, cache_control: CC, messages: [user('One.')] });
    expect(first.usage.cache_creation_input_tokens).toBe(first.total);
    const second = await ask({
      system: BIG,
      cache_control: CC,
      messages: [user('One.'), assistant(first.content), user('Two.')],
    });
    expect(second.usage.cache_read_input_tokens).toBe(first.total);
  });

  it('the stream reports the same usage in message_start and message_delta', async () => {
    await ask(turn1Body());
    const stream = sdk(server).messages.stream({ model: MODEL, max_tokens: 1024, ...turn1Body() } as any);
    let startUsage: any;
    stream.on('streamEvent', (e) => {
      if (e.type === 'message_start') startUsage = { ...e.message.usage };
    });
    const final = await stream.finalMessage();
    expect(startUsage.cache_read_input_tokens).toBeGreaterThan(0);
    expect(final.usage.cache_read_input_tokens).toBe(startUsage.cache_read_input_tokens);
    expect(final.usage.input_tokens).toBe(startUsage.input_tokens);
  });
});
