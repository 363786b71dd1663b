// MCP servers for the agent loop: configuration in `mcp.servers` (src/config/schema.ts), a run's servers
// opened by the connector, their tools offered by the rules of policy.ts.

export { createMcpConnector, type McpConnectorDeps } from './connector.js';
export { explainedLines, explainTool, type ToolExplained } from './explain.js';
export { executeRule, type PlanReason, planOffered, planReason, type Servers } from './policy.js';
export { toToolResult } from './result.js';
export {
  type ExecuteMode,
  type McpAnnotations,
  type McpConnection,
  type McpConnector,
  type McpOpenOptions,
  McpStartError,
  type McpToolInfo,
  type McpToolLeftOut,
} from './types.js';
