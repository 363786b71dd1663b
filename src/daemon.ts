import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { ensureAdminToken } from './auth/bootstrap.js';
import { type Clock, systemClock } from './clock.js';
import type { Config } from './config/schema.js';
import { createApp } from './http/app.js';
import type { Logger } from './logger.js';
import { noAgentExecutor, type RunExecutor, RunQueue } from './runs/queue.js';
import { Scheduler } from './scheduler/loop.js';
import { jitterOptions } from './scheduler/plan-job.js';
import { openStore } from './store/open.js';
import type { Store } from './store/store.js';

export interface DaemonOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
  executor?: RunExecutor;
  /** Where the start banner goes (listen address, a newly created admin token): a terminal, not the log. */
  announce?: (line: string) => void;
}

export interface Daemon {
  url: string;
  store: Store;
  scheduler: Scheduler;
  queue: RunQueue;
  stop(): Promise<void>;
}

export async function startDaemon(opts: DaemonOptions): Promise<Daemon> {
  const { config, logger } = opts;
  const clock = opts.clock ?? systemClock;
  const announce = opts.announce ?? ((line: string) => process.stderr.write(`${line}\n`));

  const store = openStore(config, clock.now());
  const admin = await ensureAdminToken(store, config.admin_token, clock.now());

  let scheduler: Scheduler | undefined;
  const queue = new RunQueue({
    store,
    clock,
    logger,
    executor: opts.executor ?? noAgentExecutor,
    maxConcurrent: config.runs.max_concurrent,
    onSettled: () => scheduler?.kick(),
  });
  scheduler = new Scheduler({
    store,
    clock,
    logger,
    onRun: (run) => queue.submit(run),
    catchupWindowMs: config.scheduler.catchup_window_ms,
    maxWaitMs: config.scheduler.max_wait_ms,
    batchSize: config.scheduler.batch_size,
    jitter: jitterOptions(config),
  });

  const app = createApp({ store, clock, config, logger, scheduler, submitRun: (run) => queue.submit(run) });
  const recovered = await queue.recover();
  scheduler.start();

  const server = serve({ fetch: app.fetch, hostname: config.server.host, port: config.server.port });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;

  logger.info({ url, jobs: await store.countJobs(), ...recovered }, 'drydock started');
  announce(`drydock listening on ${url}`);
  if (admin.kind === 'created') {
    announce(`admin token (shown once, keep it safe): ${admin.token}`);
  } else if (admin.kind === 'adopted') {
    announce('admin token: the value of DRYDOCK_ADMIN_TOKEN');
  } else {
    announce(
      'admin token: the one printed at first start; more with `drydock token create --name NAME --role admin`',
    );
  }

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      logger.info('drydock stopping');
      await scheduler.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle keep-alive connections would hold close() open; requests in flight still finish.
        (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
      });
      await queue.drain(config.server.shutdown_grace_ms);
      await store.close();
      logger.info('drydock stopped');
    })();
    return stopping;
  };
  return { url, store, scheduler, queue, stop };
}
