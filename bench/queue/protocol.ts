// Messages between the orchestrator (run.ts) and its children, over the IPC channel. Each child takes its
// parameters as one JSON argument; lists too long for an argument (the plan pools) go through a file.

import type { StoreTarget } from '../shared/store-target.js';

/** A pending plan an approver will approve: its id and the sha256 of the text the approver "saw". */
export type PoolPlan = [id: string, sha256: string];

/** Disjoint sets of pending plans, one per way of approving, in random order. Written by the seed child. */
export interface Pools {
  http: PoolPlan[];
  store: PoolPlan[];
  service: PoolPlan[];
}

export interface SeedParams {
  dir: string;
  file: string;
  poolsFile: string;
  plans: number;
  sessions: number;
  pendingPct: number;
  markdownBytes: number;
  git: boolean;
  expiryIndex: boolean;
  now: number;
}

export interface SeedResult {
  type: 'seeded';
  seedMs: number;
  fileBytes: number;
  statuses: Record<string, number>;
  runs: number;
  executeRuns: number;
  decisions: number;
  sessions: number;
  workspace: 'git' | 'plain';
  markdownBytes: { mean: number; max: number };
  /** Bearer tokens made with issueToken + Store.createToken (temporary database, temporary secrets). */
  tokens: { viewer: string; approver: string };
  identities: { viewer: string; approver: string };
  pools: { http: number; store: number; service: number };
}

export interface StoreParams {
  /** The seeded SQLite file, or the PostgreSQL database holding its copy. */
  target: StoreTarget;
  poolsFile: string;
  seconds: number;
  approver: string;
  /** The seed already made the expiry index, so there is no what-if to measure. */
  expiryIndex: boolean;
}

/** One timed loop: per-call durations (ms), the loop's wall time and its process's CPU time over it. */
export interface Loop {
  durations: number[];
  wallMs: number;
  cpuMs: number;
  errors: number;
  firstError: string | null;
}

export interface StoreReport {
  type: 'store';
  /** Store.listPlans({ status: 'pending_approval', limit: 50 }). */
  list: Loop;
  /** What GET /v1/plans asks of the store: expirePlans(now), then the same listPlans. */
  handler: Loop;
  /** The same with a partial index on the pending plans' expires_at (created, measured, dropped). */
  handlerIndexed: Loop | null;
  /** Store.decidePlan with the approve rule, one distinct plan per call. */
  decide: Loop;
  /** PlanDecisions.decide(id, 'approve') in-process: what POST /v1/plans/:id/approve runs, minus HTTP. */
  service: Loop;
  pageItems: number;
  approved: string[];
  /**
   * The query plan of Store.expirePlans' UPDATE (SQLite: EXPLAIN QUERY PLAN; PostgreSQL: EXPLAIN), as the store
   * has it and with the what-if index.
   */
  expirePlan: string;
  expirePlanIndexed: string | null;
}

export interface DaemonParams {
  dataDir: string;
  /** drydock's database_url: the PostgreSQL database, or null for the SQLite file in dataDir. */
  databaseUrl: string | null;
  adminToken: string;
}

export interface DaemonStarted {
  type: 'started';
  url: string;
  startMs: number;
  recovered: number;
}

export interface DaemonUsage {
  type: 'usage';
  cpuMs: number;
  rss: number;
  /** Runs the injected no-op executor was handed. */
  executed: number;
  active: number;
  warnings: number;
  logLines: number;
}

export interface DaemonStopped {
  type: 'stopped';
  usage: DaemonUsage;
  maxRss: number;
}

export interface LoadParams {
  url: string;
  poolsFile: string;
  viewerToken: string;
  approverToken: string;
}

export interface LoadReady {
  type: 'ready';
}

export type PhaseKind = 'list' | 'approve';

export interface PhaseRequest {
  type: 'phase';
  kind: PhaseKind;
  concurrency: number;
  warmupMs: number;
  measureMs: number;
  /** approve: at most this many plans of the HTTP pool, so that every concurrency gets its share. */
  maxPlans: number;
}

export interface PhaseReport {
  type: 'phase-done';
  kind: PhaseKind;
  concurrency: number;
  /** Latency (ms) of each request answered inside the measured window: request sent to answer fully read. */
  latencies: number[];
  /** The measured window. */
  wallMs: number;
  /** Requests answered outside the window: during the warm-up, or in flight when it ended. */
  warmupRequests: number;
  /** HTTP status -> count, measured window and warm-up together. */
  statuses: Record<string, number>;
  bytesMean: number;
  /** Responses parsed and checked (a sample for lists, every one for approvals) and how many were wrong. */
  checked: number;
  bad: number;
  firstBad: string | null;
  /** Plans answered 200 (warm-up included): the parent checks their execute runs in the store. */
  approved: string[];
  poolExhausted: boolean;
  cpuMs: number;
}

export type ChildMessage =
  | SeedResult
  | StoreReport
  | DaemonStarted
  | DaemonUsage
  | DaemonStopped
  | LoadReady
  | PhaseReport;
