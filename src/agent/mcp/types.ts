import type { ExecuteMode } from '../../domain/types.js';
import type { ToolDefinition, ToolResult } from '../tools/types.js';

// What the agent loop sees of MCP servers (src/agent/mcp/): the tools of the servers a run chose, each as the
// model sees it, and one connection to call them and close them. Everything here is a plain value; the
// transports, the sandbox and the secrets stay inside the connector.

/** A tool's annotations as its server states them (MCP spec, "Tools": ToolAnnotations). Hints, untrusted. */
export interface McpAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface McpToolInfo {
  /** `mcp__<server>__<tool>`, as the model sees it. */
  name: string;
  server: string;
  /** The tool's own name on its server (what `tools/call` names). */
  tool: string;
  /** As sent to the Messages API: name, description, input_schema. */
  definition: ToolDefinition;
  annotations: McpAnnotations;
  /** Offered in plan mode: listed in `plan_tools`, or `readOnlyHint: true` of a server with `trust_annotations`. */
  plan: boolean;
}

/** A tool a server listed that is not offered to the model, and why (its name cannot be a tool name). */
export interface McpToolLeftOut {
  server: string;
  tool: string;
  reason: string;
}

export type { ExecuteMode };

/** The servers a run chose, open: their tools listed once, at open. */
export interface McpConnection {
  /** Every tool of every server (all pages of `tools/list`), sorted by `name`. */
  readonly tools: McpToolInfo[];
  /** Tools listed but not offered (a name the Messages API would refuse). */
  readonly leftOut: McpToolLeftOut[];
  /**
   * Calls the tool named `name` (`mcp__<server>__<tool>`). Never throws: a tool's error, a protocol error, a
   * timeout, an abort or a crashed server is an error result. The content is wrapped as untrusted data.
   */
  call(name: string, input: unknown, signal: AbortSignal): Promise<ToolResult>;
  /** Ends every server: stdio processes are killed (their whole sandbox), HTTP sessions closed. Idempotent. */
  close(): Promise<void>;
}

export interface McpOpenOptions {
  /** Aborts the start (the run was cancelled); servers already started are closed. */
  signal: AbortSignal;
  /** The run the servers are for (in logs). */
  runId: string;
}

export interface McpConnector {
  /** Starts the named servers (names of `mcp.servers`) and lists their tools; throws McpStartError. */
  open(servers: string[], opts: McpOpenOptions): Promise<McpConnection>;
}

/** A server that could not start: a bad command, it exited, or it did not answer `initialize` in time. */
export class McpStartError extends Error {
  readonly server: string;
  /** The last lines the server wrote to stderr, secrets redacted ('' for an HTTP server). */
  readonly stderrTail: string;

  constructor(server: string, message: string, stderrTail = '') {
    super(`MCP server ${server}: ${message}${stderrTail ? `\n${stderrTail}` : ''}`);
    this.name = 'McpStartError';
    this.server = server;
    this.stderrTail = stderrTail;
  }
}
