import type { Config } from './schema.js';

/** The MCP servers the configuration declares (`mcp.servers`), by name, in the order written. */
export function mcpServerNames(config: Config): string[] {
  return Object.keys(config.mcp.servers);
}
