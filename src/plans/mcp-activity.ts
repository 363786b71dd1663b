import { mcpToolOf } from '../domain/mcp-names.js';
import type { ConversationMessage } from '../domain/types.js';

// The MCP calls of the planning runs, for approvers beside the files read: which server, which tool, with what
// input (summarized), how often, and how many answered with an error. Read from the stored conversation like
// the files read (context.ts, fileActivity), so it shows what the model asked for, refused calls included
// (a refused call answers with an error).

/** Characters of an input summary, at most. */
export const MCP_INPUT_SUMMARY_CHARS = 200;

/** One distinct MCP call of the planning runs (identical calls counted, not repeated). */
export interface McpActivity {
  server: string;
  tool: string;
  /** External (model output): the call's input as compact JSON, cut at MCP_INPUT_SUMMARY_CHARS. */
  input: string;
  /** The round that first made this call. */
  round: number;
  calls: number;
  /** Calls that answered with an error (refused in plan mode, failed on the server). */
  errors: number;
}

/** A call's input as a person reads it in a table: compact JSON, cut with an ellipsis. */
export function inputSummary(input: unknown): string {
  const json = JSON.stringify(input ?? {}) ?? 'null';
  return json.length > MCP_INPUT_SUMMARY_CHARS ? `${json.slice(0, MCP_INPUT_SUMMARY_CHARS - 1)}…` : json;
}

/** The MCP calls of the runs in `roundOf` (run id → round), in the order first made. */
export function mcpActivity(messages: ConversationMessage[], roundOf: Map<string, number>): McpActivity[] {
  const failed = new Set<string>();
  for (const m of messages) {
    if (m.role !== 'user') continue;
    for (const b of m.content) {
      const block = b as { type?: unknown; tool_use_id?: unknown; is_error?: unknown };
      if (block.type === 'tool_result' && block.is_error === true && typeof block.tool_use_id === 'string')
        failed.add(block.tool_use_id);
    }
  }
  const seen = new Map<string, McpActivity>();
  for (const m of messages) {
    if (m.role !== 'assistant' || !m.runId || !roundOf.has(m.runId)) continue;
    for (const b of m.content) {
      const block = b as { type?: unknown; id?: unknown; name?: unknown; input?: unknown };
      const ref = block.type === 'tool_use' ? mcpToolOf(block.name) : null;
      if (!ref) continue;
      const input = inputSummary(block.input);
      const key = JSON.stringify([ref.server, ref.tool, input]);
      const entry = seen.get(key) ?? { ...ref, input, round: roundOf.get(m.runId)!, calls: 0, errors: 0 };
      entry.calls++;
      if (typeof block.id === 'string' && failed.has(block.id)) entry.errors++;
      seen.set(key, entry);
    }
  }
  return [...seen.values()];
}
