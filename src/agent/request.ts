import type Anthropic from '@anthropic-ai/sdk';
import type { ConversationMessage, RunSettings } from '../domain/types.js';
import { type CacheTtls, cacheControl, FIVE_MINUTES, spacedTtl } from './cache-ttl.js';
import { SHARED_TOOLS } from './tools/index.js';
import type { ToolDefinition } from './tools/types.js';

/**
 * One Messages API request. A conversation has one system prompt and one tool list for its whole life
 * (the plan phase and the execute phase are separate conversations; its frame is stored when it starts:
 * agent/frame.ts), and its messages only grow, so every
 * request is the previous one plus new messages: thinking blocks sent back keep their prefix (models with
 * preserved thinking refuse them otherwise), and the prompt cache reads everything already sent.
 *
 * Cache breakpoints (the API allows 4): the last of the tools both phases share (SHARED_TOOLS, first in
 * each phase's list: the execute conversation, opened once a person approved the plan, reads that part of
 * its prefix from what the plan conversation wrote), the end of the static prefix (tools, then system), the
 * end of the message before the newest assistant turn (where the previous request wrote its cache, so it is
 * read even when a turn adds more than the API's 20-block lookback), and the newest message. Their TTLs (`cache`, by
 * default 5 minutes each) are chosen per conversation in cache-ttl.ts: 1 hour where a turn may leave the run
 * waiting for a person.
 *
 * Sampling parameters, prefill and tool_choice are never sent: the 5.5 models refuse anything but the
 * defaults. Thinking and effort are shaped per model by models/catalogue.ts (settings.request).
 */
export function buildRequest(opts: {
  settings: RunSettings;
  tools: readonly Record<string, unknown>[] | readonly ToolDefinition[];
  system: readonly string[];
  messages: ConversationMessage[];
  cache?: CacheTtls;
}): Anthropic.MessageCreateParamsNonStreaming {
  const { settings } = opts;
  const { thinking, effort } = settings.request;
  const ttls = opts.cache ?? FIVE_MINUTES;
  const system = opts.system.map((text, i): Anthropic.TextBlockParam => {
    const last = i === opts.system.length - 1;
    return last ? { type: 'text', text, cache_control: cacheControl(ttls.prefix) } : { type: 'text', text };
  });
  const shared = sharedToolCount(opts.tools);
  const tools = opts.tools.map((tool, i) =>
    i === shared - 1 && shared < opts.tools.length
      ? { ...tool, cache_control: cacheControl(ttls.prefix) }
      : tool,
  );
  return {
    model: settings.model,
    max_tokens: settings.maxTokens,
    tools: tools as Anthropic.Tool[],
    system,
    messages: withBreakpoints(
      opts.messages,
      cacheControl(ttls.messages === 'spaced' ? spacedTtl(opts.messages) : ttls.messages),
    ),
    ...(thinking ? { thinking: thinking as Anthropic.ThinkingConfigParam } : {}),
    ...(effort ? { output_config: { effort } } : {}),
  };
}

/**
 * SHARED_TOOLS.length when `tools` begins with them (the same definitions, in order), else 0. Compared as
 * JSON: a conversation's tools come from its stored frame (frame.ts), copies of the definitions.
 */
function sharedToolCount(tools: readonly unknown[]): number {
  const n = SHARED_TOOLS.length;
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return tools.length >= n && SHARED_TOOLS.every((tool, i) => same(tools[i], tool)) ? n : 0;
}

/**
 * Copies the conversation, marking the newest message and the last user message before the newest
 * assistant turn (where the previous request put its newest breakpoint; after a pause_turn the newest
 * message is that assistant turn itself).
 */
function withBreakpoints(
  messages: ConversationMessage[],
  marker: Anthropic.CacheControlEphemeral,
): Anthropic.MessageParam[] {
  const marked = new Set<number>([messages.length - 1]);
  const lastAssistant = messages.findLastIndex((m) => m.role === 'assistant');
  const before = messages.slice(0, Math.max(0, lastAssistant)).findLastIndex((m) => m.role === 'user');
  if (lastAssistant > 0 && before >= 0) marked.add(before);
  return messages.map((m, i) => {
    if (!marked.has(i) || m.content.length === 0) {
      return { role: m.role, content: m.content as Anthropic.ContentBlockParam[] };
    }
    const content = [...m.content] as Record<string, unknown>[];
    // Thinking blocks take no cache_control; the marker goes on the last block that can carry one.
    let at = content.length - 1;
    while (at >= 0 && (content[at]!.type === 'thinking' || content[at]!.type === 'redacted_thinking')) at--;
    if (at < 0) return { role: m.role, content: m.content as Anthropic.ContentBlockParam[] };
    content[at] = { ...content[at], cache_control: marker };
    return { role: m.role, content: content as unknown as Anthropic.ContentBlockParam[] };
  });
}
