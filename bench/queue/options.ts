// Benchmark options: command-line flags win over environment variables, which win over the defaults of the
// chosen mode (full, or --quick for a smoke run).

import { OptionsError, readFlags } from '../shared/options.js';
import {
  DEFAULT_POSTGRES_URL,
  readStoreOptions,
  STORE_FLAGS,
  type StoreOptions,
} from '../shared/store-options.js';

/**
 * `store`: drydock's store, sqlite (default), postgres (a fresh database holding a copy of the seeded file), or
 * both (SQLite, then PostgreSQL); `postgresUrl`: the server's maintenance database the bench creates its own on.
 */
export interface BenchOptions extends StoreOptions {
  /** Plans in the store (every one with its plan-phase run). */
  plans: number;
  /** Sessions the plans are spread over. */
  sessions: number;
  /** Share of the plans still pending approval, in percent; the rest is history. */
  pendingPct: number;
  /** Mean length of a plan's markdown (uniform in 0.3-1.7 × this). */
  markdownBytes: number;
  /** Measured seconds of GET /v1/plans at each concurrency (after a warm-up). */
  listSeconds: number;
  /** Measured seconds of approvals at each concurrency (after a warm-up); bounded by the pool. */
  approveSeconds: number;
  /** Measured seconds of each bare store loop (in-process, no HTTP). */
  storeSeconds: number;
  /** Keep-alive connections of the load generator, one measurement each; the first one is judged. */
  concurrency: number[];
  /** Sessions' workspace is a git repository and plans carry its commit (approve then checks HEAD). */
  git: boolean;
  /** What-if: create the partial index on pending plans' expiry before the daemon starts (not a src change). */
  expiryIndex: boolean;
  quick: boolean;
  /** Keep the temporary directory (database, workspace), and the PostgreSQL database if any. */
  keep: boolean;
}

const FULL = { plans: 100_000, sessions: 200, listSeconds: 10, approveSeconds: 5, storeSeconds: 3 };
const QUICK = { plans: 10_000, sessions: 50, listSeconds: 2, approveSeconds: 2, storeSeconds: 1 };

const NUMERIC = {
  plans: ['--plans', 'BENCH_PLANS'],
  sessions: ['--sessions', 'BENCH_SESSIONS'],
  pendingPct: ['--pending-pct', 'BENCH_PENDING_PCT'],
  markdownBytes: ['--markdown-bytes', 'BENCH_MARKDOWN_BYTES'],
  listSeconds: ['--list-seconds', 'BENCH_LIST_SECONDS'],
  approveSeconds: ['--approve-seconds', 'BENCH_APPROVE_SECONDS'],
  storeSeconds: ['--store-seconds', 'BENCH_STORE_SECONDS'],
} as const;

const SWITCHES = ['--quick', '--keep', '--help', '--no-git', '--expiry-index'] as const;

export const USAGE = `usage: npm run bench:queue -- [--quick] [--plans N] [--sessions N] [--pending-pct P]
                              [--markdown-bytes B] [--list-seconds S] [--approve-seconds S] [--store-seconds S]
                              [--concurrency 16,64] [--no-git] [--expiry-index] [--keep]
                              [--store sqlite|postgres|both] [--postgres-url URL]
  defaults: --plans ${FULL.plans} --sessions ${FULL.sessions} --pending-pct 40 --markdown-bytes 2100 --list-seconds ${FULL.listSeconds} --approve-seconds ${FULL.approveSeconds} --store-seconds ${FULL.storeSeconds} --concurrency 16,64
            --store sqlite --postgres-url ${DEFAULT_POSTGRES_URL}
  --store:  drydock's store: sqlite (its file in the data directory), postgres (a fresh database created on the
            server of --postgres-url, holding a copy of the seeded file, dropped at the end), or both (SQLite, then
            PostgreSQL, one table with a column per store)
  --quick:  --plans ${QUICK.plans} --sessions ${QUICK.sessions} --list-seconds ${QUICK.listSeconds} --approve-seconds ${QUICK.approveSeconds} --store-seconds ${QUICK.storeSeconds}
  --no-git: plans carry no workspace commit, so approve does not run \`git rev-parse HEAD\`
  --expiry-index: what-if, adds CREATE INDEX ... ON plans (status, expires_at) WHERE status = 'pending_approval'
                  to the temporary database before the daemon starts (src/ is not changed)
  environment: BENCH_PLANS, BENCH_SESSIONS, BENCH_PENDING_PCT, BENCH_MARKDOWN_BYTES, BENCH_LIST_SECONDS, BENCH_APPROVE_SECONDS,
               BENCH_STORE_SECONDS, BENCH_CONCURRENCY, BENCH_NO_GIT=1, BENCH_EXPIRY_INDEX=1, BENCH_QUICK=1, BENCH_KEEP=1,
               BENCH_STORE, BENCH_POSTGRES_URL,
               BENCH_DAEMON_NODE_ARGS (extra node flags for the daemon child, e.g. "--cpu-prof --cpu-prof-dir=DIR")`;

export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BenchOptions {
  const flags = readFlags(argv, SWITCHES, [
    ...SWITCHES,
    ...STORE_FLAGS,
    '--concurrency',
    ...Object.values(NUMERIC).map(([flag]) => flag),
  ]);

  const isOn = (v: string | true | undefined) => v === true || v === '1' || v === 'true';
  const toggle = (flag: string, name: string) => (flags.has(flag) ? isOn(flags.get(flag)) : isOn(env[name]));
  const quick = toggle('--quick', 'BENCH_QUICK');
  const base = quick ? QUICK : FULL;
  const number = (
    key: keyof typeof NUMERIC,
    fallback: number,
    min: number,
    max = Number.MAX_SAFE_INTEGER,
  ) => {
    const [flag, name] = NUMERIC[key];
    const raw = flags.get(flag) ?? env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (raw === true || !Number.isInteger(value) || value < min || value > max) {
      throw new OptionsError(`${flag} (${name}): expected an integer ${min}-${max}, got ${String(raw)}`);
    }
    return value;
  };
  const rawConcurrency = flags.get('--concurrency') ?? env.BENCH_CONCURRENCY ?? '16,64';
  if (rawConcurrency === true) throw new OptionsError('--concurrency needs a value');
  const concurrency = rawConcurrency.split(',').map((s) => Number(s.trim()));
  if (!concurrency.length || concurrency.some((c) => !Number.isInteger(c) || c < 1 || c > 1_000)) {
    throw new OptionsError(
      `--concurrency (BENCH_CONCURRENCY): expected integers 1-1000, comma-separated, got ${rawConcurrency}`,
    );
  }
  const options: BenchOptions = {
    plans: number('plans', base.plans, 1_000),
    sessions: number('sessions', base.sessions, 1),
    pendingPct: number('pendingPct', 40, 5, 95),
    markdownBytes: number('markdownBytes', 2_100, 100, 100_000),
    listSeconds: number('listSeconds', base.listSeconds, 1),
    approveSeconds: number('approveSeconds', base.approveSeconds, 1),
    storeSeconds: number('storeSeconds', base.storeSeconds, 1),
    concurrency,
    git: !toggle('--no-git', 'BENCH_NO_GIT'),
    expiryIndex: toggle('--expiry-index', 'BENCH_EXPIRY_INDEX'),
    quick,
    keep: toggle('--keep', 'BENCH_KEEP'),
    ...readStoreOptions(flags, env),
  };
  if (options.sessions > options.plans) {
    throw new OptionsError(`--sessions ${options.sessions} exceeds --plans ${options.plans}`);
  }
  return options;
}
