import type { McpServerConfig } from '../../config/schema.js';
import type { ExecuteMode, McpAnnotations, McpToolInfo } from './types.js';

// Which phase may call an MCP tool, decided by the configuration, never by the server alone. A tool's
// annotations are hints its server states; the MCP specification says clients must consider them untrusted
// unless they come from a trusted server (MCP specification 2025-11-25, "Tools", Tool annotations, and its schema
// ToolAnnotations). Their defaults when absent: readOnlyHint false, destructiveHint true, idempotentHint false,
// openWorldHint true. So a hint counts only for a server the admin marked `trust_annotations: true`, and a
// missing hint counts as its cautious default.
//   plan mode: a tool named in `plan_tools`, or, of a trusted server, one with readOnlyHint: true;
//   execute, manual: every call waits for a person;
//   execute, edits: a trusted server's tool with destructiveHint: false runs like Write; any other waits;
//   execute, auto: a tool named in `auto_tools` runs; any other waits.

export type Servers = Readonly<Record<string, McpServerConfig>>;

/** Why a tool is offered in plan mode, or not. */
export type PlanReason = 'plan_tools' | 'trusted_read_only' | 'untrusted_hint' | 'not_read_only';

export function planReason(
  server: McpServerConfig | undefined,
  tool: string,
  hints: McpAnnotations,
): PlanReason {
  if (server?.plan_tools.includes(tool)) return 'plan_tools';
  if (hints.readOnlyHint !== true) return 'not_read_only';
  return server?.trust_annotations ? 'trusted_read_only' : 'untrusted_hint';
}

/** Whether plan mode offers the tool. */
export function planOffered(
  server: McpServerConfig | undefined,
  tool: string,
  hints: McpAnnotations,
): boolean {
  const reason = planReason(server, tool, hints);
  return reason === 'plan_tools' || reason === 'trusted_read_only';
}

/** What the execute phase does with a call in each mode: 'allow' runs it, 'ask' parks for a person. */
export function executeRule(tool: McpToolInfo, mode: ExecuteMode, servers: Servers): 'allow' | 'ask' {
  const server = Object.hasOwn(servers, tool.server) ? servers[tool.server] : undefined;
  if (!server) return 'ask';
  switch (mode) {
    case 'manual':
      return 'ask';
    case 'edits':
      return server.trust_annotations && tool.annotations.destructiveHint === false ? 'allow' : 'ask';
    case 'auto':
      return server.auto_tools.includes(tool.tool) ? 'allow' : 'ask';
  }
}
