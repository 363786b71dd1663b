import { accessSync, constants, realpathSync, rmSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { resolveSecretTemplate, type SecretSource } from '../../config/mcp-secrets.js';
import type { McpServerConfig } from '../../config/schema.js';
import { privateTempDir } from '../../workspace/temp.js';
import type { Egress } from '../egress.js';
import { type Confinement, SANDBOX_HOME, type Sandbox } from '../sandbox.js';
import { behindForwards, LoopbackForwards } from './loopback.js';
import type { StdioLaunch } from './stdio-transport.js';
import { McpStartError } from './types.js';

// How a stdio MCP server is started: in the sandbox of the execute phase's commands (sandbox.ts, bwrap), so
// that it sees what a Bash command sees and less:
//   - its own PID, IPC, UTS and network namespaces, no capability, an unprivileged uid (a root daemon's servers
//     run as execute.sandbox_user), death with the daemon; the system read-only; the data directory, the config
//     file and every other hidden path absent; no workspace at all: its working directory is its private /tmp
//     (also HOME);
//   - the host paths its entry names (`read_only_paths`, e.g. its package) read-only, and its program when that
//     lies outside /usr;
//   - an environment of PATH and its own `env` (secrets read from the daemon's environment now), nothing of the
//     daemon's (no ANTHROPIC_API_KEY, no DRYDOCK_*); bwrap gets the same environment rather than --setenv
//     arguments, since a process's arguments are readable by every user of the host and its environment is not;
//   - network: none, but the host names of `network` through the egress proxy (HTTP_PROXY, egress.ts), and the
//     ports of this machine's loopback named in `loopback_ports` (loopback.ts).
// With execute.sandbox: off (the operator's choice, shown at start) the server runs unconfined, but still with
// only that environment.

const PATH = '/usr/local/bin:/usr/bin:/bin';

export interface Prepared {
  launch: StdioLaunch;
  /** Secret values the server got, to redact from what it prints. */
  secrets: string[];
  /** Removes what was made for it (sockets, directories). */
  cleanup(): Promise<void>;
}

export interface LaunchDeps {
  sandbox?: Sandbox | undefined;
  egress?: Egress | undefined;
  env: SecretSource;
}

/** The program's absolute real path: as given, or found on the daemon's PATH. */
function programPath(name: string, command: string, env: SecretSource): string {
  const candidates = isAbsolute(command)
    ? [command]
    : (env.PATH ?? PATH)
        .split(':')
        .filter((dir) => isAbsolute(dir))
        .map((dir) => join(dir, command));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return realpathSync(candidate);
    } catch {
      // not this one
    }
  }
  throw new McpStartError(
    name,
    `could not start: the program ${command} was not found (or is not executable)`,
  );
}

/**
 * A server entry's `env` or `headers` with every `${NAME}` resolved from the daemon's environment; an unset
 * secret fails the server's start, naming the key (never the value).
 */
export function resolvedSecrets(
  name: string,
  part: 'env' | 'headers',
  server: McpServerConfig,
  env: SecretSource,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, template] of Object.entries(server[part])) {
    try {
      out[key] = resolveSecretTemplate(template, env);
    } catch (err) {
      throw new McpStartError(name, `${part}.${key}: ${(err as Error).message}`);
    }
  }
  return out;
}

const SYSTEM_PREFIXES = ['/usr/', '/bin/', '/sbin/', '/lib/', '/lib64/'];

export async function prepareStdio(
  name: string,
  server: McpServerConfig,
  deps: LaunchDeps,
): Promise<Prepared> {
  const secrets = resolvedSecrets(name, 'env', server, deps.env);
  const program = programPath(name, server.command!, deps.env);
  const argv = [program, ...server.args];
  const values = Object.values(secrets);
  const sandbox = deps.sandbox;
  if (!sandbox) throw new McpStartError(name, 'could not start: no sandbox to run a stdio server in');
  const status = await sandbox.status();
  if (status.state === 'unavailable') throw new McpStartError(name, `could not start: ${status.detail}`);
  const dir = privateTempDir('drydock-mcp-');
  const removeDir = async () => rmSync(dir, { recursive: true, force: true });
  if (status.state === 'off') {
    const env = { PATH, HOME: dir, TMPDIR: dir, ...secrets };
    return { launch: { argv, env, cwd: dir }, secrets: values, cleanup: removeDir };
  }
  let forwards: LoopbackForwards | null = null;
  try {
    forwards = await LoopbackForwards.open(dir, server.loopback_ports);
    const network = server.network.length > 0 ? await openRoute(name, server, deps.egress) : null;
    const node = process.execPath;
    const outside = (p: string) => !SYSTEM_PREFIXES.some((prefix) => p.startsWith(prefix));
    const readOnly = [
      ...server.read_only_paths,
      ...(outside(program) ? [program] : []),
      ...(forwards.forwards.length > 0 && outside(node) ? [node] : []),
      ...forwards.forwards.map((f) => f.socket),
    ];
    const confinement: Confinement = { cwd: SANDBOX_HOME, writable: [], readOnly, network };
    const wrapped = sandbox.wrapArgv(confinement, behindForwards(node, forwards.forwards, argv));
    const opened = forwards;
    return {
      launch: { argv: wrapped, env: { PATH, ...secrets }, cwd: '/' },
      secrets: values,
      cleanup: async () => {
        await opened.close();
        await removeDir();
      },
    };
  } catch (err) {
    await forwards?.close();
    await removeDir();
    throw err;
  }
}

async function openRoute(name: string, server: McpServerConfig, egress: Egress | undefined) {
  if (!egress) throw new McpStartError(name, 'could not start: network is set but there is no egress proxy');
  return egress.open(server.network);
}
