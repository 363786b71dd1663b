import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';
import { ADMIN_TOKEN } from './daemon.js';

/** The built CLI (the global setup compiles it before any test file runs). */
export const CLI = join(packageRoot(), 'dist/src/cli/main.js');

export interface DaemonProcess {
  child: ChildProcess;
  url: string;
  /** JSON over HTTP with the admin token (or another). */
  api(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }>;
  /** SIGKILL, and wait until the process is gone. */
  kill(): Promise<void>;
}

/**
 * `drydock serve` as a real process on `dataDir`, a free port and the Messages API at `modelUrl`; `env`
 * adds to (or overrides) its environment. Resolves once it listens. Kill it yourself (see `children`).
 */
export function serveProcess(
  dataDir: string,
  modelUrl: string,
  children: ChildProcess[],
  env: Record<string, string> = {},
): Promise<DaemonProcess> {
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dataDir,
      DRYDOCK_DATA_DIR: dataDir,
      DRYDOCK_PORT: '0',
      DRYDOCK_ADMIN_TOKEN: ADMIN_TOKEN,
      DRYDOCK_LOG_LEVEL: 'warn',
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: modelUrl,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (b) => {
      err += b;
      const m = /drydock listening on (\S+)/.exec(err);
      if (m) resolve(handle(child, m[1]!));
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}

function handle(child: ChildProcess, url: string): DaemonProcess {
  return {
    child,
    url,
    async api(method, path, body, token = ADMIN_TOKEN) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
    },
  };
}

/** A token made with `drydock token create` on the daemon's data directory; returns the token. */
export function createTokenOffline(dataDir: string, name: string, role: string): string {
  const r = spawnSync(process.execPath, [CLI, 'token', 'create', '--name', name, '--role', role], {
    env: { PATH: process.env.PATH ?? '', DRYDOCK_DATA_DIR: dataDir, DRYDOCK_LOG_LEVEL: 'warn' },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`token create failed: ${r.stderr}`);
  return r.stdout.trim();
}
