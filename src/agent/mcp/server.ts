import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Clock } from '../../clock.js';
import { type SecretSource, serverSecrets } from '../../config/mcp-secrets.js';
import type { McpServerConfig } from '../../config/schema.js';
import type { Logger } from '../../logger.js';
import { packageVersion } from '../../paths.js';
import { deadline } from './deadline.js';
import { type LaunchDeps, type Prepared, prepareStdio, resolvedSecrets } from './launch.js';
import { listServerTools, type ServerTools } from './listing.js';
import { redactSecrets, tail } from './redact.js';
import { GroupStdioTransport } from './stdio-transport.js';
import { McpStartError } from './types.js';

// One MCP server, started for one run: its transport (stdio in the sandbox, or streamable HTTP from the
// daemon), the SDK's Client over it (MCP spec, "Lifecycle": initialize, then notifications/initialized), and
// its tools listed. drydock offers the server no client capability (no sampling, elicitation or roots): a
// server cannot ask the model or a person anything through it.

/** Longer than any limit of ours: the SDK's own request timer never fires first (ours run on the clock). */
export const SDK_TIMEOUT_MS = 2 ** 31 - 1;

export interface ServerDeps extends LaunchDeps {
  clock: Clock;
  logger: Logger;
  env: SecretSource;
}

export class OpenServer {
  readonly name: string;
  readonly config: McpServerConfig;
  readonly client: Client;
  readonly secrets: string[];
  /** Why the server stopped while the run still used it ("exit 1", "closed"), or null while it runs. */
  stopped: string | null = null;
  readonly #transport: Transport;
  readonly #prepared: Prepared | null;
  #closing: Promise<void> | null = null;

  constructor(
    name: string,
    config: McpServerConfig,
    client: Client,
    transport: Transport,
    prepared: Prepared | null,
    secrets: string[],
  ) {
    this.name = name;
    this.config = config;
    this.client = client;
    this.#transport = transport;
    this.#prepared = prepared;
    this.secrets = secrets;
  }

  /** What it wrote to stderr last (stdio), secrets redacted. */
  stderrTail(): string {
    const t = this.#transport;
    return t instanceof GroupStdioTransport ? tail(redactSecrets(t.stderrTail, this.secrets)) : '';
  }

  /** How a stdio server's process ended, or null (still running, or an HTTP server). */
  processExit(): string | null {
    const t = this.#transport;
    return t instanceof GroupStdioTransport ? t.exit : null;
  }

  exitReason(): string {
    const t = this.#transport;
    return t instanceof GroupStdioTransport ? (t.exit ?? 'closed its output') : 'closed the connection';
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      const t = this.#transport;
      if (t instanceof StreamableHTTPClientTransport && this.stopped === null) {
        // MCP spec, "Transports", session management: a client that no longer needs the session SHOULD send
        // an HTTP DELETE with its Mcp-Session-Id (modelcontextprotocol.io/specification/2025-11-25/basic/transports).
        await t.terminateSession().catch(() => undefined);
      }
      await this.client.close().catch(() => undefined);
      await t.close().catch(() => undefined);
      await this.#prepared?.cleanup().catch(() => undefined);
    })();
    return this.#closing;
  }
}

async function transportFor(
  name: string,
  config: McpServerConfig,
  deps: ServerDeps,
): Promise<{ transport: Transport; prepared: Prepared | null }> {
  if (config.command !== undefined) {
    const prepared = await prepareStdio(name, config, deps);
    return { transport: new GroupStdioTransport(prepared.launch), prepared };
  }
  const headers = resolvedSecrets(name, 'headers', config, deps.env);
  const transport = new StreamableHTTPClientTransport(new URL(config.url!), { requestInit: { headers } });
  return { transport, prepared: null };
}

/** Starts the server and lists its tools within start_timeout_ms; throws McpStartError. */
export async function startServer(
  name: string,
  config: McpServerConfig,
  deps: ServerDeps,
  signal: AbortSignal,
): Promise<{ server: OpenServer; tools: ServerTools }> {
  const secrets = serverSecrets(config, deps.env);
  const limit = deadline(deps.clock, config.start_timeout_ms, signal);
  let opened: OpenServer | null = null;
  try {
    const { transport, prepared } = await transportFor(name, config, deps);
    const client = new Client({ name: 'drydock', version: packageVersion() }, { capabilities: {} });
    opened = new OpenServer(name, config, client, transport, prepared, secrets);
    const server = opened;
    client.onclose = () => {
      server.stopped ??= server.exitReason();
    };
    await client.connect(transport, { signal: limit.signal, timeout: SDK_TIMEOUT_MS });
    const tools = await listServerTools(client, name, config, limit.signal);
    return { server, tools };
  } catch (err) {
    const tailText = opened?.stderrTail() ?? '';
    const stopped = opened?.processExit() ?? null;
    await opened?.close();
    if (err instanceof McpStartError) throw err;
    throw new McpStartError(
      name,
      startFailure(err, {
        timedOut: limit.timedOut(),
        aborted: signal.aborted,
        stopped,
        ms: config.start_timeout_ms,
        secrets,
      }),
      tailText,
    );
  } finally {
    limit.clear();
  }
}

function startFailure(
  err: unknown,
  how: { timedOut: boolean; aborted: boolean; stopped: string | null; ms: number; secrets: string[] },
): string {
  if (how.timedOut) return `did not answer initialize and tools/list within ${how.ms} ms (start_timeout_ms)`;
  if (how.aborted) return 'the start was cancelled';
  if (how.stopped !== null) return `stopped (${how.stopped}) before it answered initialize and tools/list`;
  const code = (err as NodeJS.ErrnoException)?.code;
  const message = err instanceof Error ? err.message : String(err);
  const said = typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
  // The message may quote the server's answer: bounded, and without the secrets the server was given.
  return `could not start: ${redactSecrets(said, how.secrets).slice(0, 1_000)}`;
}
