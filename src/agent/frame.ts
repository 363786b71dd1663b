import type { ConversationFrame } from '../domain/frame.js';
import type { ConversationMessage } from '../domain/types.js';
import type { RunStore } from '../store/store.js';
import type { Phase } from './phase.js';
import type { ToolDefinition } from './tools/types.js';

/** A frame of a phase's constants: the system texts and tools every conversation had before frames were stored. */
export function constantFrame(
  system: readonly string[],
  tools: readonly ToolDefinition[],
): ConversationFrame {
  return { system: [...system], tools: tools.map((t) => ({ ...t }) as unknown as Record<string, unknown>) };
}

/**
 * The frame this conversation is sent with, for its whole life:
 * - stored already (a later turn, a resume after a crash, a restart or a takeover, a revision round): that
 *   one, whatever the phase would compute now (a CLAUDE.md changed since, an MCP server lists other tools);
 * - none stored, but messages are (a conversation from before frames were stored): the phase's constants, as
 *   that conversation was sent until now (nothing is stored for it: it stays so);
 * - a new conversation: the phase computes it (`Phase.frame`), once, and it is stored before the first
 *   message. If another start stored one first, that one is used.
 */
export async function conversationFrame(
  store: Pick<RunStore, 'loadFrame' | 'saveFrame'>,
  phase: Pick<Phase, 'frame' | 'constantFrame'>,
  at: { conversationId: string; runId: string; now: number },
  messages: readonly ConversationMessage[],
): Promise<ConversationFrame> {
  const stored = await store.loadFrame(at.conversationId);
  if (stored) return stored;
  if (messages.length > 0) return phase.constantFrame;
  const frame = await phase.frame();
  return store.saveFrame(at.conversationId, at.runId, frame, at.now);
}
