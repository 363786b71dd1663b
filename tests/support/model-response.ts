/**
 * Turns a scripted message into what the model would send for this request: thinking shaped by the request's
 * thinking mode and display, text between tool calls as thinking on the models that do that, valid signatures,
 * usage from the prompt cache, and the SSE frames of the stream. Pure apart from random ids.
 */
import { randomBytes } from 'node:crypto';
import { partialParse } from '@anthropic-ai/sdk/_vendor/partial-json-parser/parser';
import type { CacheUsage } from './model-cache.js';
import type { AcceptedRequest } from './model-contract.js';
import { contentBlocks, PromptBuilder } from './model-prompt.js';
import type { ScriptedBlock, ScriptedMessage } from './model-script.js';
import { signThinking } from './model-signature.js';
import { mulberry32 } from './prng.js';

/** The summary text of the thinking block the server adds when the script has none and display shows it. */
export const DEFAULT_THINKING_SUMMARY = 'Working out what the request needs before answering.';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function randomId(prefix: string, length: number): string {
  let out = prefix;
  for (const byte of randomBytes(length)) out += BASE62[byte % 62];
  return out;
}

function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * Splits `text` into `count` non-empty chunks at pseudo-random positions (deterministic for a given text and
 * seed). Cuts fall anywhere — mid-word, mid-number, inside a JSON escape — but never inside a code point.
 */
export function splitIntoChunks(text: string, count: number, seed: number = hashString(text)): string[] {
  const codePoints = Array.from(text);
  const n = Math.max(1, Math.min(Math.floor(count), codePoints.length));
  if (n <= 1) return [text];
  const rand = mulberry32(seed);
  const cuts = new Set<number>();
  while (cuts.size < n - 1) cuts.add(1 + Math.floor(rand() * (codePoints.length - 1)));
  const out: string[] = [];
  let prev = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    out.push(codePoints.slice(prev, cut).join(''));
    prev = cut;
  }
  out.push(codePoints.slice(prev).join(''));
  return out;
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, n));
}

/** Text and thinking: a chunk per ~24 characters, like a token stream in miniature. */
function textChunks(text: string): string[] {
  if (text === '') return [];
  return splitIntoChunks(text, clamp(Math.ceil(text.length / 24), 1, 64));
}

/** Tool input JSON: at least 3 chunks once the JSON has 3 characters. */
function jsonChunks(json: string): string[] {
  if (json.length < 3) return [json];
  return splitIntoChunks(json, clamp(Math.ceil(json.length / 16), 3, 64));
}

type Kind = 'reasoning' | 'update' | 'plain';
interface Shaped {
  block: ScriptedBlock;
  kind: Kind;
}

/**
 * Which blocks the model sends and which of them are thinking:
 * - thinking off (or suppressed by a forced tool_choice): scripted thinking blocks are dropped;
 * - `between_tools`: no up-front thinking (leading thinking blocks dropped);
 * - on models that do it, text before a later tool_use becomes a thinking block (a progress update);
 * - adaptive / enabled with no scripted thinking: one thinking block is prepended.
 */
function shapeContent(scripted: ScriptedBlock[], req: AcceptedRequest): Shaped[] {
  const lastToolUse = scripted.map((b) => b.type).lastIndexOf('tool_use');
  const firstOther = scripted.findIndex((b) => b.type !== 'thinking');
  const leadingEnd = firstOther === -1 ? scripted.length : firstOther;
  const on = req.thinkingInResponse;
  const updatesAsThinking = req.rules.betweenToolText || req.thinking === 'between_tools';
  const out: Shaped[] = [];
  for (const [i, block] of scripted.entries()) {
    if (block.type === 'thinking') {
      if (!on) continue;
      if (i < leadingEnd) {
        if (req.thinking === 'between_tools') continue;
        out.push({ block, kind: 'reasoning' });
      } else {
        out.push({ block, kind: updatesAsThinking ? 'update' : 'reasoning' });
      }
    } else if (block.type === 'text' && on && req.rules.betweenToolText && i < lastToolUse) {
      out.push({ block: { type: 'thinking', thinking: block.text }, kind: 'update' });
    } else {
      out.push({ block, kind: 'plain' });
    }
  }
  const hasThinking = scripted.some((b) => b.type === 'thinking');
  if (on && (req.thinking === 'adaptive' || req.thinking === 'enabled') && !hasThinking) {
    out.unshift({ block: { type: 'thinking', thinking: DEFAULT_THINKING_SUMMARY }, kind: 'reasoning' });
  }
  return out;
}

/** The thinking text as the display setting returns it. */
function shownText(text: string, kind: Kind, req: AcceptedRequest): string {
  if (kind === 'update') {
    const shown =
      req.thinking === 'between_tools' || req.display === 'summarized' || req.display === 'updates';
    return shown ? text : '';
  }
  return req.display === 'summarized' ? text : '';
}

export interface BuiltMessage {
  message: Record<string, any>;
  content: Array<Record<string, any>>;
  usage: CacheUsage & { output_tokens: number };
  /** Set when the last tool_use is cut short: its index and the JSON text actually sent. */
  cut?: { index: number; json: string };
  /** Hash of the prompt with this response appended (what a client sending it back will have). */
  endHash: string;
}

export function buildMessage(
  scripted: ScriptedMessage,
  req: AcceptedRequest,
  body: any,
  cacheUsage: CacheUsage,
): BuiltMessage {
  const shaped = shapeContent(scripted.content, req);
  if (scripted.stop_reason === 'pause_turn' && shaped.some((s) => s.block.type === 'tool_use')) {
    throw new Error(
      'model-server: a pause_turn response cannot carry a tool_use (the API never pauses then)',
    );
  }

  // Cut at the last tool_use when scripted: later blocks are never produced.
  let cut: BuiltMessage['cut'];
  if (scripted.cutToolInputAt !== undefined) {
    const index = shaped.map((s) => s.block.type).lastIndexOf('tool_use');
    if (index === -1) throw new Error('model-server: cutToolInputAt needs a tool_use block to cut');
    shaped.length = index + 1;
    const json = JSON.stringify((shaped[index]!.block as any).input ?? {});
    cut = { index, json: json.slice(0, clamp(Math.floor(scripted.cutToolInputAt), 0, json.length - 1)) };
  }

  // Each block is hashed after the request's prompt and the blocks before it, as the client will send it back.
  const messageIndex = req.continues ?? body.messages.length;
  const offset = req.continues === null ? 0 : contentBlocks(body.messages[req.continues].content).length;
  const chain = PromptBuilder.continuing(req.prompt);
  const content = shaped.map(({ block, kind }, k): Record<string, any> => {
    let out: Record<string, any>;
    switch (block.type) {
      case 'text':
        out = { type: 'text', text: block.text };
        break;
      case 'thinking': {
        const thinking = shownText(block.thinking, kind, req);
        const signature =
          block.signature ??
          signThinking(
            {
              model: req.rules.id,
              prefix: chain.head(),
              tools: req.prompt.toolsDigest,
              system: req.prompt.systemDigest,
            },
            thinking,
          );
        out = { type: 'thinking', thinking, signature };
        break;
      }
      case 'tool_use': {
        let input: unknown = block.input === undefined ? {} : block.input;
        if (cut && k === cut.index) input = parsePartial(cut.json);
        out = { type: 'tool_use', id: block.id ?? randomId('toolu_01', 22), name: block.name, input };
        break;
      }
      default:
        throw new Error(`model-server: unknown scripted block type ${JSON.stringify((block as any).type)}`);
    }
    chain.push({
      section: 'messages',
      message: messageIndex,
      role: 'assistant',
      block: offset + k,
      raw: out,
    });
    return out;
  });

  let outputChars = 0;
  for (const b of content) {
    if (b.type === 'text') outputChars += b.text.length;
    else if (b.type === 'thinking') outputChars += b.thinking.length;
    else outputChars += b.name.length + JSON.stringify(b.input).length;
  }
  const u = scripted.usage ?? {};
  const creation = u.cache_creation_input_tokens ?? cacheUsage.cache_creation_input_tokens;
  const usage = {
    input_tokens: u.input_tokens ?? cacheUsage.input_tokens,
    output_tokens: u.output_tokens ?? Math.max(1, Math.ceil(outputChars / 4)),
    cache_creation_input_tokens: creation,
    cache_read_input_tokens: u.cache_read_input_tokens ?? cacheUsage.cache_read_input_tokens,
    cache_creation:
      u.cache_creation ??
      (u.cache_creation_input_tokens === undefined
        ? cacheUsage.cache_creation
        : { ephemeral_5m_input_tokens: creation, ephemeral_1h_input_tokens: 0 }),
  };
  const stopReason =
    scripted.stop_reason ??
    (cut ? 'max_tokens' : content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const stopDetails =
    stopReason === 'refusal'
      ? {
          type: 'refusal',
          category: scripted.stop_details?.category ?? null,
          explanation: scripted.stop_details?.explanation ?? null,
        }
      : null;
  const message: Record<string, any> = {
    id: randomId('msg_01', 22),
    type: 'message',
    role: 'assistant',
    model: scripted.model ?? body.model,
    content,
    stop_reason: stopReason,
    stop_sequence: scripted.stop_sequence ?? null,
    stop_details: stopDetails,
    usage: {
      input_tokens: usage.input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens,
      cache_read_input_tokens: usage.cache_read_input_tokens,
      cache_creation: usage.cache_creation,
      output_tokens: usage.output_tokens,
      service_tier: 'standard',
    },
  };
  // [preserved]: `input_transformations` is sent only with the binding beta header.
  if (req.bindingBeta) message.input_transformations = req.inputTransformations;
  return { message, content, usage, ...(cut ? { cut } : {}), endHash: chain.head() };
}

function parsePartial(json: string): unknown {
  if (json === '') return {};
  try {
    return partialParse(json) ?? {};
  } catch {
    return {};
  }
}

export interface Frame {
  event: string;
  data: unknown;
}

/** The SSE frames of a streamed message, in the real API's order; cut short by `midStreamError`. */
export function streamFrames(built: BuiltMessage, scripted: ScriptedMessage): Frame[] {
  const { message, content, usage } = built;
  const frames: Frame[] = [];
  frames.push({
    event: 'message_start',
    data: {
      type: 'message_start',
      message: {
        ...message,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        stop_details: null,
        usage: { ...message.usage, output_tokens: Math.min(1, usage.output_tokens) },
      },
    },
  });
  const errorAfter = scripted.midStreamError
    ? clamp(Math.floor(scripted.midStreamError.afterBlocks), 0, content.length)
    : -1;
  const pushError = (): void => {
    const e = scripted.midStreamError!;
    frames.push({ event: 'error', data: { type: 'error', error: { type: e.type, message: e.message } } });
  };
  if (errorAfter === 0) {
    frames.push({ event: 'ping', data: { type: 'ping' } });
    pushError();
    return frames;
  }
  if (content.length === 0) frames.push({ event: 'ping', data: { type: 'ping' } });
  for (const [index, block] of content.entries()) {
    const delta = (d: Record<string, unknown>): void => {
      frames.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: d } });
    };
    if (block.type === 'text') {
      frames.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
      });
      if (index === 0) frames.push({ event: 'ping', data: { type: 'ping' } });
      for (const text of textChunks(block.text)) delta({ type: 'text_delta', text });
    } else if (block.type === 'thinking') {
      frames.push({
        event: 'content_block_start',
        data: {
          type: 'content_block_start',
          index,
          content_block: { type: 'thinking', thinking: '', signature: '' },
        },
      });
      if (index === 0) frames.push({ event: 'ping', data: { type: 'ping' } });
      for (const thinking of textChunks(block.thinking)) delta({ type: 'thinking_delta', thinking });
      delta({ type: 'signature_delta', signature: block.signature });
    } else {
      frames.push({
        event: 'content_block_start',
        data: {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        },
      });
      if (index === 0) frames.push({ event: 'ping', data: { type: 'ping' } });
      // The real API opens every tool input with an empty partial_json.
      delta({ type: 'input_json_delta', partial_json: '' });
      const json = built.cut?.index === index ? built.cut.json : JSON.stringify(block.input);
      if (json !== '')
        for (const partial_json of jsonChunks(json)) delta({ type: 'input_json_delta', partial_json });
    }
    frames.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    if (index + 1 === errorAfter) {
      pushError();
      return frames;
    }
  }
  frames.push({
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: {
        stop_reason: message.stop_reason,
        stop_sequence: message.stop_sequence,
        stop_details: message.stop_details,
      },
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
        output_tokens: usage.output_tokens,
      },
    },
  });
  frames.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return frames;
}

export function serializeFrame(frame: Frame): string {
  return `event: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n\n`;
}
