// Messages between the orchestrator (run.ts) and its children, over the IPC channel. Each child takes its
// parameters as one JSON argument. All durations are in milliseconds (performance.now(), fractional).

export interface ServerParams {
  turns: number;
}

export interface ServerListening {
  type: 'listening';
  url: string;
}

/** The model server's own cost so far (asked for before and after each measuring child). */
export interface ServerUsage {
  type: 'usage';
  cpuMs: number;
  served: number;
}

export type ServerCommand = { type: 'usage' } | { type: 'close' };

export interface SequentialParams {
  url: string;
  dir: string;
  turns: number;
  runs: number;
  warmup: number;
}

/**
 * Per measured turn (index i: run i / turns, turn i % turns + 1), drydock beside the bare SDK replaying the
 * very request drydock sent for that turn.
 */
export interface SequentialReport {
  type: 'sequential';
  workspace: 'git' | 'plain';
  drydock: {
    /** turn_finished of the previous turn (run_started for turn 1) to turn_finished of this one. */
    cycle: number[];
    /** Start of the cycle to the SDK's fetch() call: the previous turn's tool call, its events, storing the results, building the request, the SDK's request preparation. */
    beforeFetch: number[];
    /** fetch() to turn_finished: the round trip, a stored event per text delta, storing the reply and the run's usage. */
    afterFetch: number[];
    /** queue.submit() to onSettled, per run. */
    runWall: number[];
    /** queue.submit() to run_started, per run. */
    runStart: number[];
    /** The last turn_finished to onSettled, per run: the plan (git rev-parse), the last messages, run_finished. */
    runEnd: number[];
  };
  bare: {
    /** messages.stream(params) to finalMessage() resolved. */
    total: number[];
    /** messages.stream(params) to the SDK's fetch() call. */
    prep: number[];
    /** fetch() to finalMessage() resolved. */
    wire: number[];
    /** Sum of the turns of a run's requests, per run. */
    runSum: number[];
  };
  /** Drydock cycle minus the bare replay of the same request, per turn. */
  overhead: number[];
  /** The tool called within each turn's cycle (the previous turn's call; 'none' for turn 1). */
  cycleTool: string[];
  eventsPerRun: number;
  textDeltasPerRun: number;
  requestBytes: { first: number; last: number };
  failures: string[];
  cpuMs: number;
  maxRss: number;
  dbBytes: number;
  warnings: number;
}

export interface ConcurrentParams {
  url: string;
  dir: string;
  turns: number;
  concurrent: number;
}

export interface Load {
  wallMs: number;
  /** Per turn (drydock: cycle as above) or per request (bare SDK). */
  perTurn: number[];
  /** Per run (drydock) or per replayed conversation (bare SDK). */
  perRun: number[];
  cpuMs: number;
  rssBefore: number;
  /** Highest RSS sampled every 25 ms during the phase. */
  rssPeak: number;
  heapPeak: number;
}

export interface ConcurrentReport {
  type: 'concurrent';
  bare: Load;
  drydock: Load & { meanActive: number; maxActive: number };
  verification: { ok: boolean; lines: string[] };
  warnings: number;
}

export type ChildMessage =
  | ServerListening
  | ServerUsage
  | SequentialReport
  | ConcurrentReport
  | CacheReport
  | LoopReport;

export interface CacheParams {
  dir: string;
  turns: number;
}

/** Input tokens of a set of turns by how they were billed, and what they cost. */
export interface CacheFigures {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  /** cacheRead / (input + cacheRead + cacheWrite) over turns 2..N. */
  readShareAfterTurn1: number;
  usd: number;
}

export interface CacheReport {
  type: 'cache';
  model: string;
  turns: number;
  /** The run as drydock made it, billed by the stand-in's prompt cache at the catalogue's prices. */
  drydock: CacheFigures;
  /** The same tokens at the price table drydock shipped before the catalogue (3 / 15 / 3.75 / 6 / 0.30). */
  previousPriceUsd: number;
  /** The same requests with the previous request layout (breakpoints on system[0] and the newest message). */
  previousLayout: CacheFigures;
  /** The same requests with no cache breakpoint at all. */
  uncached: CacheFigures;
  /** What the run recorded as its cost (equals drydock.usd unless something is off). */
  runCostUsd: number;
  problem: string | null;
}

export interface LoopParams {
  dir: string;
  /** How long the person takes at each step of the loop with a wait. */
  waitMinutes: number;
}

/** One whole loop (plan, question, answer, revision, approval, execution) billed by the stand-in's cache. */
export interface LoopFigures {
  /** today: every breakpoint 5 minutes; new: this build's TTL policy (src/agent/cache-ttl.ts). */
  policy: 'today' | 'new';
  /** Minutes a person takes at each step (the answer, the revision, the approval, each tool approval). */
  waitMinutes: number;
  turns: number;
  conversations: number;
  /** Cache reads / prompt tokens over every turn of the loop but its first. */
  readShareAfterTurn1: number;
  /** The same, leaving out the first turn of each conversation. */
  readShareWithinConversations: number;
  input: number;
  cacheRead: number;
  write5m: number;
  write1h: number;
  output: number;
  /** The turns' usage at the catalogue's prices. */
  usd: number;
  /** What the runs' receipts say they cost (equals usd unless pricing is off). */
  receiptsUsd: number;
  problem: string | null;
}

export interface LoopReport {
  type: 'loop';
  model: string;
  loops: LoopFigures[];
}
