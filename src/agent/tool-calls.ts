import type { Run } from '../domain/types.js';
import type { RunEvents } from '../runs/events.js';
import type { ToolResultBlock, ToolUse } from './phase.js';
import { repeatedToolUseId } from './prompt.js';
import { runGlob, runGrep, runRead, type ToolLimits, type Workspace } from './tools/index.js';
import type { ToolResult } from './tools/types.js';

// What the plan phase, the execute phase and the loop do alike with a tool call: report it in the run's
// events as it runs, refuse it, run the read-only tools, and store what a call that waits for a person needs.

/** The run a call belongs to, as far as its events and records name it. */
type CallRun = Pick<Run, 'id' | 'sessionId' | 'phase'>;

const READ_ONLY = new Set(['Read', 'Glob', 'Grep']);

/** Read, Glob and Grep only read the workspace: either phase runs them without asking anyone. */
export function isReadOnly(use: ToolUse): boolean {
  return READ_ONLY.has(use.name);
}

/** Runs a read-only call (see `isReadOnly`), reported in the run's events. */
export function readOnlyTool(
  deps: { events: RunEvents; toolLimits: ToolLimits },
  runId: string,
  ws: Workspace,
  use: ToolUse,
  signal: AbortSignal,
): Promise<ToolResult> {
  return reportedCall(deps.events, runId, use, () =>
    use.name === 'Read'
      ? runRead(ws, use.input, deps.toolLimits)
      : use.name === 'Glob'
        ? runGlob(ws, use.input, deps.toolLimits)
        : runGrep(ws, use.input, deps.toolLimits, undefined, signal),
  );
}

/**
 * Runs a call between its `tool_use` event, which holds the input, and its `tool_result` event, which holds
 * the size of the result but not its text.
 */
export async function reportedCall<R extends ToolResult>(
  events: RunEvents,
  runId: string,
  use: ToolUse,
  perform: () => Promise<R>,
): Promise<R> {
  await events.emit(runId, 'tool_use', { tool: use.name, tool_use_id: use.id, input: use.input });
  const r = await perform();
  await events.emit(runId, 'tool_result', {
    tool: use.name,
    tool_use_id: use.id,
    is_error: r.isError,
    truncated: r.truncated ?? false,
    chars: r.content.length,
  });
  return r;
}

/** Refuses a call without running it: a `policy_violation` in the run's events, `content` for the model. */
export async function refuseCall(
  events: RunEvents,
  run: CallRun,
  use: ToolUse,
  content: string,
  reason?: 'repeated_tool_use_id',
): Promise<ToolResult> {
  await events.emit(run.id, 'policy_violation', {
    tool: use.name,
    tool_use_id: use.id,
    phase: run.phase,
    ...(reason ? { reason } : {}),
  });
  return { content, isError: true };
}

/**
 * Refuses a call whose tool_use id the conversation used before, so that nothing stored for the earlier call
 * (an answer, an approval, a journaled result) is ever applied to it.
 */
export function refuseRepeatedId(events: RunEvents, run: CallRun, use: ToolUse): Promise<ToolResult> {
  return refuseCall(events, run, use, repeatedToolUseId(use.id), 'repeated_tool_use_id');
}

export interface ParkedCall {
  runId: string;
  sessionId: string;
  toolUseId: string;
  priorResults: ToolResultBlock[];
  createdAt: number;
  expiresAt: number;
}

/**
 * What every call that waits for a person (a question, a tool approval) stores besides its own fields: the run
 * and the call, the results of the same turn before it (sent with its own once it is answered), and when it
 * was asked and expires.
 */
export function parkedCall(
  run: CallRun,
  use: ToolUse,
  prior: ToolResultBlock[],
  now: number,
  timeoutMs: number,
): ParkedCall {
  return {
    runId: run.id,
    sessionId: run.sessionId,
    toolUseId: use.id,
    priorResults: prior,
    createdAt: now,
    expiresAt: now + timeoutMs,
  };
}
