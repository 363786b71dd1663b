import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hono } from 'hono';
import type { SandboxStatus } from '../../src/agent/sandbox.js';
import { issueToken } from '../../src/auth/tokens.js';
import { defaultConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import type { Role, Run } from '../../src/domain/types.js';
import { createApp } from '../../src/http/app.js';
import type { BodyBudget } from '../../src/http/body-budget.js';
import type { Env } from '../../src/http/deps.js';
import { silentLogger } from '../../src/logger.js';
import { PlanDecisions } from '../../src/plans/decisions.js';
import { PlanLifecycle } from '../../src/plans/lifecycle.js';
import { RunEvents } from '../../src/runs/events.js';
import { noAgentExecutor, RunQueue } from '../../src/runs/queue.js';
import { RunService } from '../../src/runs/service.js';
import { Scheduler } from '../../src/scheduler/loop.js';
import { jitterOptions } from '../../src/scheduler/plan-job.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { TriggerService } from '../../src/triggers/service.js';
import { FakeClock } from './fake-clock.js';

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
  patch(c);
  return c;
}

export interface Harness {
  dir: string;
  config: Config;
  clock: FakeClock;
  store: SqliteStore;
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

/** A real SQLite file in a temp dir, a fake clock, a scheduler (not started) and the HTTP app. */
export async function createHarness(
  opts: {
    now?: number;
    patch?: (c: Config) => void;
    sandbox?: SandboxStatus;
    unauthenticatedBodies?: BodyBudget;
  } = {},
): Promise<Harness> {
  const tmp = tempDir();
  const config = testConfig(join(tmp.path, 'data'), opts.patch);
  const clock = new FakeClock(opts.now ?? T0);
  const store = new SqliteStore({ file: join(config.data_dir, 'drydock.db'), now: () => clock.now() });
  const workspace = join(tmp.path, 'workspace');
  mkdirSync(workspace);
  const runs: Run[] = [];
  const logger = silentLogger();
  const scheduler = new Scheduler({
    store,
    clock,
    logger,
    onRun: (run) => runs.push(run),
    catchupWindowMs: config.scheduler.catchup_window_ms,
    maxWaitMs: config.scheduler.max_wait_ms,
    batchSize: config.scheduler.batch_size,
    jitter: jitterOptions(config),
  });
  // Runs are collected in `runs` rather than executed; the queue only serves cancel and resume.
  const events = new RunEvents(store, clock);
  const queue = new RunQueue({ store, clock, logger, events, executor: noAgentExecutor, maxConcurrent: 1 });
  const lifecycle = new PlanLifecycle({ store, clock, logger });
  const service = new RunService({
    store,
    clock,
    logger,
    events,
    queue,
    onCanceled: (run) => lifecycle.settleExecuteRun(run.id),
  });
  const plans = new PlanDecisions({ store, clock, logger, events, queue, lifecycle });
  const triggers = new TriggerService({
    store,
    clock,
    config,
    logger,
    queue,
    runs: service,
    plans,
    lifecycle,
  });
  const app = createApp({
    store,
    clock,
    config,
    logger,
    scheduler,
    events,
    runs: service,
    plans,
    triggers,
    ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
    submitRun: (run) => runs.push(run),
    ...(opts.unauthenticatedBodies ? { unauthenticatedBodies: opts.unauthenticatedBodies } : {}),
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
    },
  };
}
