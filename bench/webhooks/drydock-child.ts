import { monitorEventLoopDelay } from 'node:perf_hooks';
import Anthropic from '@anthropic-ai/sdk';
import pg from 'pg';
import { defaultConfig } from '../../src/config/load.js';
import { type Daemon, startDaemon } from '../../src/daemon.js';
import { parseSignature, SignatureCheck } from '../../src/github/signature.js';
import type { RunHandler } from '../../src/runs/queue.js';
import { countingLogger } from '../shared/logger.js';
import { childParams, cpuMs, fail, maxRssBytes, onOrders, report } from './child-io.js';
import { ACTION, PrefixSigner, payloadTemplate } from './payload.js';
import type { DrydockParams, MethodTime, Micro, Started, Usage } from './protocol.js';

// Child: the real daemon, startDaemon() (store, run queue, scheduler, HTTP server) on a fresh data directory,
// a free loopback port and the real clock, configured as a user would: one webhook secret, the payload's
// repository mapped to a local git clone, and one github trigger on pull_request.opened created over
// POST /v1/triggers (with --replicas, by the first replica only: the others, each with its own replica_id and
// data directory on the same database, serve that trigger). Not the defaults:
//   - the executor (startDaemon's `handler` option): no agent, model or git worktree is measured; the runs
//     still go through the real queue and store. `held` (the default) keeps the runs it is handed until the
//     orchestrator sends `release`, as agent runs minutes long keep a burst's runs queued; `instant` returns
//     { status: 'planned' } at once;
//   - the trigger's hourly cap is raised to `hourlyCap` through the store after it was created (the API
//     accepts at most 10,000 and the bench sends more in an hour's worth of seconds);
//   - the logger is pino at info, as in production, counting lines instead of writing them (warnings and
//     errors go to stderr).
// Instrumentation lives only here: every public store method, TriggerService.receiveGithub and
// RunQueue.submit are wrapped on the instances with a wall-clock and a CPU timer (outermost calls; the SQLite
// store and submit are synchronous inside; receiveGithub awaits, so it gets wall time only). The PostgreSQL
// store's methods return promises: their wall time runs until the promise settles, their CPU is that of the
// synchronous part only (the driver's work on the answer runs in later callbacks, outside any wrapper).

const p = childParams<DrydockParams>();

let executed = 0;
let release: () => void = () => {};
const released = new Promise<void>((resolve) => {
  release = resolve;
});
const planned: RunHandler = {
  async execute() {
    if (p.executor === 'held') await released;
    executed += 1;
    return { status: 'planned' };
  },
};

const { logger, counts: logged } = countingLogger();

const timing = (): MethodTime => ({ calls: 0, wallMs: 0, cpuMs: 0, maxWallMs: 0 });
const add = (t: MethodTime, wallMs: number, cpuMs = 0) => {
  t.calls += 1;
  t.wallMs += wallMs;
  t.cpuMs += cpuMs;
  if (wallMs > t.maxWallMs) t.maxWallMs = wallMs;
};
const cpuSince = (c0: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};
/** Store CPU spent inside RunQueue.submit (its claim of a free slot), counted once: under the store. */
let submitting = 0;
let storeCpuInSubmit = 0;

/**
 * Wraps the store's public methods on the instance: composeStore puts them on the instance itself, the class
 * adds a few on its prototype. Nested calls (a method calling another) count once. A method that returns a
 * promise is timed (wall) until it settles.
 */
function instrumentStore(store: object, times: Record<string, MethodTime>): void {
  const target = store as Record<string, unknown>;
  let depth = 0;
  const proto = Object.getPrototypeOf(store) as object;
  const names = new Set([
    ...Object.getOwnPropertyNames(store),
    ...(proto === Object.prototype ? [] : Object.getOwnPropertyNames(proto)),
  ]);
  for (const name of names) {
    const fn = target[name];
    if (name === 'constructor' || name === 'sql' || typeof fn !== 'function') continue;
    const t = timing();
    times[name] = t;
    target[name] = (...args: unknown[]) => {
      depth += 1;
      const outermost = depth === 1;
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      let result: unknown;
      try {
        result = fn.apply(store, args);
        return result;
      } finally {
        depth -= 1;
        if (outermost) {
          const cpu = cpuSince(c0);
          if (submitting > 0) storeCpuInSubmit += cpu;
          if (result instanceof Promise) {
            const settled = () => add(t, performance.now() - t0, cpu);
            result.then(settled, settled);
          } else {
            add(t, performance.now() - t0, cpu);
          }
        }
      }
    };
  }
}

/**
 * Wraps TriggerService.receiveGithub (wall) and RunQueue.submit (wall and CPU, less the store calls it makes
 * when a slot is free: the queue's claim runs synchronously inside it) on the daemon's instances.
 */
function instrument(
  daemon: Daemon,
  store: Record<string, MethodTime>,
  handler: MethodTime,
  submit: MethodTime,
) {
  instrumentStore(daemon.store, store);
  const triggers = daemon.triggers as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  const receiveGithub = triggers.receiveGithub!.bind(daemon.triggers);
  triggers.receiveGithub = async (...args: unknown[]) => {
    const t = performance.now();
    try {
      return await receiveGithub(...args);
    } finally {
      add(handler, performance.now() - t);
    }
  };
  const queue = daemon.queue as unknown as Record<string, (...a: unknown[]) => unknown>;
  const submitRun = queue.submit!.bind(daemon.queue);
  queue.submit = (...args: unknown[]) => {
    const nested = storeCpuInSubmit;
    submitting += 1;
    const c0 = process.cpuUsage();
    const t = performance.now();
    try {
      return submitRun(...args);
    } finally {
      submitting -= 1;
      add(submit, performance.now() - t, cpuSince(c0) - (storeCpuInSubmit - nested));
    }
  };
}

let closeCounter: (() => Promise<void>) | null = null;

const QUEUED = `SELECT COUNT(*) AS n FROM deliveries WHERE outcome = 'queued'`;

async function queuedCounter(daemon: Daemon): Promise<() => Promise<number>> {
  if (p.databaseUrl === null) {
    const db = (daemon.store as unknown as { db: { prepare(sql: string): { pluck(): { get(): unknown } } } })
      .db;
    const queuedCount = db.prepare(QUEUED.replace(' AS n', '')).pluck();
    return async () => queuedCount.get() as number;
  }
  const client = new pg.Client({ connectionString: p.databaseUrl });
  await client.connect();
  closeCounter = () => client.end();
  return async () => Number((await client.query<{ n: string }>(QUEUED)).rows[0]!.n);
}

/** Median of `n` timings of `fn`, in µs. */
async function micro(n: number, fn: () => unknown): Promise<number> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out.push((performance.now() - t0) * 1000);
  }
  out.sort((a, b) => a - b);
  return out[Math.floor(n / 2)]!;
}

/** The github trigger, created over POST /v1/triggers as a user would; its hourly cap then raised in the store. */
async function createTrigger(daemon: Daemon): Promise<string> {
  const created = await fetch(`${daemon.url}/v1/triggers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      kind: 'github',
      name: 'plan new pull requests',
      events: [`pull_request.${ACTION}`],
      filters: { repositories: [p.repository] },
      prompt: 'Plan a review of {{repository}}#{{number}} ({{head_ref}} into {{base_ref}} at {{head_sha}}).',
      hourly_cap: 10_000,
    }),
  });
  const trigger = (await created.json()) as { id?: string };
  if (created.status !== 201 || !trigger.id) {
    throw new Error(`POST /v1/triggers answered ${created.status}: ${JSON.stringify(trigger)}`);
  }
  await daemon.store.updateTrigger(trigger.id, { hourlyCap: p.hourlyCap, updatedAt: Date.now() });
  return trigger.id;
}

async function main(): Promise<void> {
  const config = defaultConfig();
  config.data_dir = p.dataDir;
  config.database_url = p.databaseUrl;
  config.replica_id = p.replicaId;
  config.timezone = 'UTC';
  config.log_level = 'info';
  config.server.host = '127.0.0.1';
  config.server.port = 0;
  config.server.shutdown_grace_ms = 5_000;
  config.admin_token = p.adminToken;
  config.runs.max_concurrent = p.maxConcurrent;
  config.github.webhook_secrets = [p.secret];
  config.github.repositories = { [p.repository]: { path: p.repoDir } };
  const model = new Anthropic({ apiKey: 'bench-key', baseURL: 'http://127.0.0.1:9', maxRetries: 0 });

  const t0 = performance.now();
  const daemon = await startDaemon({ config, logger, model, handler: planned, announce: () => {} });
  const startMs = performance.now() - t0;

  const triggerId = p.createTrigger ? await createTrigger(daemon) : null;

  // The route's steps outside the store, on the bench body: verify (as the route does it, over the raw bytes
  // as they arrive: here in one chunk) and JSON.parse.
  const tpl = payloadTemplate();
  const bytes = tpl.body(424_242);
  const body = bytes.toString('utf8');
  const digest = parseSignature(new PrefixSigner(p.secret, tpl.prefix).sign(tpl.tail(424_242)));
  if (!digest) throw new Error('drydock: the bench signature does not parse');
  const verify = () => {
    const check = new SignatureCheck([p.secret], digest);
    check.update(bytes);
    if (!check.matches()) throw new Error('drydock: the bench signature does not match');
  };
  await micro(500, verify);
  const m: Micro = {
    verifyUs: await micro(2_000, verify),
    parseUs: await micro(2_000, () => JSON.parse(body)),
  };

  const storeTimes: Record<string, MethodTime> = {};
  const handler = timing();
  const submit = timing();
  if (p.instrument) instrument(daemon, storeTimes, handler, submit);

  // The inbox's depth, read through its partial index (stats() would group every delivery and run, too slow
  // to poll while the inbox drains): on the SQLite store's own connection, or on one PostgreSQL connection of
  // the bench's own, apart from the store's pool.
  const countQueued = await queuedCounter(daemon);

  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const usage = async (): Promise<Usage> => {
    const queued = await countQueued();
    const u: Usage = {
      type: 'usage',
      cpuMs: cpuMs(),
      rss: process.memoryUsage.rss(),
      executed,
      queued,
      logLines: logged.lines,
      warnings: logged.warnings,
      store: storeTimes,
      handler,
      submit,
      loopDelayP99Ms: delay.percentile(99) / 1e6,
      loopDelayMaxMs: delay.max / 1e6,
    };
    delay.reset();
    return u;
  };
  onOrders<{ type: 'usage' | 'release' | 'stop' }>(async (order) => {
    if (order.type === 'usage') {
      await report(await usage());
      return;
    }
    if (order.type === 'release') {
      release();
      return;
    }
    const last = await usage();
    // The live heap once everything is done (node runs this child with --expose-gc): what stays after a
    // burst, as against the peak RSS the burst's garbage drove up.
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    const liveHeap = gc ? process.memoryUsage().heapUsed : null;
    await daemon.stop();
    await closeCounter?.();
    await report({ type: 'stopped', usage: last, maxRss: maxRssBytes(), liveHeap });
    process.exit(0);
  });
  await report({
    type: 'started',
    url: daemon.url,
    startMs,
    triggerId,
    micro: m,
  } satisfies Started);
}

main().catch(fail);
