import type Anthropic from '@anthropic-ai/sdk';
import { Egress } from './agent/egress.js';
import { createMcpConnector } from './agent/mcp/index.js';
import { killLeftoverGroup } from './agent/processes.js';
import { AgentRunner } from './agent/runner.js';
import { type CommandLimits, Sandbox, type SandboxStatus } from './agent/sandbox.js';
import { DEFAULT_TOOL_LIMITS } from './agent/tools/limits.js';
import { daemonRipgrep, RIPGREP_MISSING } from './agent/tools/ripgrep.js';
import { type AdminBootstrap, ensureAdminToken } from './auth/bootstrap.js';
import { SpendCaps } from './caps/spend-caps.js';
import { type Clock, systemClock } from './clock.js';
import { deliveryStartWarnings } from './config/delivery.js';
import type { Config } from './config/schema.js';
import { PlanDeliveryWorker } from './delivery/worker.js';
import type { Run } from './domain/types.js';
import { githubAuthFrom } from './github/app-auth.js';
import type { GithubAuth } from './github/auth.js';
import { type FailedJobsQuery, GithubApi, type PullRequestLookup } from './github/client.js';
import { GithubReporter } from './github/report.js';
import { githubGitUrl } from './github/target.js';
import type { Logger } from './logger.js';
import { Metrics } from './metrics/metrics.js';
import { modelProblems } from './models/catalogue.js';
import { createModelClient } from './models/client.js';
import { limitReachedNotifications } from './notify/limit.js';
import { Notifier } from './notify/notifier.js';
import { PassLoop } from './pass-loop.js';
import { PlanDecisions } from './plans/decisions.js';
import { PlanLifecycle } from './plans/lifecycle.js';
import { ExecutionSettler } from './plans/settle.js';
import { REACTION_DEFAULTS, type Reaction, Reactions } from './reactions/reactions.js';
import { RunEvents } from './runs/events.js';
import { type RunHandler, RunQueue } from './runs/queue.js';
import { replicaId } from './runs/replica.js';
import { RunService } from './runs/service.js';
import { jitterOptions } from './scheduler/job-request.js';
import { Jobs } from './scheduler/jobs.js';
import { Scheduler } from './scheduler/loop.js';
import { Sessions } from './sessions/service.js';
import { storedModelWarnings } from './sessions/stored-models.js';
import { type Store, StoreUnavailableError } from './store/store.js';
import { TriggerAdmin } from './triggers/admin.js';
import { TriggerService } from './triggers/service.js';
import { type HiddenPaths, hiddenPaths } from './workspace/hidden.js';
import { workRoot } from './workspace/paths.js';
import { RepoCache } from './workspace/repo-cache.js';
import { collectGarbage } from './workspace/retention.js';

/**
 * The composition root: every domain service of the daemon, built from the configuration and a few parts a
 * caller may replace. The daemon (src/daemon.ts), the tests' harnesses and the benchmarks all build through
 * here, so there is one wiring to read. Building starts nothing; `start()` recovers and starts the loops,
 * `stop()` ends them in the one order that loses nothing.
 */

/** The first retention pass after a start: late enough to stay out of recovery's way. */
const GC_FIRST_PASS_MS = 60_000;

export interface ServiceOptions {
  config: Config;
  logger: Logger;
  /** The opened store (the daemon opens it through its preflight checks); closed by `stop()`. */
  store: Store;
  /** Default: the system clock. */
  clock?: Clock;
  /** Replaces the agent (tests of the queue and scheduler). Default: the agent built from the config. */
  handler?: RunHandler;
  /** Replaces the Messages API client built from config.anthropic. */
  model?: Anthropic;
  /** Reads a pull request for `/drydock plan` comments (the GitHub client provides one when configured). */
  lookupPullRequest?: PullRequestLookup;
  /** The configuration file read, if any: hidden from the model like the data directory (see `hidden`). */
  configFile?: string;
  /**
   * Replaces the sandbox built from config.execute (tests of a machine without a working one). `null`: none
   * is probed and its state stays unknown, for callers whose run handler runs no commands (needs `handler`).
   */
  sandbox?: Sandbox | null;
  /** Replaces the run event log (a benchmark times its appends). Default: one on the store and clock. */
  events?: RunEvents;
  /** Where new runs go, from the scheduler and the API's run-now. Default: the run queue. */
  submitRun?: (run: Run) => void;
  /** Runs carried out at once. Default: runs.max_concurrent. */
  maxConcurrent?: number;
  /** This daemon's name among replicas. Default: replica_id, else the one kept in data_dir (src/runs/replica.ts). */
  replica?: string;
  /** Told of each run the queue settled (after the scheduler is woken). */
  onRunSettled?: (run: Run) => void;
  /** The address the web pages are reached at, for links in deliveries. Default: server.public_url or host:port. */
  publicUrl?: string;
  /**
   * Stops new requests (the HTTP server): called by `stop()` once the scheduler and retention have stopped,
   * before runs are drained.
   */
  closeIngress?: () => Promise<void>;
}

export interface StartReport {
  /** What `queue.recover()` found: runs resumed and runs marked interrupted. */
  recovered: Awaited<ReturnType<RunQueue['recover']>>;
  /** How many plans left executing by a run that ended unseen are now failed. */
  failedPlans: number;
  /** The admin token: created now (print it once), adopted from the config, or made at an earlier start. */
  admin: AdminBootstrap;
}

export interface Services {
  config: Config;
  logger: Logger;
  clock: Clock;
  store: Store;
  /** How the execute phase's commands run; undefined when no sandbox was probed (`sandbox: null`). */
  sandbox: SandboxStatus | undefined;
  /**
   * The one list of what nothing the model drives may see (src/workspace/hidden.ts): the sandbox, the file
   * tools, and the checks of workspaces named by sessions, triggers and the start all use this object.
   */
  hidden: HiddenPaths;
  /** Whether the Messages API client has a key. */
  modelConfigured: boolean;
  /** This daemon's name among the replicas on its database (its claims on runs carry it). */
  replica: string;
  events: RunEvents;
  metrics: Metrics;
  queue: RunQueue;
  runs: RunService;
  plans: PlanDecisions;
  executions: ExecutionSettler;
  triggers: TriggerService;
  /** Administration: sessions, their jobs, triggers (the API's and the UI's writes go through these). */
  sessions: Sessions;
  jobs: Jobs;
  triggerAdmin: TriggerAdmin;
  scheduler: Scheduler;
  delivery: PlanDeliveryWorker;
  notifier: Notifier;
  /** Posts pull requests' plans to GitHub (github.report); null without it. */
  reporter: GithubReporter | null;
  /** Every reaction to the event log (reports, plan settling, delivery's wake-up, notifications), on one loop. */
  reactions: Reactions;
  /** The sweep of deadlines (questions, tool approvals, plans): `kick()` runs one now. */
  sweeps: PassLoop;
  /** Where new runs go (the queue unless replaced). */
  submitRun: (run: Run) => void;
  /** Recovers what a previous process left, makes the admin token, then starts the loops. Once. */
  start(): Promise<StartReport>;
  /** Stops everything in order and closes the store; `graceMs` bounds the wait for work in flight. Idempotent. */
  stop(graceMs: number): Promise<void>;
}

/** Builds every service; nothing runs until `start()`. The sandbox is probed here, its state logged by `start()`. */
export async function buildServices(opts: ServiceOptions): Promise<Services> {
  const clock = opts.clock ?? systemClock;
  // The parts, each built from those before it: GitHub, the agent, runs and plans, the outboxes, triggers and
  // the cron loop with the administration that wakes it, the reactions to the event log, retention.
  const gh = githubParts(opts, clock);
  const agent = await agentParts(opts, clock, gh);
  const runParts = runsAndPlans(opts, clock, agent);
  const outboxes = outboxParts(opts, clock, agent, gh, runParts.replica);
  const cron = cronParts(opts, clock, agent, runParts, gh);
  const reactions = reactionsOf(opts, clock, runParts, gh, outboxes);
  const sweeps = deadlineSweeps(opts, clock, agent, runParts);
  const retention = retentionTimer(opts, clock, agent.metrics);
  const parts: Parts = { agent, runParts, gh, outboxes, cron, reactions, sweeps, retention, wakes: [] };
  const start = once(() => startAll(opts, parts));
  const stop = once((graceMs: number) => stopAll(opts, parts, graceMs));
  return {
    config: opts.config,
    logger: opts.logger,
    clock,
    store: opts.store,
    sandbox: agent.sandboxStatus,
    hidden: agent.hidden,
    modelConfigured: agent.modelConfigured,
    replica: runParts.replica,
    events: agent.events,
    metrics: agent.metrics,
    queue: runParts.queue,
    runs: runParts.runs,
    plans: runParts.plans,
    executions: runParts.executions,
    triggers: cron.triggers,
    sessions: cron.sessions,
    jobs: cron.jobs,
    triggerAdmin: cron.triggerAdmin,
    scheduler: cron.scheduler,
    delivery: outboxes.delivery,
    notifier: outboxes.notifier,
    reporter: gh.reporter,
    reactions,
    sweeps,
    submitRun: runParts.submitRun,
    start,
    stop,
  };
}

type AgentParts = Awaited<ReturnType<typeof agentParts>>;
type RunParts = ReturnType<typeof runsAndPlans>;
type GithubParts = ReturnType<typeof githubParts>;
type OutboxParts = ReturnType<typeof outboxParts>;
type CronParts = ReturnType<typeof cronParts>;

/**
 * The agent's parts: what it never sees, sandbox, model client, run handler, and what they report to (the event
 * log, metrics, the one writer of plan status). One list of hidden paths for commands and file tools alike:
 * built here once, so that the two can never disagree.
 */
async function agentParts(opts: ServiceOptions, clock: Clock, gh: GithubParts) {
  const { config, logger, store } = opts;
  const hidden = hiddenPaths(config, opts.configFile);
  const sandbox =
    opts.sandbox === null
      ? null
      : (opts.sandbox ??
        new Sandbox({
          setting: config.execute.sandbox,
          readOnlyPaths: config.execute.sandbox_read_only_paths,
          hidden: hidden.paths,
          user: sandboxUser(config.execute.sandbox_user),
          limits: commandLimits(config.execute.limits),
        }));
  const sandboxStatus = sandbox ? await sandbox.status() : undefined;
  const events = opts.events ?? new RunEvents(store, clock);
  const metrics = new Metrics(store);
  // Spend caps (docs/spend-caps.md): asked before runs are created and after each turn of a run going.
  const caps = new SpendCaps({
    store,
    clock,
    config,
    logger,
    announce: (hit, day) => limitReachedNotifications(config, hit, day, clock.now()),
    onReached: (hit) => metrics.spendCaps.inc({ scope: hit.scope, cap: hit.cap }),
  });
  const modelConfigured = opts.model !== undefined || config.anthropic.api_key !== null;
  // The one writer of plan status (src/plans/lifecycle.ts); ExecutionSettler settles plans of ended runs.
  const lifecycle = new PlanLifecycle({ store, clock, logger, events });
  // The egress proxy of executions whose plan allows host names (src/agent/egress.ts); closed by stop().
  const egress = new Egress({ logger });
  const repoCache = repoCacheOf(opts, gh.auth);
  const handler =
    opts.handler ??
    agentRunner(opts, { clock, events, sandbox, lifecycle, hidden, egress, metrics, repoCache, caps });
  return {
    hidden,
    sandboxStatus,
    events,
    metrics,
    caps,
    modelConfigured,
    lifecycle,
    egress,
    handler,
    repoCache,
  };
}

/**
 * Repositories no configuration maps to a local clone, cloned on demand into <work root>/repos
 * (src/workspace/repo-cache.ts). git's credentials for them: github.token as the password of git over HTTPS,
 * user name `x-access-token` (GitHub: "use the installation access token as the HTTP password",
 * https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/authenticating-as-a-github-app-installation;
 * delivery.username defaults to the same name for the same token). None without a token: public repositories
 * still clone.
 */
function repoCacheOf(opts: ServiceOptions, auth: GithubAuth | null): RepoCache {
  const { config, logger } = opts;
  return new RepoCache({
    root: workRoot(config),
    baseUrl: githubGitUrl(config.github.api_url, config.github.git_url),
    // drydock's GitHub credentials for the repository: github.token, or the App's installation token.
    credentials: async (repository) => (auth ? auth.gitCredentialsFor(repository) : undefined),
    timeoutMs: config.github.clone.timeout_ms,
    maxBytes: config.github.clone.max_bytes,
    onWait: (repository) =>
      logger.info({ repository }, 'waiting for another clone or fetch of this repository to end'),
  });
}

/** The run queue and the run service, plan decisions and the settling of executed plans. */
function runsAndPlans(opts: ServiceOptions, clock: Clock, agent: AgentParts) {
  const { config, logger, store } = opts;
  const { events, lifecycle } = agent;
  // The cron loop is built later and kicked when a run settles (its session may have a fire waiting).
  let onSettled: (run: Run) => void = () => {};
  const replica = opts.replica ?? replicaId(config);
  const queue = new RunQueue({
    store,
    clock,
    logger,
    events,
    handler: agent.handler,
    maxConcurrent: opts.maxConcurrent ?? config.runs.max_concurrent,
    replica,
    leaseMs: config.runs.lease_ms,
    wakes: store,
    onSettled: (run) => {
      onSettled(run);
      opts.onRunSettled?.(run);
    },
  });
  const submitRun = opts.submitRun ?? ((run: Run) => queue.submit(run));
  const runs = new RunService({
    store,
    clock,
    logger,
    events,
    queue,
    onCanceled: (run) => lifecycle.settleExecuteRun(run.id),
  });
  const plans = new PlanDecisions({ store, clock, logger, events, queue, lifecycle });
  const executions = new ExecutionSettler({ store, logger, lifecycle });
  const whenSettled = (fn: (run: Run) => void) => {
    onSettled = fn;
  };
  return { replica, queue, submitRun, runs, plans, executions, whenSettled };
}

/**
 * GitHub: drydock's credentials (github.token or github.app, src/github/auth.ts) let `/drydock plan` comments
 * read the pull request, failed check suites and workflow runs list their failed jobs, and delivery push and
 * open pull requests; github.report also posts each pull request's plans to it and keeps their state on the head
 * commit: a drydock/plan commit status with a token, a "drydock plan" check run with Approve and Reject buttons
 * as an App.
 */
function githubParts(opts: ServiceOptions, clock: Clock) {
  const { config, logger, store } = opts;
  const auth = githubAuthFrom(config.github, { logger, clock });
  const github = auth ? new GithubApi({ auth, baseUrl: config.github.api_url, logger }) : null;
  const publicUrl = config.server.public_url?.replace(/\/+$/, '') ?? null;
  const reporter =
    github && auth && config.github.report
      ? new GithubReporter({
          github,
          store,
          logger,
          // Only a GitHub App may write check runs; a token keeps the drydock/plan commit status.
          checkRuns: auth.kind === 'app',
          planPage: (planId) => {
            const path = `/ui/plans/${encodeURIComponent(planId)}`;
            return publicUrl ? { page: `${publicUrl}${path}`, isUrl: true } : { page: path, isUrl: false };
          },
        })
      : null;
  const lookupPullRequest = opts.lookupPullRequest ?? github?.lookupPullRequest;
  const lookupFailedJobs = github
    ? (repository: string, query: FailedJobsQuery) => github.listFailedJobs(repository, query)
    : undefined;
  return { auth, github, reporter, lookupPullRequest, lookupFailedJobs };
}

/** Delivery of executed plans (push drydock/<plan>, open a pull request, comment) and outbound notifications. */
function outboxParts(
  opts: ServiceOptions,
  clock: Clock,
  agent: AgentParts,
  gh: GithubParts,
  replica: string,
) {
  const { config, logger, store } = opts;
  const { metrics } = agent;
  const publicUrl = (
    opts.publicUrl ??
    config.server.public_url ??
    `http://${config.server.host}:${config.server.port}`
  ).replace(/\/+$/, '');
  const delivery = new PlanDeliveryWorker({
    store,
    clock,
    config,
    logger,
    events: agent.events,
    github: gh.github,
    githubAuth: gh.auth,
    pageUrl: (planId) => `${publicUrl}/ui/plans/${encodeURIComponent(planId)}`,
    holder: replica,
    onOutcome: (outcome) => metrics.planDeliveries.inc({ outcome }),
  });
  const notifier = new Notifier({
    store,
    clock,
    logger,
    config,
    onOutcome: (event, outcome) => metrics.notifications.inc({ event, outcome }),
  });
  return { delivery, notifier };
}

/** Triggers, the cron loop, and the administration of sessions, jobs and triggers that wakes it. */
function cronParts(
  opts: ServiceOptions,
  clock: Clock,
  agent: AgentParts,
  runParts: RunParts,
  gh: GithubParts,
) {
  const { config, logger, store } = opts;
  const { metrics, lifecycle, hidden, caps } = agent;
  const { queue, runs, plans, submitRun } = runParts;
  const { lookupPullRequest, lookupFailedJobs } = gh;
  const triggers = new TriggerService({
    repoCache: agent.repoCache,
    store,
    clock,
    config,
    logger,
    queue,
    runs,
    plans,
    lifecycle,
    caps,
    ...(lookupPullRequest ? { lookupPullRequest } : {}),
    ...(lookupFailedJobs ? { lookupFailedJobs } : {}),
    onProcessed: (ms) => metrics.deliveryWait.observe(Math.max(0, ms) / 1000),
  });
  const scheduler = new Scheduler({
    store,
    clock,
    logger,
    onRun: submitRun,
    catchupWindowMs: config.scheduler.catchup_window_ms,
    maxWaitMs: config.scheduler.max_wait_ms,
    batchSize: config.scheduler.batch_size,
    jitter: jitterOptions(config),
    maxBuffered: config.scheduler.max_buffered_slots,
    cancelRun: (runId) => runs.cancel(runId),
    caps,
    onLateness: (ms) => metrics.lateness.observe(Math.max(0, ms) / 1000),
    onReport: (r) => {
      for (const outcome of [
        'fired',
        'pending',
        'coalesced',
        'missed',
        'skipped',
        'canceled',
        'capped',
      ] as const) {
        if (r[outcome]) metrics.fires.inc({ outcome }, r[outcome]);
      }
    },
  });
  // A settled run frees its session: a fire waiting for it may go now.
  runParts.whenSettled(() => scheduler.kick());
  const sessions = new Sessions({ store, clock, config, scheduler, hidden });
  const jobs = new Jobs({
    store,
    clock,
    config,
    scheduler,
    submitRun,
    cancelRun: (runId) => runs.cancel(runId),
    caps,
  });
  const triggerAdmin = new TriggerAdmin({ store, clock, config, scheduler, hidden });
  return { triggers, scheduler, sessions, jobs, triggerAdmin };
}

/**
 * The sweep of deadlines, on a loop of its own: questions and tool approvals past their timeout, then plans
 * nobody decided in time. Every scheduler.max_wait_ms (the cron loop's longest sleep, which used to carry it),
 * and at once when kicked.
 */
function deadlineSweeps(opts: ServiceOptions, clock: Clock, agent: AgentParts, runParts: RunParts): PassLoop {
  const { config, logger } = opts;
  return new PassLoop({
    unref: true,
    pass: async () => {
      try {
        const now = clock.now();
        await runParts.runs.expire(now);
        await agent.lifecycle.expire(now);
      } catch (err) {
        // An unreachable database is logged once per outage by the store.
        logger[err instanceof StoreUnavailableError ? 'debug' : 'warn'](
          { err },
          'the sweep of deadlines failed (tried again at the next one)',
        );
      }
      return config.scheduler.max_wait_ms;
    },
  });
}

/**
 * Every reaction to what happened, each a consumer of the stored event log with its own cursor, on one loop
 * (src/reactions/): GitHub reports, plan settling, the wake-up of plan delivery, notifications' collect step.
 */
function reactionsOf(
  opts: ServiceOptions,
  clock: Clock,
  runParts: RunParts,
  gh: GithubParts,
  outboxes: OutboxParts,
): Reactions {
  const list: Reaction[] = [
    runParts.executions,
    outboxes.delivery.reaction,
    outboxes.notifier.reaction,
    ...(gh.reporter ? [gh.reporter] : []),
  ];
  return new Reactions({
    store: opts.store,
    clock,
    logger: opts.logger,
    holder: runParts.replica,
    reactions: list,
    // No slower than the notifier was asked to look for events (notifications.poll_interval_ms).
    pollMs: Math.min(REACTION_DEFAULTS.pollMs, opts.config.notifications.poll_interval_ms),
  });
}

interface Parts {
  agent: AgentParts;
  runParts: RunParts;
  gh: GithubParts;
  outboxes: OutboxParts;
  cron: CronParts;
  reactions: Reactions;
  sweeps: PassLoop;
  retention: ReturnType<typeof retentionTimer>;
  /** The listeners of this start (bus and wake-ups), let go first by `stop()`. */
  wakes: (() => void)[];
}

/** The first call's promise, for every call: `start()` runs once, `stop()` once, whoever calls them. */
function once<A extends unknown[], T>(fn: (...args: A) => Promise<T>): (...args: A) => Promise<T> {
  let result: Promise<T> | null = null;
  return (...args: A) => {
    result ??= fn(...args);
    return result;
  };
}

/** Recovers what a previous process left, makes the admin token, then starts the loops, in this order. */
async function startAll(opts: ServiceOptions, parts: Parts): Promise<StartReport> {
  const { config, logger, store } = opts;
  const { agent, runParts, cron, reactions, sweeps, retention } = parts;
  const { delivery, notifier } = parts.outboxes;
  const now = () => (opts.clock ?? systemClock).now();
  // LOUD: order matters. Leftover commands die before any run resumes; the reactions' cursors are placed (at
  // the log's end on a first start) before recover() appends events of its own.
  logStartWarnings(opts, agent.sandboxStatus, agent.modelConfigured);
  await warnOfStoredModels(store, opts, now());
  await killLeftoverCommands(store, logger);
  await reactions.init();
  // Before recover(): a run it marks interrupted appends run_finished, which the reactions then read.
  const { wakes } = parts;
  wakes.push(agent.events.subscribeAll(reactions.onEvent));
  const recovered = await runParts.queue.recover();
  // What the log cannot tell: execute runs that vanished, or ended while no daemon wrote their end.
  const failedPlans = await runParts.executions.reconcile();
  // The last step that can fail: a token is made only by a start that goes on to print it.
  const admin = await ensureAdminToken(store, config.admin_token, now());
  runParts.queue.start();
  cron.scheduler.start();
  sweeps.start();
  cron.triggers.startInbox();
  delivery.start();
  notifier.start();
  reactions.start();
  retention.start();
  // Another replica appended events, queued a webhook delivery, a plan delivery or a notification: look now
  // (each loop also looks on its own timer, so a lost wake-up only delays). The run queue listens for runs.
  wakes.push(
    store.onWake('events', () => reactions.kick()),
    store.onWake('inbox', () => cron.triggers.startInbox()),
    store.onWake('outbox', () => {
      delivery.kick();
      notifier.kick();
    }),
  );
  return { recovered, failedPlans, admin };
}

/** Stops everything in the one order that loses nothing, and closes the store. */
async function stopAll(opts: ServiceOptions, parts: Parts, graceMs: number): Promise<void> {
  const { store } = opts;
  const { agent, runParts, gh, cron, reactions, sweeps, retention } = parts;
  const { delivery, notifier } = parts.outboxes;
  // LOUD: order matters. Nothing new comes in first (the cron loop, the sweeps, retention, then the HTTP
  // server); then the runs end; then what reacts to their events; the store closes last.
  for (const off of parts.wakes.splice(0)) off();
  await cron.scheduler.stop();
  await sweeps.stop();
  await retention.stop();
  await opts.closeIngress?.();
  // One grace period in all: deliveries still in the inbox get up to half of it (what is left stays queued
  // for the next start, and the runs they make wait in the store), running runs the rest.
  const until = Date.now() + graceMs;
  runParts.queue.pause();
  await cron.triggers.stopInbox(graceMs / 2);
  await runParts.queue.drain(Math.max(0, until - Date.now()));
  await agent.egress.close();
  // After the runs. What the reactions have not read yet stays after their cursors for the next start.
  await reactions.stop(Math.min(5_000, graceMs));
  // After the reactions (which wake it), before the GitHub client and the store.
  await delivery.stop(Math.min(5_000, graceMs));
  // After the reactions (which fill the outbox), before the store closes.
  await notifier.stop();
  gh.github?.close();
  await store.close();
}

/** The agent: the Messages API client built from config.anthropic unless one is given. */
function agentRunner(
  opts: ServiceOptions,
  parts: {
    clock: Clock;
    events: RunEvents;
    sandbox: Sandbox | null;
    lifecycle: PlanLifecycle;
    hidden: HiddenPaths;
    egress: Egress;
    metrics: Metrics;
    repoCache: RepoCache;
    caps: SpendCaps;
  },
): RunHandler {
  const { config, logger, store } = opts;
  if (!parts.sandbox)
    throw new Error('services: the agent needs a sandbox (sandbox: null needs a run handler)');
  // A spend limit's 429 is not retried by the SDK either (models/client.ts).
  const model = opts.model ?? createModelClient(config.anthropic);
  return new AgentRunner({
    store,
    clock: parts.clock,
    config,
    logger,
    events: parts.events,
    model,
    toolLimits: DEFAULT_TOOL_LIMITS,
    sandbox: parts.sandbox,
    hidden: parts.hidden,
    lifecycle: parts.lifecycle,
    egress: parts.egress,
    repoCache: parts.repoCache,
    caps: parts.caps,
    onModelError: (kind) => parts.metrics.modelErrors.inc({ kind }),
    // The MCP servers runs choose (mcp.servers): stdio ones in the same sandbox as commands.
    mcpConnector: createMcpConnector({
      config,
      logger,
      sandbox: parts.sandbox,
      egress: parts.egress,
      clock: parts.clock,
    }),
  });
}

/** Retention passes every retention.interval_ms, one at a time; `stop()` waits for the one in progress. */
function retentionTimer(opts: ServiceOptions, clock: Clock, metrics: Metrics) {
  const { config, logger, store } = opts;
  const gc = async () => {
    const r = await collectGarbage(
      { store, workRoot: workRoot(config) },
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
      // An unreachable database is logged once per outage by the store.
      .catch((err) =>
        logger[err instanceof StoreUnavailableError ? 'debug' : 'warn']({ err }, 'retention pass failed'),
      )
      .finally(() => {
        gcRunning = null;
      });
  };
  let timers: { every: NodeJS.Timeout; first: NodeJS.Timeout } | null = null;
  return {
    start() {
      const every = setInterval(gcPass, config.retention.interval_ms);
      every.unref();
      // One pass soon after the start too: a daemon restarted more often than interval_ms would never clean up.
      const first = setTimeout(gcPass, Math.min(config.retention.interval_ms, GC_FIRST_PASS_MS));
      first.unref();
      timers = { every, first };
    },
    async stop() {
      if (timers) {
        clearInterval(timers.every);
        clearTimeout(timers.first);
        timers = null;
      }
      await gcRunning;
    },
  };
}

/** What a start says first: where commands run, and what is wrong with the model settings. */
function logStartWarnings(
  opts: ServiceOptions,
  sandbox: SandboxStatus | undefined,
  modelConfigured: boolean,
) {
  const { config, logger } = opts;
  if (process.getuid?.() === 0) {
    // Once, at start: commands are still confined (another uid, no capability), but everything else the
    // daemon does runs as root.
    logger.warn(
      { uid: 0, sandbox_user: config.execute.sandbox_user },
      'the daemon runs as root: run it as an unprivileged user (the container image does); commands run as execute.sandbox_user meanwhile',
    );
  }
  if (sandbox?.state === 'bwrap') logger.info({ sandbox: sandbox.state }, sandbox.detail);
  else if (sandbox)
    logger.warn({ sandbox: sandbox.state }, `SANDBOX ${sandbox.state.toUpperCase()}: ${sandbox.detail}`);
  if (daemonRipgrep() === null) {
    logger.warn({ tool: 'Grep' }, RIPGREP_MISSING.replace(/^Grep: /, 'GREP UNAVAILABLE: '));
  }
  if (!modelConfigured) {
    logger.warn(
      'ANTHROPIC_API_KEY is not set: the daemon serves, but every run fails until it is (see `drydock doctor`)',
    );
  }
  // pull_request deliveries with no GitHub credentials to open them (config/delivery.ts).
  for (const warning of deliveryStartWarnings(config)) logger.warn({ delivery: 'pull_request' }, warning);
  // Deprecated or retiring within 30 days: a warning; legacy: a note (models/lifecycle.ts).
  const model = modelProblems(config, config.anthropic.model, (opts.clock ?? systemClock).now());
  for (const warning of model.warnings) logger.warn({ model: config.anthropic.model }, warning);
  for (const note of model.notes) logger.info({ model: config.anthropic.model }, note);
}

/** Sessions, jobs and triggers stored on a model that retired or retires within 30 days: one warning each. */
async function warnOfStoredModels(
  store: Store,
  { config, logger }: ServiceOptions,
  now: number,
): Promise<void> {
  try {
    for (const line of await storedModelWarnings(store, config, now)) logger.warn(line);
  } catch (err) {
    // Only a warning is lost: the runs themselves check their model when they start.
    logger.warn({ err }, 'could not look for sessions, jobs and triggers on retiring models');
  }
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

/** `execute.sandbox_user` ("uid:gid", checked by the config schema). */
function sandboxUser(text: string): { uid: number; gid: number } {
  const [uid, gid] = text.split(':').map(Number);
  return { uid: uid!, gid: gid! };
}

function commandLimits(l: Config['execute']['limits']): CommandLimits {
  return {
    memoryBytes: l.memory_bytes,
    processes: l.processes,
    cpuSeconds: l.cpu_seconds,
    fileBytes: l.file_bytes,
    tmpBytes: l.tmp_bytes,
  };
}

/** The sandbox the daemon would build from `config` (for local commands that start sandboxed programs). */
export function sandboxFromConfig(config: Config, configFile?: string): Sandbox {
  return new Sandbox({
    setting: config.execute.sandbox,
    readOnlyPaths: config.execute.sandbox_read_only_paths,
    hidden: hiddenPaths(config, configFile).paths,
    user: sandboxUser(config.execute.sandbox_user),
    limits: commandLimits(config.execute.limits),
  });
}
