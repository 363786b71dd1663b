import Anthropic, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  OverloadedError,
} from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type ModelServer, promptTokens, startModelServer } from '../support/model-server.js';

const MODEL = 'claude-sonnet-4-6';

function client(server: ModelServer, opts: Record<string, unknown> = {}): Anthropic {
  return new Anthropic({ apiKey: 'test', baseURL: server.url, maxRetries: 0, ...opts });
}

function params(extra: Record<string, unknown> = {}): any {
  return { model: MODEL, max_tokens: 4096, messages: [{ role: 'user', content: 'hello' }], ...extra };
}

describe('model server driven by the real SDK', () => {
  let server: ModelServer;

  beforeEach(async () => {
    server = await startModelServer();
  });

  afterEach(async () => {
    await server.close();
  });

  it('streams text, thinking and tool_use; raw events arrive in API order and finalMessage() rebuilds them', async () => {
    const toolInput = { path: 'src/index.ts', pattern: 'TODO', context_lines: 3 };
    server.enqueue({
      kind: 'message',
      content: [
        {
          type: 'thinking',
          thinking: 'The user wants me to look for TODOs in the main entry point.',
          signature: 'sig-abc123==',
        },
        { type: 'text', text: 'Let me search the entry point for TODO markers before answering you.' },
        { type: 'tool_use', id: 'toolu_01test', name: 'grep', input: toolInput },
      ],
    });
    const stream = client(server).messages.stream(
      params({
        thinking: { type: 'enabled', budget_tokens: 2048 },
        tools: [{ name: 'grep', input_schema: { type: 'object' } }],
      }),
    );
    const events: any[] = [];
    for await (const ev of stream) events.push(ev);
    const final = await stream.finalMessage();

    const types = events.map((e) => (e.type === 'content_block_delta' ? `delta:${e.delta.type}` : e.type));
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    // Block 0: thinking, then its signature, then stop.
    const starts = events.filter((e) => e.type === 'content_block_start');
    expect(starts.map((e) => [e.index, e.content_block])).toEqual([
      [0, { type: 'thinking', thinking: '', signature: '' }],
      [1, { type: 'text', text: '' }],
      [2, { type: 'tool_use', id: 'toolu_01test', name: 'grep', input: {} }],
    ]);
    const thinkingDeltas = events.filter((e) => e.type === 'content_block_delta' && e.index === 0);
    expect(thinkingDeltas.at(-1).delta).toEqual({ type: 'signature_delta', signature: 'sig-abc123==' });
    expect(thinkingDeltas.slice(0, -1).every((e) => e.delta.type === 'thinking_delta')).toBe(true);
    const textDeltas = events.filter((e) => e.type === 'content_block_delta' && e.index === 1);
    expect(textDeltas.length).toBeGreaterThan(1);
    expect(textDeltas.every((e) => e.delta.type === 'text_delta')).toBe(true);
    // Each block's deltas sit between its start and its stop.
    for (const index of [0, 1, 2]) {
      const at = events.map((e, i) => [e, i] as const).filter(([e]) => e.index === index);
      expect(at[0]![0].type).toBe('content_block_start');
      expect(at.at(-1)![0].type).toBe('content_block_stop');
      expect(at.slice(1, -1).every(([e]) => e.type === 'content_block_delta')).toBe(true);
    }
    // (The SDK accumulates into the message_start object itself, so only its identity fields are checked here;
    // the pristine frame is checked on the wire in wire.test.ts.)
    expect(events[0].message).toMatchObject({ type: 'message', role: 'assistant', model: MODEL });
    expect(events[0].message.id).toMatch(/^msg_/);

    expect(final.content).toEqual([
      {
        type: 'thinking',
        thinking: 'The user wants me to look for TODOs in the main entry point.',
        signature: 'sig-abc123==',
      },
      { type: 'text', text: 'Let me search the entry point for TODO markers before answering you.' },
      { type: 'tool_use', id: 'toolu_01test', name: 'grep', input: toolInput },
    ]);
    expect(final.stop_reason).toBe('tool_use');
    expect(final.model).toBe(MODEL);
    expect(final.usage.output_tokens).toBeGreaterThan(1);
    expect(await stream.finalText()).toBe(
      'Let me search the entry point for TODO markers before answering you.',
    );

    expect(server.requests).toHaveLength(1);
    const rec = server.requests[0]!;
    expect(rec.body.stream).toBe(true);
    expect(rec.body.model).toBe(MODEL);
    expect(rec.headers.authorization ?? rec.headers['x-api-key']).toBeTruthy();
    expect(rec.headers['anthropic-version']).toBeTruthy();
  });

  it('reassembles tool input JSON split over at least 3 input_json_delta chunks into the exact object', async () => {
    const input = {
      command: 'grep -rn "needle" --include=*.ts src/',
      escapes: 'quote " backslash \\ newline \n tab \t unicode é 🚀 中文',
      numbers: [0, -1, 2.5, 1e21, 12345678901234],
      nested: { ok: true, nothing: null, deep: { list: [{ a: 1 }, { b: [2, 3] }], empty: {} } },
      long: 'x'.repeat(300),
    };
    server.enqueue({ kind: 'message', content: [{ type: 'tool_use', name: 'bash', input }] });
    const stream = client(server).messages.stream(params());
    const partials: string[] = [];
    stream.on('streamEvent', (ev) => {
      if (ev.type === 'content_block_delta' && ev.delta.type === 'input_json_delta')
        partials.push(ev.delta.partial_json);
    });
    const final = await stream.finalMessage();
    const nonEmpty = partials.filter((p) => p !== '');
    expect(nonEmpty.length).toBeGreaterThanOrEqual(3);
    expect(partials.join('')).toBe(JSON.stringify(input));
    // No single chunk is itself a complete JSON document: the split really is mid-structure.
    expect(nonEmpty.every((p) => p !== JSON.stringify(input))).toBe(true);
    const block = final.content[0]!;
    expect(block.type).toBe('tool_use');
    if (block.type !== 'tool_use') throw new Error('unreachable');
    expect(block.input).toEqual(input);
    expect(block.id).toMatch(/^toolu_/);
    expect(final.stop_reason).toBe('tool_use');
  });

  it('answers non-streaming create() with a full Message and default usage', async () => {
    server.enqueue({
      kind: 'message',
      content: [
        { type: 'thinking', thinking: 'Short plan.', signature: 'sig==' },
        { type: 'text', text: 'Hello back!' },
      ],
    });
    // Scripted thinking is only sent when the request thinks (Sonnet 4.6 does not unless asked).
    const msg = await client(server).messages.create(params({ thinking: { type: 'adaptive' } }));
    expect(msg).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: MODEL,
      stop_reason: 'end_turn',
      stop_sequence: null,
      content: [
        { type: 'thinking', thinking: 'Short plan.', signature: 'sig==' },
        { type: 'text', text: 'Hello back!' },
      ],
    });
    expect(msg.id).toMatch(/^msg_/);
    expect(msg._request_id).toMatch(/^req_/);
    const rec = server.requests[0]!;
    expect(rec.body.stream).toBeUndefined();
    expect(msg.usage).toEqual({
      input_tokens: promptTokens(rec.body),
      output_tokens: Math.ceil(('Short plan.'.length + 'Hello back!'.length) / 4),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      service_tier: 'standard',
    });
  });

  it('passes scripted usage, stop_reason and cache counters through both create() and stream()', async () => {
    const usage = {
      input_tokens: 12,
      output_tokens: 345,
      cache_creation_input_tokens: 100,
      cache_read_input_tokens: 2000,
      cache_creation: { ephemeral_5m_input_tokens: 40, ephemeral_1h_input_tokens: 60 },
    };
    const scripted = {
      kind: 'message' as const,
      content: [{ type: 'text' as const, text: 'cut' }],
      stop_reason: 'max_tokens' as const,
      usage,
    };
    server.enqueue(scripted, scripted);
    const anthropic = client(server);
    const created = await anthropic.messages.create(params());
    const streamed = await anthropic.messages.stream(params()).finalMessage();
    for (const m of [created, streamed]) {
      expect(m.stop_reason).toBe('max_tokens');
      expect(m.usage).toMatchObject({ ...usage, service_tier: 'standard' });
    }
  });

  it('answers from a dynamic script entry that sees the request', async () => {
    server.enqueue((req) => ({
      kind: 'message',
      content: [{ type: 'text', text: `you said: ${req.body.messages.at(-1).content}` }],
    }));
    const msg = await client(server).messages.create(
      params({ messages: [{ role: 'user', content: 'ping' }] }),
    );
    expect(msg.content).toEqual([{ type: 'text', text: 'you said: ping' }]);
  });

  it('retries a 429 after the retry-after delay and then succeeds', async () => {
    server.enqueue(
      { kind: 'status', status: 429, retryAfterSeconds: 1 },
      { kind: 'message', content: [{ type: 'text', text: 'finally' }] },
    );
    const msg = await client(server, { maxRetries: 2 }).messages.create(params());
    expect(msg.content).toEqual([{ type: 'text', text: 'finally' }]);
    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests as [any, any];
    expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(900);
    expect(first.status).toBe(429);
    expect(second.headers['x-stainless-retry-count']).toBe('1');
    expect(second.rawBody).toBe(first.rawBody);
  });

  it('gives up on repeated 529s once retries run out and surfaces the 529', async () => {
    server.enqueue(
      { kind: 'status', status: 529 },
      { kind: 'status', status: 529 },
      { kind: 'status', status: 529, message: 'Overloaded, really' },
    );
    const err = await client(server, { maxRetries: 2 })
      .messages.create(params())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OverloadedError);
    expect((err as APIError).status).toBe(529);
    expect((err as APIError).message).toContain('Overloaded, really');
    expect((err as APIError).error).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    expect((err as APIError).requestID).toMatch(/^req_/);
    expect(server.requests).toHaveLength(3);
    expect(server.remaining()).toBe(0);
  });

  it('retries a 500 and then succeeds (streaming)', async () => {
    server.enqueue(
      { kind: 'status', status: 500 },
      { kind: 'message', content: [{ type: 'text', text: 'recovered' }] },
    );
    const text = await client(server, { maxRetries: 1 }).messages.stream(params()).finalText();
    expect(text).toBe('recovered');
    expect(server.requests.map((r) => r.status)).toEqual([500, 200]);
  });

  it('rejects the stream when an `event: error` arrives mid-stream', async () => {
    server.enqueue({
      kind: 'message',
      content: [
        { type: 'text', text: 'first block arrives whole' },
        { type: 'text', text: 'second block never comes' },
      ],
      midStreamError: { afterBlocks: 1, type: 'overloaded_error', message: 'Overloaded mid-stream' },
    });
    const stream = client(server).messages.stream(params());
    const final = stream.finalMessage();
    final.catch(() => {});
    const events: any[] = [];
    const iterated = (async () => {
      for await (const ev of stream) events.push(ev);
    })();
    await expect(iterated).rejects.toThrow(/Overloaded mid-stream/);
    await expect(final).rejects.toThrow(/Overloaded mid-stream/);
    const err = await final.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).type).toBe('overloaded_error');
    expect(events.map((e) => e.type)).toEqual([
      'message_start',
      'content_block_start',
      ...events.slice(2, -1).map(() => 'content_block_delta'),
      'content_block_stop',
    ]);
    expect(events.some((e) => e.index === 1)).toBe(false);
  });

  it('times out against a hanging request, and close() still returns promptly', async () => {
    server.enqueue({ kind: 'hang' });
    const started = Date.now();
    const err = await client(server, { timeout: 500 })
      .messages.create(params())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIConnectionTimeoutError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect(server.requests).toHaveLength(1);
    const closing = Date.now();
    await server.close();
    expect(Date.now() - closing).toBeLessThan(1000);
  });

  it('close() destroys a request that is still hanging', async () => {
    server.enqueue({ kind: 'hang' });
    const pending = client(server, { timeout: 10_000 })
      .messages.create(params())
      .catch((e: unknown) => e);
    await server.waitForRequests(1);
    const closing = Date.now();
    await server.close();
    expect(Date.now() - closing).toBeLessThan(1000);
    const err = await pending;
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(err).not.toBeInstanceOf(APIConnectionTimeoutError);
  });

  it('answers 401 without credentials, and does not consume the script', async () => {
    server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'unused' }] });
    const anonymous = client(server, { defaultHeaders: { Authorization: null, 'X-Api-Key': null } });
    const err = await anonymous.messages.create(params()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect((err as APIError).status).toBe(401);
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
    expect(server.remaining()).toBe(1);
  });

  it('accepts unauthenticated requests when requireAuth is false', async () => {
    const open = await startModelServer({ requireAuth: false });
    try {
      open.enqueue({ kind: 'message', content: [{ type: 'text', text: 'open door' }] });
      const anonymous = client(open, { defaultHeaders: { Authorization: null, 'X-Api-Key': null } });
      expect((await anonymous.messages.create(params())).content).toEqual([
        { type: 'text', text: 'open door' },
      ]);
    } finally {
      await open.close();
    }
  });

  const malformed: Array<[string, Record<string, unknown>, RegExp]> = [
    ['missing model', { model: undefined }, /model: Field required/],
    ['missing max_tokens', { max_tokens: undefined }, /max_tokens: Field required/],
    ['missing messages', { messages: undefined }, /messages: Field required/],
    [
      'first message from the assistant',
      { messages: [{ role: 'assistant', content: 'hi' }] },
      /first message/,
    ],
    [
      'two user turns in a row',
      {
        messages: [
          { role: 'user', content: 'a' },
          { role: 'user', content: 'b' },
        ],
      },
      /roles must alternate/,
    ],
    [
      'tool_result for an unknown tool_use id',
      {
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_a', name: 'bash', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_b', content: 'ok' }] },
        ],
      },
      /unexpected `tool_use_id`.*toolu_b/,
    ],
    [
      'tool_use left without a tool_result',
      {
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_a', name: 'bash', input: {} }] },
          { role: 'user', content: 'no results here' },
        ],
      },
      /without `tool_result`.*toolu_a/,
    ],
    [
      'thinking budget below 1024',
      { thinking: { type: 'enabled', budget_tokens: 1000 } },
      /greater than or equal to 1024/,
    ],
    [
      'thinking budget not below max_tokens',
      { max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 2048 } },
      /`max_tokens` must be greater than `thinking.budget_tokens`/,
    ],
  ];

  it.each(malformed)('answers 400 invalid_request_error for %s', async (_name, patch, message) => {
    server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'unused' }] });
    const err = await client(server, { maxRetries: 2 })
      .messages.create(params(patch))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as APIError).status).toBe(400);
    expect((err as APIError).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error' },
    });
    expect((err as APIError).message).toMatch(message);
    expect(server.requests).toHaveLength(1);
    expect(server.remaining()).toBe(1);
  });

  it('accepts a well-formed tool round trip with thinking enabled', async () => {
    server.enqueue(
      {
        kind: 'message',
        content: [
          { type: 'thinking', thinking: 'plan' },
          { type: 'tool_use', id: 'toolu_a', name: 'bash', input: { cmd: 'ls' } },
          { type: 'tool_use', id: 'toolu_b', name: 'bash', input: { cmd: 'pwd' } },
        ],
      },
      { kind: 'message', content: [{ type: 'text', text: 'done' }] },
    );
    const anthropic = client(server);
    const thinking = { type: 'enabled', budget_tokens: 1024 };
    // Thinking blocks must come back with the signature the server made for them.
    const first = await anthropic.messages.create(
      params({ thinking, messages: [{ role: 'user', content: 'go' }] }),
    );
    expect(first.content[0]).toMatchObject({ type: 'thinking', thinking: 'plan' });
    const msg = await anthropic.messages.create(
      params({
        thinking,
        messages: [
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: first.content,
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_a', content: 'a.txt' },
              { type: 'tool_result', tool_use_id: 'toolu_b', content: '/repo', is_error: false },
              { type: 'text', text: 'carry on' },
            ],
          },
        ],
      }),
    );
    // With thinking on, the answer opens with a (server-made) thinking block.
    expect(msg.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(msg.content[1]).toEqual({ type: 'text', text: 'done' });
  });

  it('survives a client aborting mid-stream and keeps serving', async () => {
    server.enqueue(
      { kind: 'message', content: [{ type: 'text', text: 'word '.repeat(200) }], chunkDelayMs: 20 },
      { kind: 'message', content: [{ type: 'text', text: 'still here' }] },
    );
    const anthropic = client(server);
    const ac = new AbortController();
    const stream = anthropic.messages.stream(params(), { signal: ac.signal });
    const final = stream.finalMessage();
    final.catch(() => {});
    let seen = 0;
    const iterated = (async () => {
      for await (const ev of stream) {
        if (ev.type === 'content_block_delta' && ++seen === 2) ac.abort();
      }
    })();
    await expect(iterated).rejects.toBeInstanceOf(APIUserAbortError);
    await expect(final).rejects.toBeInstanceOf(APIUserAbortError);
    expect(stream.aborted).toBe(true);
    await vi.waitFor(() => expect(server.requests[0]!.clientAborted).toBe(true), { timeout: 2000 });

    expect(await anthropic.messages.stream(params()).finalText()).toBe('still here');
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.clientAborted).toBe(false);
  });

  it('fails loudly, without SDK retries, when the script runs out; setFallback() replaces that', async () => {
    const err = await client(server, { maxRetries: 2 })
      .messages.create(params())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect((err as APIError).message).toMatch(/script ran out/);
    expect(server.requests).toHaveLength(1);

    server.setFallback({ kind: 'message', content: [{ type: 'text', text: 'again' }] });
    const anthropic = client(server);
    expect((await anthropic.messages.create(params())).content).toEqual([{ type: 'text', text: 'again' }]);
    expect(await anthropic.messages.stream(params()).finalText()).toBe('again');
    server.setFallback(null);
    await expect(anthropic.messages.create(params())).rejects.toThrow(/script ran out/);
  });

  it('honours delayMs before the first byte and chunkDelayMs between events', async () => {
    server.enqueue({
      kind: 'message',
      content: [{ type: 'text', text: 'slow' }],
      delayMs: 300,
      chunkDelayMs: 30,
    });
    const started = Date.now();
    const stream = client(server).messages.stream(params());
    const stamps: number[] = [];
    stream.on('streamEvent', () => stamps.push(Date.now()));
    await stream.finalMessage();
    expect(stamps[0]! - started).toBeGreaterThanOrEqual(280);
    // message_start, block start, ping (skipped by the SDK), delta, block stop, message_delta, message_stop
    expect(stamps.at(-1)! - stamps[0]!).toBeGreaterThanOrEqual(5 * 30 - 20);
  });
});
