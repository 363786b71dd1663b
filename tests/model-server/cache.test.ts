/**
 * Prompt-cache accounting of the stand-in: breakpoints write the prefix up to their block, a later request
 * reads the longest live prefix within 20 blocks of one of its breakpoints, prefixes under the model's
 * minimum are never cached, entries expire after their TTL (refreshed on read).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cacheControlRefusal } from '../support/model-contract.js';
import { promptOf } from '../support/model-prompt.js';
import { rulesFor } from '../support/model-rules.js';
import { type ModelServer, promptTokens, script, startModelServer } from '../support/model-server.js';
import { assistant, expect400, sdk, user } from './helpers.js';

const MODEL = 'claude-sonnet-5-5'; // minimum cacheable prefix: 512 tokens
const BIG = `You are drydock. ${'Follow the repository conventions closely. '.repeat(100)}`; // ~1,100 tokens
const CC = { type: 'ephemeral' as const };
const H1 = { type: 'ephemeral' as const, ttl: '1h' as const };
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

  it('a 5-minute entry written before a wait of more than 5 minutes is gone; a 1-hour one is read', async () => {
    const body = (cc: object) => ({
      system: [{ type: 'text', text: BIG, cache_control: cc }],
      messages: [user('Go.')],
    });
    const five = await ask(body(CC));
    const oneHour = await ask({ ...body(H1), model: 'claude-opus-5-5' });
    expect(five.usage.cache_creation!.ephemeral_5m_input_tokens).toBeGreaterThan(0);
    expect(oneHour.usage.cache_creation!.ephemeral_1h_input_tokens).toBeGreaterThan(0);
    expect(oneHour.usage.cache_creation!.ephemeral_5m_input_tokens).toBe(0);
    t += 20 * MINUTE; // a person answers
    expect((await ask(body(CC))).usage.cache_read_input_tokens).toBe(0);
    const later = await ask({ ...body(H1), model: 'claude-opus-5-5' });
    expect(later.usage.cache_read_input_tokens).toBe(oneHour.usage.cache_creation_input_tokens);
    expect(later.usage.cache_creation_input_tokens).toBe(0);
  });

  it('mixed TTLs: 1-hour writes up to the last 1-hour breakpoint, 5-minute writes after it', async () => {
    const system = [{ type: 'text', text: BIG, cache_control: H1 }];
    const messages = [user([{ type: 'text', text: 'Summarise.', cache_control: H1 }]), assistant('Sure.')];
    const tail = user([
      { type: 'text', text: `Then list the files. ${'More detail. '.repeat(40)}`, cache_control: CC },
    ]);
    const r = await ask({ system, messages: [...messages, tail] });
    const upTo1h = promptTokens({ system, messages: messages.slice(0, 1) });
    expect(r.usage.cache_creation!.ephemeral_1h_input_tokens).toBe(upTo1h);
    expect(r.usage.cache_creation!.ephemeral_5m_input_tokens).toBe(r.total - upTo1h);
    // 20 minutes on, the 5-minute part is gone and the 1-hour part is read (and refreshed by the read).
    t += 20 * MINUTE;
    const again = await ask({ system, messages: [...messages, tail] });
    expect(again.usage.cache_read_input_tokens).toBe(upTo1h);
    expect(again.usage.cache_creation!.ephemeral_5m_input_tokens).toBe(r.total - upTo1h);
    expect(again.usage.cache_creation!.ephemeral_1h_input_tokens).toBe(0);
  });

  it('a 5-minute marker on a prefix read from a 1-hour entry leaves that entry an hour to live', async () => {
    const long = { system: [{ type: 'text', text: BIG, cache_control: H1 }], messages: [user('Go.')] };
    const first = await ask(long);
    const systemOnly = first.usage.cache_creation!.ephemeral_1h_input_tokens;
    // The same prefix, marked 5m: a read, which must not shorten the entry's life to 5 minutes.
    const short = { system: [{ type: 'text', text: BIG, cache_control: CC }], messages: [user('Go.')] };
    expect((await ask(short)).usage.cache_read_input_tokens).toBe(systemOnly);
    t += 30 * MINUTE;
    expect((await ask(short)).usage.cache_read_input_tokens).toBe(systemOnly);
  });

  it('refuses a ttl the API does not know, and a cache_control type other than ephemeral', async () => {
    await expect400(
      sdk(server).messages.create({
        model: MODEL,
        max_tokens: 1024,
        system: [{ type: 'text', text: BIG, cache_control: { type: 'ephemeral', ttl: '2h' } }],
        messages: [user('hi')],
      } as any),
      "system.0.cache_control.ttl: Input should be '5m' or '1h'",
    );
    await expect400(
      sdk(server).messages.create({
        model: MODEL,
        max_tokens: 1024,
        messages: [user([{ type: 'text', text: 'hi', cache_control: { type: 'persistent' } }])],
      } as any),
      "messages.0.content.0.cache_control.type: Input should be 'ephemeral'",
    );
    await expect400(
      sdk(server).messages.create({
        model: MODEL,
        max_tokens: 1024,
        cache_control: { type: 'ephemeral', ttl: '30m' },
        messages: [user('hi')],
      } as any),
      "cache_control.ttl: Input should be '5m' or '1h'",
    );
    // The explicit default is accepted and is a 5-minute write.
    const r = await ask({
      system: [{ type: 'text', text: BIG, cache_control: { type: 'ephemeral', ttl: '5m' } }],
      messages: [user('hi')],
    });
    expect(r.usage.cache_creation!.ephemeral_5m_input_tokens).toBeGreaterThan(0);
  });

  it('refuses a 1-hour breakpoint after a 5-minute one, the automatic breakpoint included', async () => {
    const order = "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block";
    await expect400(
      sdk(server).messages.create({
        model: MODEL,
        max_tokens: 1024,
        tools: [{ name: 'read', input_schema: { type: 'object' }, cache_control: CC }],
        system: [{ type: 'text', text: BIG, cache_control: H1 }],
        messages: [user('hi')],
      } as any),
      order,
    );
    // The top-level breakpoint sits on the last block: after a 5-minute one, it may not be 1h.
    await expect400(
      sdk(server).messages.create({
        model: MODEL,
        max_tokens: 1024,
        cache_control: H1,
        system: [{ type: 'text', text: BIG, cache_control: CC }],
        messages: [user('hi')],
      } as any),
      order,
    );
    // 1h before 5m is the allowed order.
    const ok = await ask({
      cache_control: CC,
      system: [{ type: 'text', text: BIG, cache_control: H1 }],
      messages: [user('hi')],
    });
    expect(ok.usage.cache_creation!.ephemeral_1h_input_tokens).toBeGreaterThan(0);
  });

  it('refuses a fifth breakpoint, however the TTLs are mixed', async () => {
    const blocks = Array.from({ length: 4 }, (_v, i) => ({
      type: 'text',
      text: `part ${i}`,
      cache_control: H1,
    }));
    await expect400(
      sdk(server).messages.create({
        model: MODEL,
        max_tokens: 1024,
        system: blocks,
        messages: [user([{ type: 'text', text: 'hi', cache_control: CC }])],
      } as any),
      'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    );
  });

  it('refuses "1h" on a model without the 1-hour cache, with the model named', () => {
    // Every model the stand-in serves has it (the pricing page prices 1-hour writes for each); the rule is
    // checked on a model's rules with the flag off.
    const rules = {
      ...rulesFor(MODEL, Date.parse('2026-12-04T00:00:00Z'))!,
      id: 'claude-without-1h',
      cacheTtl1h: false,
    };
    const body = { system: [{ type: 'text', text: BIG, cache_control: H1 }], messages: [user('hi')] };
    expect(cacheControlRefusal(body, promptOf(body), rules)).toBe(
      'The 1-hour cache duration (cache_control.ttl "1h") is not supported for the model claude-without-1h.',
    );
    expect(
      cacheControlRefusal(body, promptOf(body), rulesFor(MODEL, Date.parse('2026-12-04T00:00:00Z'))!),
    ).toBeNull();
    const fiveOnly = { system: [{ type: 'text', text: BIG, cache_control: CC }], messages: [user('hi')] };
    expect(cacheControlRefusal(fiveOnly, promptOf(fiveOnly), rules)).toBeNull();
  });
});
