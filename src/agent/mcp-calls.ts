import { mcpToolOf } from '../domain/mcp-names.js';
import type { ExecuteMode, Run } from '../domain/types.js';
import type { RunOutcome } from '../runs/queue.js';
import { executeRule, McpStartError } from './mcp/index.js';
import type { PhaseDeps, ToolUse } from './phase.js';
import { planToolRefused } from './prompt.js';
import { refuseCall, reportedCall } from './tool-calls.js';
import type { ToolResult } from './tools/types.js';

// The gate for MCP calls, in both phases. The invariant: plan mode offers and runs only the MCP tools the
// configuration names as read-only (a server's plan_tools, or its readOnlyHint when the server is marked
// trust_annotations); a call to any other is refused without reaching the server and recorded as a policy
// violation, as for built-in tools. In the execute phase an MCP call is a tool call like Bash: the execution's
// mode and the configuration (executeRule) decide whether it runs or waits for a person.

type CallRun = Pick<Run, 'id' | 'sessionId' | 'phase'>;

/**
 * A plan-phase MCP call: run when the conversation offers the tool and the configuration still calls it a
 * plan tool; refused (policy_violation) otherwise.
 */
export function planMcpCall(deps: PhaseDeps, run: CallRun, use: ToolUse): Promise<ToolResult> {
  const info = deps.mcp.current(use.name);
  if (!deps.mcp.offers(use.name) || (info !== undefined && !info.plan)) {
    return refuseCall(deps.events, run, use, planToolRefused(use.name));
  }
  return reportedCall(deps.events, run.id, use, () => deps.mcp.call(use.name, use.input));
}

/** What the execute phase does with an MCP call. */
export type McpGate =
  /** Not a tool of this conversation: refused as any tool the phase does not have. */
  | { kind: 'refused' }
  /** Offered, but its server no longer serves it: an error result, nothing called. */
  | { kind: 'gone'; result: ToolResult }
  /** To run: on its own (why null) or once a person allows it. */
  | { kind: 'run'; why: string | null };

export function executeMcpGate(deps: PhaseDeps, use: ToolUse, mode: ExecuteMode): McpGate {
  if (!deps.mcp.offers(use.name)) return { kind: 'refused' };
  const info = deps.mcp.current(use.name);
  const ref = mcpToolOf(use.name);
  if (!info) {
    return {
      kind: 'gone',
      result: {
        content: `MCP server ${ref?.server ?? '?'} no longer serves the tool ${ref?.tool ?? use.name}: it was not called`,
        isError: true,
      },
    };
  }
  if (executeRule(info, mode, deps.config.mcp.servers) === 'allow') return { kind: 'run', why: null };
  const what = `the MCP tool ${info.tool} of server ${info.server}`;
  const why =
    mode === 'manual'
      ? `manual mode: ${what} needs a person`
      : mode === 'edits'
        ? `edits mode: ${what} needs a person (only tools that a server marked trust_annotations says change nothing, destructiveHint: false, run on their own)`
        : `auto mode: ${what} is not under mcp.servers.${info.server}.auto_tools`;
  return { kind: 'run', why };
}

/**
 * A server of the run that did not start: the run fails with the server's words (the tail of what it wrote
 * on stderr), recorded in the run's events; the daemon goes on.
 */
export async function mcpStartFailed(
  deps: Pick<PhaseDeps, 'events'>,
  runId: string,
  err: unknown,
): Promise<RunOutcome | null> {
  if (!(err instanceof McpStartError)) return null;
  await deps.events.emit(runId, 'mcp_server_failed', {
    server: err.server,
    error: err.message,
    stderr_tail: err.stderrTail,
  });
  // The message names the server and ends with the tail of its stderr (secrets redacted by the connector).
  return { status: 'failed', error: `the run's MCP servers did not start: ${err.message}` };
}
