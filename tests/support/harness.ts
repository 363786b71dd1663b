import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hono } from 'hono';
import type { SandboxStatus } from '../../src/agent/sandbox.js';
import { issueToken } from '../../src/auth/tokens.js';
import { defaultConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import type { Role, Run } from '../../src/domain/types.js';
import type { BodyBudget } from '../../src/http/body-budget.js';
import type { Env } from '../../src/http/deps.js';
import { silentLogger } from '../../src/logger.js';
import type { RunHandler } from '../../src/runs/queue.js';
import type { Scheduler } from '../../src/scheduler/loop.js';
import { appDeps, createApp } from '../../src/server.js';
import { buildServices, type Services } from '../../src/services.js';
import { openStore } from '../../src/store/open.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { FakeClock } from './fake-clock.js';
import { type FreshDatabase, migratedDatabase } from './postgres.js';

/** The API harness carries out no run: one that reaches the queue fails with a reason that says so. */
export const noAgentExecutor: RunHandler = {
  async execute() {
    return { status: 'failed', error: 'no agent runner is configured in this build of drydock' };
  },
};

export const T0 = Date.parse('2026-06-01T08:00:00.000Z');

/** A fresh directory under the system temp dir, removed by the returned function. */
export function tempDir(prefix = 'drydock-test-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export function testConfig(dataDir: string, patch: (c: Config) => void = () => {}): Config {
  const c = defaultConfig();
  c.data_dir = dataDir;
  c.timezone = 'UTC';
  c.log_level = 'silent';
  // A turn retried after a transient failure waits milliseconds, not seconds.
  c.anthropic.turn_retry_base_ms = 5;
  c.anthropic.turn_attempts = 3;
  // A repository no test maps to a clone is cloned on demand (src/workspace/repo-cache.ts): from a port that
  // refuses connections, never from github.com. Tests of cloning point it at tests/support/git-http.ts.
  c.github.git_url = 'http://127.0.0.1:9';
  patch(c);
  return c;
}

/**
 * Where a test daemon or harness keeps its state: the SQLite file in its data directory (`'sqlite'`, the
 * default), a fresh PostgreSQL database made for it and dropped when it closes (`'postgres'`), or a
 * PostgreSQL database made by someone else and shared (left for its maker to drop).
 */
export type TestStore = 'sqlite' | 'postgres' | FreshDatabase;

/** The PostgreSQL database for `choice` (null: SQLite) and how to let go of it. */
export async function testDatabase(
  choice: TestStore = 'sqlite',
): Promise<{ database: FreshDatabase | null; release: () => Promise<void> }> {
  if (choice === 'sqlite') return { database: null, release: async () => {} };
  if (choice === 'postgres') {
    // The store finds it migrated (a copy of the global setup's template) and has nothing to apply.
    const database = await migratedDatabase();
    return { database, release: () => database.drop() };
  }
  return { database: choice, release: async () => {} };
}

export interface HarnessOptions {
  now?: number;
  patch?: (c: Config) => void;
  sandbox?: SandboxStatus;
  unauthenticatedBodies?: BodyBudget;
  /** Where the state lives (default: a SQLite file in the data directory). */
  store?: TestStore;
  /** The configuration file the daemon would have read (hidden from the model like the data directory). */
  configFile?: string;
}

export interface Harness<S extends Store = SqliteStore> {
  dir: string;
  config: Config;
  clock: FakeClock;
  store: S;
  /** The PostgreSQL database the store is on (null: the SQLite file). */
  database: FreshDatabase | null;
  /** The daemon's services, built through the composition root and not started. */
  services: Services;
  scheduler: Scheduler;
  app: Hono<Env>;
  runs: Run[];
  tokens: Record<Role, string>;
  workspace: string;
  /** JSON request through app.request with the given role's token (or `token: null` for none). */
  call(
    method: string,
    path: string,
    opts?: {
      role?: Role;
      token?: string | null;
      body?: unknown;
      rawBody?: string;
      headers?: Record<string, string>;
    },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

/**
 * A store (a real SQLite file in a temp dir, or a PostgreSQL database with `store`), a fake clock, a
 * scheduler (not started) and the HTTP app.
 */
export async function createHarness(opts?: HarnessOptions & { store?: 'sqlite' }): Promise<Harness>;
export async function createHarness(opts: HarnessOptions): Promise<Harness<Store>>;
export async function createHarness(opts: HarnessOptions = {}): Promise<Harness<Store>> {
  const { database, release } = await testDatabase(opts.store);
  const tmp = tempDir();
  const config = testConfig(join(tmp.path, 'data'), opts.patch);
  config.database_url = database?.url ?? null;
  const clock = new FakeClock(opts.now ?? T0);
  let store: Store;
  try {
    // The SQLite store makes the data directory for its file; on PostgreSQL it holds only the worktrees.
    if (database) mkdirSync(config.data_dir, { recursive: true });
    // PostgreSQL is opened as the daemon opens it (src/store/open.ts picks it by database_url).
    store = database
      ? await openStore(config, clock.now())
      : new SqliteStore({ file: join(config.data_dir, 'drydock.db'), now: () => clock.now() });
  } catch (err) {
    tmp.remove();
    await release();
    throw err;
  }
  const workspace = join(tmp.path, 'workspace');
  mkdirSync(workspace);
  const runs: Run[] = [];
  // The daemon's services, not started: runs from the scheduler and the API are collected in `runs` rather
  // than executed (the queue, with no agent, only serves cancel, resume and triggers). No sandbox is probed,
  // and the app gets neither metrics nor plan delivery.
  const services = await buildServices({
    config,
    logger: silentLogger(),
    store,
    clock,
    handler: noAgentExecutor,
    sandbox: null,
    maxConcurrent: 1,
    submitRun: (run) => runs.push(run),
    ...(opts.configFile ? { configFile: opts.configFile } : {}),
  });
  const { scheduler } = services;
  const app = createApp({
    ...appDeps(services),
    metrics: undefined,
    delivery: undefined,
    sandbox: opts.sandbox,
    unauthenticatedBodies: opts.unauthenticatedBodies,
  });
  const tokens = {} as Record<Role, string>;
  for (const role of ['admin', 'operator', 'approver', 'viewer'] as const) {
    const issued = issueToken(`${role}-user`, `${role}-user`, role, clock.now());
    await store.createToken(issued.record);
    tokens[role] = issued.token;
  }
  return {
    dir: tmp.path,
    config,
    clock,
    store,
    database,
    services,
    scheduler,
    app,
    runs,
    tokens,
    workspace,
    async call(method, path, o = {}) {
      const headers: Record<string, string> = { ...(o.headers ?? {}) };
      const token = o.token === undefined ? tokens[o.role ?? 'operator'] : o.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let body: string | undefined = o.rawBody;
      if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers['content-type'] = 'application/json';
      }
      const res = await app.request(path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async close() {
      await scheduler.stop();
      await store.close();
      tmp.remove();
      await release();
    },
  };
}
