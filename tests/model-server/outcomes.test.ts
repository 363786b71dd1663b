/**
 * Scripted outcomes through the real SDK and on the wire: refusal, max_tokens inside a tool call,
 * pause_turn and its continuation, model_context_window_exceeded, a mid-stream error, a 429.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { APIError } from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ModelServer, script, startModelServer } from '../support/model-server.js';
import { assistant, expect400, post, sdk, user } from './helpers.js';

const MODEL = 'claude-sonnet-5-5';
const TOOLS: Anthropic.Tool[] = [
  { name: 'write_file', description: 'Write a file', input_schema: { type: 'object' } },
];

function params(extra: Record<string, unknown> = {}): any {
  return { model: MODEL, max_tokens: 4096, tools: TOOLS, messages: [user('go')], ...extra };
}

/** The SSE frames of a raw response body. */
function frames(text: string): Array<{ event: string; data: any }> {
  return text
    .trim()
    .split('\n\n')
    .map((raw) => {
      const [event, data] = raw.split('\n');
      return { event: event!.slice('event: '.length), data: JSON.parse(data!.slice('data: '.length)) };
    });
}

describe('scripted outcomes', () => {
  let server: ModelServer;

  beforeEach(async () => {
    server = await startModelServer();
  });

  afterEach(async () => {
    await server.close();
  });

  it('refusal: HTTP 200, stop_reason refusal and stop_details, in create() and stream()', async () => {
    const refusal = script.refusal('cyber', 'The request could enable malware development.');
    server.enqueue(refusal, refusal, script.refusal());
    const anthropic = sdk(server);
    const created = await anthropic.messages.create(params());
    const streamed = await anthropic.messages.stream(params()).finalMessage();
    for (const m of [created, streamed]) {
      expect(m.stop_reason).toBe('refusal');
      expect(m.stop_details).toEqual({
        type: 'refusal',
        category: 'cyber',
        explanation: 'The request could enable malware development.',
      });
    }
    const bare = await anthropic.messages.create(params());
    expect(bare.stop_details).toEqual({ type: 'refusal', category: null, explanation: null });
  });

  it('other stop reasons carry stop_details null', async () => {
    server.enqueue(script.text('fine'));
    const res = await sdk(server).messages.create(params());
    expect(res.stop_reason).toBe('end_turn');
    expect(res.stop_details).toBeNull();
  });

  it('max_tokens inside a tool call: the stream ends mid-JSON and the SDK yields the truncated input', async () => {
    const input = { path: 'src/index.ts', content: 'hello world' };
    server.enqueue(
      script.maxTokensInToolUse('write_file', input, 36),
      script.maxTokensInToolUse('write_file', input, 36),
    );
    const final = await sdk(server).messages.stream(params()).finalMessage();
    expect(final.stop_reason).toBe('max_tokens');
    const tool = final.content.at(-1)!;
    expect(tool.type).toBe('tool_use');
    // The cut falls inside the second string, which the partial parse leaves out.
    expect((tool as Anthropic.ToolUseBlock).input).toEqual({ path: 'src/index.ts' });

    const raw = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2026-10-21' },
      body: JSON.stringify({ ...params(), stream: true }),
    });
    const fs = frames(await raw.text());
    const toolIndex = fs.find((f) => f.data.content_block?.type === 'tool_use')!.data.index;
    const partial = fs
      .filter((f) => f.data.index === toolIndex && f.data.delta?.type === 'input_json_delta')
      .map((f) => f.data.delta.partial_json)
      .join('');
    expect(partial).toBe(JSON.stringify(input).slice(0, 36));
    expect(() => JSON.parse(partial)).toThrow();
    expect(fs.slice(-3).map((f) => f.event)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(fs.at(-2)!.data.delta).toEqual({
      stop_reason: 'max_tokens',
      stop_sequence: null,
      stop_details: null,
    });
  });

  it('max_tokens inside a tool call, non-streaming: the input is the partial parse', async () => {
    server.enqueue(
      script.maxTokensInToolUse('write_file', { path: 'a.txt', content: 'xyz' }, 20),
      script.maxTokensInToolUse('write_file', { path: 'a.txt', content: 'xyz' }, 5),
    );
    const anthropic = sdk(server);
    const res = await anthropic.messages.create(params());
    expect(res.stop_reason).toBe('max_tokens');
    expect(res.content.at(-1)).toMatchObject({
      type: 'tool_use',
      name: 'write_file',
      input: { path: 'a.txt' },
    });
    const early = await anthropic.messages.create(params());
    expect(early.content.at(-1)).toMatchObject({ type: 'tool_use', input: {} });
  });

  it('model_context_window_exceeded', async () => {
    server.enqueue(script.contextWindowExceeded(), script.contextWindowExceeded());
    const anthropic = sdk(server);
    for (const m of [
      await anthropic.messages.create(params()),
      await anthropic.messages.stream(params()).finalMessage(),
    ]) {
      expect(m.stop_reason).toBe('model_context_window_exceeded');
      expect(m.content.at(-1)).toEqual({ type: 'text', text: 'The answer was cut' });
    }
  });

  it('pause_turn: the paused content sent back as the final assistant message continues; other prefill does not', async () => {
    server.enqueue(
      script.pauseTurn([{ type: 'text', text: 'Searching the web, still going.' }]),
      script.pauseTurn([{ type: 'text', text: 'More searching.' }]),
      script.text('Here is what I found.'),
      script.text('You are welcome.'),
    );
    const anthropic = sdk(server);
    const messages: any[] = [user('Find me the release notes.')];
    const paused = await anthropic.messages.create(params({ messages }));
    expect(paused.stop_reason).toBe('pause_turn');

    // Anything else as a final assistant message is prefill.
    await expect400(
      anthropic.messages.create(params({ messages: [...messages, assistant('Searching the web')] })),
      'This model does not support assistant message prefill. The conversation must end with a user message.',
    );

    // Sent back as-is: accepted; the response continues that message, so its blocks are appended to it.
    messages.push(assistant(paused.content));
    const again = await anthropic.messages.create(params({ messages }));
    expect(again.stop_reason).toBe('pause_turn');
    messages[1] = assistant([...paused.content, ...again.content]);
    const done = await anthropic.messages.create(params({ messages }));
    expect(done.stop_reason).toBe('end_turn');
    messages[1] = assistant([...(messages[1].content as any[]), ...done.content]);

    // The merged turn passes the prefix check on the next turn (its thinking blocks were signed in place).
    messages.push(user('Thanks!'));
    const next = await anthropic.messages.create(params({ messages }));
    expect(next.content.at(-1)).toEqual({ type: 'text', text: 'You are welcome.' });
  });

  it('pause_turn refuses a script with a tool_use (the API never pauses while a client tool waits)', async () => {
    server.enqueue({ ...script.pauseTurn(), content: [{ type: 'tool_use', name: 'write_file', input: {} }] });
    const err = await sdk(server)
      .messages.create(params())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(500);
    expect((err as APIError).message).toMatch(/pause_turn response cannot carry a tool_use/);
  });

  it('overloaded mid-stream: the stream rejects after the given number of blocks (thinking counts)', async () => {
    server.enqueue(
      script.overloadedMidStream(
        [
          { type: 'text', text: 'first' },
          { type: 'text', text: 'second' },
        ],
        2,
      ),
    );
    const stream = sdk(server).messages.stream(params());
    const seen: string[] = [];
    stream.on('contentBlock', (b) => seen.push(b.type));
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).type).toBe('overloaded_error');
    expect(seen).toEqual(['thinking', 'text']);
  });

  it('429 with retry-after: the SDK waits and retries', async () => {
    server.enqueue(script.rateLimited(0.2), script.text('after the wait'));
    const res = await sdk(server, { maxRetries: 1 }).messages.create(params());
    expect(res.content.at(-1)).toEqual({ type: 'text', text: 'after the wait' });
    expect(server.requests.map((r) => r.status)).toEqual([429, 200]);
    expect(server.requests[0]!.error?.type).toBe('rate_limit_error');
    expect(server.requests[1]!.receivedAt - server.requests[0]!.receivedAt).toBeGreaterThanOrEqual(150);
  });

  it('the raw wire carries stop_details on message_delta for a refusal', async () => {
    server.enqueue(script.refusal('bio'));
    const res = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2026-10-21' },
      body: JSON.stringify({ ...params(), stream: true }),
    });
    const fs = frames(await res.text());
    expect(fs[0]!.data.message.stop_details).toBeNull();
    expect(fs.at(-2)!.data.delta).toEqual({
      stop_reason: 'refusal',
      stop_sequence: null,
      stop_details: { type: 'refusal', category: 'bio', explanation: null },
    });
    expect((await post(server, params())).status).toBe(500); // the script ran out
  });
});
