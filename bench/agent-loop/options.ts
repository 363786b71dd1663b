// Benchmark options: command-line flags win over environment variables, which win over the defaults of the
// chosen mode (full, or --quick for a smoke run).

import { OptionsError, readFlags } from '../shared/options.js';

export interface BenchOptions {
  /** Model turns per run: turns 1..N-1 call a read-only tool, turn N hands in the plan. */
  turns: number;
  /** Measured sequential runs (each paired with a bare SDK replay of its requests). */
  runs: number;
  /** Sequential runs before the measured ones (JIT, caches, SQLite pages), not counted. */
  warmup: number;
  /** Runs started at once, one per session, RunQueue maxConcurrent = this. */
  concurrent: number;
  /** Overhead target: median per turn, in ms. */
  targetMs: number;
  quick: boolean;
  /** Keep the temporary directory (databases, workspace). */
  keep: boolean;
  /** Write V8 CPU profiles of the measuring children (node --cpu-prof) into this directory. */
  profileDir: string | null;
}

const FULL = { turns: 20, runs: 50, warmup: 5, concurrent: 100 };
const QUICK = { turns: 10, runs: 8, warmup: 2, concurrent: 20 };

const NUMERIC = {
  turns: ['--turns', 'BENCH_TURNS'],
  runs: ['--runs', 'BENCH_RUNS'],
  warmup: ['--warmup', 'BENCH_WARMUP'],
  concurrent: ['--concurrent', 'BENCH_CONCURRENT'],
} as const;

export const USAGE = `usage: npm run bench:agent-loop -- [--quick] [--turns N] [--runs N] [--warmup N] [--concurrent N]
                                   [--target-ms MS] [--profile DIR] [--keep]
  defaults: --turns ${FULL.turns} --runs ${FULL.runs} --warmup ${FULL.warmup} --concurrent ${FULL.concurrent} --target-ms 5
  --quick:  --turns ${QUICK.turns} --runs ${QUICK.runs} --warmup ${QUICK.warmup} --concurrent ${QUICK.concurrent}
  --profile DIR: V8 CPU profiles of the measuring children (node --cpu-prof), for chrome://inspect or speedscope
  environment: BENCH_TURNS, BENCH_RUNS, BENCH_WARMUP, BENCH_CONCURRENT, BENCH_TARGET_MS, BENCH_PROFILE,
               BENCH_QUICK=1, BENCH_KEEP=1`;

export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BenchOptions {
  const flags = readFlags(
    argv,
    ['--quick', '--keep', '--help'],
    ['--quick', '--keep', '--target-ms', '--profile', ...Object.values(NUMERIC).map(([flag]) => flag)],
  );

  const isOn = (v: string | true | undefined) => v === true || v === '1' || v === 'true';
  const quick = flags.has('--quick') ? isOn(flags.get('--quick')) : isOn(env.BENCH_QUICK);
  const base = quick ? QUICK : FULL;
  const number = (key: keyof typeof NUMERIC, fallback: number, min: number): number => {
    const [flag, name] = NUMERIC[key];
    const raw = flags.get(flag) ?? env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (raw === true || !Number.isInteger(value) || value < min) {
      throw new OptionsError(`${flag} (${name}): expected an integer >= ${min}, got ${String(raw)}`);
    }
    return value;
  };
  const rawTarget = flags.get('--target-ms') ?? env.BENCH_TARGET_MS;
  const targetMs = rawTarget === undefined || rawTarget === '' ? 5 : Number(rawTarget);
  if (rawTarget === true || !Number.isFinite(targetMs) || targetMs <= 0) {
    throw new OptionsError(
      `--target-ms (BENCH_TARGET_MS): expected a positive number, got ${String(rawTarget)}`,
    );
  }
  const rawProfile = flags.get('--profile') ?? env.BENCH_PROFILE;
  if (rawProfile === true) throw new OptionsError('--profile needs a directory');
  return {
    // At least two turns: one tool call, then the plan.
    turns: number('turns', base.turns, 2),
    runs: number('runs', base.runs, 1),
    warmup: number('warmup', base.warmup, 0),
    concurrent: number('concurrent', base.concurrent, 1),
    targetMs,
    quick,
    keep: flags.has('--keep') ? isOn(flags.get('--keep')) : isOn(env.BENCH_KEEP),
    profileDir: rawProfile ? rawProfile : null,
  };
}
