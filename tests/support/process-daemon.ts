import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';
import { ADMIN_TOKEN } from './daemon.js';
import { type TestStore, testDatabase } from './harness.js';
import type { FreshDatabase } from './postgres.js';

/** The built CLI (the global setup compiles it before any test file runs). */
export const CLI = join(packageRoot(), 'dist/src/cli/main.js');

export interface DaemonProcess {
  child: ChildProcess;
  url: string;
  /** The PostgreSQL database it keeps its state in (null: the SQLite file in its data directory). */
  database: FreshDatabase | null;
  /** What it wrote to standard error and standard output so far. */
  stderr(): string;
  stdout(): string;
  /** JSON over HTTP with the admin token (or another). */
  api(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }>;
  /** SIGKILL, and wait until the process is gone. */
  kill(): Promise<void>;
  /** SIGTERM (a graceful stop), and the exit code once the process is gone. */
  stop(): Promise<number | null>;
  /**
   * SIGSTOP: the process freezes as a whole (timers, sockets, lease renewals), as under a long GC pause, a VM
   * migration or a laptop lid. Resolves once the kernel reports it stopped.
   */
  pause(): Promise<void>;
  /** SIGCONT after `pause()`: it runs on from where it was, with whatever its sockets received meanwhile. */
  resume(): Promise<void>;
  /** Kills the process if it still runs and drops the database it made (one passed in is its maker's). */
  close(): Promise<void>;
}

/**
 * `drydock serve` as a real process on `dataDir`, a free port and the Messages API at `modelUrl`; `env`
 * adds to (or overrides) its environment. `store` says where its state lives: the SQLite file in `dataDir`
 * (the default), a fresh PostgreSQL database made for it (`'postgres'`, dropped by `close()`), or a
 * database another process made (several daemons on one database); a database is given as DATABASE_URL.
 * Resolves once it listens. Kill it yourself (see `children`), or `close()` it.
 */
export async function serveProcess(
  dataDir: string,
  modelUrl: string,
  children: ChildProcess[],
  env: Record<string, string> = {},
  opts: { store?: TestStore } = {},
): Promise<DaemonProcess> {
  const { database, release } = await testDatabase(opts.store);
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
      ...(database ? { DATABASE_URL: database.url } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let err = '';
  let out = '';
  // Read to the end, so that a chatty log never fills the pipe and blocks the daemon.
  child.stdout!.on('data', (b) => {
    out += b;
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr!.on('data', (b) => {
        err += b;
        const m = /drydock listening on (\S+)/.exec(err);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
    });
    return handle(child, url, database, release, {
      stderr: () => err,
      stdout: () => out,
    });
  } catch (e) {
    await release();
    throw e;
  }
}

function handle(
  child: ChildProcess,
  url: string,
  database: FreshDatabase | null,
  release: () => Promise<void>,
  output: { stderr(): string; stdout(): string },
): DaemonProcess {
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const exited = new Promise<number | null>((resolve) => {
    if (gone()) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
  const kill = async () => {
    if (gone()) return;
    child.kill('SIGKILL');
    await exited;
  };
  return {
    child,
    url,
    database,
    ...output,
    async api(method, path, body, token = ADMIN_TOKEN) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
    kill,
    async stop() {
      if (!gone()) child.kill('SIGTERM');
      return exited;
    },
    async pause() {
      child.kill('SIGSTOP');
      await untilState(child, true);
    },
    async resume() {
      child.kill('SIGCONT');
      await untilState(child, false);
    },
    async close() {
      await kill();
      await release();
    },
  };
}

/** How long a signal may take to stop or continue a process, at most (a loaded machine). */
const SIGNAL_MS = 10_000;

/**
 * Waits until the kernel says the process is stopped (state T in /proc/PID/stat) or is not; where there is no
 * /proc, a signal sent is taken as delivered.
 */
async function untilState(child: ChildProcess, stopped: boolean): Promise<void> {
  const end = Date.now() + SIGNAL_MS;
  for (;;) {
    const state = processState(child.pid!);
    if (state === null || (state === 'T') === stopped) return;
    if (Date.now() > end)
      throw new Error(`process ${child.pid} still in state ${state} after ${SIGNAL_MS} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The one-letter state of a process (proc(5): the field after the parenthesised name), null without /proc. */
function processState(pid: number): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

/**
 * A token made with `drydock token create` on the daemon's data directory; returns the token. `--init`: the
 * tests make tokens before a daemon first starts there too.
 */
export function createTokenOffline(dataDir: string, name: string, role: string): string {
  const r = spawnSync(process.execPath, [CLI, 'token', 'create', '--init', '--name', name, '--role', role], {
    env: { PATH: process.env.PATH ?? '', DRYDOCK_DATA_DIR: dataDir, DRYDOCK_LOG_LEVEL: 'warn' },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`token create failed: ${r.stderr}`);
  return r.stdout.trim();
}
