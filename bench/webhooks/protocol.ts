// Messages between the orchestrator (run.ts) and its children, over the IPC channel. Each child takes its
// parameters as one JSON argument.

export type Target = 'bare' | 'drydock';

export interface DrydockParams {
  dataDir: string;
  /** drydock's database_url: a PostgreSQL database, or null for the SQLite file in dataDir. */
  databaseUrl: string | null;
  /** drydock's replica_id (replicas on one database each have their own); null: drydock makes one. */
  replicaId: string | null;
  /**
   * Create the github trigger over the API (and raise its cap): the first daemon on a database does; the other
   * replicas serve the trigger it made.
   */
  createTrigger: boolean;
  /** A git repository standing in for the local clone of the payload's repository. */
  repoDir: string;
  repository: string;
  secret: string;
  adminToken: string;
  maxConcurrent: number;
  /** Set on the trigger through the store after it is created over HTTP (the API allows at most 10,000). */
  hourlyCap: number;
  /** Wrap the store, receiveGithub and submit with timers (the breakdown). */
  instrument: boolean;
  /**
   * The runs' executor: `held` keeps each run until the orchestrator sends `release` (as real agent runs,
   * minutes long, keep a burst's runs queued); `instant` finishes each at once.
   */
  executor: 'held' | 'instant';
}

export interface BareParams {
  file: string;
  secret: string;
}

/** In-process costs of the steps outside the store, timed once at start on the bench body. */
export interface Micro {
  verifyUs: number;
  parseUs: number;
}

export interface Started {
  type: 'started';
  url: string;
  startMs: number;
  /** drydock only: the trigger created over POST /v1/triggers. */
  triggerId: string | null;
  micro: Micro;
}

/**
 * Time spent in one method (outermost calls only; the synchronous part, which is all of it for the store):
 * wall time, and the process's CPU time over the call (process.cpuUsage, so preemption by other processes on
 * a busy machine does not count).
 */
export interface MethodTime {
  calls: number;
  wallMs: number;
  cpuMs: number;
  maxWallMs: number;
}

export interface Usage {
  type: 'usage';
  cpuMs: number;
  rss: number;
  /** drydock: runs its no-op executor finished. bare: rows inserted. */
  executed: number;
  /** drydock: deliveries still waiting in the inbox. */
  queued: number;
  logLines: number;
  warnings: number;
  /** drydock: store method -> time, cumulative since start. */
  store: Record<string, MethodTime>;
  /** drydock: TriggerService.receiveGithub (wall only: it awaits) and RunQueue.submit, cumulative since start. */
  handler: MethodTime;
  submit: MethodTime;
  /** Event-loop delay percentiles since the last usage report (ms). */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

export interface Stopped {
  type: 'stopped';
  usage: Usage;
  maxRss: number;
  /** drydock: heap used after a forced GC, before it stops (null without --expose-gc). */
  liveHeap: number | null;
}

export interface LoadReady {
  type: 'ready';
  bodyBytes: number;
  /** Load process: building a body and signing it, per request (µs), timed once at start. */
  prepareUs: number;
}

export interface PhaseRequest {
  type: 'phase';
  target: Target;
  /** The servers' base URLs: connection k sends to urls[k mod urls.length] (replicas share the load). */
  urls: string[];
  concurrency: number;
  warmupMs: number;
  measureMs: number;
}

export interface PhaseReport {
  type: 'phase-done';
  target: Target;
  concurrency: number;
  /** Per-request latency (ms) of the measured window: request written to response fully read. */
  latencies: number[];
  /** First measured request sent to last measured response read. */
  wallMs: number;
  /** Responses of the measured window completed in each whole second of it. */
  perSecond: number[];
  warmupRequests: number;
  /** Requests written, warm-up included (each a distinct delivery id and pull request number). */
  sent: number;
  /** HTTP status -> count, measured window and warm-up together. */
  statuses: Record<string, number>;
  /** Answers (any status) by server base URL, measured window and warm-up together. */
  byUrl: Record<string, number>;
  /** Answers that were not what the target promises (drydock: 202, accepted, exactly one run). */
  bad: number;
  firstBad: string | null;
  /** Connection errors (no answer). */
  errors: number;
  firstError: string | null;
  cpuMs: number;
}

export interface RedeliverRequest {
  type: 'redeliver';
  /** As in PhaseRequest: connection k sends to urls[k mod urls.length]. */
  urls: string[];
  count: number;
  concurrency: number;
}

export interface RedeliverReport {
  type: 'redeliver-done';
  concurrency: number;
  sent: number;
  statuses: Record<string, number>;
  /** Answered 200 duplicate:true, accepted, naming the first answer's delivery and exactly one run. */
  sameDelivery: number;
  /** delivery id -> the run a duplicate answer named (checked against the database afterwards). */
  runs: Record<string, string>;
  bad: number;
  firstBad: string | null;
  latencies: number[];
}

export type ChildMessage = Started | Usage | Stopped | LoadReady | PhaseReport | RedeliverReport;
