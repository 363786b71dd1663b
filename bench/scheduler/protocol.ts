// Messages between the orchestrator (run.ts) and its children, over the IPC channel. Each child takes its
// parameters as one JSON argument.

import type { StoreTarget } from '../shared/store-target.js';

export type { StoreTarget } from '../shared/store-target.js';

export interface SeedParams {
  target: StoreTarget;
  mixFile: string;
  jobs: number;
  sessions: number;
  due: number;
  /** Background jobs must have no slot at or before this instant. */
  horizonAt: number;
  /** The due minute starts at least this long after the seeding ends (child start, idle window, margin). */
  dueLeadMs: number;
  /** Due times spread over the first this-many ms of the due minute. */
  dueSpreadMs: number;
}

export interface DueJob {
  id: string;
  sessionIndex: number;
  /** Jittered due time, as written to the store. */
  dueAt: number;
}

export interface SeedResult {
  type: 'seeded';
  dueMinuteAt: number;
  due: DueJob[];
  seedMs: number;
  /** Background candidates rejected because their first slot fell inside the horizon. */
  rerolls: number;
  distinctSchedules: number;
  /** The SQLite file's size, or pg_database_size of the PostgreSQL database (after ANALYZE). */
  fileBytes: number;
}

/** The background mix in index order (job `due + k` is entry k): effective expression and zone. */
export interface MixFile {
  background: [cron: string, timezone: string][];
}

export interface DrydockParams {
  target: StoreTarget;
  /** The daemon's data_dir (holds the SQLite file when the target is SQLite). */
  dataDir: string;
  dueMinuteAt: number;
  idleMs: number;
  due: number;
  spawnedAt: number;
}

export interface IdleFigures {
  /** Length of the window actually measured (shorter than asked if the child was late to start). */
  windowMs: number;
  userMs: number;
  systemMs: number;
  /** Timer arms (drydock: scheduler sleeps) or fires that happened inside the window. */
  wakeups: number | null;
  firesDuringIdle: number;
}

export interface DrydockStarted {
  type: 'started';
  /** startDaemon() (whose first step opens the store) to the end of the first tick started by start(). */
  startMs: number;
  /** startDaemon() until it returned (HTTP server listening). */
  daemonReadyMs: number;
  /** Parent's spawn() to the end of the first tick: node boot, imports, open, first tick. */
  spawnToFirstTickMs: number;
  rssAfterStart: number;
  heapAfterStart: number;
  jobsHeld: number;
}

/**
 * One run the scheduler created: job id, run.createdAt, wall time it handed the run over (onRun), 1 when
 * the scheduler reported it through onLateness (fired when due) or 0 (it had waited for its session), and
 * wall time the executor was called for it (null if never).
 */
export type FireRecord = [
  jobId: string,
  createdAt: number,
  handedAt: number,
  onTime: 0 | 1,
  executedAt: number | null,
];

export interface DrydockReport {
  type: 'report';
  started: DrydockStarted;
  idle: IdleFigures;
  fires: FireRecord[];
  /** What the scheduler's onLateness reported: fires that came on time (not after waiting for idle). */
  onTime: number[];
  /** Scheduler ticks over the whole run: how many, and the slots their reports counted. */
  ticks: { count: number; fired: number; pending: number; coalesced: number; duringDue: number };
  dueCpuMs: number;
  dueWindowMs: number;
  dueWakeups: number;
  dueLogLines: number;
  rssEnd: number;
  maxRss: number;
  /** Log lines at warn or above (printed to stderr). */
  warnings: number;
  httpOk: boolean;
}

export interface BaselineParams {
  mixFile: string;
  count: number;
  due: number;
  heapCeilingMb: number;
  spawnedAt: number;
}

export interface BaselineTooBig {
  type: 'too-big';
  count: number;
  perInstanceHeapBytes: number;
  projectedHeapBytes: number;
}

export interface BaselineReady {
  type: 'ready';
  count: number;
  perInstanceHeapBytes: number;
}

export interface BaselineSchedule {
  type: 'schedule';
  dueMinuteAt: number;
  idleMs: number;
  dueSpreadMs: number;
}

export interface BaselineReport {
  type: 'report';
  count: number;
  due: number;
  /** Time spent in `new Cron(...)` for all instances (the baseline's start). */
  createMs: number;
  spawnToReadyMs: number;
  rssAfterStart: number;
  heapAfterStart: number;
  perInstanceHeapBytes: number;
  idle: IdleFigures;
  /** Callback time minus scheduled time, per due instance that fired. */
  lateness: number[];
  duplicateFires: number;
  unexpectedFires: number;
  dueCpuMs: number;
  dueWindowMs: number;
  rssEnd: number;
  maxRss: number;
}

export type ChildMessage =
  | SeedResult
  | DrydockStarted
  | DrydockReport
  | BaselineTooBig
  | BaselineReady
  | BaselineReport;
