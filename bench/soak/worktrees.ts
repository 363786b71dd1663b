import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AuditDb } from './audit-db.js';
import { failureList } from './failures.js';

// Retention under load: what executions leave on disk (worktrees under data_dir/worktrees/<plan id> with their
// local branches drydock/<plan id>, pull request checkouts under data_dir/checkouts/<run id>) is sampled every
// few seconds from the orchestrator, whatever state the daemon is in; after the stop, each thing seen is held
// to the deadline the configuration implies for it (from the database's times and the daemon's lifetimes),
// and the count alive at each sample to the number of things that may be alive then.

const run = promisify(execFile);

/** Plan statuses after which retention may remove an execution's worktree (src/plans/retention.ts). */
const SETTLED_PLANS = ['executed', 'execution_failed', 'rejected', 'expired', 'superseded'];
const ACTIVE_RUNS = `'queued', 'running', 'awaiting_input'`;

export interface TreeSample {
  /** Date.now() when the reading began: whatever it lists existed at this moment or later. */
  at: number;
  /** Date.now() when the reading ended: what it lists may have been made up to this moment (git runs meanwhile). */
  doneAt: number;
  /** Plan ids: directories under data_dir/worktrees. */
  worktrees: string[];
  /** Plan ids: local branches drydock/<plan id> in the repositories. */
  branches: string[];
  /** Run ids: directories under data_dir/checkouts. */
  checkouts: string[];
}

async function dirs(dir: string): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true }).catch(() => []))
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
}

async function drydockBranches(repo: string): Promise<string[]> {
  const { stdout } = await run(
    'git',
    ['-C', repo, 'branch', '--list', 'drydock/*', '--format=%(refname:short)'],
    { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', HOME: repo } },
  );
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((b) => b.slice('drydock/'.length));
}

/** Samples worktrees, branches and checkouts every `everyMs` (a reading still under way skips the tick). */
export class TreeSampler {
  readonly samples: TreeSample[] = [];
  /** Readings that failed (the first few messages in `errors`). */
  failed = 0;
  readonly errors: string[] = [];
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly dataDir: string,
    private readonly repos: readonly string[],
    private readonly everyMs: number,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => {
      this.running ??= this.sample().finally(() => {
        this.running = null;
      });
    }, this.everyMs);
  }

  /** Stops the timer and takes one last reading (after the daemon exited). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
    await this.sample();
  }

  async sample(): Promise<void> {
    const at = Date.now();
    try {
      const [worktrees, checkouts, ...branches] = await Promise.all([
        dirs(join(this.dataDir, 'worktrees')),
        dirs(join(this.dataDir, 'checkouts')),
        ...this.repos.map(drydockBranches),
      ]);
      this.samples.push({
        at,
        doneAt: Date.now(),
        worktrees: worktrees!,
        checkouts: checkouts!,
        branches: branches.flat(),
      });
    } catch (err) {
      this.failed += 1;
      if (this.errors.length < 3) this.errors.push((err as Error).message);
    }
  }
}

export interface RetentionInput extends RetentionTiming {
  samples: TreeSample[];
}

export interface RetentionTiming {
  /** The daemon's lifetimes, Date.now() values: each one's retention timer starts between spawn and ready. */
  lifetimes: { spawnedAt: number; readyAt: number; endedAt: number | null }[];
  ttlMs: number;
  intervalMs: number;
  /** Added to each deadline: a pass's own duration, timers late under load, settling written after the run. */
  slackMs: number;
}

export interface KindTally {
  /** Things that can have existed: execute runs (worktrees, branches) or pull request plan runs (checkouts) that started. */
  started: number;
  /** Distinct names seen in any sample. */
  seen: number;
  /** Seen, then gone in a later sample and never seen again. */
  removed: number;
  /** Gone, then back in a later sample: made again by a retry of its run (a run taken over after a kill starts
   *  over in a fresh worktree, the half-written one removed first). */
  recreated: number;
  /** Gone and back although its run was never retried: something else removed and remade it. */
  backWithoutRetry: number;
  maxAlive: number;
  maxAliveAt: number;
  /** The bound at the sample with the most alive. */
  boundAtMax: number;
  /** The smallest bound - alive over the samples (how close the count came to the bound), and when. */
  minHeadroom: number;
  minHeadroomAt: number;
  end: number;
  /** Samples where more were alive than the bound allows. */
  overBound: number;
  /** Names still present in a sample after their deadline. */
  overdue: number;
  /** Names gone while their plan or run was in use, or before it had been settled for the ttl (worktrees, branches). */
  early: number;
  /** Names that match no execution (or run) in the database. */
  unknown: number;
  /** Seen, with a deadline before the last sample: things retention owed a removal. (A checkout that its own
   *  run removed between two samples was never seen and is owed nothing.) */
  owed: number;
}

export interface RetentionResult {
  worktrees: KindTally;
  branches: KindTally;
  checkouts: KindTally;
  /** Executions: started, settled (by the store's final state), still in use at the end. */
  executions: { started: number; settled: number; inUse: number };
  /** ttl + interval + 60 s, and the most executions settled within any window that long. */
  windowMs: number;
  windowMax: number;
  /** Executions in use at the end (plan approved or executing, or a run not ended) whose worktree or branch is gone. */
  inUseMissing: number;
  /** Execute runs that ended while their plan stayed unsettled (retention keeps such a worktree for ever). */
  endedButUnsettled: number;
  /** alive and bound per sample, for the figure. */
  series: {
    at: number;
    worktrees: number;
    branches: number;
    checkouts: number;
    bound: number;
    checkoutBound: number;
  }[];
  failures: string[];
}

/**
 * The latest moment something that became removable at `eligibleAt` may still exist: the end (plus the slack)
 * of the first retention pass that certainly started after `eligibleAt`. A lifetime's passes run every
 * `intervalMs` from a timer set between its spawn and its ready: pass k starts in
 * [spawnedAt + k·interval, readyAt + k·interval]. Infinity when no such pass happened before the stop.
 */
export function removalDeadline(eligibleAt: number, input: RetentionTiming): number {
  let best = Number.POSITIVE_INFINITY;
  for (const life of input.lifetimes) {
    const end = life.endedAt ?? Number.POSITIVE_INFINITY;
    const k = Math.max(1, Math.ceil((eligibleAt - life.spawnedAt) / input.intervalMs));
    const latestStart = life.readyAt + k * input.intervalMs;
    // The pass must have run before the lifetime ended (a pass cut off by a SIGKILL counts for nothing).
    if (latestStart + input.slackMs > end) continue;
    best = Math.min(best, latestStart + input.slackMs);
  }
  return best;
}

export interface RetentionItem {
  /** started_at of the run that makes it. */
  start: number;
  /** When retention may start counting the ttl (null: still in use at the end). */
  settledAt: number | null;
  /** The latest moment it may still be seen. */
  deadline: number;
  /** Its run was retried (attempt > 1): a worktree or checkout may have been removed and made again. */
  retried: boolean;
}

/**
 * What retention is held to, from the database: executions by plan id (their worktrees and branches) and pull
 * request plan runs by run id (their checkouts), each with its deadline; and the execute runs that ended while
 * their plan stayed unsettled.
 */
export async function retentionItems(
  db: AuditDb,
  input: RetentionTiming,
): Promise<{
  executions: Map<string, RetentionItem>;
  checkouts: Map<string, RetentionItem>;
  unsettled: string[];
}> {
  // Executions, settled as src/plans/retention.ts decides it from the store: the plan in a settled status and
  // every run of the plan (its plan run, its execute run, a revision run) ended; settled at the latest of the
  // decision and those runs' ends.
  const rows = await db.all<{
    id: string;
    status: string;
    attempt: number;
    started_at: number;
    finished_at: number | null;
    plan_status: string;
    decided_at: number;
    runs_finished: number | null;
    unfinished: number;
  }>(
    `SELECT r.executes_plan_id AS id, r.status, r.attempt, r.started_at, r.finished_at, p.status AS plan_status,
            COALESCE(p.decided_at, p.created_at) AS decided_at,
            (SELECT MAX(COALESCE(x.finished_at, 0)) FROM runs x
               WHERE x.id = p.run_id OR x.executes_plan_id = p.id OR x.revises_plan_id = p.id) AS runs_finished,
            (SELECT COUNT(*) FROM runs x
               WHERE (x.id = p.run_id OR x.executes_plan_id = p.id OR x.revises_plan_id = p.id)
                 AND x.status IN (${ACTIVE_RUNS})) AS unfinished
     FROM runs r JOIN plans p ON p.id = r.executes_plan_id
     WHERE r.phase = 'execute' AND r.started_at IS NOT NULL`,
  );
  const executions = new Map<string, RetentionItem>();
  const unsettled: string[] = [];
  for (const r of rows) {
    const settled = SETTLED_PLANS.includes(r.plan_status) && r.unfinished === 0;
    if (!settled && r.finished_at !== null) {
      unsettled.push(`${r.id}: run ${r.status}, plan ${r.plan_status}`);
    }
    const settledAt = settled ? Math.max(r.decided_at, r.runs_finished ?? 0) : null;
    executions.set(r.id, {
      start: r.started_at,
      retried: r.attempt > 1,
      settledAt,
      deadline:
        settledAt === null ? Number.POSITIVE_INFINITY : removalDeadline(settledAt + input.ttlMs, input),
    });
  }
  // Pull request checkouts: made by the plan run of a pull request, removed by that run when it ends, or by
  // retention once it has ended for the ttl (a run cut off by a kill leaves its checkout behind).
  const checkouts = new Map<string, RetentionItem>();
  for (const r of await db.all<{
    id: string;
    status: string;
    attempt: number;
    started_at: number;
    finished_at: number | null;
  }>(
    `SELECT id, status, attempt, started_at, finished_at FROM runs
     WHERE checkout IS NOT NULL AND phase = 'plan' AND started_at IS NOT NULL`,
  )) {
    const ended = r.finished_at !== null && !['queued', 'running', 'awaiting_input'].includes(r.status);
    const settledAt = ended ? r.finished_at : null;
    checkouts.set(r.id, {
      start: r.started_at,
      retried: r.attempt > 1,
      settledAt,
      deadline:
        settledAt === null ? Number.POSITIVE_INFINITY : removalDeadline(settledAt + input.ttlMs, input),
    });
  }

  return { executions, checkouts, unsettled };
}

/** How many of `items` may be seen by a reading from `from` to `to`: started by its end, deadline not passed at
 *  its beginning. */
export function aliveBound(items: ReadonlyMap<string, RetentionItem>, from: number, to = from): number {
  let n = 0;
  for (const item of items.values()) if (item.start <= to && from <= item.deadline) n += 1;
  return n;
}

export async function auditRetention(db: AuditDb, input: RetentionInput): Promise<RetentionResult> {
  const { failures, fail } = failureList();

  const { executions, checkouts, unsettled } = await retentionItems(db, input);
  for (const u of unsettled) fail('execute run ended, plan not settled (its worktree is kept for ever)', u);
  const endedButUnsettled = unsettled.length;

  const samples = input.samples;
  const lastAt = samples.at(-1)?.at ?? 0;
  // What a reading lists may have been made while it ran: everything started by its end counts.
  const bounds = samples.map((s) => ({
    at: s.at,
    executions: aliveBound(executions, s.at, s.doneAt),
    checkouts: aliveBound(checkouts, s.at, s.doneAt),
  }));

  const tally = (
    kind: 'worktrees' | 'branches' | 'checkouts',
    items: Map<string, RetentionItem>,
    checkEarly: boolean,
  ): KindTally => {
    const t: KindTally = {
      started: items.size,
      seen: 0,
      removed: 0,
      recreated: 0,
      backWithoutRetry: 0,
      maxAlive: 0,
      maxAliveAt: 0,
      boundAtMax: 0,
      minHeadroom: Number.POSITIVE_INFINITY,
      minHeadroomAt: 0,
      end: samples.at(-1)?.[kind].length ?? 0,
      overBound: 0,
      overdue: 0,
      early: 0,
      unknown: 0,
      owed: 0,
    };
    // The last sample each name is in: a name gone from a sample and in a later one was made again.
    const lastIn = new Map<string, number>();
    samples.forEach((s, i) => {
      for (const name of s[kind]) lastIn.set(name, i);
    });
    const seen = new Set<string>();
    const overdue = new Set<string>();
    const unknown = new Set<string>();
    let prev = new Set<string>();
    samples.forEach((s, i) => {
      const names = new Set(s[kind]);
      const limit = kind === 'checkouts' ? bounds[i]!.checkouts : bounds[i]!.executions;
      if (names.size > t.maxAlive) {
        t.maxAlive = names.size;
        t.maxAliveAt = s.at;
        t.boundAtMax = limit;
      }
      if (limit - names.size < t.minHeadroom) {
        t.minHeadroom = limit - names.size;
        t.minHeadroomAt = s.at;
      }
      if (names.size > limit) {
        t.overBound += 1;
        fail(`${kind} alive over the bound`, `${names.size} > ${limit} at ${iso(s.at)}`);
      }
      for (const name of names) {
        seen.add(name);
        const item = items.get(name);
        if (!item) {
          if (!unknown.has(name)) fail(`${kind}: matches nothing in the database`, name);
          unknown.add(name);
        } else if (s.at > item.deadline && !overdue.has(name)) {
          overdue.add(name);
          fail(
            `${kind} kept past its deadline`,
            `${name} settled ${iso(item.settledAt!)}, due gone by ${iso(item.deadline)}, still there ${iso(s.at)}`,
          );
        }
      }
      for (const name of prev) {
        if (names.has(name)) continue;
        const item = items.get(name);
        if ((lastIn.get(name) ?? -1) > i) {
          t.recreated += 1;
          if (item && !item.retried) {
            t.backWithoutRetry += 1;
            fail(`${kind} gone and back, its run never retried`, `${name} gone by ${iso(s.at)}`);
          }
          continue;
        }
        t.removed += 1;
        if (!checkEarly || !item) continue;
        // Gone at some moment in (previous sample, this sample]: before this reading ended at the latest.
        if (item.settledAt === null || s.doneAt < item.settledAt + input.ttlMs) {
          t.early += 1;
          fail(
            `${kind} removed while in use or before the ttl`,
            `${name} gone by ${iso(s.at)}, settled ${item.settledAt === null ? 'never' : iso(item.settledAt)}`,
          );
        }
      }
      prev = names;
    });
    t.seen = seen.size;
    t.overdue = overdue.size;
    t.unknown = unknown.size;
    for (const [name, item] of items) if (seen.has(name) && item.deadline < lastAt) t.owed += 1;
    if (t.owed > 0 && t.removed === 0)
      fail(`${kind}: retention removed nothing`, `${t.owed} were owed a removal before the last sample`);
    return t;
  };
  const worktrees = tally('worktrees', executions, true);
  const branches = tally('branches', executions, true);
  // A checkout is removed by its own run as the run ends, before finished_at is written: no early check.
  const checkoutTally = tally('checkouts', checkouts, false);

  // In use at the end: the worktree and branch are still there (the last sample is taken after the daemon exited).
  const last = samples.at(-1);
  const endTrees = new Set(last?.worktrees ?? []);
  const endBranches = new Set(last?.branches ?? []);
  let inUseMissing = 0;
  let inUse = 0;
  for (const [id, item] of executions) {
    if (item.settledAt !== null) continue;
    inUse += 1;
    if (!endTrees.has(id) || !endBranches.has(id)) {
      inUseMissing += 1;
      fail(
        'execution in use at the end without its worktree or branch',
        `${id}: worktree ${endTrees.has(id) ? 'there' : 'gone'}, branch ${endBranches.has(id) ? 'there' : 'gone'}`,
      );
    }
  }

  // The plain figure: the most executions settled within any window of ttl + interval + a minute, about what
  // can be alive at once in a steady state (informational: a kill delays the passes, and the deadlines above
  // are what is checked).
  const windowMs = input.ttlMs + input.intervalMs + 60_000;
  const settledTimes = [...executions.values()]
    .map((e) => e.settledAt)
    .filter((x): x is number => x !== null)
    .sort((a, b) => a - b);
  let windowMax = 0;
  for (let i = 0, j = 0; j < settledTimes.length; j++) {
    while (settledTimes[j]! - settledTimes[i]! > windowMs) i += 1;
    windowMax = Math.max(windowMax, j - i + 1);
  }

  return {
    worktrees,
    branches,
    checkouts: checkoutTally,
    executions: { started: executions.size, settled: settledTimes.length, inUse },
    windowMs,
    windowMax,
    inUseMissing,
    endedButUnsettled,
    series: samples.map((s, i) => ({
      at: s.at,
      worktrees: s.worktrees.length,
      branches: s.branches.length,
      checkouts: s.checkouts.length,
      bound: bounds[i]!.executions,
      checkoutBound: bounds[i]!.checkouts,
    })),
    failures,
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}
