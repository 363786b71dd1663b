// Benchmark options: command-line flags win over environment variables, which win over the defaults of the
// chosen mode (full, or --quick for a smoke run).

import { OptionsError, readFlags } from '../shared/options.js';
import {
  DEFAULT_POSTGRES_URL,
  readStoreOptions,
  STORE_FLAGS,
  type StoreChoice,
} from '../shared/store-options.js';

export interface BenchOptions {
  jobs: number;
  sessions: number;
  due: number;
  idleSeconds: number;
  /** Due times spread over this many seconds from the start of the due minute (0: all on the minute). */
  dueSpreadSeconds: number;
  quick: boolean;
  /** Heap ceiling (--max-old-space-size) of the croner baseline: "fits in memory" means fits under this. */
  baselineHeapMb: number;
  /** Keep the temporary directory with the database (and the PostgreSQL database, if any). */
  keep: boolean;
  /** Which store(s) drydock runs on; with both, SQLite first, then PostgreSQL, one after the other. */
  store: StoreChoice;
  /** The PostgreSQL server's maintenance database: the bench creates its own database beside it. */
  postgresUrl: string;
}

const FULL = { jobs: 100_000, sessions: 2_000, due: 5_000, idleSeconds: 60 };
const QUICK = { jobs: 10_000, sessions: 200, due: 500, idleSeconds: 10 };
const MAX_JOBS_PER_SESSION = 50;

const NUMERIC = {
  jobs: ['--jobs', 'BENCH_JOBS'],
  sessions: ['--sessions', 'BENCH_SESSIONS'],
  due: ['--due', 'BENCH_DUE'],
  idleSeconds: ['--idle-seconds', 'BENCH_IDLE_SECONDS'],
  baselineHeapMb: ['--baseline-heap-mb', 'BENCH_BASELINE_HEAP_MB'],
  dueSpreadSeconds: ['--due-spread-seconds', 'BENCH_DUE_SPREAD_SECONDS'],
} as const;

export const USAGE = `usage: npm run bench -- [--quick] [--jobs N] [--sessions N] [--due N] [--idle-seconds S]
                        [--due-spread-seconds S] [--baseline-heap-mb MB] [--keep]
                        [--store sqlite|postgres|both] [--postgres-url URL]
  defaults: --jobs ${FULL.jobs} --sessions ${FULL.sessions} --due ${FULL.due} --idle-seconds ${FULL.idleSeconds} --due-spread-seconds 60 --baseline-heap-mb 4096
            --store sqlite --postgres-url ${DEFAULT_POSTGRES_URL} (a server's maintenance database: the bench
            creates a database of its own there and drops it afterwards)
  --quick:  --jobs ${QUICK.jobs} --sessions ${QUICK.sessions} --due ${QUICK.due} --idle-seconds ${QUICK.idleSeconds}
  environment: BENCH_JOBS, BENCH_SESSIONS, BENCH_DUE, BENCH_IDLE_SECONDS, BENCH_DUE_SPREAD_SECONDS, BENCH_BASELINE_HEAP_MB, BENCH_QUICK=1, BENCH_KEEP=1,
  BENCH_STORE, BENCH_POSTGRES_URL,
  BENCH_DRYDOCK_NODE_ARGS (extra node flags for the drydock child, e.g. "--cpu-prof --cpu-prof-dir=DIR")`;

export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BenchOptions {
  const flags = readFlags(
    argv,
    ['--quick', '--keep', '--help'],
    ['--quick', '--keep', ...STORE_FLAGS, ...Object.values(NUMERIC).map(([flag]) => flag)],
  );

  const isOn = (v: string | true | undefined) => v === true || v === '1' || v === 'true';
  const quick = flags.has('--quick') ? isOn(flags.get('--quick')) : isOn(env.BENCH_QUICK);
  const base = quick ? QUICK : FULL;
  const number = (key: keyof typeof NUMERIC, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER) => {
    const [flag, name] = NUMERIC[key];
    const raw = flags.get(flag) ?? env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (raw === true || !Number.isInteger(value) || value < min || value > max) {
      throw new OptionsError(`${flag} (${name}): expected an integer ${min}-${max}, got ${String(raw)}`);
    }
    return value;
  };
  const options: BenchOptions = {
    jobs: number('jobs', base.jobs),
    sessions: number('sessions', base.sessions),
    due: number('due', base.due),
    idleSeconds: number('idleSeconds', base.idleSeconds),
    dueSpreadSeconds: number('dueSpreadSeconds', 60, 0, 60),
    baselineHeapMb: number('baselineHeapMb', 4096),
    quick,
    keep: flags.has('--keep') ? isOn(flags.get('--keep')) : isOn(env.BENCH_KEEP),
    ...readStoreOptions(flags, env),
  };
  if (options.due > options.jobs)
    throw new OptionsError(`--due ${options.due} exceeds --jobs ${options.jobs}`);
  if (options.jobs > options.sessions * MAX_JOBS_PER_SESSION) {
    throw new OptionsError(
      `--jobs ${options.jobs} over ${options.sessions} sessions exceeds ${MAX_JOBS_PER_SESSION} jobs per session`,
    );
  }
  return options;
}
