import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { serve } from '@hono/node-server';
import { killLeftoverGroup } from './agent/processes.js';
import { AgentExecutor } from './agent/runner.js';
import { Sandbox, type SandboxStatus } from './agent/sandbox.js';
import { DEFAULT_TOOL_LIMITS } from './agent/tools/limits.js';
import { ensureAdminToken } from './auth/bootstrap.js';
import { type Clock, systemClock } from './clock.js';
import { redactedConfig } from './config/load.js';
import type { Config } from './config/schema.js';
import { PlanDeliveryWorker } from './delivery/worker.js';
import { createApp } from './http/app.js';
import type { Logger } from './logger.js';
import { Metrics } from './metrics/metrics.js';
import { modelProblems } from './models/catalogue.js';
import { Notifier } from './notify/notifier.js';
import { PlanDecisions } from './plans/decisions.js';
import { PlanExecutions } from './plans/execution.js';
import { PlanLifecycle } from './plans/lifecycle.js';
import { collectGarbage } from './plans/retention.js';
import { listenError, openStoreChecked } from './preflight.js';
import { RunEvents } from './runs/events.js';
import { type RunExecutor, RunQueue } from './runs/queue.js';
import { RunService } from './runs/service.js';
import { Scheduler } from './scheduler/loop.js';
import { jitterOptions } from './scheduler/plan-job.js';
import type { Store } from './store/store.js';
import { GithubApi } from './triggers/github-api.js';
import { GithubReporter } from './triggers/report.js';
import { type PullRequestLookup, TriggerService } from './triggers/service.js';

/** The first retention pass after a start: late enough to stay out of recovery's way. */
const GC_FIRST_PASS_MS = 60_000;

export interface DaemonOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
  /** Replaces the agent (tests of the queue and scheduler). */
  executor?: RunExecutor;
  /** Replaces the Messages API client built from config.anthropic. */
  model?: Anthropic;
  /** Reads a pull request for `/drydock plan` comments (the GitHub reporter provides one when configured). */
  lookupPullRequest?: PullRequestLookup;
  /** Where the start banner goes (listen address, a newly created admin token): a terminal, not the log. */
  announce?: (line: string) => void;
  /** The configuration file read, if any: never visible to sandboxed commands. */
  configFile?: string;
  /** Replaces the sandbox built from config.execute (tests of a machine without a working one). */
  sandbox?: Sandbox;
}

export interface Daemon {
  url: string;
  store: Store;
  scheduler: Scheduler;
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
    store = openStoreChecked(config, (opts.clock ?? systemClock).now());
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
  const clock = opts.clock ?? systemClock;
  const announce = opts.announce ?? ((line: string) => process.stderr.write(`${line}\n`));

  const sandbox =
    opts.sandbox ??
    new Sandbox({
      setting: config.execute.sandbox,
      readOnlyPaths: config.execute.sandbox_read_only_paths,
      hidden: [config.data_dir, ...(opts.configFile ? [opts.configFile] : [])],
    });
  const sandboxStatus = await sandbox.status();
  if (sandboxStatus.state === 'bwrap') logger.info({ sandbox: sandboxStatus.state }, sandboxStatus.detail);
  else
    logger.warn(
      { sandbox: sandboxStatus.state },
      `SANDBOX ${sandboxStatus.state.toUpperCase()}: ${sandboxStatus.detail}`,
    );
  await killLeftoverCommands(store, logger);

  const events = new RunEvents(store, clock);
  // The one writer of plan status (src/plans/lifecycle.ts); PlanExecutions settles plans of ended runs.
  const lifecycle = new PlanLifecycle({ store, clock, logger });
  const executions = new PlanExecutions({ store, logger, lifecycle });
  const metrics = new Metrics(store);
  const modelConfigured = opts.model !== undefined || config.anthropic.api_key !== null;
  if (!modelConfigured) {
    logger.warn(
      'ANTHROPIC_API_KEY is not set: the daemon serves, but every run fails until it is (see `drydock doctor`)',
    );
  }
  for (const warning of modelProblems(config, config.anthropic.model).warnings) {
    logger.warn({ model: config.anthropic.model }, warning);
  }
  const model =
    opts.model ??
    new Anthropic({
      apiKey: config.anthropic.api_key,
      baseURL: config.anthropic.base_url,
      maxRetries: config.anthropic.max_retries,
      timeout: config.anthropic.request_timeout_ms,
    });
  const executor =
    opts.executor ??
    new AgentExecutor({
      store,
      clock,
      config,
      logger,
      events,
      model,
      toolLimits: DEFAULT_TOOL_LIMITS,
      sandbox,
      lifecycle,
    });
  let scheduler: Scheduler | undefined;
  const queue = new RunQueue({
    store,
    clock,
    logger,
    events,
    executor,
    maxConcurrent: config.runs.max_concurrent,
    onSettled: () => scheduler?.kick(),
  });
  const runs = new RunService({
    store,
    clock,
    logger,
    events,
    queue,
    onCanceled: (run) => lifecycle.settleExecuteRun(run.id),
  });
  const plans = new PlanDecisions({ store, clock, logger, events, queue, lifecycle });
  // GitHub: github.token lets `/drydock plan` comments read the pull request; github.report also posts
  // each pull request's plans to it and keeps a drydock/plan commit status in step with their decisions.
  const github = config.github.token
    ? new GithubApi({ token: config.github.token, baseUrl: config.github.api_url, logger })
    : null;
  const reporter = github && config.github.report ? new GithubReporter({ github, store, logger }) : null;
  const unsubscribeReporter = reporter ? events.subscribeAll(reporter.onEvent) : () => {};
  const lookupPullRequest = opts.lookupPullRequest ?? github?.lookupPullRequest;
  // Delivery of executed plans (src/delivery/): push drydock/<plan>, open a pull request, comment on the PR.
  const listening = server.address() as AddressInfo;
  const publicUrl = (
    config.server.public_url ??
    `http://${listening.family === 'IPv6' ? `[${listening.address}]` : listening.address}:${listening.port}`
  ).replace(/\/+$/, '');
  const delivery = new PlanDeliveryWorker({
    store,
    clock,
    config,
    logger,
    events,
    github,
    pageUrl: (planId) => `${publicUrl}/ui/plans/${encodeURIComponent(planId)}`,
    onOutcome: (outcome) => metrics.planDeliveries.inc({ outcome }),
  });
  const unsubscribeDelivery = events.subscribeAll(delivery.onEvent);
  const triggers = new TriggerService({
    store,
    clock,
    config,
    logger,
    queue,
    runs,
    plans,
    lifecycle,
    ...(lookupPullRequest ? { lookupPullRequest } : {}),
    onProcessed: (ms) => metrics.deliveryWait.observe(Math.max(0, ms) / 1000),
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
    // The periodic sweep of deadlines: questions and tool approvals, then plans nobody decided in time.
    afterTick: async (now) => {
      await runs.expire(now);
      await lifecycle.expire(now);
    },
    onLateness: (ms) => metrics.lateness.observe(Math.max(0, ms) / 1000),
    onReport: (r) => {
      for (const outcome of ['fired', 'pending', 'coalesced', 'missed'] as const) {
        if (r[outcome]) metrics.fires.inc({ outcome }, r[outcome]);
      }
    },
  });

  const app = createApp({
    store,
    clock,
    config,
    logger,
    scheduler,
    events,
    runs,
    plans,
    triggers,
    metrics,
    sandbox: sandboxStatus,
    modelConfigured,
    submitRun: (run) => queue.submit(run),
    delivery,
  });
  // Before recover(): a run it marks interrupted fails its plan; reconcile() then catches what ended unseen.
  const unsubscribeExecutions = events.subscribeAll(executions.onEvent);
  // Outbound notifications (src/notify/): its cursor is placed before recover() appends events of its own.
  const notifier = new Notifier({
    store,
    clock,
    logger,
    config,
    onOutcome: (event, outcome) => metrics.notifications.inc({ event, outcome }),
  });
  await notifier.init();
  const unsubscribeNotifier = events.subscribeAll(notifier.onEvent);
  const recovered = await queue.recover();
  const failedPlans = await executions.reconcile();
  // The last step that can fail: a token is made only by a start that goes on to print it.
  const admin = await ensureAdminToken(store, config.admin_token, clock.now());
  scheduler.start();
  triggers.startInbox();
  delivery.start();
  notifier.start();
  // Retention: executions' worktrees and branches, pull request checkouts (src/plans/retention.ts).
  const gc = async () => {
    const r = await collectGarbage(
      { store, dataDir: config.data_dir },
      { ttlMs: config.retention.worktree_ttl_ms, now: clock.now() },
    );
    metrics.gcRemoved.inc({ kind: 'worktree' }, r.worktrees.length);
    metrics.gcRemoved.inc({ kind: 'checkout' }, r.checkouts.length);
    if (r.worktrees.length || r.checkouts.length || r.failed.length) {
      logger.info(
        { worktrees: r.worktrees.length, checkouts: r.checkouts.length, kept: r.kept, failed: r.failed },
        'retention pass',
      );
    }
  };
  let gcRunning: Promise<void> | null = null;
  const gcPass = () => {
    gcRunning ??= gc()
      .catch((err) => logger.warn({ err }, 'retention pass failed'))
      .finally(() => {
        gcRunning = null;
      });
  };
  const gcTimer = setInterval(gcPass, config.retention.interval_ms);
  gcTimer.unref();
  // One pass soon after the start too: a daemon restarted more often than interval_ms would never clean up.
  const gcFirst = setTimeout(gcPass, Math.min(config.retention.interval_ms, GC_FIRST_PASS_MS));
  gcFirst.unref();
  serveApp(app.fetch);
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;

  logger.info({ url, jobs: await store.countJobs(), ...recovered, failedPlans }, 'drydock started');
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
      await scheduler.stop();
      clearInterval(gcTimer);
      clearTimeout(gcFirst);
      await gcRunning;
      await new Promise<void>((resolve) => {
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
      // One grace period in all: deliveries still in the inbox get up to half of it (what is left stays
      // queued for the next start, and the runs they make wait in the store), running runs the rest.
      const grace = config.server.shutdown_grace_ms;
      const until = Date.now() + grace;
      queue.pause();
      await triggers.stopInbox(grace / 2);
      await queue.drain(Math.max(0, until - Date.now()));
      unsubscribeExecutions();
      await executions.close();
      // After the runs (their executions may still be recorded), before the GitHub client and the store.
      unsubscribeDelivery();
      await delivery.stop(Math.min(5_000, grace));
      // After the runs (their last events are written to the outbox), before the store closes.
      unsubscribeNotifier();
      await notifier.stop();
      // After the runs (their last plans still get reported), before the store the reporter reads.
      unsubscribeReporter();
      await reporter?.close(config.server.shutdown_grace_ms);
      github?.close();
      await store.close();
      logger.info('drydock stopped');
    })();
    return stopping;
  };
  return { url, store, scheduler, queue, events, runs, plans, triggers, sandbox: sandboxStatus, stop };
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

/**
 * Commands a dead daemon left running unconfined (in the sandbox they died with it): killed before any run
 * resumes. Their journal rows stay open, so the retried turn answers "interrupted, not re-run".
 */
async function killLeftoverCommands(store: Store, logger: Logger): Promise<void> {
  for (const call of await store.listOpenCommands(1_000)) {
    const killed = killLeftoverGroup(call.processGroup!, call.processStart);
    if (killed > 0) {
      logger.warn(
        { run_id: call.runId, tool_use_id: call.toolUseId, processes: killed },
        'killed what was left of a command interrupted by a crash',
      );
    }
  }
}
