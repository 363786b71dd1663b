import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ModelServer,
  splitIntoChunks,
  startModelServer,
  validateMessagesRequest,
} from '../support/model-server.js';

const MODEL = 'claude-sonnet-4-6';
const AUTH = { 'x-api-key': 'test', 'anthropic-version': '2023-06-01' };

function post(
  server: ModelServer,
  body: unknown,
  headers: Record<string, string> = AUTH,
  path = '/v1/messages',
): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function request(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: MODEL, max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }], ...extra };
}

function json(res: Response): Promise<any> {
  return res.json();
}

/** Splits an SSE body into frames, asserting the exact `event: X\ndata: {json}` layout of each one. */
function frames(text: string): Array<{ event: string; data: any }> {
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((raw) => {
      const lines = raw.split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^event: [a-z_]+$/);
      expect(lines[1]).toMatch(/^data: \{/);
      const event = lines[0]!.slice('event: '.length);
      const data = JSON.parse(lines[1]!.slice('data: '.length));
      expect(data.type).toBe(event);
      return { event, data };
    });
}

describe('model server wire format', () => {
  let server: ModelServer;

  beforeEach(async () => {
    server = await startModelServer();
  });

  afterEach(async () => {
    await server.close();
  });

  it('streams SSE frames in the real API order with the real field shapes', async () => {
    server.enqueue({
      kind: 'message',
      content: [
        { type: 'thinking', thinking: 'Considering the request carefully, step by step.' },
        { type: 'text', text: 'Here is a reasonably long answer, long enough to be split.' },
        { type: 'tool_use', id: 'toolu_01x', name: 'read_file', input: { path: 'README.md', limit: 200 } },
      ],
      usage: { cache_read_input_tokens: 7 },
    });
    // Sonnet 4.6 thinks only when asked, and shows summarized thinking by default.
    const res = await post(server, request({ stream: true, thinking: { type: 'adaptive' } }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    const fs = frames(await res.text());

    const start = fs[0]!;
    expect(start.event).toBe('message_start');
    expect(start.data.message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [],
      stop_reason: null,
      stop_sequence: null,
    });
    expect(start.data.message.id).toMatch(/^msg_01/);
    expect(start.data.message.usage).toEqual({
      input_tokens: expect.any(Number),
      output_tokens: 1,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 7,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      service_tier: 'standard',
    });
    expect(fs.findIndex((f) => f.event === 'ping')).toBeLessThanOrEqual(2);

    const byIndex = (i: number) => fs.filter((f) => f.data.index === i);
    const thinking = byIndex(0);
    expect(thinking[0]!.data.content_block).toEqual({ type: 'thinking', thinking: '', signature: '' });
    expect(thinking.at(-2)!.data.delta).toEqual({ type: 'signature_delta', signature: expect.any(String) });
    expect(thinking.at(-2)!.data.delta.signature.length).toBeGreaterThan(0);
    const thinkingText = thinking
      .filter((f) => f.data.delta?.type === 'thinking_delta')
      .map((f) => f.data.delta.thinking)
      .join('');
    expect(thinkingText).toBe('Considering the request carefully, step by step.');

    const text = byIndex(1);
    expect(text[0]!.data.content_block).toEqual({ type: 'text', text: '' });
    const textDeltas = text.filter((f) => f.event === 'content_block_delta');
    expect(textDeltas.length).toBeGreaterThanOrEqual(2);
    expect(textDeltas.map((f) => f.data.delta.text).join('')).toBe(
      'Here is a reasonably long answer, long enough to be split.',
    );

    const tool = byIndex(2);
    expect(tool[0]!.data.content_block).toEqual({
      type: 'tool_use',
      id: 'toolu_01x',
      name: 'read_file',
      input: {},
    });
    const partials = tool.filter((f) => f.event === 'content_block_delta').map((f) => f.data.delta);
    expect(partials.every((d) => d.type === 'input_json_delta')).toBe(true);
    expect(partials[0]).toEqual({ type: 'input_json_delta', partial_json: '' });
    expect(partials.length - 1).toBeGreaterThanOrEqual(3);
    expect(JSON.parse(partials.map((d) => d.partial_json).join(''))).toEqual({
      path: 'README.md',
      limit: 200,
    });
    expect(tool.at(-1)!.data).toEqual({ type: 'content_block_stop', index: 2 });

    const [delta, stop] = fs.slice(-2);
    expect(delta!.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null, stop_details: null },
      usage: {
        input_tokens: start.data.message.usage.input_tokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 7,
        output_tokens: expect.any(Number),
      },
    });
    expect(stop!.data).toEqual({ type: 'message_stop' });
    expect(server.requests[0]!.status).toBe(200);
  });

  it('ends the stream with an `event: error` frame after the requested number of blocks', async () => {
    const error = { type: 'overloaded_error', message: 'Overloaded' };
    server.enqueue(
      {
        kind: 'message',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
        midStreamError: { afterBlocks: 1, ...error },
      },
      {
        kind: 'message',
        content: [{ type: 'text', text: 'never' }],
        midStreamError: { afterBlocks: 0, ...error },
      },
    );
    const one = frames(await (await post(server, request({ stream: true }))).text());
    expect(one.map((f) => f.event)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_stop',
      'error',
    ]);
    expect(one.at(-1)!.data).toEqual({ type: 'error', error });
    const zero = frames(await (await post(server, request({ stream: true }))).text());
    expect(zero.map((f) => f.event)).toEqual(['message_start', 'ping', 'error']);
  });

  it('answers scripted statuses with the API error body and headers', async () => {
    server.enqueue(
      { kind: 'status', status: 429, retryAfterSeconds: 2 },
      { kind: 'status', status: 413 },
      {
        kind: 'status',
        status: 500,
        errorType: 'custom_error',
        message: 'boom',
        shouldRetry: false,
        headers: { 'x-extra': 'yes' },
      },
    );
    const limited = await post(server, request());
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(limited.headers.get('content-type')).toBe('application/json');
    const body = await json(limited);
    expect(body).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: expect.any(String) },
      request_id: limited.headers.get('request-id'),
    });
    expect(body.request_id).toMatch(/^req_/);

    const tooLarge = await post(server, request());
    expect(tooLarge.status).toBe(413);
    expect((await json(tooLarge)).error.type).toBe('request_too_large');

    const custom = await post(server, request());
    expect(custom.status).toBe(500);
    expect(custom.headers.get('x-should-retry')).toBe('false');
    expect(custom.headers.get('x-extra')).toBe('yes');
    expect(custom.headers.get('retry-after')).toBeNull();
    expect((await json(custom)).error).toEqual({ type: 'custom_error', message: 'boom' });
  });

  it('accepts x-api-key or a Bearer token and answers 401 otherwise', async () => {
    server.setFallback({ kind: 'message', content: [{ type: 'text', text: 'ok' }] });
    expect((await post(server, request(), { 'x-api-key': 'k' })).status).toBe(200);
    expect(
      (await post(server, request(), { authorization: 'Bearer tok', 'anthropic-version': 'anything' }))
        .status,
    ).toBe(200);
    const rejected: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer ' },
      { authorization: 'Basic abc' },
      { 'x-api-key': '' },
    ];
    for (const headers of rejected) {
      const res = await post(server, request(), headers);
      expect(res.status).toBe(401);
      expect(await json(res)).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    }
  });

  it('records every request but only accepted /v1/messages requests consume the script', async () => {
    server.enqueue(
      { kind: 'message', content: [{ type: 'text', text: 'first' }] },
      { kind: 'message', content: [{ type: 'text', text: 'second' }] },
    );
    expect((await post(server, '{not json')).status).toBe(400);
    const missing = await post(server, request(), AUTH, '/v1/complete');
    expect(missing.status).toBe(404);
    expect((await json(missing)).error.type).toBe('not_found_error');
    const counted = await post(server, request(), AUTH, '/v1/messages/count_tokens');
    expect(await json(counted)).toEqual({ input_tokens: expect.any(Number) });
    expect(server.remaining()).toBe(2);

    const first = await json(await post(server, request()));
    const second = await json(await post(server, request()));
    expect([first.content, second.content]).toEqual([
      [{ type: 'text', text: 'first' }],
      [{ type: 'text', text: 'second' }],
    ]);
    expect(first.id).not.toBe(second.id);
    expect(server.remaining()).toBe(0);
    expect(server.requests.map((r) => [r.path, r.status])).toEqual([
      ['/v1/messages', 400],
      ['/v1/complete', 404],
      ['/v1/messages/count_tokens', 200],
      ['/v1/messages', 200],
      ['/v1/messages', 200],
    ]);
    expect(server.requests[0]!.body).toBeUndefined();
    expect(server.requests[0]!.rawBody).toBe('{not json');
    const times = server.requests.map((r) => r.receivedAt);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('splits text at arbitrary code-point positions into non-empty chunks that rejoin exactly', () => {
    const json = JSON.stringify({ a: 'quote " and \\ 🚀🚀 done', n: [1, 22, 333], deep: { x: null } });
    for (const count of [3, 5, 17]) {
      const chunks = splitIntoChunks(json, count);
      expect(chunks).toHaveLength(count);
      expect(chunks.join('')).toBe(json);
      expect(chunks.every((c) => c.length > 0)).toBe(true);
      // No chunk starts with a lone low surrogate, i.e. no code point was cut in half.
      expect(chunks.every((c) => !/^[\uDC00-\uDFFF]/.test(c))).toBe(true);
      expect(splitIntoChunks(json, count)).toEqual(chunks);
    }
    expect(splitIntoChunks('ab', 5)).toEqual(['a', 'b']);
    expect(splitIntoChunks('', 3)).toEqual(['']);
  });

  it('validates conversations loosely like the API', () => {
    const ok = (extra: Record<string, unknown>) => validateMessagesRequest(request(extra));
    expect(ok({})).toBeNull();
    // A final (here empty) assistant message is prefill: only the 4.5 generation takes it.
    expect(
      ok({
        model: 'claude-haiku-4-5',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: '' },
        ],
      }),
    ).toBeNull();
    // A `system`-role message: only on models with mid-conversation system messages, and after a user turn.
    expect(
      ok({
        model: 'claude-sonnet-5-5',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'system', content: 'be brief' },
        ],
      }),
    ).toBeNull();
    expect(ok({ thinking: { type: 'adaptive' } })).toBeNull();
    expect(ok({ messages: [] })).toMatch(/at least one message/);
    expect(ok({ messages: [{ role: 'user', content: [] }] })).toMatch(/non-empty content/);
    expect(ok({ messages: [{ role: 'robot', content: 'x' }] })).toMatch(/role/);
    expect(ok({ stream: 'yes' })).toMatch(/stream/);
    expect(ok({ max_tokens: 0 })).toMatch(/max_tokens/);
    expect(ok({ tools: [{ name: 'a' }, { name: 'a' }] })).toMatch(/unique/);
    expect(
      ok({ messages: [{ role: 'user', content: [{ type: 'tool_use', id: 't', name: 'x', input: {} }] }] }),
    ).toMatch(/assistant/);
    expect(
      ok({
        messages: [
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: [
              { type: 'tool_use', id: 't', name: 'x', input: {} },
              { type: 'tool_use', id: 't', name: 'x', input: {} },
            ],
          },
        ],
      }),
    ).toBe('messages.1.content.1: `tool_use` ids must be unique');
    // Across messages too: an id an earlier turn used cannot come back.
    expect(
      ok({
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'x', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'r' }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'x', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'r' }] },
        ],
      }),
    ).toBe('messages.3.content.0: `tool_use` ids must be unique');
  });
});
