import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { Egress } from '../../agent/egress.js';
import { createMcpConnector, explainedLines, explainTool, McpStartError } from '../../agent/mcp/index.js';
import { systemClock } from '../../clock.js';
import type { Config } from '../../config/schema.js';
import { sandboxFromConfig } from '../../services.js';
import { closest } from './args.js';
import { localCommand, localHelpLines, localOptions } from './local.js';

// `drydock mcp tools <server>`: runs locally from the configuration, like `drydock doctor`. It starts the
// server as a run would (stdio in the sandbox, HTTP from here), lists its tools with their hints and which
// phase may call each, and why, then stops it.

export const MCP_USAGE = `usage: drydock mcp tools SERVER [--config FILE] [--json]\n${localHelpLines(localCommand('mcp tools')).join('\n')}`;

/** What is wrong with `drydock mcp ...`'s arguments: an unknown command (and the one meant), or SERVER. */
function mcpMistake(positionals: string[]): string {
  const [sub] = positionals;
  if (sub === undefined) return 'mcp: expected a command ("tools")';
  if (sub !== 'tools') {
    return `mcp: unknown command "${sub}"${closest(sub, ['tools']) ? '; did you mean "tools"?' : ''}`;
  }
  return `mcp tools expects SERVER (a name under mcp.servers), got ${positionals.length - 1} argument(s)`;
}

export async function mcpToolsCommand(
  args: string[],
  loadConfig: (values: { config?: string | undefined }) => Promise<Config>,
  out: { stdout: (s: string) => void; stderr: (s: string) => void },
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: localOptions('mcp tools'),
  });
  if (values.help) {
    out.stdout(`${MCP_USAGE}\n`);
    return 0;
  }
  if (positionals[0] !== 'tools' || positionals.length !== 2) {
    out.stderr(`drydock: ${mcpMistake(positionals)}\n\n${MCP_USAGE}\n`);
    return 2;
  }
  const name = positionals[1]!;
  const config = await loadConfig(values);
  const servers = config.mcp.servers;
  if (!Object.hasOwn(servers, name)) {
    const known = Object.keys(servers);
    out.stderr(
      `drydock: no MCP server ${name} in mcp.servers (${known.length ? known.join(', ') : 'none configured'})\n`,
    );
    return 2;
  }
  const logger = pino({ level: 'silent' });
  const egress = new Egress({ logger });
  const connector = createMcpConnector({
    config,
    logger,
    sandbox: sandboxFromConfig(config, typeof values.config === 'string' ? values.config : undefined),
    egress,
    clock: systemClock,
  });
  try {
    const c = await connector.open([name], {
      signal: new AbortController().signal,
      runId: 'drydock-mcp-tools',
    });
    try {
      const explained = c.tools.map((t) => explainTool(t, servers));
      if (values.json) {
        out.stdout(`${JSON.stringify({ server: name, tools: explained, left_out: c.leftOut }, null, 2)}\n`);
      } else {
        out.stdout(`${describeServer(name, config)}\n\n`);
        for (const e of explained) out.stdout(`${explainedLines(e).join('\n')}\n`);
        for (const l of c.leftOut) out.stdout(`left out: ${l.tool}: ${l.reason}\n`);
        out.stdout(
          `\n${c.tools.length} tool(s), ${c.tools.filter((t) => t.plan).length} offered in plan mode\n`,
        );
      }
      return 0;
    } finally {
      await c.close();
    }
  } catch (err) {
    if (!(err instanceof McpStartError)) throw err;
    out.stderr(`drydock: ${err.message}\n`);
    return 1;
  } finally {
    await egress.close();
  }
}

function describeServer(name: string, config: Config): string {
  const s = config.mcp.servers[name]!;
  const how =
    s.command !== undefined
      ? `stdio: ${[s.command, ...s.args].join(' ')} (in the sandbox)`
      : `streamable HTTP: ${s.url}`;
  const trust = s.trust_annotations
    ? 'trusted: hints decide plan mode and edits'
    : 'not trusted: hints are shown, never used';
  return `MCP server ${name}, ${how}\nannotations ${trust}`;
}
