import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Sandbox, SandboxStatus } from './agent/sandbox.js';
import { systemClock } from './clock.js';
import { redactedConfig } from './config/load.js';
import type { Config } from './config/schema.js';
import type { PassLoop } from './pass-loop.js';
import type { PlanDecisions } from './plans/decisions.js';
import { checkWorkspaces, listenError, openStoreChecked } from './preflight.js';
import type { RunEvents } from './runs/events.js';
import type { RunQueue } from './runs/queue.js';
import type { RunService } from './runs/service.js';
import type { Scheduler } from './scheduler/loop.js';
import { appDeps, createApp } from './server.js';
import { buildServices, type ServiceOptions } from './services.js';
import type { Store } from './store/store.js';
import type { TriggerService } from './triggers/service.js';

export interface DaemonOptions
  extends Pick<
    ServiceOptions,
    'config' | 'logger' | 'clock' | 'handler' | 'model' | 'lookupPullRequest' | 'configFile'
  > {
  /** Where the start banner goes (listen address, a newly created admin token): a terminal, not the log. */
  announce?: (line: string) => void;
  /** Replaces the sandbox built from config.execute (tests of a machine without a working one). */
  sandbox?: Sandbox;
}

export interface Daemon {
  url: string;
  store: Store;
  scheduler: Scheduler;
  /** The sweep of deadlines (questions, tool approvals, plans): `kick()` runs one now. */
  sweeps: PassLoop;
  queue: RunQueue;
  events: RunEvents;
  runs: RunService;
  plans: PlanDecisions;
  triggers: TriggerService;
  sandbox: SandboxStatus;
  stop(): Promise<void>;
}

/** Requests go here: a 503 until the daemon is ready, then the app. */
type Handler = (request: Request, env: unknown) => Response | Promise<Response>;

/**
 * Starts the daemon. LOUD: order matters. First what can fail without leaving anything behind (the port, then
 * the data directory), then the database; the admin token is made last, by the start that prints it. A start
 * that fails throws (a StartError says the cause and the fix in one line) and leaves nothing open.
 */
export async function startDaemon(opts: DaemonOptions): Promise<Daemon> {
  const { config } = opts;
  let handle: Handler = () =>
    new Response('drydock is starting', { status: 503, headers: { 'retry-after': '1' } });
  const server = await listen(config, (request, env) => handle(request, env));
  let store: Store | undefined;
  try {
    // The store logs each outage of a PostgreSQL database once (the loops and requests that meet it log it
    // at debug only).
    store = await openStoreChecked(config, (opts.clock ?? systemClock).now(), true, opts.logger);
    return await assemble(opts, server, store, (app) => {
      handle = app;
    });
  } catch (err) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await store?.close();
    throw err;
  }
}

async function assemble(
  opts: DaemonOptions,
  server: Server,
  store: Store,
  serveApp: (handler: Handler) => void,
): Promise<Daemon> {
  const { config, logger } = opts;
  const announce = opts.announce ?? ((line: string) => process.stderr.write(`${line}\n`));
  const listening = server.address() as AddressInfo;
  const host = listening.family === 'IPv6' ? `[${listening.address}]` : listening.address;
  const url = `http://${host}:${listening.port}`;

  const services = await buildServices({
    ...opts,
    store,
    publicUrl: config.server.public_url ?? url,
    closeIngress: () => closeServer(server),
  });
  // Before start() makes anything (the admin token): checked against the very list the sandbox and the
  // file tools were given.
  await checkWorkspaces(store, config, services.hidden);
  const app = createApp(appDeps(services));
  const { recovered, failedPlans, admin } = await services.start();
  serveApp(app.fetch);

  logger.info(
    { url, replica: services.replica, jobs: await store.countJobs(), ...recovered, failedPlans },
    'drydock started',
  );
  logger.debug({ config: redactedConfig(config) }, 'effective configuration');
  announce(`drydock listening on ${url}`);
  if (admin.kind === 'created') {
    announce(`admin token (shown once, keep it safe): ${admin.token}`);
  } else if (admin.kind === 'adopted') {
    announce('admin token: the value of DRYDOCK_ADMIN_TOKEN');
  } else {
    // A command that works as printed, from the package's directory (npx finds its bin there).
    announce(
      `admin token: the one printed at first start; make another with: npx drydock token create --name NAME --role admin --data-dir ${JSON.stringify(config.data_dir)}`,
    );
  }

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      logger.info('drydock stopping');
      // Scheduler and retention first, then the server (closeIngress), then runs, outboxes and the store:
      // the order is written out in src/services.ts.
      await services.stop(config.server.shutdown_grace_ms);
      logger.info('drydock stopped');
    })();
    return stopping;
  };
  const { scheduler, sweeps, queue, events, runs, plans, triggers } = services;
  return {
    url,
    store,
    scheduler,
    sweeps,
    queue,
    events,
    runs,
    plans,
    triggers,
    sandbox: services.sandbox!,
    stop,
  };
}

/** Stops accepting connections and waits for the open ones to end. */
function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    // Idle keep-alive connections would hold close() open; requests in flight get a moment to finish,
    // then long-lived ones (event streams of runs still going) are closed too.
    const s = server as unknown as {
      closeIdleConnections?: () => void;
      closeAllConnections?: () => void;
    };
    s.closeIdleConnections?.();
    setTimeout(() => s.closeAllConnections?.(), 2_000).unref();
  });
}

/**
 * The HTTP server, listening before anything else starts (it answers 503 until the daemon is ready); a
 * port in use or an address this machine lacks is a StartError.
 */
async function listen(config: Config, fetch: Handler): Promise<Server> {
  const timeout = config.server.request_timeout_ms;
  const server = serve({
    fetch,
    hostname: config.server.host,
    port: config.server.port,
    // A client has request_timeout_ms to send a whole request, headers included; then Node answers 408 and
    // closes the connection, and the handler's body read ends (releasing what it held). Only the receiving of
    // the request is timed: a response that streams for hours (a run's events) is not cut. Node looks for
    // late requests every connectionsCheckingInterval (30 s by default, which would double a 30 s timeout).
    serverOptions: { requestTimeout: timeout, headersTimeout: timeout, connectionsCheckingInterval: 1_000 },
  }) as Server;
  // Connections past this many are closed as soon as they are accepted.
  server.maxConnections = config.server.max_connections;
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', (err) => reject(listenError(err, config.server.host, config.server.port)));
  });
  return server;
}
