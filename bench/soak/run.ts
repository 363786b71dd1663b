import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';
import { benchMain } from '../shared/options.js';
import { type AuditResult, audit } from './audit.js';
import { openPostgresAudit, openSqliteAudit } from './audit-db.js';
import { Balancer, direct } from './balancer.js';
import type { Lifetime } from './daemon.js';
import { runDrills } from './drills.js';
import { createApproverToken, makeRepo } from './fixtures.js';
import { DECISION_IDENTITY, Load } from './load.js';
import { startScriptedModel } from './model.js';
import { parseOptions, type SoakOptions, USAGE } from './options.js';
import { pullRequestPayloads } from './payload.js';
import { allReady, makeReplicas, type Replica, ReplicaSet } from './replicas.js';
import { ScratchCluster } from './scratch-postgres.js';
import { clock, counts, int, mb, rng, secs, sleep, slope, table } from './stats.js';
import {
  auditTakeovers,
  type HeldRun,
  heldRuns,
  type KillSnapshot,
  readReplicaLog,
  type TakeoverResult,
} from './takeover.js';
import { type KindTally, TreeSampler } from './worktrees.js';

// The soak: the daemon as a user runs it (`drydock serve` in a child process) under steady load for N minutes,
// killed with SIGKILL at random moments and restarted, then stopped with SIGTERM; the SQLite file is then
// audited against the scheduling semantics and against everything the API acknowledged. See README.md.

const MINUTE = 60_000;
/** better-sqlite3's compiled SQLITE_DEFAULT_CACHE_SIZE=-16000: 16,000 KiB of page cache per connection. */
const SQLITE_CACHE_MB = (16_000 * 1024) / 1e6;
const RSS_EVERY_MS = 5_000;

function log(line: string): void {
  process.stderr.write(`soak: ${line}\n`);
}

interface KillRecord {
  index: number;
  replica: string;
  plannedAt: number;
  killedAt: number;
  pauseMs: number;
  restartedAt: number;
  readyMs: number;
  /** Runs the killed daemon held (null: the read failed). */
  held: number | null;
}

interface PgRestartRecord {
  /** ms into the load. */
  at: number;
  tookMs: number;
  /** From the restart's start until every replica's /readyz answered 200 again (null: not within 60 s). */
  readyAgainMs: number | null;
}

/** The drill's load goes on at least this long after the last fault ended (the webhook inbox's claim on a
 *  delivery, 60 s, which a killed replica leaves behind, plus 15 s). */
const DRILL_SETTLE_MS = 75_000;

/** runs.lease_ms when the soak does not set it (the daemon's default). */
const DEFAULT_LEASE_MS = 30_000;

/**
 * The runs `replica` held when it was killed, read from the store while it is down (a separate connection;
 * the SQLite file read-only). A read that fails (the database restarting) is tried again for 10 s.
 */
async function readHeld(
  replica: string,
  cluster: ScratchCluster | null,
  dataDir: string,
): Promise<{ runs: HeldRun[] | null; error: string | null }> {
  let error = '';
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      const db = cluster
        ? await openPostgresAudit(cluster.url)
        : openSqliteAudit(join(dataDir, 'drydock.db'));
      try {
        return { runs: await heldRuns(db, replica), error: null };
      } finally {
        await db.close();
      }
    } catch (err) {
      error = (err as Error).message;
      await sleep(1_000);
    }
  }
  return { runs: null, error };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

interface MemoryLine {
  replica: string;
  life: Lifetime;
  start: number;
  peak: number;
  end: number;
  /** MB per minute over the samples after the warm-up; NaN with too few. */
  slope: number;
  /** Seconds covered by the post-warm-up samples. */
  spanS: number;
}

function memory(life: Lifetime, warmupMs: number, replica: string): MemoryLine {
  const samples = life.samples;
  const after = samples.filter((p) => p.at >= life.readyAt + warmupMs);
  return {
    replica,
    life,
    start: samples[0]?.bytes ?? Number.NaN,
    peak: samples.reduce((m, p) => Math.max(m, p.bytes), 0),
    end: samples.at(-1)?.bytes ?? Number.NaN,
    slope: slope(after.map((p) => ({ x: p.at / MINUTE, y: p.bytes / 1e6 }))),
    spanS: after.length > 1 ? (after.at(-1)!.at - after[0]!.at) / 1000 : 0,
  };
}

interface HeapLine {
  index: number;
  pid: number;
  n: number;
  /** Samples after the warm-up (the slope's). */
  after: number;
  first: number;
  last: number;
  max: number;
  external: number;
  slope: number;
}

/** heap-probe.js lines by daemon lifetime (matched by pid); slope after the warm-up, MB per minute. */
function heapByLifetime(file: string, lifetimes: Lifetime[], origin: number, warmupMs: number): HeapLine[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const rows = text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { at: number; pid: number; heapUsed: number; external: number });
  return lifetimes.map((life) => {
    const mine = rows.filter((r) => r.pid === life.pid);
    const after = mine.filter((r) => r.at - origin >= life.readyAt + warmupMs);
    return {
      index: life.index,
      pid: life.pid,
      n: mine.length,
      after: after.length,
      first: mine[0]?.heapUsed ?? Number.NaN,
      last: mine.at(-1)?.heapUsed ?? Number.NaN,
      max: mine.reduce((m, r) => Math.max(m, r.heapUsed), 0),
      external: mine.at(-1)?.external ?? Number.NaN,
      slope: slope(after.map((r) => ({ x: (r.at - origin) / MINUTE, y: r.heapUsed / 1e6 }))),
    };
  });
}

function logLevels(file: string): { warn: number; error: number; top: string[] } {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { warn: 0, error: 0, top: [] };
  }
  let warn = 0;
  let error = 0;
  const messages = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let entry: { level?: number; msg?: string; err?: { message?: string } } | null = null;
    try {
      entry = JSON.parse(line);
    } catch {
      // banner lines (stderr) and anything else that is not a log record
      if (
        /error|exception/i.test(line) &&
        !line.startsWith('drydock listening') &&
        !line.startsWith('admin token')
      ) {
        error += 1;
        messages.set(
          `stderr: ${line.slice(0, 120)}`,
          (messages.get(`stderr: ${line.slice(0, 120)}`) ?? 0) + 1,
        );
      }
      continue;
    }
    const level = entry?.level ?? 0;
    if (level >= 50) error += 1;
    else if (level >= 40) warn += 1;
    else continue;
    const key = `${level >= 50 ? 'error' : 'warn'}: ${entry?.msg ?? ''}${entry?.err?.message ? ` (${entry.err.message.slice(0, 100)})` : ''}`;
    messages.set(key, (messages.get(key) ?? 0) + 1);
  }
  const top = [...messages.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([m, n]) => `${int(n)} x ${m}`);
  return { warn, error, top };
}

async function main(opts: SoakOptions): Promise<number> {
  if (opts.drills) return runDrills(opts);
  const random = rng(opts.seed);
  const root = packageRoot();
  const cli = join(root, 'dist/src/cli/main.js');
  const dir = mkdtempSync(join(tmpdir(), 'drydock-soak-'));
  const origin = Date.now();
  const at = () => Date.now() - origin;
  const drill = opts.store === 'postgres';
  let set: ReplicaSet | null = null;
  let model: Awaited<ReturnType<typeof startScriptedModel>> | null = null;
  const cluster = drill ? new ScratchCluster('drill') : null;
  // Ctrl-C or a kill of the soak: take the daemons and the scratch cluster down with it, never leave them behind.
  const interrupted = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping the daemons${cluster ? ' and dropping the scratch cluster' : ''}`);
    set?.close();
    cluster?.drop();
    if (!opts.keep) rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const dropOnExit = () => cluster?.drop();
  process.once('exit', dropOnExit);
  try {
    // ---- fixtures: two git repositories, the model, the database, the configuration, an approver token -
    const workspace = join(dir, 'workspace');
    const clone = join(dir, 'clone');
    makeRepo(workspace);
    const head = makeRepo(clone);
    const secret = randomBytes(24).toString('hex');
    const payloads = pullRequestPayloads(head, secret);
    model = await startScriptedModel(opts.askEvery, opts.modelDelayMs);
    if (cluster) {
      await cluster.start();
      log(`scratch PostgreSQL ${cluster.major} cluster ${cluster.name} on port ${cluster.port}`);
    }
    const configFile = join(dir, 'drydock.json');
    writeFileSync(
      configFile,
      JSON.stringify(
        {
          timezone: 'UTC',
          server: { shutdown_grace_ms: 10_000 },
          scheduler: { catchup_window_ms: opts.catchupMs },
          runs: {
            max_concurrent: opts.maxConcurrent,
            ...(opts.leaseMs !== null ? { lease_ms: opts.leaseMs } : {}),
          },
          retention: { worktree_ttl_ms: opts.worktreeTtlMs, interval_ms: opts.gcIntervalMs },
          github: { repositories: { [payloads.repository]: { path: clone } } },
        },
        null,
        2,
      ),
    );
    // The SQLite soak: one daemon with everything in data/. The drill: each replica has its own data_dir, port,
    // replica_id and model key (the model counts requests by key); they share the database, work_dir
    // (worktrees and pull request checkouts) and the repositories, as README "Running several replicas" says.
    const dataDir = join(dir, 'data');
    const workRoot = drill ? join(dir, 'work') : dataDir;
    const adminToken = `soak-admin-${randomBytes(16).toString('hex')}`;
    const nodeArgs = (process.env.SOAK_DAEMON_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
    const heapFile = join(dir, 'heap.jsonl');
    if (opts.heap)
      nodeArgs.push('--expose-gc', `--import=${new URL('./heap-probe.js', import.meta.url).href}`);
    const replicas: Replica[] = await makeReplicas({
      cli,
      dir,
      count: opts.replicas,
      separate: drill,
      nodeArgs,
      origin,
      sampleEveryMs: RSS_EVERY_MS,
      env: {
        DRYDOCK_CONFIG: configFile,
        DRYDOCK_ADMIN_TOKEN: adminToken,
        // The drill reads who finished and who took over which run from each replica's log ('run finished'
        // is logged at info).
        DRYDOCK_LOG_LEVEL: drill ? 'info' : 'warn',
        ANTHROPIC_BASE_URL: model.server.url,
        GITHUB_WEBHOOK_SECRET: secret,
        ...(cluster ? { DATABASE_URL: cluster.url, DRYDOCK_WORK_DIR: workRoot } : {}),
        ...(opts.heap
          ? { SOAK_HEAP_FILE: heapFile, SOAK_HEAP_EVERY_MS: String(opts.quick ? 10_000 : 30_000) }
          : {}),
      },
    });
    const approverToken = createApproverToken(cli, replicas[0]!.env, DECISION_IDENTITY);
    set = new ReplicaSet(replicas);
    // What executions leave on disk, counted like the RSS (executions work in worktrees of the workspace; the
    // clone holds pull request checkouts and could hold branches too).
    const trees = new TreeSampler(workRoot, [workspace, clone], RSS_EVERY_MS);

    log(
      `seed ${opts.seed}; ${opts.minutes} min, ${int(opts.jobs)} jobs in ${opts.sessions} sessions, ${opts.kills} kills; ` +
        `${drill ? `${opts.replicas} replica${opts.replicas > 1 ? 's' : ''} on PostgreSQL, runs.lease_ms ${opts.leaseMs}${opts.pgRestart ? ', one database restart' : ''}; ` : ''}` +
        `data in ${dir}`,
    );
    for (const [i, life] of (await set.startAll()).entries()) {
      const r = replicas[i]!;
      log(
        `${drill ? r.id : 'daemon'} up (pid ${life.pid}) on ${r.url} in ${secs(life.readyAt - life.spawnedAt)}`,
      );
    }
    trees.start();

    // ---- setup over the API --------------------------------------------------------------------------
    const balancer = replicas.length > 1 ? new Balancer(replicas.map((r) => r.url)) : null;
    const load = new Load(
      balancer ?? direct(replicas[0]!.url),
      { admin: adminToken, approver: approverToken },
      opts,
      random,
      payloads,
      workspace,
    );
    const setupT0 = Date.now();
    await load.setup();
    log(
      `created ${int(load.jobs.length)} jobs and trigger ${load.triggerId} in ${secs(Date.now() - setupT0)}`,
    );

    // ---- the soak ------------------------------------------------------------------------------------
    const loadStart = at();
    const duration = opts.minutes * MINUTE;
    const end = loadStart + duration;
    const margin = Math.min(MINUTE, duration / 4);
    const span = (duration - 2 * margin) / Math.max(1, opts.kills);
    const planned = Array.from({ length: opts.kills }, (_, i) => {
      const uniform = loadStart + margin + span * (i + random());
      if (opts.uniformKills) return uniform;
      // 2-10 s after the next wall-clock minute: the minute's slots fall due in its first 6 s, so runs (and
      // the requests around them) are in flight. Kept out of the last minute.
      const minute = Math.ceil((origin + uniform) / MINUTE) * MINUTE - origin;
      const busy = minute + (2 + random() * 8) * 1000;
      return busy <= end - margin ? busy : uniform;
    });
    const pauses = planned.map(() => (opts.pauseMinS + random() * (opts.pauseMaxS - opts.pauseMinS)) * 1000);
    // Each kill takes one replica down, in turn from a seeded first one (no draw with one daemon, so a seed
    // repeats the SQLite soak as before).
    const firstVictim = replicas.length > 1 ? Math.floor(random() * replicas.length) : 0;
    // The database restart: after the middle kill (after the only one; at mid-load without kills), halfway to
    // the next.
    const pgAfter = opts.pgRestart ? (opts.kills >= 2 ? Math.ceil(opts.kills / 2) : opts.kills) : -1;
    load.start();
    log(
      `load started: ${opts.webhookRate} webhook/s, decisions every ${opts.decideEveryMs} ms, answers every ${opts.answerEveryMs} ms`,
    );
    log(`kills planned at ${planned.map((t) => clock(t - loadStart)).join(', ')} (m:ss into the load)`);

    // A daemon that exits on its own is restarted (and fails the soak).
    set.watch(log);

    const kills: KillRecord[] = [];
    const snapshots: KillSnapshot[] = [];
    let pgRecord: PgRestartRecord | null = null;
    let lastReady = at();
    const restartDatabase = async (target: number) => {
      const when = Math.max(target, lastReady + 15_000);
      while (at() < when) await sleep(Math.min(1_000, when - at()));
      const t0 = at();
      log(`restarting PostgreSQL at ${clock(t0 - loadStart)}`);
      const tookMs = await cluster!.restart();
      // Back when every replica's /readyz says so again (the store check passes).
      const back = await allReady(replicas, 60_000);
      pgRecord = { at: t0 - loadStart, tookMs, readyAgainMs: back === null ? null : back - origin - t0 };
      lastReady = at();
      log(
        `PostgreSQL restarted in ${secs(tookMs)}; ${back === null ? 'some replica not ready after 60 s' : `every replica ready ${secs(back - origin - t0)} after the restart began`}`,
      );
    };
    if (pgAfter === 0) await restartDatabase(loadStart + duration / 2);
    for (let i = 0; i < planned.length; i++) {
      const target = Math.max(planned[i]!, lastReady + 15_000);
      while (at() < target) await sleep(Math.min(1_000, target - at()));
      const victim = replicas[(firstVictim + i) % replicas.length]!;
      const done = await set.killAndRestart(victim, pauses[i]!, async () => {
        log(
          `SIGKILL ${i + 1}${drill ? ` of ${victim.id}` : ''} at ${clock(at() - loadStart)}; restart in ${secs(pauses[i]!)}`,
        );
        return readHeld(victim.id, cluster, dataDir);
      });
      const life = done.restarted;
      lastReady = at();
      const held = done.seen;
      snapshots.push({
        index: i + 1,
        replica: victim.id,
        killedAt: done.killedAt,
        restartReadyAt: origin + life.readyAt,
        othersUp: done.othersUp,
        held: held.runs,
        error: held.error,
      });
      kills.push({
        index: i + 1,
        replica: victim.id,
        plannedAt: planned[i]! - loadStart,
        killedAt: done.killedAt - origin - loadStart,
        pauseMs: pauses[i]!,
        restartedAt: life.spawnedAt - loadStart,
        readyMs: life.readyAt - life.spawnedAt,
        held: held.runs?.length ?? null,
      });
      log(
        `restarted ${drill ? `${victim.id} ` : ''}(pid ${life.pid}), ready in ${secs(life.readyAt - life.spawnedAt)}; ` +
          `it held ${held.runs ? `${held.runs.length} running runs` : `? runs (${held.error})`} when killed`,
      );
      if (i + 1 === pgAfter) {
        await restartDatabase(
          i + 1 < planned.length
            ? (lastReady + planned[i + 1]!) / 2
            : Math.max(lastReady, loadStart + duration / 2),
        );
      }
    }
    // The drill gives the last fault time to settle before the stop: a run it cut off is taken over within
    // about lease_ms and a third, a webhook delivery a killed replica had claimed waits out the claim (60 s).
    const stopLoadAt = drill ? Math.max(end, lastReady + DRILL_SETTLE_MS) : end;
    if (stopLoadAt > end) {
      log(
        `load extended by ${secs(stopLoadAt - end)}: the last fault gets ${secs(DRILL_SETTLE_MS)} to settle`,
      );
    }
    let lastProgress = 0;
    while (at() < stopLoadAt) {
      await sleep(Math.min(1_000, stopLoadAt - at()));
      const minute = Math.floor((at() - loadStart) / MINUTE);
      if (minute > lastProgress) {
        lastProgress = minute;
        log(
          `${minute} min: ${int(model.tally.served)} model answers, ${int(load.deliveries.length)} deliveries, ` +
            `${int(load.decisions.length)} decisions, ${int(load.answers.length)} answers acknowledged`,
        );
      }
    }
    await set.unwatch();

    // ---- stop ----------------------------------------------------------------------------------------
    log('load stopping (unacknowledged deliveries get 15 s more)');
    await load.stop(15_000);
    const stopAt = Date.now();
    const stopT0 = at();
    const lasts = await set.stopAll();
    const stopMs = at() - stopT0;
    set.close();
    await trees.stop();
    for (const [i, l] of lasts.entries()) {
      log(
        `SIGTERM${drill ? ` ${replicas[i]!.id}` : ''}: exit code ${l.exitCode}${l.exitSignal ? ` (signal ${l.exitSignal})` : ''} after ${secs((l.endedAt ?? stopT0) - stopT0)}`,
      );
    }

    // ---- audit ---------------------------------------------------------------------------------------
    const allLifetimes = replicas.flatMap((r) => r.daemon.lifetimes);
    const replicaLogs = new Map(replicas.map((r) => [r.id, readReplicaLog(r.logFile)]));
    const db = cluster ? await openPostgresAudit(cluster.url) : openSqliteAudit(join(dataDir, 'drydock.db'));
    let a: AuditResult;
    let tk: TakeoverResult;
    try {
      a = await audit(db, {
        jobs: load.jobs,
        decisions: load.decisions,
        answers: load.answers,
        deliveries: load.deliveries,
        triggerId: load.triggerId,
        approver: DECISION_IDENTITY,
        stopAt,
        edgeMs: opts.edgeMs,
        retention: {
          samples: trees.samples,
          lifetimes: allLifetimes
            .filter((l) => Number.isFinite(l.readyAt))
            .map((l) => ({
              spawnedAt: origin + l.spawnedAt,
              readyAt: origin + l.readyAt,
              endedAt: l.endedAt === null ? null : origin + l.endedAt,
            })),
          ttlMs: opts.worktreeTtlMs,
          intervalMs: opts.gcIntervalMs,
          slackMs: opts.gcSlackMs,
        },
      });
      tk = await auditTakeovers(db, {
        kills: snapshots,
        logs: replicaLogs,
        leaseMs: opts.leaseMs ?? DEFAULT_LEASE_MS,
        stopAt,
      });
    } finally {
      await db.close();
    }
    if (cluster && opts.keep) await cluster.dump(join(dir, 'drydock.pgdump'));

    // ---- memory --------------------------------------------------------------------------------------
    const warmupMs = opts.quick ? 30_000 : MINUTE;
    const dbBytes = ['drydock.db', 'drydock.db-wal'].reduce((n, f) => {
      try {
        return n + statSync(join(dataDir, f)).size;
      } catch {
        return n;
      }
    }, 0);
    // Judged for the one daemon of the SQLite soak; the drill (PostgreSQL, replicas) reports it per replica:
    // it is a fault test, and its lifetimes are cut short by design.
    const lines = replicas.flatMap((r) => r.daemon.lifetimes.map((l) => memory(l, warmupMs, r.id)));
    const own = lines.filter((m) => m.replica === replicas[0]!.id);
    const lastLine = own.at(-1)!;
    const longest = [...own].sort((x, y) => y.spanS - x.spanS)[0]!;
    const heapLines = opts.heap ? heapByLifetime(heapFile, allLifetimes, origin, warmupMs) : [];
    const judged = lastLine.spanS >= 90 || longest === lastLine ? lastLine : longest;
    // The daemon's SQLite connection keeps up to 16,000 KiB of pages (better-sqlite3's compiled default
    // cache_size; drydock sets none). A new process starts with it empty and fills it as the database grows, so
    // RSS may rise by that much over a lifetime without anything leaking: the RSS limit allows it on top of the
    // base slope, spread over the judged window. The live heap after a forced full GC has no such cache.
    // The cache cannot hold more than the database, so the allowance is the smaller of the two.
    const cacheMb = Math.min(SQLITE_CACHE_MB, dbBytes / 1e6);
    const rssLimit = opts.slopeLimitMbPerMin + cacheMb / Math.max(judged.spanS / 60, 1);
    // Under 90 s of post-warm-up samples (a --quick run) a slope says little: reported, not judged.
    const judgeable = !drill && judged.spanS >= 90;
    const rssOk = !judgeable || (Number.isFinite(judged.slope) && judged.slope < rssLimit);
    const judgedHeap = heapLines.find((h) => h.pid === judged.life.pid);
    const heapJudgeable = judgeable && judgedHeap !== undefined && judgedHeap.after >= 3;
    const heapOk = !opts.heap || !heapJudgeable || judgedHeap.slope < opts.heapSlopeLimitMbPerMin;
    const memoryOk = rssOk && heapOk;
    const modelTally = model.tally;
    const levels = replicas.map((r) => ({ replica: r, ...logLevels(r.logFile) }));
    const lifeName = (m: MemoryLine) => (drill ? `${m.replica}/${m.life.index}` : String(m.life.index));
    writeFileSync(
      join(dir, 'rss.csv'),
      `lifetime,pid,ms_into_load,rss_bytes\n${lines
        .flatMap((m) =>
          m.life.samples.map((p) => `${lifeName(m)},${m.life.pid},${p.at - loadStart},${p.bytes}`),
        )
        .join('\n')}\n`,
    );

    const rt = a.retention!;
    writeFileSync(join(dir, 'trees.jsonl'), trees.samples.map((t) => `${JSON.stringify(t)}\n`).join(''));
    writeFileSync(
      join(dir, 'worktrees.csv'),
      `ms_into_load,worktrees,branches,checkouts,bound,checkout_bound\n${rt.series
        .map(
          (p) =>
            `${p.at - origin - loadStart},${p.worktrees},${p.branches},${p.checkouts},${p.bound},${p.checkoutBound}`,
        )
        .join('\n')}\n`,
    );

    // ---- the tally -----------------------------------------------------------------------------------
    const s = a.slots;
    const d = a.decisions;
    const q = a.answers;
    const dl = a.deliveries;
    const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
    const slotsOk =
      s.uncovered === 0 &&
      s.doublyCovered === 0 &&
      s.coveredEarly === 0 &&
      s.stray === 0 &&
      s.duplicateRuns === 0 &&
      s.firedRowMismatches === 0 &&
      s.coalescedCountMismatches === 0 &&
      s.missedRangeMismatches === 0 &&
      s.jitterMismatches === 0 &&
      s.jobsMissingInStore === 0 &&
      s.due > 0;
    const plansOk =
      a.plans.plannedRunsWithoutPlan === 0 &&
      a.plans.runsWithSeveralPlans === 0 &&
      a.plans.plansNotLinked === 0;
    const decisionsOk =
      d.acknowledged > 0 &&
      d.found === d.acknowledged &&
      d.mismatched === 0 &&
      d.planStatusWrong === 0 &&
      d.approveWithoutOneExecuteRun === 0 &&
      d.reviseWithoutOneRound === 0;
    const answersOk = q.acknowledged > 0 && q.found === q.acknowledged && q.mismatched === 0;
    const deliveriesOk =
      dl.acknowledged > 0 &&
      dl.found === dl.acknowledged &&
      dl.acknowledgedWithoutRun === 0 &&
      dl.severalRunsPerTrigger === 0 &&
      dl.neverAcknowledged === 0 &&
      dl.refused === 0 &&
      dl.notAccepted === 0;
    const lifecycleOk =
      lasts.every((l) => l.end === 'SIGTERM' && l.exitCode === 0) &&
      set.unexpectedExits === 0 &&
      kills.length === opts.kills &&
      (!opts.pgRestart || (pgRecord !== null && (pgRecord as PgRestartRecord).readyAgainMs !== null)) &&
      a.activeAtStop === 0;
    const takeoverOk =
      tk.notTakenOver === 0 &&
      tk.late === 0 &&
      tk.badEnd === 0 &&
      tk.stuck === 0 &&
      tk.stillClaimed === 0 &&
      tk.unreadKills === 0;
    const kindOk = (k: KindTally) =>
      k.overBound === 0 &&
      k.backWithoutRetry === 0 &&
      k.overdue === 0 &&
      k.early === 0 &&
      k.unknown === 0 &&
      (k.owed === 0 || k.removed > 0);
    const retentionOk =
      // A failed reading (reported) only leaves a gap between samples: the checks hold on the others.
      trees.samples.length > 0 &&
      kindOk(rt.worktrees) &&
      kindOk(rt.branches) &&
      kindOk(rt.checkouts) &&
      rt.inUseMissing === 0 &&
      rt.endedButUnsettled === 0;
    const retentionRow = (name: string, k: KindTally) => [
      name,
      int(k.started),
      int(k.seen),
      int(k.removed),
      k.backWithoutRetry ? `${int(k.recreated)} (${k.backWithoutRetry} without a retry)` : int(k.recreated),
      `${int(k.maxAlive)} at ${clock(k.maxAliveAt - origin - loadStart)} (bound ${int(k.boundAtMax)})`,
      int(k.end),
      Number.isFinite(k.minHeadroom)
        ? `${int(k.minHeadroom)} at ${clock(k.minHeadroomAt - origin - loadStart)}`
        : '-',
      String(k.overBound),
      `${k.overdue} of ${int(k.owed)} owed`,
      String(k.early),
      String(k.unknown),
    ];
    const failures = [...a.failures, ...tk.failures.map((f) => `takeover: ${f}`)];
    const pass =
      takeoverOk &&
      retentionOk &&
      slotsOk &&
      plansOk &&
      decisionsOk &&
      answersOk &&
      deliveriesOk &&
      lifecycleOk &&
      memoryOk &&
      failures.length === 0;

    const out: string[] = [
      '',
      drill
        ? `soak (replica fault drill): ${opts.replicas} drydock serve replica${opts.replicas > 1 ? 's' : ''} on a scratch PostgreSQL ${cluster!.major} ` +
          `under load for ${opts.minutes} min, one killed with SIGKILL ${opts.kills}x and restarted` +
          `${opts.pgRestart ? ', the database restarted once' : ''}; runs.lease_ms ${opts.leaseMs}${opts.quick ? ' (quick)' : ''}`
        : `soak: drydock serve under load for ${opts.minutes} min, killed with SIGKILL ${opts.kills}x and restarted${opts.quick ? ' (quick)' : ''}`,
      `node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} CPUs; seed ${opts.seed}`,
      `load: ${int(load.jobs.length)} "* * * * *" jobs (UTC) in ${opts.sessions} sessions, every ${opts.askEvery}th asks a question ` +
        `(every other question answered after ${secs(opts.lateAnswerMs)}); ` +
        `${opts.webhookRate} pull_request.opened/s; ${opts.decisionsPerTick} decisions every ${opts.decideEveryMs} ms; ` +
        `answers every ${opts.answerEveryMs} ms; runs.max_concurrent ${opts.maxConcurrent}, catch-up window ${secs(opts.catchupMs)}`,
      `model: ${int(model.tally.served)} answers (${int(model.tally.plans)} plans, ${int(model.tally.questions)} questions, ` +
        `${int(model.tally.executes)} execute turns), ${opts.modelDelayMs} ms before each`,
      '',
      'lifecycle (m:ss into the load)',
      ...table([
        [
          'kill',
          ...(drill ? ['replica'] : []),
          'planned',
          'SIGKILL',
          'pause',
          'restarted',
          'ready after',
          'runs it held',
        ],
        ...kills.map((k) => [
          String(k.index),
          ...(drill ? [k.replica] : []),
          clock(k.plannedAt),
          clock(k.killedAt),
          secs(k.pauseMs),
          clock(k.restartedAt),
          secs(k.readyMs),
          k.held === null ? '?' : String(k.held),
        ]),
      ]),
      ...(opts.pgRestart
        ? [
            pgRecord === null
              ? '  PostgreSQL restart: did not happen'
              : `  PostgreSQL restart at ${clock((pgRecord as PgRestartRecord).at)}: pg_ctlcluster restart took ${secs((pgRecord as PgRestartRecord).tookMs)}, ` +
                `every replica ready again after ${(pgRecord as PgRestartRecord).readyAgainMs === null ? 'more than 60 s' : secs((pgRecord as PgRestartRecord).readyAgainMs!)}`,
          ]
        : []),
      `  final SIGTERM at ${clock(stopT0 - loadStart)}: ${lasts
        .map(
          (l, i) =>
            `${drill ? `${replicas[i]!.id} ` : ''}exit code ${l.exitCode}${l.exitSignal ? ` signal ${l.exitSignal}` : ''}`,
        )
        .join(', ')} after ${secs(stopMs)}; ` +
        `unexpected exits ${set.unexpectedExits}; runs left running ${a.activeAtStop}  ${verdict(lifecycleOk)}`,
      ...levels.flatMap((l) => [
        `  ${drill ? `${l.replica.id} log` : 'daemon log'}: ${int(l.warn)} warnings, ${int(l.error)} errors`,
        ...l.top.map((m) => `    ${m}`),
      ]),
      '',
      ...(drill
        ? [
            "replicas (runs ended and taken over: from each replica's log; model requests: by its API key)",
            ...table([
              [
                'replica',
                'lifetimes',
                'SIGKILLs',
                'runs ended',
                'of them not as meant',
                'took over',
                'model requests',
                'HTTP answers',
              ],
              ...replicas.map((r, i) => {
                const rl = replicaLogs.get(r.id)!;
                return [
                  r.id,
                  String(r.daemon.lifetimes.length),
                  String(kills.filter((k) => k.replica === r.id).length),
                  int(rl.ended),
                  int(rl.endedWithoutSuccess),
                  int([...rl.tookOver.values()].reduce((n, t) => n + t.length, 0)),
                  int(modelTally.byKey[`soak-key-${r.id}`] ?? 0),
                  balancer ? int(balancer.answered[i]!) : '-',
                ];
              }),
            ]),
            `  model requests by key: ${counts(modelTally.byKey)}` +
              (balancer
                ? `; requests sent to the next replica after a refused connection: ${int(balancer.failovers)}`
                : ''),
            '',
          ]
        : []),
      `takeovers (runs a killed ${drill ? 'replica' : 'daemon'} held: running and claimed by it, read right after each SIGKILL)`,
      `  ${int(tk.held)} held, ${int(tk.takenOver)} taken over (${int(tk.byRestart)} by the killed ${drill ? 'replica' : 'daemon'}'s restart, ` +
        `${int(tk.byOther)} by another replica, ${int(tk.takerUnknown)} by one no log names); ` +
        `after the kill within ${tk.latencies.length ? `median ${secs(median(tk.latencies))}, max ${secs(Math.max(...tk.latencies))}` : '-'}`,
      `  end state: ${counts(tk.outcomes)}; handed back at the final stop ${tk.handedBackAtStop}; ` +
        `queued behind a run of its session parked for an answer ${tk.queuedBehindParked}; ` +
        `interrupted after two kills ${tk.interruptedTwice}`,
      `  never taken over ${tk.notTakenOver}, late ${tk.late}, ended badly ${tk.badEnd}, stuck ${tk.stuck}; ` +
        `runs still claimed at the end ${tk.stillClaimed}; kills whose held runs could not be read ${tk.unreadKills}; ` +
        `other takeovers (no kill cut the run off) ${tk.otherInterruptions}  ${verdict(takeoverOk)}`,
      '',
      `slots (nominal minutes from each job's creation; due = jittered due time <= SIGTERM - ${secs(opts.edgeMs)})`,
      ...table([
        ['due', 'fired', 'coalesced', 'missed', 'pending at stop', 'uncovered', 'doubly covered'],
        [
          int(s.due),
          int(s.fired),
          int(s.coalesced),
          int(s.missed),
          int(s.pendingAtStop),
          int(s.uncovered),
          int(s.doublyCovered),
        ],
      ]),
      `  edge (due in the last ${secs(opts.edgeMs)}): ${int(s.edgeCovered)} covered, ${int(s.edgeUncovered)} not yet; ` +
        `covered before due ${s.coveredEarly}; stray ${s.stray}; duplicate (job, slot) runs ${s.duplicateRuns}; ` +
        `fired rows vs runs ${s.firedRowMismatches}; coalesced_slots vs rows ${s.coalescedCountMismatches}; ` +
        `missed ranges ${s.missedRangeMismatches}; jitter vs API ${s.jitterMismatches}  ${verdict(slotsOk)}`,
      '',
      `runs by status: ${counts(a.runsByStatus)}`,
      `failed runs (the scripted model never fails): ${counts(a.failedRuns)}`,
      `runs by source and phase: ${counts(a.runsBySourcePhase)}; ${counts(a.attempts)}`,
      `runs cut off by a kill and retried from their stored conversation: ${int(a.retriedAfterKill)}; ` +
        `interrupted (cut off a second time): ${int(a.runsByStatus.interrupted ?? 0)}`,
      `plans by status: ${counts(a.plansByStatus)}`,
      `  planned runs without a plan ${a.plans.plannedRunsWithoutPlan}, runs with several plans ${a.plans.runsWithSeveralPlans}, ` +
        `plans their run does not name ${a.plans.plansNotLinked}  ${verdict(plansOk)}`,
      `  revised pull request plans: ${a.plans.revisedPullRequestPlans}, of them without their pull request (subject): ` +
        `${a.plans.revisedPullRequestPlansWithoutSubject}`,
      `questions by status: ${counts(a.questionsByStatus)}`,
      '',
      `decisions: ${int(d.acknowledged)} acknowledged (${counts(d.byKind)}), ${int(d.found)} found, ${d.mismatched} differ; ` +
        `plan status wrong ${d.planStatusWrong}; approvals without one execute run ${d.approveWithoutOneExecuteRun}; ` +
        `revisions without one round ${d.reviseWithoutOneRound}; in store but unacknowledged ${d.unacknowledgedInStore}  ${verdict(decisionsOk)}`,
      `  calls: ${counts(load.tally.decisionCalls)}`,
      `answers: ${int(q.acknowledged)} acknowledged, ${int(q.found)} found answered as sent, ${q.mismatched} differ; ` +
        `in store but unacknowledged ${q.unacknowledgedInStore}  ${verdict(answersOk)}`,
      `  calls: ${counts(load.tally.answerCalls)}; lists: ${counts(load.tally.listCalls)}`,
      `deliveries: ${int(dl.sent)} sent, ${int(dl.acknowledged)} acknowledged (${int(dl.acknowledged202)} with 202, ` +
        `${int(dl.acknowledgedDuplicate)} with 200 as a redelivery), ${int(dl.found)} found, ${int(dl.withOneRun)} with their one run; ` +
        `never acknowledged ${dl.neverAcknowledged}, refused ${dl.refused}, not accepted ${dl.notAccepted}, ` +
        `acknowledged without a run ${dl.acknowledgedWithoutRun}, several runs per trigger ${dl.severalRunsPerTrigger}  ${verdict(deliveriesOk)}`,
      `  attempts: ${counts(load.tally.deliveryAttempts)}; in store by outcome: ${counts(a.deliveriesByOutcome)}`,
      '',
      `memory (VmRSS of the daemon every ${RSS_EVERY_MS / 1000} s; slope: least squares after ${warmupMs / 1000} s of warm-up)`,
      ...table([
        ['lifetime', 'pid', 'from', 'to', 'ended by', 'samples', 'start', 'peak', 'end', 'slope'],
        ...lines.map((m) => [
          lifeName(m),
          String(m.life.pid),
          clock(m.life.spawnedAt - loadStart),
          m.life.endedAt === null ? '-' : clock(m.life.endedAt - loadStart),
          m.life.end ?? '-',
          String(m.life.samples.length),
          mb(m.start),
          mb(m.peak),
          mb(m.end),
          Number.isFinite(m.slope)
            ? `${m.slope >= 0 ? '+' : ''}${m.slope.toFixed(2)} MB/min over ${Math.round(m.spanS)} s`
            : 'n/a',
        ]),
      ]),
      ...(heapLines.length
        ? [
            `  live heap after a forced full GC every ${opts.quick ? 10 : 30} s (heap-probe.js):`,
            ...table(
              [
                ['lifetime', 'samples', 'first', 'last', 'max', 'external (last)', 'slope'],
                ...heapLines.map((h) => [
                  drill
                    ? `${lines.find((m) => m.life.pid === h.pid)?.replica ?? '?'}/${h.index}`
                    : String(h.index),
                  String(h.n),
                  mb(h.first),
                  mb(h.last),
                  mb(h.max),
                  mb(h.external),
                  Number.isFinite(h.slope) ? `${h.slope >= 0 ? '+' : ''}${h.slope.toFixed(2)} MB/min` : 'n/a',
                ]),
              ],
              2,
              '    ',
            ),
          ]
        : []),
      drill
        ? '  not judged: the drill is a fault test (several daemons, lifetimes cut short by design, no SQLite page ' +
          'cache to allow for); memory is judged by the SQLite soak'
        : `  judged: lifetime ${judged.life.index}${judged === lastLine ? ' (the last)' : ' (the longest; the last is too short)'}: ` +
          `RSS ${Number.isFinite(judged.slope) ? judged.slope.toFixed(2) : 'n/a'} MB/min, limit ${rssLimit.toFixed(2)} MB/min ` +
          `(${opts.slopeLimitMbPerMin} + ${cacheMb.toFixed(1)} MB of SQLite page cache filling over ${Math.round(judged.spanS)} s) ` +
          `${judgeable ? verdict(rssOk) : 'not judged: under 90 s after warm-up'}` +
          (opts.heap
            ? `; live heap ${judgedHeap && Number.isFinite(judgedHeap.slope) ? judgedHeap.slope.toFixed(2) : 'n/a'} MB/min, ` +
              `limit ${opts.heapSlopeLimitMbPerMin} MB/min ${heapJudgeable ? verdict(heapOk) : 'not judged: too few samples'}`
            : '; live heap not probed (--no-heap)'),
      ...(drill
        ? []
        : [
            `  database at the end: ${mb(dbBytes)}; its page cache holds at most ${SQLITE_CACHE_MB.toFixed(1)} MB  ` +
              `${judgeable ? verdict(memoryOk) : 'not judged'}`,
          ]),
      '',
      `retention (worktree_ttl_ms ${int(opts.worktreeTtlMs)}, interval_ms ${int(opts.gcIntervalMs)}; counted every ` +
        `${RSS_EVERY_MS / 1000} s, ${trees.samples.length} samples, the last after the stop; deadline: end of the first ` +
        `pass after settled + ttl, + ${secs(opts.gcSlackMs)})`,
      ...table([
        [
          'kind',
          'started',
          'seen',
          'removed',
          'made again',
          'max alive',
          'at end',
          'least headroom',
          'over bound',
          'past deadline',
          'removed early',
          'unknown',
        ],
        retentionRow('worktrees', rt.worktrees),
        retentionRow('drydock/* branches', rt.branches),
        retentionRow('PR checkouts', rt.checkouts),
      ]),
      `  executions: ${int(rt.executions.started)} started, ${int(rt.executions.settled)} settled, ` +
        `${int(rt.executions.inUse)} in use at the end (${rt.inUseMissing} of them without worktree or branch); ` +
        `ended but plan unsettled ${rt.endedButUnsettled}; most settled within any ${secs(rt.windowMs)} ` +
        `(ttl + interval + 60 s): ${int(rt.windowMax)}` +
        (trees.failed ? `; ${trees.failed} failed readings: ${trees.errors.join('; ')}` : '') +
        `  ${verdict(retentionOk)}`,
      '',
    ];
    if (failures.length) out.push('failures:', ...failures.map((f) => `  ${f}`), '');
    out.push(`overall: ${verdict(pass)}`);
    process.stdout.write(`${out.join('\n')}\n`);
    return pass ? 0 : 1;
  } finally {
    set?.close();
    await model?.server.close();
    cluster?.drop();
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    process.off('exit', dropOnExit);
    if (opts.keep)
      log(
        `kept ${dir}${cluster ? ' (the database as drydock.pgdump: pg_restore -d DB drydock.pgdump)' : ''}`,
      );
    else rmSync(dir, { recursive: true, force: true });
  }
}

benchMain('soak', parseOptions, USAGE, main);
