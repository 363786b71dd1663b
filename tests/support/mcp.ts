import { type ChildProcess, spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import type { McpConnectorDeps } from '../../src/agent/mcp/connector.js';
import { type Config, configSchema, type McpServerConfig } from '../../src/config/schema.js';
import type { Logger } from '../../src/logger.js';

// Real MCP servers for the tests: the registry's server-everything (stdio and streamable HTTP) and
// server-postgres, and the fixtures of tests/fixtures/mcp, all run by this checkout's node.

const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

/** This checkout's node_modules (its real path: the sandbox mounts real paths). */
export const NODE_MODULES = realpathSync(join(root, 'node_modules'));
export const FIXTURES = join(root, 'tests', 'fixtures', 'mcp');
export const EVERYTHING = join(
  NODE_MODULES,
  '@modelcontextprotocol',
  'server-everything',
  'dist',
  'index.js',
);
export const POSTGRES = join(NODE_MODULES, '@modelcontextprotocol', 'server-postgres', 'dist', 'index.js');

/** A configuration whose mcp.servers are `servers` (each entry as written in YAML), every default applied. */
export function mcpConfig(servers: Record<string, Record<string, unknown>>): Config {
  return configSchema.parse({ log_level: 'silent', mcp: { servers } });
}

/** A stdio entry running `script` with node, its package files readable in the sandbox. */
export function nodeServer(script: string, more: Partial<Record<keyof McpServerConfig, unknown>> = {}) {
  return { command: process.execPath, args: [script], read_only_paths: [NODE_MODULES, FIXTURES], ...more };
}

/** A logger that keeps every line, to look for what must never be logged. */
export function memoryLogger(): { logger: Logger; text: () => string } {
  const lines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) });
  return { logger, text: () => lines.join('') };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface HttpEverything {
  url: string;
  stop(): Promise<void>;
}

/** server-everything in streamableHttp mode on a free loopback port; resolves once it says it listens. */
export async function startEverythingHttp(): Promise<HttpEverything> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(`listening on port ${port}`)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${seen}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export type ConnectorDeps = McpConnectorDeps;
