import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Egress } from '../../../src/agent/egress.js';
import { createMcpConnector, type McpConnection, McpStartError } from '../../../src/agent/mcp/index.js';
import { Sandbox } from '../../../src/agent/sandbox.js';
import { systemClock } from '../../../src/clock.js';
import { hostAddress, lookupFrom } from '../../support/egress.js';
import { tempDir } from '../../support/harness.js';
import { FIXTURES, mcpConfig, memoryLogger, NODE_MODULES, nodeServer } from '../../support/mcp.js';

// A stdio MCP server is code drydock did not write, run with the secrets it is given: it runs in the execute
// phase's bwrap sandbox. The fixture tests/fixtures/mcp/snoop-server.mjs (the SDK's own server class) tries
// what such a server might: read the daemon's files, read the daemon's environment, reach the host's loopback.
// Each attack has its control beside it (what the entry allows is reachable), so a broken probe cannot pass.

const SNOOP = join(FIXTURES, 'snoop-server.mjs');
const FAILS = join(FIXTURES, 'fails-to-start.mjs');
const SECRET = `fixture-secret-${randomBytes(6).toString('hex')}`;

let tmp: { path: string; remove(): void };
let data: string;
let allowed: string;
let sandbox: Sandbox;
let hostService: Server;
let hostPort: number;
const open: McpConnection[] = [];

beforeAll(async () => {
  tmp = tempDir('drydock-mcp-sandbox-');
  data = join(tmp.path, 'data');
  allowed = join(tmp.path, 'pkg');
  mkdirSync(data);
  mkdirSync(allowed);
  writeFileSync(join(data, 'drydock.sqlite'), 'the daemon database');
  writeFileSync(join(allowed, 'README'), 'package file');
  writeFileSync(join(tmp.path, 'elsewhere.txt'), 'not named anywhere');
  // A root daemon's servers run as another uid (execute.sandbox_user): what they read must be open to it.
  chmodSync(tmp.path, 0o755);
  // The data directory is hidden (as the daemon hides it) even below a path the entry names.
  sandbox = new Sandbox({ setting: 'bwrap', hidden: [data] });
  hostService = createServer((s) => s.end('hello\n'));
  await new Promise<void>((resolve) => hostService.listen(0, '127.0.0.1', resolve));
  hostPort = (hostService.address() as { port: number }).port;
  process.env.DRYDOCK_MCP_PROBE = 'daemon-only-value';
});
afterAll(async () => {
  delete process.env.DRYDOCK_MCP_PROBE;
  await new Promise<void>((resolve) => hostService.close(() => resolve()));
  tmp.remove();
});
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

async function snoop(
  more: Record<string, unknown> = {},
  marker = '',
  egress?: Egress,
): Promise<McpConnection> {
  const connector = createMcpConnector({
    config: mcpConfig({
      snoop: nodeServer(SNOOP, {
        args: [SNOOP, ...(marker ? [marker] : [])],
        read_only_paths: [NODE_MODULES, FIXTURES, tmp.path],
        env: { FIXTURE_TOKEN: `\${SNOOP_TOKEN}` },
        ...more,
      }),
    }),
    logger: memoryLogger().logger,
    sandbox,
    egress,
    clock: systemClock,
    env: { ...process.env, SNOOP_TOKEN: SECRET },
  });
  const c = await connector.open(['snoop'], { signal: new AbortController().signal, runId: 'run_snoop' });
  open.push(c);
  return c;
}

const signal = () => new AbortController().signal;
/** The text inside the untrusted_data block of a result. */
const said = (content: string) => content.split('\n').slice(2, -1).join('\n');

describe('a stdio MCP server in the sandbox', () => {
  it('reads the paths its entry names, never the daemon data directory below them or anything else', async () => {
    const c = await snoop();
    const read = async (path: string) =>
      said((await c.call('mcp__snoop__read_file', { path }, signal())).content);
    expect(await read(join(allowed, 'README'))).toBe('read: package file');
    expect(await read(join(data, 'drydock.sqlite'))).toBe('refused: ENOENT');
    expect(await read('/etc/shadow')).toBe('refused: ENOENT');
    expect(await read('/root/.bashrc')).toMatch(/^refused: /);
    expect(await read(`/proc/${process.pid}/environ`)).toBe('refused: ENOENT');
  });

  it('gets its own secret and nothing of the daemon environment', async () => {
    const c = await snoop();
    const result = (await c.call('mcp__snoop__environment', {}, signal())).content;
    const env = JSON.parse(said(result));
    // It has the secret: its result, which echoes it, shows the exact value redacted.
    expect(env.FIXTURE_TOKEN).toBe('[redacted]');
    expect(result).not.toContain(SECRET);
    expect(env.DRYDOCK_MCP_PROBE).toBeUndefined();
    expect(JSON.stringify(env)).not.toContain('daemon-only-value');
    const p1 = JSON.parse(said((await c.call('mcp__snoop__process_1', {}, signal())).content));
    // The secret is never on a command line (which every user of the host may read), only in its environment.
    expect(p1.cmdline).toContain('bwrap');
    expect(p1.cmdline).not.toContain(SECRET);
    expect(p1.environ).not.toContain('daemon-only-value');
    expect(p1.uid).not.toBe(0);
  });

  it('reaches no port of the host loopback but the ones its entry names', async () => {
    const closed = await snoop();
    const reach = async (c: McpConnection) =>
      said((await c.call('mcp__snoop__connect', { host: '127.0.0.1', port: hostPort }, signal())).content);
    expect(await reach(closed)).toBe('refused: ECONNREFUSED');
    const named = await snoop({ loopback_ports: [hostPort] });
    expect(await reach(named)).toBe('connected');
  });

  it('reaches the host names of its network list through the egress proxy, and no other', async () => {
    const address = hostAddress();
    const web = createHttpServer((_req, res) => res.end('hello from the tracker'));
    await new Promise<void>((resolve) => web.listen(0, '0.0.0.0', resolve));
    const port = (web.address() as { port: number }).port;
    const egress = new Egress({
      logger: memoryLogger().logger,
      lookup: lookupFrom({ 'tracker.test': address, 'other.test': address }),
    });
    try {
      const get = async (c: McpConnection, host: string) =>
        said((await c.call('mcp__snoop__http_get', { url: `http://${host}:${port}/` }, signal())).content);
      const none = await snoop();
      expect(await get(none, 'tracker.test')).toBe('refused: no HTTP_PROXY');
      const listed = await snoop({ network: ['tracker.test'] }, '', egress);
      expect(await get(listed, 'tracker.test')).toBe('200 hello from the tracker');
      expect(await get(listed, 'other.test')).toMatch(/^403 drydock egress proxy: other\.test is not on/);
    } finally {
      for (const c of open.splice(0)) await c.close();
      await egress.close();
      await new Promise<void>((resolve) => web.close(() => resolve()));
    }
  });

  it('is gone, with everything it started, once the connection closes', async () => {
    const marker = `marker-${randomBytes(6).toString('hex')}`;
    const c = await snoop({}, marker);
    const running = () => spawnSync('pgrep', ['-f', '--', marker], { encoding: 'utf8' }).stdout.trim();
    expect(running()).not.toBe('');
    await c.close();
    expect(running()).toBe('');
  });

  it('turns a crash into error results, for that call and every later one', async () => {
    const c = await snoop();
    const crash = await c.call('mcp__snoop__crash', {}, signal());
    expect(crash.isError).toBe(true);
    expect(crash.content).toMatch(/^MCP server snoop, tool crash: the server stopped \(exit 7\)/);
    expect(await c.call('mcp__snoop__environment', {}, signal())).toEqual({
      isError: true,
      content: 'MCP server snoop has stopped (exit 7); mcp__snoop__environment cannot be called in this run',
    });
  });
});

describe('a stdio MCP server that fails to start', () => {
  const start = (entry: Record<string, unknown>) =>
    createMcpConnector({
      config: mcpConfig({ broken: entry }),
      logger: memoryLogger().logger,
      sandbox,
      clock: systemClock,
      env: { BROKEN_TOKEN: SECRET },
    }).open(['broken'], { signal: signal(), runId: 'run_broken' });

  it('is an McpStartError with the tail of its stderr, its secret redacted', async () => {
    const err = await start(nodeServer(FAILS, { env: { FIXTURE_TOKEN: `\${BROKEN_TOKEN}` } })).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(McpStartError);
    expect(err.server).toBe('broken');
    expect(err.message).toMatch(/^MCP server broken: stopped \(exit 3\) before it answered initialize/);
    expect(err.stderrTail).toBe(
      [
        'starting the fixture server',
        'connecting with token [redacted]',
        'fatal: the database is unreachable',
      ].join('\n'),
    );
    expect(`${err.message}${err.stderrTail}`).not.toContain(SECRET);
  });

  it('names a program that does not exist', async () => {
    const err = await start({ command: '/nonexistent/mcp-server' }).catch((e) => e);
    expect(err).toBeInstanceOf(McpStartError);
    expect(err.message).toBe(
      'MCP server broken: could not start: the program /nonexistent/mcp-server was not found (or is not executable)',
    );
  });

  it('gives up on a server that never answers initialize within start_timeout_ms', async () => {
    const err = await start({
      command: process.execPath,
      args: ['-e', 'process.stderr.write("waiting for nothing\\n"); setInterval(() => {}, 60000)'],
      start_timeout_ms: 1500,
    }).catch((e) => e);
    expect(err).toBeInstanceOf(McpStartError);
    expect(err.message).toMatch(
      /^MCP server broken: did not answer initialize and tools\/list within 1500 ms/,
    );
  });
});
