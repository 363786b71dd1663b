import type { ConversationMessage } from '../domain/types.js';

// What the plan context lists of the planning runs' tool calls (the files read, the MCP calls): read from the
// stored conversation, the tool_use blocks of the assistant messages those runs wrote, identical calls counted
// once, with how many of them answered with an error.

/** A distinct call, as each list describes it, with the round that first made it and its counts. */
export type Tallied<E> = E & { round: number; calls: number; errors: number };

/** A tool_use block the conversation holds: its name and input as the model sent them. */
export interface ToolUseSeen {
  name: unknown;
  input: unknown;
}

/**
 * The calls of the runs in `roundOf` (run id → round), in the order first made, that `describe` keeps: it
 * answers a call's description and the key identical calls share, or null to leave the call out.
 */
export function tallyToolUses<E extends object>(
  messages: ConversationMessage[],
  roundOf: Map<string, number>,
  describe: (use: ToolUseSeen) => { key: string; entry: E } | null,
): Tallied<E>[] {
  const failed = failedToolUses(messages);
  const seen = new Map<string, Tallied<E>>();
  for (const m of messages) {
    if (m.role !== 'assistant' || !m.runId || !roundOf.has(m.runId)) continue;
    for (const b of m.content) {
      const block = b as { type?: unknown; id?: unknown; name?: unknown; input?: unknown };
      const described = block.type === 'tool_use' ? describe({ name: block.name, input: block.input }) : null;
      if (!described) continue;
      const entry = seen.get(described.key) ?? {
        ...described.entry,
        round: roundOf.get(m.runId)!,
        calls: 0,
        errors: 0,
      };
      entry.calls++;
      if (typeof block.id === 'string' && failed.has(block.id)) entry.errors++;
      seen.set(described.key, entry);
    }
  }
  return [...seen.values()];
}

/** The tool_use ids whose tool_result was an error. */
function failedToolUses(messages: ConversationMessage[]): Set<string> {
  const failed = new Set<string>();
  for (const m of messages) {
    if (m.role !== 'user') continue;
    for (const b of m.content) {
      const block = b as { type?: unknown; tool_use_id?: unknown; is_error?: unknown };
      if (block.type === 'tool_result' && block.is_error === true && typeof block.tool_use_id === 'string')
        failed.add(block.tool_use_id);
    }
  }
  return failed;
}
