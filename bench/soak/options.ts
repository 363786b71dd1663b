// Soak options: command-line flags win over environment variables, which win over the defaults of the chosen
// mode (full, or --quick for a smoke run).

import { OptionsError, readFlags } from '../shared/options.js';

export interface SoakOptions {
  /** Minutes of load, from the moment every job exists to the final SIGTERM. */
  minutes: number;
  /** `* * * * *` jobs, spread over `sessions` sessions (at most 50 each). */
  jobs: number;
  sessions: number;
  /** SIGKILLs at random moments (not in the first or last minute), each followed by a restart. */
  kills: number;
  /** Pause between a SIGKILL and the restart, in seconds: uniform in [min, max]. */
  pauseMinS: number;
  pauseMaxS: number;
  /** Signed pull_request.opened deliveries per second. */
  webhookRate: number;
  /** One decision tick (a few approve / reject / revise calls) every this many ms. */
  decideEveryMs: number;
  /** Decisions per tick. */
  decisionsPerTick: number;
  /** Answer every pending question every this many ms. */
  answerEveryMs: number;
  /** Every other question (by its id) is answered only once it is this old, so its session stays busy past
   *  the next slot and that session's other jobs coalesce. */
  lateAnswerMs: number;
  /** Every `askEvery`-th job's prompt (and every PR whose number % askEvery == 3) asks a question first. */
  askEvery: number;
  /** runs.max_concurrent of the daemon. */
  maxConcurrent: number;
  /** scheduler.catchup_window_ms of the daemon: short, so a long pause also produces missed ranges. */
  catchupMs: number;
  /** Delay of every scripted model answer before its first byte, ms (so kills land mid-run). */
  modelDelayMs: number;
  /** Slots due within this many ms before the final stop may be covered or not (scheduler lag). */
  edgeMs: number;
  /** Memory is "flat" when the RSS slope of the judged lifetime is below this, MB per minute. */
  slopeLimitMbPerMin: number;
  /** Seed of the random choices (kill moments, pauses, decisions); printed so a run can be repeated. */
  seed: number;
  quick: boolean;
  /** Kill at a uniformly random moment of its window (default: moved to 2-10 s after the next minute, while
   *  that minute's burst of fires is running, so kills cut runs and requests off mid-flight). */
  uniformKills: boolean;
  /** Preload heap-probe.js into the daemon: a forced full GC every 30 s and the live heap after it (default on). */
  heap: boolean;
  /** The live heap is "flat" when its slope is below this, MB per minute. */
  heapSlopeLimitMbPerMin: number;
  /** Keep the temporary directory (database, repositories, daemon log). */
  keep: boolean;
  /** retention.worktree_ttl_ms of the daemon: short, so the soak sees worktrees removed and can bound them. */
  worktreeTtlMs: number;
  /** retention.interval_ms of the daemon (the daemon's minimum is 60 s). */
  gcIntervalMs: number;
  /** Added to each removal deadline the audit computes: a pass's duration, timers late under load. A pass that
   *  removed about 75 worktrees took 5-10 s under the soak's load on 2 CPUs. */
  gcSlackMs: number;
  /** Where the daemons keep their state: the embedded SQLite file, or a scratch PostgreSQL cluster made for the
   *  run (Debian's pg_createcluster) and dropped after it. */
  store: 'sqlite' | 'postgres';
  /** Daemons on the one database (more than one needs postgres): the replica fault drill. */
  replicas: number;
  /** Restart the database server once, mid-run, between two kills (postgres only). */
  pgRestart: boolean;
  /** runs.lease_ms of the daemons: short, so a killed replica's runs are taken over within the drill. Null: not
   *  set (the daemon's 30 s default), the SQLite soak's configuration. */
  leaseMs: number | null;
  /** The outage drills of issue 24 (drills.ts) instead of the soak: figures, not checks. */
  drills: boolean;
  /** Which drills to run (--only restart,crash,stop,listen); all of them by default. */
  only: readonly DrillName[];
}

export const DRILLS = ['restart', 'crash', 'stop', 'listen'] as const;
export type DrillName = (typeof DRILLS)[number];
/** Least delay of a scripted model answer in the drills (they add up to 2 s more): a fault lands while runs
 *  wait on it. */
const DRILL_MODEL_DELAY_MS = 2_000;

const FULL = { minutes: 10, jobs: 1000, kills: 3 };
const QUICK = { minutes: 2, jobs: 200, kills: 1 };

const NUMERIC = {
  minutes: ['--minutes', 'SOAK_MINUTES'],
  jobs: ['--jobs', 'SOAK_JOBS'],
  sessions: ['--sessions', 'SOAK_SESSIONS'],
  kills: ['--kills', 'SOAK_KILLS'],
  pauseMinS: ['--pause-min', 'SOAK_PAUSE_MIN'],
  pauseMaxS: ['--pause-max', 'SOAK_PAUSE_MAX'],
  webhookRate: ['--webhook-rate', 'SOAK_WEBHOOK_RATE'],
  decideEveryMs: ['--decide-every-ms', 'SOAK_DECIDE_EVERY_MS'],
  decisionsPerTick: ['--decisions-per-tick', 'SOAK_DECISIONS_PER_TICK'],
  answerEveryMs: ['--answer-every-ms', 'SOAK_ANSWER_EVERY_MS'],
  askEvery: ['--ask-every', 'SOAK_ASK_EVERY'],
  lateAnswerMs: ['--late-answer-ms', 'SOAK_LATE_ANSWER_MS'],
  maxConcurrent: ['--max-concurrent', 'SOAK_MAX_CONCURRENT'],
  catchupMs: ['--catchup-ms', 'SOAK_CATCHUP_MS'],
  modelDelayMs: ['--model-delay-ms', 'SOAK_MODEL_DELAY_MS'],
  edgeMs: ['--edge-ms', 'SOAK_EDGE_MS'],
  slopeLimitMbPerMin: ['--slope-limit', 'SOAK_SLOPE_LIMIT'],
  heapSlopeLimitMbPerMin: ['--heap-slope-limit', 'SOAK_HEAP_SLOPE_LIMIT'],
  seed: ['--seed', 'SOAK_SEED'],
  worktreeTtlMs: ['--worktree-ttl-ms', 'SOAK_WORKTREE_TTL_MS'],
  gcIntervalMs: ['--gc-interval-ms', 'SOAK_GC_INTERVAL_MS'],
  gcSlackMs: ['--gc-slack-ms', 'SOAK_GC_SLACK_MS'],
  replicas: ['--replicas', 'SOAK_REPLICAS'],
  leaseMs: ['--lease-ms', 'SOAK_LEASE_MS'],
} as const;

const SWITCHES = [
  '--quick',
  '--keep',
  '--no-heap',
  '--uniform-kills',
  '--pg-restart',
  '--drills',
  '--help',
] as const;
const STORES = ['sqlite', 'postgres'] as const;
/** runs.lease_ms of the drill's replicas unless --lease-ms says otherwise; the daemon's minimum is 3000. */
const DRILL_LEASE_MS = 6_000;

export const USAGE = `usage: npm run bench:soak -- [--quick] [--minutes N] [--jobs N] [--sessions N] [--kills N]
                             [--pause-min S] [--pause-max S] [--webhook-rate R] [--decide-every-ms MS]
                             [--decisions-per-tick N] [--answer-every-ms MS] [--ask-every N] [--late-answer-ms MS]
                             [--max-concurrent N] [--catchup-ms MS] [--model-delay-ms MS] [--edge-ms MS]
                             [--slope-limit MB_PER_MIN] [--heap-slope-limit MB_PER_MIN] [--seed N]
                             [--worktree-ttl-ms MS] [--gc-interval-ms MS] [--gc-slack-ms MS]
                             [--uniform-kills] [--no-heap] [--keep]
                             [--store sqlite|postgres] [--replicas N] [--pg-restart] [--lease-ms MS]
       npm run bench:soak -- --drills [--only ${DRILLS.join(',')}] [--model-delay-ms MS] [--lease-ms MS] [--keep]
  defaults: --minutes ${FULL.minutes} --jobs ${FULL.jobs} --kills ${FULL.kills} --sessions max(20, jobs/50) --pause-min 2 --pause-max 20
            --webhook-rate 1 --decide-every-ms 1000 --decisions-per-tick 2 --answer-every-ms 2000 --ask-every 50
            --late-answer-ms 75000 --max-concurrent 8 --catchup-ms 15000 --model-delay-ms 20 --edge-ms 5000 --slope-limit 2
            --heap-slope-limit 0.5 --worktree-ttl-ms 60000 --gc-interval-ms 60000 --gc-slack-ms 30000 (60000 with
            --store postgres)
  kills: a random moment in each of N equal windows between the first and the last minute, moved to 2-10 s
         after the next minute (the burst of fires), unless --uniform-kills
  --no-heap: do not preload heap-probe.js into the daemon (node --expose-gc --import): by default it forces a
             full GC every 30 s and records the live heap after it, judged next to RSS
  retention: the daemon runs with retention.worktree_ttl_ms / interval_ms from --worktree-ttl-ms /
             --gc-interval-ms (at least 60000); worktrees, drydock/* branches and pull request checkouts are
             counted every 5 s and each is held to the deadline these imply, plus --gc-slack-ms
  --store postgres: a scratch PostgreSQL cluster (pg_createcluster, trust on 127.0.0.1) made for the run and
             dropped after it, also on failure or Ctrl-C; default --store sqlite
  --replicas N: N daemons on that database (N > 1 needs --store postgres), each with its own data_dir, port
             and replica_id, sharing work_dir and the repositories; each kill takes one replica down (in turn,
             from a seeded first one) and the load fails over to the live ones; default 1
  --pg-restart: restart the database server once, mid-run, between two kills (postgres only)
  --lease-ms: runs.lease_ms of the daemons (at least 3000); default ${DRILL_LEASE_MS} with --store postgres, else
             not set (the daemon's 30000)
  --quick:  --minutes ${QUICK.minutes} --jobs ${QUICK.jobs} --kills ${QUICK.kills}
  --drills: the outage drills (issue 24) instead of the soak, on a scratch PostgreSQL cluster with 2 replicas
            (implies --store postgres --replicas 2): a database restart (about 2 s), a database crash (17 s), a
            replica frozen with SIGSTOP past its lease, a cut LISTEN connection; the model answers
            --model-delay-ms (default ${DRILL_MODEL_DELAY_MS}) to 2 s more after a request; prints figures (runs redone,
            log lines, wake-up delay, duplicate plans, event streams), judges none; --only picks drills
  environment: SOAK_MINUTES, SOAK_JOBS, ... (the flag's name in capitals), SOAK_QUICK=1, SOAK_KEEP=1,
               SOAK_DAEMON_NODE_ARGS (extra node flags for the daemon, e.g. "--max-old-space-size=256")`;

export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): SoakOptions {
  const flags = readFlags(argv, SWITCHES, [
    ...SWITCHES,
    '--store',
    '--only',
    ...Object.values(NUMERIC).map(([flag]) => flag),
  ]);
  const drills = flags.has('--drills') || env.SOAK_DRILLS === '1';
  const rawStore = flags.get('--store') ?? env.SOAK_STORE ?? (drills ? 'postgres' : 'sqlite');
  const store = STORES.find((s) => s === rawStore);
  if (!store) throw new OptionsError(`--store: expected ${STORES.join(' or ')}, got ${String(rawStore)}`);

  const quick = flags.has('--quick') || env.SOAK_QUICK === '1';
  const keep = flags.has('--keep') || env.SOAK_KEEP === '1';
  const base = quick ? QUICK : FULL;
  const num = (key: keyof typeof NUMERIC): number | undefined => {
    const [flag, variable] = NUMERIC[key];
    const raw = flags.get(flag) ?? env[variable];
    if (raw === undefined || raw === '' || raw === true) return undefined;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0) throw new OptionsError(`${flag}: expected a number >= 0`);
    return value;
  };
  const minutes = num('minutes') ?? base.minutes;
  const jobs = Math.round(num('jobs') ?? base.jobs);
  const sessions = Math.round(num('sessions') ?? Math.max(20, Math.ceil(jobs / 50)));
  const o: SoakOptions = {
    minutes,
    jobs,
    sessions,
    kills: Math.round(num('kills') ?? base.kills),
    pauseMinS: num('pauseMinS') ?? 2,
    pauseMaxS: num('pauseMaxS') ?? 20,
    webhookRate: num('webhookRate') ?? 1,
    decideEveryMs: num('decideEveryMs') ?? 1000,
    decisionsPerTick: Math.round(num('decisionsPerTick') ?? 2),
    answerEveryMs: num('answerEveryMs') ?? 2000,
    askEvery: Math.round(num('askEvery') ?? 50),
    lateAnswerMs: Math.round(num('lateAnswerMs') ?? 75_000),
    maxConcurrent: Math.round(num('maxConcurrent') ?? 8),
    catchupMs: Math.round(num('catchupMs') ?? 15_000),
    modelDelayMs: Math.round(num('modelDelayMs') ?? (drills ? DRILL_MODEL_DELAY_MS : 20)),
    edgeMs: Math.round(num('edgeMs') ?? 5_000),
    slopeLimitMbPerMin: num('slopeLimitMbPerMin') ?? 2,
    seed: Math.round(num('seed') ?? Math.floor(Math.random() * 2 ** 31)),
    quick,
    uniformKills: flags.has('--uniform-kills') || env.SOAK_UNIFORM_KILLS === '1',
    heap: !(flags.has('--no-heap') || env.SOAK_NO_HEAP === '1'),
    heapSlopeLimitMbPerMin: num('heapSlopeLimitMbPerMin') ?? 0.5,
    keep,
    worktreeTtlMs: Math.round(num('worktreeTtlMs') ?? 60_000),
    gcIntervalMs: Math.round(num('gcIntervalMs') ?? 60_000),
    // The drill's passes are slower: one removing 75 worktrees took 32 s with two replicas and PostgreSQL on
    // 2 CPUs (30 s is the SQLite soak's measure).
    gcSlackMs: Math.round(num('gcSlackMs') ?? (store === 'postgres' ? 60_000 : 30_000)),
    store,
    replicas: Math.round(num('replicas') ?? (drills ? 2 : 1)),
    pgRestart: flags.has('--pg-restart') || env.SOAK_PG_RESTART === '1',
    leaseMs: num('leaseMs') ?? (store === 'postgres' ? DRILL_LEASE_MS : null),
    drills,
    only: parseOnly(flags.get('--only') ?? env.SOAK_ONLY),
  };
  if (o.minutes < 1) throw new OptionsError('--minutes: at least 1');
  if (o.jobs < 1) throw new OptionsError('--jobs: at least 1');
  if (o.sessions < 1 || o.jobs > o.sessions * 50)
    throw new OptionsError(
      `--sessions: ${o.jobs} jobs need at least ${Math.ceil(o.jobs / 50)} (50 per session)`,
    );
  if (o.pauseMaxS < o.pauseMinS) throw new OptionsError('--pause-max must not be below --pause-min');
  if (o.maxConcurrent < 1) throw new OptionsError('--max-concurrent: at least 1');
  if (o.askEvery < 1) throw new OptionsError('--ask-every: at least 1');
  if (o.gcIntervalMs < 60_000)
    throw new OptionsError(
      '--gc-interval-ms: at least 60000 (the daemon refuses a shorter retention.interval_ms)',
    );
  if (o.replicas < 1) throw new OptionsError('--replicas: at least 1');
  if (o.replicas > 1 && o.store !== 'postgres')
    throw new OptionsError(
      '--replicas: more than one needs --store postgres (the SQLite store is for one daemon)',
    );
  if (o.pgRestart && o.store !== 'postgres') throw new OptionsError('--pg-restart needs --store postgres');
  if (o.leaseMs !== null && o.leaseMs < 3_000)
    throw new OptionsError('--lease-ms: at least 3000 (the daemon refuses a shorter runs.lease_ms)');
  if (o.drills && (o.store !== 'postgres' || o.replicas !== 2))
    throw new OptionsError('--drills: runs on PostgreSQL with 2 replicas (leave out --store and --replicas)');
  if (!o.drills && flags.has('--only')) throw new OptionsError('--only: goes with --drills');
  return o;
}

function parseOnly(raw: string | true | undefined): readonly DrillName[] {
  if (raw === undefined || raw === true || raw === '') return DRILLS;
  const names = raw.split(',').map((n) => n.trim());
  const unknown = names.filter((n) => !DRILLS.some((d) => d === n));
  if (unknown.length)
    throw new OptionsError(`--only: unknown drill ${unknown.join(', ')} (expected ${DRILLS.join(', ')})`);
  return DRILLS.filter((d) => names.includes(d));
}
