import type { Clock } from '../../clock.js';
import type { SecretSource } from '../../config/mcp-secrets.js';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../logger.js';
import type { Egress } from '../egress.js';
import type { Sandbox } from '../sandbox.js';
import { errorResult, type ToolResult } from '../tools/types.js';
import { deadline } from './deadline.js';
import { redactSecrets } from './redact.js';
import { type RawCallResult, toToolResult, untrustedMcp } from './result.js';
import { type OpenServer, SDK_TIMEOUT_MS, startServer } from './server.js';
import {
  type McpConnection,
  type McpConnector,
  McpStartError,
  type McpToolInfo,
  type McpToolLeftOut,
} from './types.js';

export interface McpConnectorDeps {
  config: Config;
  logger: Logger;
  /** The execute phase's sandbox: stdio servers run in it. Without one, a stdio server does not start. */
  sandbox?: Sandbox | undefined;
  /** The egress proxy, for stdio servers with `network`. */
  egress?: Egress | undefined;
  clock: Clock;
  /** Where `${NAME}` secrets are read (default: the daemon's environment, as the configuration was loaded). */
  env?: SecretSource;
}

/** Builds the connector the agent loop opens a run's servers with. */
export function createMcpConnector(deps: McpConnectorDeps): McpConnector {
  const env = deps.env ?? process.env;
  return {
    async open(names, opts) {
      const servers = deps.config.mcp.servers;
      const unique = [...new Set(names)];
      const unknown = unique.filter((n) => !Object.hasOwn(servers, n));
      if (unknown.length > 0) {
        throw new McpStartError(
          unknown[0]!,
          `not configured (mcp.servers has ${Object.keys(servers).join(', ') || 'no servers'})`,
        );
      }
      const started = await Promise.allSettled(
        unique.map((name) => startServer(name, servers[name]!, { ...deps, env }, opts.signal)),
      );
      const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      const ok = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      if (failed) {
        await Promise.all(ok.map((s) => s.server.close()));
        const err =
          failed.reason instanceof McpStartError
            ? failed.reason
            : new McpStartError('?', String(failed.reason));
        deps.logger.warn(
          { server: err.server, runId: opts.runId, err: err.message },
          'MCP server did not start',
        );
        throw err;
      }
      for (const { server, tools } of ok) {
        deps.logger.info(
          {
            server: server.name,
            runId: opts.runId,
            tools: tools.tools.length,
            leftOut: tools.leftOut.length,
          },
          'MCP server started',
        );
      }
      return new Connection(
        ok.map((s) => s.server),
        ok.flatMap((s) => s.tools.tools),
        ok.flatMap((s) => s.tools.leftOut),
        deps,
        opts.runId,
      );
    },
  };
}

class Connection implements McpConnection {
  readonly tools: McpToolInfo[];
  readonly leftOut: McpToolLeftOut[];
  readonly #servers: Map<string, OpenServer>;
  readonly #byName: Map<string, McpToolInfo>;
  readonly #deps: McpConnectorDeps;
  readonly #runId: string;
  #closing: Promise<void> | null = null;

  constructor(
    servers: OpenServer[],
    tools: McpToolInfo[],
    leftOut: McpToolLeftOut[],
    deps: McpConnectorDeps,
    runId: string,
  ) {
    this.#servers = new Map(servers.map((s) => [s.name, s]));
    this.tools = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.leftOut = leftOut;
    this.#byName = new Map(this.tools.map((t) => [t.name, t]));
    this.#deps = deps;
    this.#runId = runId;
    for (const s of servers) {
      s.client.onclose = () => {
        s.stopped ??= s.exitReason();
        if (this.#closing) return;
        this.#deps.logger.warn(
          { server: s.name, runId, stopped: s.stopped, stderr: s.stderrTail() },
          'MCP server stopped while the run used it',
        );
      };
    }
  }

  async call(name: string, input: unknown, signal: AbortSignal): Promise<ToolResult> {
    const tool = this.#byName.get(name);
    if (!tool) return errorResult(`${name}: no MCP tool of that name in this run`);
    const server = this.#servers.get(tool.server)!;
    if (this.#closing) return errorResult(`${name}: the run's MCP servers are closed`);
    if (server.stopped !== null) {
      return errorResult(
        `MCP server ${server.name} has stopped (${server.stopped}); ${name} cannot be called in this run`,
      );
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      return errorResult(`${name}: the input must be a JSON object`);
    }
    const limit = deadline(this.#deps.clock, server.config.timeout_ms, signal);
    try {
      const result = await server.client.callTool(
        { name: tool.tool, arguments: input as Record<string, unknown> },
        undefined,
        { signal: limit.signal, timeout: SDK_TIMEOUT_MS },
      );
      return toToolResult(
        server.name,
        tool.tool,
        result as RawCallResult,
        server.config.max_output_chars,
        server.secrets,
      );
    } catch (err) {
      return this.#failed(server, tool, err, limit.timedOut(), signal.aborted);
    } finally {
      limit.clear();
    }
  }

  #failed(
    server: OpenServer,
    tool: McpToolInfo,
    err: unknown,
    timedOut: boolean,
    aborted: boolean,
  ): ToolResult {
    const what = `MCP server ${server.name}, tool ${tool.tool}`;
    if (timedOut)
      return errorResult(
        `${what}: no answer within ${server.config.timeout_ms} ms (timeout_ms); the call was cancelled`,
      );
    if (aborted) return errorResult(`${what}: the call was cancelled`);
    if (server.stopped !== null)
      return errorResult(`${what}: the server stopped (${server.stopped}) during the call`);
    const code = (err as { code?: unknown })?.code;
    const message = redactSecrets(err instanceof Error ? err.message : String(err), server.secrets);
    this.#deps.logger.info(
      { server: server.name, tool: tool.tool, runId: this.#runId, code },
      'MCP call failed',
    );
    // The message may be the server's own words: untrusted, like its results.
    const label = typeof code === 'number' ? `a protocol error (${code})` : 'an error';
    return errorResult(
      `${what}: the call failed with ${label}.\n${untrustedMcp(server.name, tool.tool, message.slice(0, 2_000))}`,
    );
  }

  close(): Promise<void> {
    this.#closing ??= Promise.all([...this.#servers.values()].map((s) => s.close())).then(() => undefined);
    return this.#closing;
  }
}
