import { DomainError } from './errors.js';
import type { RunDefaults } from './types.js';

// Which MCP servers a run gets. A session, a job and a trigger each may name servers (`mcp: [names]`, names
// under `mcp.servers` in the configuration). Like every run option, the nearest layer that sets the list wins:
// a job's or trigger's list replaces its session's (it is not added to it), `[]` says "none" even when the
// session names some, and a list set nowhere means none. What a server's tools may do is the configuration's
// (plan_tools, auto_tools, trust_annotations), which only an admin writes; choosing a server is not a
// loosening of the kind domain/loosening.ts guards.

/** The most servers one list may name. */
export const MAX_MCP_SERVERS = 16;

/** The servers a run opens: from the first layer (job or trigger options, then session defaults) that sets them. */
export function mcpServersOf(...layers: RunDefaults[]): string[] {
  return layers.find((l) => l.mcp !== undefined)?.mcp ?? [];
}

/** What is wrong with a list of server names, given the configured ones; null when nothing is. */
export function mcpSelectionProblem(names: readonly string[], configured: readonly string[]): string | null {
  const twice = names.filter((n, i) => names.indexOf(n) !== i);
  if (twice.length) return `mcp names a server more than once: ${[...new Set(twice)].join(', ')}`;
  if (names.length > MAX_MCP_SERVERS) return `mcp names ${names.length} servers; at most ${MAX_MCP_SERVERS}`;
  const unknown = names.filter((n) => !configured.includes(n));
  if (!unknown.length) return null;
  const known = configured.length ? configured.join(', ') : 'none (the configuration has no mcp.servers)';
  return `mcp names ${unknown.length === 1 ? 'a server' : 'servers'} not under mcp.servers in the configuration: ${unknown.join(', ')}; configured: ${known}`;
}

/** Refuses (invalid_request) run options whose `mcp` list names a server the configuration does not have. */
export function checkMcpSelection(options: RunDefaults | undefined, configured: readonly string[]): void {
  if (options?.mcp === undefined) return;
  const problem = mcpSelectionProblem(options.mcp, configured);
  if (problem) throw new DomainError('invalid_request', problem);
}
