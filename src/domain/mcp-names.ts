// How the model names an MCP tool: `mcp__<server>__<tool>`, Claude Code's names. A server's name holds no
// `__` (the configuration refuses one: src/config/schema.ts), so the first `__` after the prefix ends it.

export const MCP_PREFIX = 'mcp__';

export const isMcpTool = (name: string): boolean => name.startsWith(MCP_PREFIX);

/** Server and tool of an MCP tool name; null for a name that is not one. */
export function mcpToolOf(name: unknown): { server: string; tool: string } | null {
  if (typeof name !== 'string' || !isMcpTool(name)) return null;
  const rest = name.slice(MCP_PREFIX.length);
  const at = rest.indexOf('__');
  if (at <= 0 || at + 2 >= rest.length) return null;
  return { server: rest.slice(0, at), tool: rest.slice(at + 2) };
}
