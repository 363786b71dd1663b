import type { ConversationFrame } from '../domain/frame.js';
import { isMcpTool, mcpToolOf } from '../domain/mcp-names.js';
import type { RunPhase } from '../domain/types.js';
import type { McpConnection, McpConnector, McpToolInfo } from './mcp/index.js';
import type { ToolDefinition, ToolResult } from './tools/types.js';

// The MCP servers of one run (src/agent/mcp/ is the client): opened once, when the run's conversation needs their
// tools, closed when the run stops (it ends, parks for a person, or is aborted). A conversation lists MCP tools
// once, when it starts (its frame: agent/frame.ts): a resumed one offers what its stored frame lists, whatever
// the servers list now.

/** What of a phase makes a conversation's frame (phase.ts, Phase). */
interface Framed {
  frame(): Promise<ConversationFrame>;
  readonly constantFrame: ConversationFrame;
}

export class RunMcp {
  private connecting: Promise<McpConnection> | null = null;
  private connection: McpConnection | null = null;
  /** The MCP tools the conversation's frame lists (the only ones a call may name). */
  private readonly offered = new Set<string>();
  /** The servers the run chose (domain/mcp-selection.ts). */
  private servers: readonly string[] = [];

  constructor(
    private readonly connector: McpConnector | undefined,
    private readonly runId: string,
    private readonly signal: AbortSignal,
  ) {}

  /** The servers the run chose: the ones it starts when its conversation needs them. */
  choose(servers: readonly string[]): void {
    this.servers = [...servers];
  }

  /**
   * The MCP tool definitions a new conversation of `phase` lists, from the servers the run chose: the plan
   * phase only tools with `plan: true` (named in the server's plan_tools, or read-only by a trusted server's
   * annotations), the execute phase all of them. Starts the servers (McpStartError when one does not start).
   */
  async definitions(phase: RunPhase): Promise<ToolDefinition[]> {
    if (this.servers.length === 0) return [];
    const conn = await this.open(this.servers);
    return conn.tools.filter((t) => phase === 'execute' || t.plan).map((t) => t.definition);
  }

  /**
   * Told the tools of the conversation's frame (new or stored): the MCP tools among them are the ones calls
   * may name. A frame that lists some has its servers started now, so that a server that no longer starts
   * fails the run before the model is asked anything.
   */
  async adopt(tools: readonly { name?: unknown }[]): Promise<void> {
    for (const t of tools) if (typeof t.name === 'string' && isMcpTool(t.name)) this.offered.add(t.name);
    if (this.offered.size > 0 && this.servers.length > 0) await this.open(this.servers);
  }

  /** Whether the conversation lists this tool (a call to any other MCP tool is refused). */
  offers(name: string): boolean {
    return this.offered.has(name);
  }

  /** What the server says of the tool now; undefined when it no longer serves it (or its server is not open). */
  current(name: string): McpToolInfo | undefined {
    return this.connection?.tools.find((t) => t.name === name);
  }

  /** Calls a tool the conversation offers; an error result when its server no longer serves it. */
  async call(name: string, input: unknown): Promise<ToolResult> {
    const info = this.current(name);
    if (!info || !this.connection) {
      const ref = mcpToolOf(name);
      return {
        content: ref
          ? `MCP server ${ref.server} no longer serves the tool ${ref.tool}: it was not called`
          : `${name} is not an MCP tool this run can call`,
        isError: true,
      };
    }
    return this.connection.call(name, input, this.signal);
  }

  /** Stops the run's servers (nothing when none was started). Never throws. */
  async close(): Promise<void> {
    const pending = this.connecting;
    this.connecting = null;
    this.connection = null;
    if (!pending) return;
    const conn = await pending.catch(() => null);
    await conn?.close().catch(() => undefined);
  }

  private open(servers: readonly string[]): Promise<McpConnection> {
    if (!this.connector) {
      return Promise.reject(
        new Error(`MCP servers ${servers.join(', ')} are chosen, but this daemon has no MCP client`),
      );
    }
    this.connecting ??= this.connector.open([...servers], { signal: this.signal, runId: this.runId });
    return this.connecting.then((conn) => {
      this.connection = conn;
      return conn;
    });
  }
}

/**
 * The phase as conversationFrame (frame.ts) sees it, with the MCP tools of the run's servers after the phase's
 * own tools in a new conversation's frame (the order every request of the conversation then keeps).
 */
export function mcpFramed(phase: Framed, mcp: RunMcp, kind: RunPhase): Framed {
  return {
    constantFrame: phase.constantFrame,
    async frame(): Promise<ConversationFrame> {
      const frame = await phase.frame();
      const tools = await mcp.definitions(kind);
      if (tools.length === 0) return frame;
      return {
        ...frame,
        tools: [...frame.tools, ...tools.map((t) => ({ ...t }) as unknown as Record<string, unknown>)],
      };
    },
  };
}
