import { mcpToolOf } from '../domain/mcp-names.js';
import type { ConversationMessage } from '../domain/types.js';
import { tallyToolUses } from './tool-tally.js';

// The MCP calls of the planning runs, for approvers beside the files read: which server, which tool, with what
// input (summarized), how often, and how many answered with an error. Read from the stored conversation like
// the files read (plan-context.ts, fileActivity), so it shows what the model asked for, refused calls included
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
  return tallyToolUses(messages, roundOf, ({ name, input: raw }) => {
    const ref = mcpToolOf(name);
    if (!ref) return null;
    const input = inputSummary(raw);
    return { key: JSON.stringify([ref.server, ref.tool, input]), entry: { ...ref, input } };
  });
}
