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
  /** Measured seconds against each target (after the warm-up). */
  seconds: number;
  /** Warm-up seconds against each target (counted in the deliveries, not in the figures). */
  warmupSeconds: number;
  /** Keep-alive connections of the load process. */
  concurrency: number;
  /** Deliveries drydock accepted that are sent again, with the same X-GitHub-Delivery, afterwards. */
  redeliveries: number;
  /** drydock's runs.max_concurrent. */
  maxConcurrent: number;
  /**
   * The runs finish the moment they start, during the load, instead of being held until it is over (as agent
   * runs, minutes long, would be).
   */
  instantRuns: boolean;
  /** Time drydock's store calls, receiveGithub and submit in its process (costs a few µs per call). */
  breakdown: boolean;
  quick: boolean;
  /** Keep the temporary directory (both databases, the clone); with PostgreSQL, its database too. */
  keep: boolean;
  /** drydock's store: its SQLite file (the default), a fresh PostgreSQL database, or one after the other. */
  store: StoreChoice;
  /**
   * PostgreSQL only: for each count, that many daemons on one fresh database, the load spread over them; null:
   * one daemon per store, as without the option.
   */
  replicas: number[] | null;
  /** The PostgreSQL server's maintenance database, on which the bench creates (and drops) its own. */
  postgresUrl: string;
}

const FULL = { seconds: 15, warmupSeconds: 2 };
const QUICK = { seconds: 4, warmupSeconds: 1 };

const NUMERIC = {
  seconds: ['--seconds', 'BENCH_SECONDS'],
  warmupSeconds: ['--warmup-seconds', 'BENCH_WARMUP_SECONDS'],
  concurrency: ['--concurrency', 'BENCH_CONCURRENCY'],
  redeliveries: ['--redeliveries', 'BENCH_REDELIVERIES'],
  maxConcurrent: ['--max-concurrent', 'BENCH_MAX_CONCURRENT'],
} as const;

const SWITCHES = ['--quick', '--keep', '--help', '--no-breakdown', '--instant-runs'] as const;
const VALUES = [...STORE_FLAGS, '--replicas'] as const;
const MAX_REPLICAS = 8;

export const USAGE = `usage: npm run bench:webhooks -- [--quick] [--seconds S] [--warmup-seconds S] [--concurrency N]
                                 [--redeliveries N] [--max-concurrent N] [--instant-runs] [--no-breakdown] [--keep]
                                 [--store sqlite|postgres|both] [--postgres-url URL] [--replicas 1,2]
  defaults: --seconds ${FULL.seconds} --warmup-seconds ${FULL.warmupSeconds} --concurrency 50 --redeliveries 200 --max-concurrent 2
            --store sqlite --postgres-url ${DEFAULT_POSTGRES_URL}
  --store:  drydock's store: sqlite (its file in the data directory), postgres (a fresh database created on the
            server of --postgres-url and dropped at the end), or both (SQLite, then PostgreSQL, side by side
            against the same bare phase; about 5 minutes in all on 2 cores, most of it the inboxes draining)
  --replicas: with --store postgres only: a column per count, each that many daemons (own data directory, port
            and replica_id) on one fresh database, the connections spread round-robin over them
  --quick:  --seconds ${QUICK.seconds} --warmup-seconds ${QUICK.warmupSeconds}
  --instant-runs: the runs finish as they start, during the load (default: held until the load is over, as
                  agent runs minutes long would be)
  --no-breakdown: no timers around drydock's store calls, receiveGithub and submit (they cost a few µs a call)
  environment: BENCH_SECONDS, BENCH_WARMUP_SECONDS, BENCH_CONCURRENCY, BENCH_REDELIVERIES, BENCH_MAX_CONCURRENT,
               BENCH_QUICK=1, BENCH_KEEP=1, BENCH_NO_BREAKDOWN=1, BENCH_INSTANT_RUNS=1, BENCH_STORE,
               BENCH_POSTGRES_URL, BENCH_REPLICAS,
               BENCH_DRYDOCK_NODE_ARGS / BENCH_BARE_NODE_ARGS (extra node flags for
               that child, e.g. "--cpu-prof --cpu-prof-dir=DIR")`;

export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BenchOptions {
  const flags = readFlags(argv, SWITCHES, [
    ...SWITCHES,
    ...VALUES,
    ...Object.values(NUMERIC).map(([flag]) => flag),
  ]);

  const isOn = (v: string | true | undefined) => v === true || v === '1' || v === 'true';
  const toggle = (flag: string, name: string) => (flags.has(flag) ? isOn(flags.get(flag)) : isOn(env[name]));
  const quick = toggle('--quick', 'BENCH_QUICK');
  const base = quick ? QUICK : FULL;
  const number = (key: keyof typeof NUMERIC, fallback: number, min: number, max: number) => {
    const [flag, name] = NUMERIC[key];
    const raw = flags.get(flag) ?? env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (raw === true || !Number.isInteger(value) || value < min || value > max) {
      throw new OptionsError(`${flag} (${name}): expected an integer ${min}-${max}, got ${String(raw)}`);
    }
    return value;
  };
  const stores = readStoreOptions(flags, env);
  return {
    seconds: number('seconds', base.seconds, 1, 600),
    warmupSeconds: number('warmupSeconds', base.warmupSeconds, 0, 60),
    concurrency: number('concurrency', 50, 1, 1_000),
    redeliveries: number('redeliveries', 200, 0, 100_000),
    maxConcurrent: number('maxConcurrent', 2, 1, 1_000),
    instantRuns: toggle('--instant-runs', 'BENCH_INSTANT_RUNS'),
    breakdown: !toggle('--no-breakdown', 'BENCH_NO_BREAKDOWN'),
    quick,
    keep: toggle('--keep', 'BENCH_KEEP'),
    ...stores,
    replicas: replicaCounts(flags.get('--replicas') ?? env.BENCH_REPLICAS, stores.store),
  };
}

function replicaCounts(raw: string | true | undefined, store: StoreChoice): number[] | null {
  if (raw === undefined || raw === '') return null;
  const counts = raw === true ? [] : raw.split(',').map((s) => Number(s.trim()));
  if (!counts.length || counts.some((n) => !Number.isInteger(n) || n < 1 || n > MAX_REPLICAS)) {
    throw new OptionsError(
      `--replicas (BENCH_REPLICAS): expected integers 1-${MAX_REPLICAS}, comma-separated, got ${String(raw)}`,
    );
  }
  if (store !== 'postgres') {
    throw new OptionsError(
      `--replicas needs --store postgres (it is ${store}): replicas share one PostgreSQL database, ` +
        'the SQLite store is for one daemon only',
    );
  }
  return counts;
}
