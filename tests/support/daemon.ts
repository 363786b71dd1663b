import { join } from 'node:path';
import type { Sandbox } from '../../src/agent/sandbox.js';
import type { Clock } from '../../src/clock.js';
import type { Config } from '../../src/config/schema.js';
import { type Daemon, startDaemon } from '../../src/daemon.js';
import { type Logger, silentLogger } from '../../src/logger.js';
import { createModelClient } from '../../src/models/client.js';
import type { RunHandler } from '../../src/runs/queue.js';
import { type TestStore, tempDir, testConfig, testDatabase } from './harness.js';
import type { FreshDatabase } from './postgres.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export interface TestDaemon {
  daemon: Daemon;
  dir: string;
  config: Config;
  /** The PostgreSQL database it keeps its state in (null: the SQLite file in its data directory). */
  database: FreshDatabase | null;
  /** JSON over real HTTP with the admin token (or another). */
  api(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: any }>;
  /** Stops the daemon, removes its directory and drops the database it made (one passed in stays). */
  stop(): Promise<void>;
  /** Stops the daemon, keeping its data directory and its database (for restart tests). */
  halt(): Promise<void>;
  remove(): void;
}

/**
 * The whole daemon on a temp SQLite file (or a PostgreSQL database, see `store`) and a free loopback port,
 * its model client pointed at a local Messages API server through the unmodified SDK.
 */
export async function startTestDaemon(opts: {
  modelUrl?: string;
  patch?: (c: Config) => void;
  dir?: string;
  handler?: RunHandler;
  maxRetries?: number;
  timeoutMs?: number;
  /** Replaces the sandbox built from the configuration (a machine without a working one). */
  sandbox?: Sandbox;
  /** Where the state lives (default: a SQLite file in the data directory); sets database_url. */
  store?: TestStore;
  /** The configuration file the daemon would have read (hidden from the model like the data directory). */
  configFile?: string;
  /** The model client's key (default `test-key`; null: none, as when ANTHROPIC_API_KEY is not set). */
  apiKey?: string | null;
  /** The daemon's clock (default: the system clock). */
  clock?: Clock;
  /** Where the daemon logs (default: nowhere). */
  logger?: Logger;
}): Promise<TestDaemon> {
  const { database, release } = await testDatabase(opts.store);
  const tmp = opts.dir ? { path: opts.dir, remove: () => {} } : tempDir('drydock-daemon-');
  const config = testConfig(join(tmp.path, 'data'), (c) => {
    c.server.port = 0;
    c.admin_token = ADMIN_TOKEN;
    c.server.shutdown_grace_ms = 2_000;
    c.database_url = database?.url ?? null;
    opts.patch?.(c);
  });
  // The client the daemon builds for itself (models/client.ts), with the tests' key, server and limits.
  const model = createModelClient({
    api_key: opts.apiKey === undefined ? 'test-key' : opts.apiKey,
    base_url: opts.modelUrl ?? 'http://127.0.0.1:9',
    max_retries: opts.maxRetries ?? 2,
    request_timeout_ms: opts.timeoutMs ?? 10_000,
  });
  const daemon = await startDaemon({
    config,
    logger: opts.logger ?? silentLogger(),
    model,
    announce: () => {},
    ...(opts.handler ? { handler: opts.handler } : {}),
    ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
    ...(opts.configFile ? { configFile: opts.configFile } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
  }).catch(async (err: unknown) => {
    tmp.remove();
    await release();
    throw err;
  });
  let stopped = false;
  const halt = async () => {
    if (stopped) return;
    stopped = true;
    await daemon.stop();
  };
  return {
    daemon,
    dir: tmp.path,
    config,
    database,
    async api(method, path, body, token = ADMIN_TOKEN) {
      const res = await fetch(`${daemon.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
    stop: async () => {
      await halt();
      tmp.remove();
      await release();
    },
    halt,
    remove: tmp.remove,
  };
}

/** Polls until `check` returns a value (not undefined/false), or fails after `ms`. */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false>,
  ms = 10_000,
  what = 'condition',
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits (at most `ms`) until `cond` holds: waitFor for a condition with no value. */
export async function until(
  cond: () => boolean | Promise<boolean>,
  what: string,
  ms = 10_000,
): Promise<void> {
  await waitFor(async () => (await cond()) || undefined, ms, what);
}

export interface SseEvent {
  id: string;
  event: string;
  data: any;
}

/**
 * Reads a run's SSE stream until the server closes it (or `ms` passes); `opened` is called once the server
 * has answered the request with the stream's headers.
 */
export async function readSse(
  url: string,
  token: string,
  lastEventId?: string,
  ms = 15_000,
  opened: () => void = () => {},
): Promise<SseEvent[]> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), ms);
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
  if (lastEventId) headers['last-event-id'] = lastEventId;
  try {
    const res = await fetch(url, { headers, signal: ctrl.signal });
    if (res.status !== 200) throw new Error(`SSE answered ${res.status}: ${await res.text()}`);
    if (!res.headers.get('content-type')?.startsWith('text/event-stream'))
      throw new Error('not an event stream');
    opened();
    const text = await res.text();
    return parseSse(text);
  } finally {
    clearTimeout(timer);
  }
}

export function parseSse(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const frame of text.split('\n\n')) {
    const lines = frame.split('\n').filter((l) => l && !l.startsWith(':'));
    if (!lines.length) continue;
    const field = (name: string) =>
      lines
        .filter((l) => l.startsWith(`${name}:`))
        .map((l) => l.slice(name.length + 1).replace(/^ /, ''))
        .join('\n');
    out.push({ id: field('id'), event: field('event'), data: JSON.parse(field('data')) });
  }
  return out;
}
