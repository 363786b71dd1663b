import type Anthropic from '@anthropic-ai/sdk';
import type { ConversationMessage, RunSettings } from '../store/types.js';
import type { ToolDefinition } from './tools/types.js';

export type Phase = 'plan' | 'execute';

/**
 * One Messages API request. Order matters for prompt caching: tools, then the static base prompt with the
 * first cache breakpoint, then the phase directive (after the breakpoint, so switching phases never
 * invalidates the cached base), then the conversation with a breakpoint on its newest message.
 */
export function buildRequest(opts: {
  settings: RunSettings;
  tools: ToolDefinition[];
  basePrompt: string;
  directive: string;
  messages: ConversationMessage[];
}): Anthropic.MessageCreateParamsNonStreaming {
  const { settings } = opts;
  return {
    model: settings.model,
    max_tokens: settings.maxTokens,
    tools: opts.tools as Anthropic.Tool[],
    system: [
      { type: 'text', text: opts.basePrompt, cache_control: { type: 'ephemeral' } },
      { type: 'text', text: opts.directive },
    ],
    messages: withBreakpointOnNewest(opts.messages),
    thinking: settings.thinking.enabled
      ? { type: 'enabled', budget_tokens: settings.thinking.budgetTokens }
      : { type: 'disabled' },
  };
}

/** Copies the conversation, marking the last block of the newest message as a cache breakpoint. */
function withBreakpointOnNewest(messages: ConversationMessage[]): Anthropic.MessageParam[] {
  return messages.map((m, i) => {
    if (i !== messages.length - 1 || m.content.length === 0) {
      return { role: m.role, content: m.content as Anthropic.ContentBlockParam[] };
    }
    const content = [...m.content] as Record<string, unknown>[];
    content[content.length - 1] = { ...content[content.length - 1], cache_control: { type: 'ephemeral' } };
    return { role: m.role, content: content as unknown as Anthropic.ContentBlockParam[] };
  });
}
