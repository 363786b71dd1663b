/**
 * Thinking as the stand-in sends it (added by default, shaped by display, text between tool calls as
 * thinking on the 5.5 models) and as it takes it back (signatures, edits, and the prefix check).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_THINKING_SUMMARY,
  type ModelServer,
  script,
  startModelServer,
} from '../support/model-server.js';
import { assistant, expect400, post, sdk, user } from './helpers.js';

const BOUND =
  'Invalid `signature` in `thinking` block. The block is bound to a different conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block". That setting requires the `thinking-binding-controls-2026-08-01` value in the `anthropic-beta` header.';
const bound = (i: number, j: number, changed: string) => `messages.${i}.content.${j}: ${BOUND} ${changed}`;
const SYSTEM_CHANGED = 'The `system` prompt differs from the request that produced the block.';
const TOOLS_CHANGED = 'The `tools` differ from the request that produced the block.';
const MESSAGE_CHANGED =
  'An earlier message, or an earlier block of its message, differs from the request that produced the block.';

const TOOLS: Anthropic.Tool[] = [
  { name: 'bash', description: 'Run a shell command', input_schema: { type: 'object' } },
  { name: 'read_file', description: 'Read a file', input_schema: { type: 'object' } },
];
const SYSTEM = 'You are drydock, an agent that plans changes to repositories.';

type Msg = Anthropic.MessageParam;

describe('thinking sent by the stand-in', () => {
  let server: ModelServer;

  beforeEach(async () => {
    server = await startModelServer();
  });

  afterEach(async () => {
    await server.close();
  });

  it('prepends a signed thinking block on Sonnet 5.5 by default, empty under the default display', async () => {
    server.enqueue(script.text('Hello.'), script.text('Hello.'));
    const anthropic = sdk(server);
    const base = { model: 'claude-sonnet-5-5', max_tokens: 2048, messages: [user('hi')] };
    const created = await anthropic.messages.create(base);
    expect(created.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(created.content[0]).toMatchObject({ type: 'thinking', thinking: '' });
    expect((created.content[0] as Anthropic.ThinkingBlock).signature.length).toBeGreaterThan(20);

    // Streamed: no thinking_delta for the empty text, just the signature.
    const stream = anthropic.messages.stream(base);
    const deltas: string[] = [];
    stream.on('streamEvent', (e) => {
      if (e.type === 'content_block_delta' && e.index === 0) deltas.push(e.delta.type);
    });
    const streamed = await stream.finalMessage();
    expect(deltas).toEqual(['signature_delta']);
    expect(streamed.content[0]).toMatchObject({ type: 'thinking', thinking: '' });
  });

  it('shows the summary with display summarized, and on models whose default is summarized', async () => {
    server.setFallback(script.text('Done.'));
    const anthropic = sdk(server);
    const summarized = await anthropic.messages.create({
      model: 'claude-opus-5-5',
      max_tokens: 2048,
      thinking: { type: 'adaptive', display: 'summarized' },
      messages: [user('hi')],
    });
    expect(summarized.content[0]).toMatchObject({ type: 'thinking', thinking: DEFAULT_THINKING_SUMMARY });
    const haiku = await anthropic.messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [user('hi')],
    });
    expect(haiku.content[0]).toMatchObject({ type: 'thinking', thinking: DEFAULT_THINKING_SUMMARY });
    const sonnet46 = await anthropic.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 2048,
      thinking: { type: 'adaptive' },
      messages: [user('hi')],
    });
    expect(sonnet46.content[0]).toMatchObject({ type: 'thinking', thinking: DEFAULT_THINKING_SUMMARY });
  });

  it('blanks scripted thinking text under display omitted and keeps it under summarized', async () => {
    const scripted = {
      kind: 'message' as const,
      content: [
        { type: 'thinking' as const, thinking: 'Private reasoning.' },
        { type: 'text' as const, text: 'Answer.' },
      ],
    };
    server.enqueue(scripted, scripted);
    const anthropic = sdk(server);
    const omitted = await anthropic.messages.create({
      model: 'claude-sonnet-5-5',
      max_tokens: 2048,
      messages: [user('hi')],
    });
    expect(omitted.content).toEqual([
      { type: 'thinking', thinking: '', signature: expect.any(String) },
      { type: 'text', text: 'Answer.' },
    ]);
    const shown = await anthropic.messages.create({
      model: 'claude-sonnet-5-5',
      max_tokens: 2048,
      thinking: { type: 'adaptive', display: 'summarized' },
      messages: [user('hi')],
    });
    expect(shown.content[0]).toMatchObject({ type: 'thinking', thinking: 'Private reasoning.' });
  });

  it('drops scripted thinking when the request does not think', async () => {
    const scripted = {
      kind: 'message' as const,
      content: [
        { type: 'thinking' as const, thinking: 'Reasoning.' },
        { type: 'text' as const, text: 'Answer.' },
      ],
    };
    server.setFallback(scripted);
    const anthropic = sdk(server);
    for (const req of [
      { model: 'claude-haiku-4-5' }, // off when omitted
      { model: 'claude-sonnet-4-6', thinking: { type: 'disabled' as const } },
      { model: 'claude-haiku-5-5', thinking: { type: 'disabled' as const } },
      // A forced tool_choice the model accepts suppresses thinking.
      { model: 'claude-haiku-5-5', tools: TOOLS, tool_choice: { type: 'any' as const } },
    ]) {
      const res = await anthropic.messages.create({ max_tokens: 2048, messages: [user('hi')], ...req });
      expect(res.content).toEqual([{ type: 'text', text: 'Answer.' }]);
    }
  });

  it('returns text written before a tool call as thinking on Sonnet 5.5 (empty unless display shows it)', async () => {
    const turn = script.toolUse(
      'bash',
      { cmd: 'ls' },
      { id: 'toolu_1', before: 'Let me look at the files.' },
    );
    server.enqueue(turn, turn, turn);
    const anthropic = sdk(server);
    const base = {
      model: 'claude-sonnet-5-5',
      max_tokens: 2048,
      tools: TOOLS,
      messages: [user('list files')],
    };

    const adaptive = await anthropic.messages.create(base);
    expect(adaptive.content.map((b) => [b.type, (b as any).thinking])).toEqual([
      ['thinking', ''],
      ['thinking', ''],
      ['tool_use', undefined],
    ]);
    expect(adaptive.stop_reason).toBe('tool_use');

    const summarized = await anthropic.messages.create({
      ...base,
      thinking: { type: 'adaptive', display: 'summarized' },
    });
    expect(summarized.content.map((b) => [b.type, (b as any).thinking])).toEqual([
      ['thinking', DEFAULT_THINKING_SUMMARY],
      ['thinking', 'Let me look at the files.'],
      ['tool_use', undefined],
    ]);

    // between_tools: no up-front thinking; the progress update is readable.
    const betweenTools = await anthropic.messages.create({ ...base, thinking: { type: 'between_tools' } });
    expect(betweenTools.content.map((b) => [b.type, (b as any).thinking])).toEqual([
      ['thinking', 'Let me look at the files.'],
      ['tool_use', undefined],
    ]);
  });

  it('keeps text after the last tool call, and all text when no tool is called, as text', async () => {
    server.enqueue(
      {
        kind: 'message',
        content: [
          { type: 'tool_use', name: 'bash', input: {} },
          { type: 'text', text: 'Ran it.' },
        ],
      },
      script.text('Plain answer.'),
    );
    const anthropic = sdk(server);
    const base = {
      model: 'claude-sonnet-5-5',
      max_tokens: 2048,
      tools: TOOLS,
      thinking: { type: 'between_tools' as const },
      messages: [user('go')],
    };
    const first = await anthropic.messages.create(base);
    expect(first.content.map((b) => b.type)).toEqual(['tool_use', 'text']);
    const second = await anthropic.messages.create(base);
    expect(second.content).toEqual([{ type: 'text', text: 'Plain answer.' }]);
  });

  it('keeps text before a tool call as text on models that do not turn it into thinking', async () => {
    server.enqueue(script.toolUse('bash', {}, { before: 'Checking.' }));
    const res = await sdk(server).messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 4096,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: TOOLS,
      messages: [user('go')],
    });
    expect(res.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
  });
});

describe('thinking taken back by the stand-in', () => {
  let server: ModelServer;
  let anthropic: Anthropic;

  beforeEach(async () => {
    server = await startModelServer();
    anthropic = sdk(server);
  });

  afterEach(async () => {
    await server.close();
  });

  /** Three turns of an append-only tool loop on `model`; returns the messages of each request. */
  async function conversation(model = 'claude-sonnet-5-5'): Promise<Msg[]> {
    server.enqueue(
      script.toolUse('bash', { cmd: 'ls' }, { id: 'toolu_1', before: 'Looking around first.' }),
      script.toolUse('read_file', { path: 'README.md' }, { id: 'toolu_2', before: 'Now the readme.' }),
      script.text('The repository is a TypeScript daemon.'),
    );
    const messages: Msg[] = [user('What is this repository?')];
    for (const result of ['README.md src/', '# drydock', null]) {
      const res = await anthropic.messages.create({
        model,
        max_tokens: 4096,
        system: SYSTEM,
        tools: TOOLS,
        messages,
      });
      messages.push(assistant(res.content));
      const toolUse = res.content.find((b) => b.type === 'tool_use');
      if (result === null || !toolUse) break;
      messages.push(user([{ type: 'tool_result', tool_use_id: toolUse.id, content: result }]));
    }
    return messages;
  }

  it('passes the prefix check for an append-only conversation, on every preserved-thinking model', async () => {
    for (const model of ['claude-sonnet-5-5', 'claude-opus-5-5', 'claude-haiku-5-5', 'claude-fable-5-1']) {
      const messages = await conversation(model);
      expect(messages).toHaveLength(6);
      expect(server.requests.slice(-3).map((r) => r.status)).toEqual([200, 200, 200]);
      // One more turn on top still passes, with every block sent back.
      server.enqueue(script.text('Anything else?'));
      messages.push(user('Thanks.'));
      const more = await anthropic.messages.create({
        model,
        max_tokens: 4096,
        system: SYSTEM,
        tools: TOOLS,
        messages,
      });
      expect(more.content.at(-1)).toEqual({ type: 'text', text: 'Anything else?' });
    }
  });

  it('ignores cache_control markers, string-vs-block content and null fields in the prefix', async () => {
    const messages = await conversation();
    server.enqueue(script.text('fine'));
    const first = messages[0] as { content: string };
    messages[0] = user([{ type: 'text', text: first.content, cache_control: { type: 'ephemeral' } }]);
    messages.push(user('Thanks.'));
    const res = await anthropic.messages.create({
      model: 'claude-sonnet-5-5',
      max_tokens: 4096,
      system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral', ttl: '1h' } }],
      tools: TOOLS,
      messages,
    });
    expect(res.content.at(-1)).toEqual({ type: 'text', text: 'fine' });
  });

  async function resend(messages: Msg[], extra: Record<string, unknown> = {}): Promise<unknown> {
    server.enqueue(script.text('unused'));
    return anthropic.messages.create({
      model: 'claude-sonnet-5-5',
      max_tokens: 4096,
      system: SYSTEM,
      tools: TOOLS,
      messages: [...messages, user('And now?')],
      ...extra,
    });
  }

  it('fails the prefix check when the system prompt changed', async () => {
    const messages = await conversation();
    await expect400(resend(messages, { system: `${SYSTEM} Today is Monday.` }), bound(1, 0, SYSTEM_CHANGED));
  });

  it('fails the prefix check when the tools changed', async () => {
    const messages = await conversation();
    await expect400(resend(messages, { tools: TOOLS.slice(0, 1) }), bound(1, 0, TOOLS_CHANGED));
  });

  it('fails the prefix check when an earlier message changed', async () => {
    const messages = await conversation();
    messages[2] = user([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'README.md src/ tests/' }]);
    // The first turn's blocks still match; the second turn's first thinking block is the first to fail.
    await expect400(resend(messages), bound(3, 0, MESSAGE_CHANGED));
  });

  it('fails the prefix check when a thinking block was dropped, or moved', async () => {
    const messages = await conversation();
    const turn1 = (messages[1] as { content: Anthropic.ContentBlock[] }).content;
    expect(turn1.map((b) => b.type)).toEqual(['thinking', 'thinking', 'tool_use']);
    const dropped = [...messages];
    dropped[1] = assistant(turn1.slice(1));
    await expect400(resend(dropped), bound(1, 0, MESSAGE_CHANGED));
    const swapped = [...messages];
    swapped[1] = assistant([turn1[1], turn1[0], turn1[2]]);
    await expect400(resend(swapped), bound(1, 0, MESSAGE_CHANGED));
  });

  it('refuses a garbled signature, and edited thinking text', async () => {
    const messages = await conversation();
    const turn3 = (messages[5] as { content: any[] }).content;
    const garbled = [...messages];
    garbled[1] = assistant([
      { type: 'thinking', thinking: '', signature: 'c2lnbmF0dXJl' },
      ...(messages[1] as { content: any[] }).content.slice(1),
    ]);
    await expect400(resend(garbled), 'messages.1.content.0: Invalid `signature` in `thinking` block');
    const edited = [...messages];
    edited[1] = assistant([
      { ...(messages[1] as { content: any[] }).content[0], thinking: 'I made this up.' },
      ...(messages[1] as { content: any[] }).content.slice(1),
    ]);
    await expect400(resend(edited), 'messages.1.content.0: Invalid `signature` in `thinking` block');
    // In the latest assistant message the API names the edit.
    const latest = [...messages];
    latest[5] = assistant([{ ...turn3[0], thinking: 'Edited.' }, ...turn3.slice(1)]);
    await expect400(
      resend(latest),
      '`thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified',
    );
  });

  it('checks signatures on models without the prefix check too, but not the prefix', async () => {
    const messages = await conversation('claude-opus-5');
    server.enqueue(script.text('ok'));
    const changed = await anthropic.messages.create({
      model: 'claude-opus-5',
      max_tokens: 4096,
      system: 'A different system prompt.',
      tools: TOOLS,
      messages: [...messages, user('And now?')],
    });
    expect(changed.content.at(-1)).toEqual({ type: 'text', text: 'ok' });
    const turn1 = (messages[1] as { content: any[] }).content;
    server.enqueue(script.text('unused'));
    await expect400(
      anthropic.messages.create({
        model: 'claude-opus-5',
        max_tokens: 4096,
        tools: TOOLS,
        messages: [
          user('hi'),
          assistant([{ ...turn1[0], signature: 'bm9wZQ==' }, turn1.at(-1)]),
          messages[2]!,
        ],
      }),
      'messages.1.content.0: Invalid `signature` in `thinking` block',
    );
  });

  it('drops blocks of a model the current one cannot read, silently (listed with the binding beta header)', async () => {
    const messages = await conversation('claude-opus-5');
    messages.push(user('Go on.'));
    const body = { model: 'claude-sonnet-5-5', max_tokens: 4096, system: SYSTEM, tools: TOOLS, messages };
    server.enqueue(script.text('switched'), script.text('switched'));
    expect((await anthropic.messages.create(body)).content.at(-1)).toEqual({
      type: 'text',
      text: 'switched',
    });
    const listed = await post(server, body, {
      version: '2026-10-21',
      beta: 'thinking-binding-controls-2026-08-01',
    });
    expect(listed.status).toBe(200);
    expect(listed.body.input_transformations).toContainEqual({
      type: 'thinking_dropped',
      path: 'messages.1.content.0',
      reason: 'model_binding_mismatch',
    });
  });

  it('drops the failing blocks instead with block_binding drop_block (beta header)', async () => {
    const messages = await conversation();
    server.enqueue(script.text('carried on'));
    const res = await post(
      server,
      {
        model: 'claude-sonnet-5-5',
        max_tokens: 4096,
        system: 'Changed.',
        tools: TOOLS,
        thinking: { type: 'adaptive', block_binding: { prefix_mismatch_behavior: 'drop_block' } },
        messages: [...messages, user('And now?')],
      },
      { version: '2026-10-21', beta: 'thinking-binding-controls-2026-08-01' },
    );
    expect(res.status).toBe(200);
    // The first failing block and every later thinking block.
    expect(res.body.input_transformations.map((t: any) => t.path)).toEqual([
      'messages.1.content.0',
      'messages.1.content.1',
      'messages.3.content.0',
      'messages.3.content.1',
      'messages.5.content.0',
    ]);
    expect(new Set(res.body.input_transformations.map((t: any) => t.reason))).toEqual(
      new Set(['prefix_binding_mismatch']),
    );
  });

  it('leaves out the beta sentence when the request has the binding header', async () => {
    const messages = await conversation();
    const res = await post(
      server,
      {
        model: 'claude-sonnet-5-5',
        max_tokens: 4096,
        system: 'Changed.',
        tools: TOOLS,
        messages: [...messages, user('And now?')],
      },
      { version: '2026-10-21', beta: 'thinking-binding-controls-2026-08-01' },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(
      'messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a different conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block". The `system` prompt differs from the request that produced the block.',
    );
  });
});
