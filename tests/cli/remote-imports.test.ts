import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { CLI } from './cli-process.js';

// A remote command only talks HTTP: running one must not load the store (and better-sqlite3), the preflight
// checks, the configuration loader, the token code, the logger or the daemon; the local commands load those
// themselves. A module loader hook in the built CLI's process records every module it loads.

const dir = mkdtempSync(join(tmpdir(), 'drydock-remote-imports-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a remote command must not load: where each of them lives in the build or in node_modules. */
const SERVER_SIDE = [
  '/node_modules/better-sqlite3/',
  '/node_modules/pino/',
  '/dist/src/store/',
  '/dist/src/preflight.js',
  '/dist/src/config/',
  '/dist/src/auth/',
  '/dist/src/logger.js',
  '/dist/src/daemon.js',
  '/dist/src/services.js',
  '/dist/src/server.js',
];

/** Runs the built CLI with a loader hook; resolves with its exit code and the URLs of the modules it loaded. */
async function loadsOf(name: string, args: string[], env: Record<string, string>) {
  const log = join(dir, `${name}.log`);
  const hooks = join(dir, `${name}-hooks.mjs`);
  const register = join(dir, `${name}-register.mjs`);
  writeFileSync(log, '');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, nextLoad) {
  appendFileSync(${JSON.stringify(log)}, url + '\\n');
  return nextLoad(url, context);
}
`,
  );
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(`file://${hooks}`)});\n`,
  );
  const child = spawn(process.execPath, ['--import', register, CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (b) => {
    stderr += b;
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  return { code, stderr, loaded: readFileSync(log, 'utf8').split('\n').filter(Boolean) };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const serverSide = (loaded: string[]) => loaded.filter((url) => SERVER_SIDE.some((p) => url.includes(p)));

it('`drydock jobs list` loads none of the server-side modules', async () => {
  const port = await closedPort();
  const r = await loadsOf('remote', ['jobs', 'list', '--session', 'ses_1'], {
    DRYDOCK_URL: `http://127.0.0.1:${port}`,
    DRYDOCK_TOKEN: 'tok-1234',
  });
  // Unreachable: exit 1, after the command ran up to its request.
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).toContain(`127.0.0.1:${port}`);
  expect(r.loaded.some((url) => url.endsWith('/dist/src/cli/commands/jobs.js'))).toBe(true);
  expect(serverSide(r.loaded)).toEqual([]);
});

it('the hook does see them where a local command loads them (`drydock migrate`)', async () => {
  const r = await loadsOf('local', ['migrate', '--data-dir', join(dir, 'data')], {});
  expect(r.code, r.stderr).toBe(0);
  const seen = serverSide(r.loaded).join('\n');
  for (const where of ['/node_modules/better-sqlite3/', '/dist/src/store/', '/dist/src/preflight.js']) {
    expect(seen).toContain(where);
  }
});

it('`drydock export` (and so apply, which shares its modules) loads none of them either', async () => {
  const port = await closedPort();
  const r = await loadsOf('export', ['export'], {
    DRYDOCK_URL: `http://127.0.0.1:${port}`,
    DRYDOCK_TOKEN: 'tok-1234',
  });
  expect(r.code, r.stderr).toBe(1);
  expect(r.loaded.some((url) => url.endsWith('/dist/src/cli/apply/remote.js'))).toBe(true);
  expect(serverSide(r.loaded)).toEqual([]);
});
