import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Run } from '../../src/domain/types.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { Child, type Settled, settle } from '../shared/children.js';
import { benchMain } from '../shared/options.js';
import { int, kb, mb, ms, p50p99, type Summary, summarize, table } from '../shared/stats.js';
import { ceilMinute } from './job-mix.js';
import { type BenchOptions, parseOptions, USAGE } from './options.js';
import type {
  BaselineParams,
  BaselineReady,
  BaselineReport,
  BaselineTooBig,
  DrydockParams,
  DrydockReport,
  DrydockStarted,
  FireRecord,
  SeedParams,
  SeedResult,
} from './protocol.js';

// Scheduler benchmark (figures, not a test): N active recurring jobs over M sessions in one drydock on
// SQLite, beside a baseline of one croner instance per job. See bench/scheduler/README.md for the method.
//
// Timeline (each system in its own child process, so RSS and CPU are its own):
//   1. seed.js builds the database (planJob + Store.createJob) and picks the due minute Md.
//   2. drydock-child.js opens it and starts; it idles for the idle window ending 2 s before Md, then the
//      due jobs fire during Md.
//   3. croner-child.js is started once drydock has started; its due minute is Md + 1 min (or later), so the
//      two due minutes never overlap. Its idle window overlaps drydock's due minute: CPU time is counted
//      per process, and the machine has a core for each.

const TARGETS = { rssBytes: 300e6, startMs: 3_000, p99Ms: 1_000 };

const startedAt = Date.now();
/** 1-minute load averages: at start and right after each due minute. Lateness is real time: it suffers when
 *  other processes want the same cores. */
const loads: number[] = [loadavg()[0]!];
const log = (line: string) =>
  process.stderr.write(`[bench +${((Date.now() - startedAt) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);
const iso = (t: number) => new Date(t).toISOString().slice(11, 19);

interface BaselineRun {
  child: Child | null;
  ready: BaselineReady | null;
  attempts: string[];
}

/** Largest count that fits: the full job count first, then halves, down to 1,000. */
async function startBaseline(opts: BenchOptions, mixFile: string): Promise<BaselineRun> {
  const attempts: string[] = [];
  for (let count = opts.jobs; ; count = Math.floor(count / 2)) {
    log(`croner baseline: trying ${int(count)} instances under a ${opts.baselineHeapMb} MB heap`);
    const child = new Child(
      'croner baseline',
      new URL('croner-child.js', import.meta.url),
      {
        mixFile,
        count,
        due: opts.due,
        heapCeilingMb: opts.baselineHeapMb,
        spawnedAt: Date.now(),
      } satisfies BaselineParams,
      [`--max-old-space-size=${opts.baselineHeapMb}`, '--expose-gc'],
    );
    try {
      const m = await child.next<BaselineTooBig | BaselineReady>('too-big', 'ready');
      if (m.type === 'ready') return { child, ready: m, attempts };
      attempts.push(
        `${int(count)} would need ≈ ${mb(m.projectedHeapBytes)} of heap (${kb(m.perInstanceHeapBytes)} each)`,
      );
      await child.exited;
    } catch (err) {
      attempts.push(`${int(count)} failed: ${(err as Error).message}`);
    }
    if (count <= 1_000) return { child: null, ready: null, attempts };
  }
}

interface Verification {
  ok: boolean;
  lines: string[];
}

/** Reads back what drydock did, through the Store: one run per due job and slot, nothing else. */
async function verify(file: string, seed: SeedResult, opts: BenchOptions): Promise<Verification> {
  const store = new SqliteStore({ file });
  try {
    const runs: Run[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listRuns({ limit: 1_000, cursor });
      runs.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    const due = new Set(seed.due.map((d) => d.id));
    const perJob = new Map<string, number>();
    let extra = 0;
    let notCompleted = 0;
    for (const run of runs) {
      if (run.status !== 'completed') notCompleted += 1;
      if (
        run.source !== 'schedule' ||
        run.jobId === null ||
        !due.has(run.jobId) ||
        run.slotAt !== seed.dueMinuteAt
      ) {
        extra += 1;
        continue;
      }
      perJob.set(run.jobId, (perJob.get(run.jobId) ?? 0) + 1);
    }
    const duplicates = [...perJob.values()].reduce((n, c) => n + (c - 1), 0);
    const missing = seed.due.length - perJob.size;
    let stillPending = 0;
    let notAdvanced = 0;
    for (const { id } of seed.due) {
      const job = await store.getJob(id);
      if (!job) continue;
      if (job.pendingSlotAt !== null) stillPending += 1;
      if (job.fireCount !== 1 || (job.nextNominalAt ?? 0) <= seed.dueMinuteAt) notAdvanced += 1;
    }
    const held = await store.countJobs();
    const ok =
      runs.length === seed.due.length &&
      duplicates === 0 &&
      missing === 0 &&
      extra === 0 &&
      stillPending === 0 &&
      notAdvanced === 0 &&
      held === opts.jobs;
    return {
      ok,
      lines: [
        `${int(runs.length)} runs in the store for ${int(seed.due.length)} due jobs: ${missing} missing, ` +
          `${duplicates} duplicate, ${extra} unexpected, ${notCompleted} not completed`,
        `due jobs afterwards: ${stillPending} still pending, ${notAdvanced} not advanced to their next slot; ` +
          `${int(held)} of ${int(opts.jobs)} jobs still held`,
      ],
    };
  } finally {
    await store.close();
  }
}

function verdict(pass: boolean): string {
  return pass ? 'PASS' : 'FAIL';
}

function pct(cpuMs: number, windowMs: number): string {
  return `${((100 * cpuMs) / windowMs).toFixed(cpuMs / windowMs < 0.01 ? 3 : 1)} % of a core`;
}

function report(
  opts: BenchOptions,
  seed: SeedResult,
  drydock: Settled<DrydockReport>,
  baseline: BaselineRun,
  baselineReport: Settled<BaselineReport> | null,
  verification: Verification | null,
): boolean {
  const dueAt = new Map(seed.due.map((d) => [d.id, d.dueAt]));
  const dd = drydock.ok ? drydock.value : null;
  const bl = baselineReport?.ok ? baselineReport.value : null;
  const nBaseline = bl?.count ?? baseline.ready?.count ?? 0;

  let all: Summary = summarize([]);
  let whenDue: Summary = all;
  let waited: Summary = all;
  let recorded: Summary = all;
  let executed: Summary = all;
  if (dd) {
    const due = (f: FireRecord) => dueAt.get(f[0]) ?? Number.NaN;
    all = summarize(dd.fires.map((f) => f[2] - due(f)));
    whenDue = summarize(dd.onTime);
    waited = summarize(dd.fires.filter((f) => f[3] === 0).map((f) => f[2] - due(f)));
    recorded = summarize(dd.fires.map((f) => f[1] - due(f)));
    executed = summarize(dd.fires.flatMap((f) => (f[4] === null ? [] : [f[4] - due(f)])));
  }
  const blLate = summarize(bl?.lateness ?? []);
  const na = 'n/a';
  const rssPass =
    dd !== null && dd.started.rssAfterStart <= TARGETS.rssBytes && dd.maxRss <= TARGETS.rssBytes;
  const startPass = dd !== null && dd.started.startMs <= TARGETS.startMs;
  const latePass = dd !== null && all.count === opts.due && all.p99 <= TARGETS.p99Ms;
  const idleS = opts.idleSeconds;
  const cpu = (f: { userMs: number; systemMs: number; windowMs: number }) =>
    `${ms(f.userMs + f.systemMs)} (${pct(f.userMs + f.systemMs, f.windowMs)})`;
  const dist = (s: Summary) => (s.count ? `${p50p99(s)}, max ${ms(s.max)}` : na);

  const rows: string[][] = [
    [
      '',
      'drydock (SQLite, one timer)',
      `baseline (croner per job, N=${nBaseline ? int(nBaseline) : na})`,
      'target',
    ],
    [
      'jobs held',
      dd ? `${int(dd.started.jobsHeld)} in ${int(opts.sessions)} sessions` : na,
      nBaseline
        ? `${int(nBaseline)} Cron instances${nBaseline < opts.jobs ? ' (largest that fits)' : ''}`
        : na,
      '',
    ],
    [
      'RSS after start',
      dd ? mb(dd.started.rssAfterStart) : na,
      bl ? mb(bl.rssAfterStart) : na,
      `<= 300 MB   ${verdict(rssPass)}`,
    ],
    ['peak RSS (whole run)', dd ? mb(dd.maxRss) : na, bl ? mb(bl.maxRss) : na, ''],
    [
      '  per job',
      dd ? kb(dd.started.rssAfterStart / opts.jobs) : na,
      bl ? `${kb(bl.rssAfterStart / bl.count)} (heap ${kb(bl.perInstanceHeapBytes)})` : na,
      '',
    ],
    ['JS heap after start', dd ? mb(dd.started.heapAfterStart) : na, bl ? mb(bl.heapAfterStart) : na, ''],
    [
      'start time',
      dd ? `${ms(dd.started.startMs)} (startDaemon → end of first tick)` : na,
      bl ? `${ms(bl.createMs)} (new Cron × ${int(bl.count)})` : na,
      `<= 3 s      ${verdict(startPass)}`,
    ],
    ['  until HTTP listening', dd ? ms(dd.started.daemonReadyMs) : na, '', ''],
    [
      '  from spawn',
      dd ? `${ms(dd.started.spawnToFirstTickMs)} (node boot, imports, start)` : na,
      bl ? `${ms(bl.spawnToReadyMs)} (to ready, w/o the due instances)` : na,
      '',
    ],
    [`idle CPU (${idleS} s)`, dd ? cpu(dd.idle) : na, bl ? cpu(bl.idle) : na, ''],
    [
      '  user / system',
      dd ? `${ms(dd.idle.userMs)} / ${ms(dd.idle.systemMs)}` : na,
      bl ? `${ms(bl.idle.userMs)} / ${ms(bl.idle.systemMs)}` : na,
      '',
    ],
    [
      '  wake-ups, fires',
      dd ? `${dd.idle.wakeups} timer arms, ${dd.idle.firesDuringIdle} fires` : na,
      bl ? `a ≤ 30 s timer per instance, ${bl.idle.firesDuringIdle} fires` : na,
      '',
    ],
    [
      'due fires',
      dd ? `${int(all.count)} of ${int(opts.due)}` : na,
      bl ? `${int(blLate.count)} of ${int(bl.due)}, ${bl.duplicateFires} duplicate` : na,
      '',
    ],
    ['lateness p50 / p99', p50p99(all), p50p99(blLate), `p99 <= 1 s  ${verdict(latePass)}`],
    ['lateness max', ms(all.max), ms(blLate.max), ''],
    [
      '  fired when due (onLateness)',
      dd ? `${int(whenDue.count)}: ${dist(whenDue)}` : na,
      bl ? 'all (no idle-only rule)' : na,
      '',
    ],
    [
      '  waited for a busy session',
      dd ? `${int(waited.count)}: ${dist(waited)} (ticks saw ${int(dd.ticks.pending)} wait)` : na,
      '',
      '',
    ],
    ['  run.createdAt − due', dd ? dist(recorded) : na, '', ''],
    ['  executor called − due', dd ? dist(executed) : na, '', ''],
    [
      'CPU, due minute',
      dd ? `${ms(dd.dueCpuMs)} over ${ms(dd.dueWindowMs)}` : na,
      bl ? `${ms(bl.dueCpuMs)} over ${ms(bl.dueWindowMs)}` : na,
      '',
    ],
    [
      '  per due job',
      dd
        ? `${(dd.dueCpuMs / opts.due).toFixed(2)} ms; ${int(dd.ticks.duringDue)} ticks, ${int(dd.dueLogLines)} log lines`
        : na,
      bl ? `${(bl.dueCpuMs / Math.max(1, bl.due)).toFixed(2)} ms (incl. the idle timers)` : na,
      '',
    ],
  ];

  const title =
    `scheduler benchmark: ${int(opts.jobs)} jobs, ${int(opts.sessions)} sessions, ` +
    `${int(opts.due)} due in one minute${opts.dueSpreadSeconds === 60 ? '' : ` (within its first ${opts.dueSpreadSeconds} s)`}, ` +
    `idle ${idleS} s${opts.quick ? ' (quick)' : ''}`;
  const out: string[] = ['', title, table(rows), ''];

  if (!dd) out.push(`drydock: ${(drydock as { error: Error }).error.message}`);
  if (dd) {
    out.push(
      `drydock: ${verdict(rssPass)} RSS ${mb(Math.max(dd.started.rssAfterStart, dd.maxRss))} (peak) <= 300 MB; ` +
        `${verdict(startPass)} start ${ms(dd.started.startMs)} <= 3 s; ` +
        `${verdict(latePass)} lateness p99 ${ms(all.p99)} <= 1 s (all ${int(opts.due)} due jobs, ` +
        `fire = the scheduler hands the run over; the ${int(whenDue.count)} fired when due: p99 ${ms(whenDue.p99)})`,
    );
    if (dd.warnings) out.push(`drydock logged ${dd.warnings} warnings or errors (see stderr)`);
    if (!dd.httpOk) out.push('drydock: GET /healthz did not answer 200');
  }
  if (verification)
    out.push(`verification ${verification.ok ? 'OK' : 'FAILED'}: ${verification.lines.join('; ')}`);
  if (baseline.attempts.length)
    out.push(`baseline sizing (heap ceiling ${opts.baselineHeapMb} MB): ${baseline.attempts.join('; ')}`);
  if (baselineReport && !baselineReport.ok) out.push(`baseline: ${baselineReport.error.message}`);
  if (!baseline.child) out.push('baseline: no instance count fitted');
  if (bl?.unexpectedFires)
    out.push(`baseline: ${bl.unexpectedFires} background instances fired (should be 0)`);
  const cores = availableParallelism();
  const busy = Math.max(...loads) > cores;
  out.push(
    `machine: ${cores} cores; 1-min load average ${loads.map((l) => l.toFixed(1)).join(' → ')} ` +
      '(start, after drydock, after the baseline)' +
      (busy ? ': other processes competed for the cores, so the lateness figures are pessimistic' : ''),
  );
  out.push(
    `seeding: ${ms(seed.seedMs)}, ${int(seed.distinctSchedules)} distinct schedules (expression + zone), ` +
      `${int(seed.rerolls)} candidates rolled again for firing inside the run, database ${mb(seed.fileBytes)}`,
  );
  out.push(
    'due times: the due jobs nominally fire at minute M (their cron matches M in their own zone); their',
    `jittered due time is M + frac(id) × ${opts.dueSpreadSeconds} s (written with Store.updateJobSchedule). Lateness = the time the`,
    'scheduler handed the run over (onRun) − that due time. The croner copies fire at M + whole seconds.',
  );
  process.stdout.write(`${out.join('\n')}\n`);
  return dd !== null && rssPass && startPass && latePass && (verification?.ok ?? false);
}

async function main(opts: BenchOptions): Promise<number> {
  const idleMs = opts.idleSeconds * 1000;
  const dir = mkdtempSync(join(tmpdir(), 'drydock-bench-'));
  const file = join(dir, 'drydock.db');
  const mixFile = join(dir, 'mix.json');
  const children: Child[] = [];
  try {
    log(`seeding ${int(opts.jobs)} jobs over ${int(opts.sessions)} sessions into ${file}`);
    const seedChild = new Child('seed', new URL('seed.js', import.meta.url), {
      file,
      mixFile,
      jobs: opts.jobs,
      sessions: opts.sessions,
      due: opts.due,
      // Nothing but the due set may fire before the run is over: seeding, two due minutes and margins.
      horizonAt: Date.now() + 20 * 60_000 + 3 * idleMs,
      dueLeadMs: idleMs + 15_000,
      dueSpreadMs: opts.dueSpreadSeconds * 1000,
    } satisfies SeedParams);
    children.push(seedChild);
    const seed = await seedChild.next<SeedResult>('seeded');
    await seedChild.exited;
    log(`seeded in ${ms(seed.seedMs)}; drydock's due minute starts at ${iso(seed.dueMinuteAt)} UTC`);

    const drydock = new Child(
      'drydock',
      new URL('drydock-child.js', import.meta.url),
      {
        file,
        dueMinuteAt: seed.dueMinuteAt,
        idleMs,
        due: opts.due,
        spawnedAt: Date.now(),
      } satisfies DrydockParams,
      // e.g. BENCH_DRYDOCK_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to see where drydock's time goes.
      (process.env.BENCH_DRYDOCK_NODE_ARGS ?? '').split(' ').filter(Boolean),
    );
    children.push(drydock);
    const drydockReport = settle(drydock.next<DrydockReport>('report'));
    const started = await settle(drydock.next<DrydockStarted>('started'));
    if (started.ok) {
      log(`drydock started in ${ms(started.value.startMs)}, RSS ${mb(started.value.rssAfterStart)}`);
    }

    const baseline = await startBaseline(opts, mixFile);
    let baselineReport: Promise<Settled<BaselineReport>> | null = null;
    if (baseline.child) {
      children.push(baseline.child);
      const dueMinuteAt = Math.max(seed.dueMinuteAt + 60_000, ceilMinute(Date.now() + idleMs + 10_000));
      baseline.child.send({
        type: 'schedule',
        dueMinuteAt,
        idleMs,
        dueSpreadMs: opts.dueSpreadSeconds * 1000,
      });
      baselineReport = settle(baseline.child.next<BaselineReport>('report'));
      log(
        `croner baseline holds ${int(baseline.ready!.count)} instances; its due minute starts at ${iso(dueMinuteAt)} UTC`,
      );
    }
    log(
      `waiting: idle ${opts.idleSeconds} s, then the due minutes (the run ends about a minute after the last)`,
    );

    const dd = await drydockReport;
    loads.push(loadavg()[0]!);
    log(dd.ok ? 'drydock done' : `drydock failed: ${dd.error.message}`);
    const bl = baselineReport ? await baselineReport : null;
    if (bl) loads.push(loadavg()[0]!);
    if (bl) log(bl.ok ? 'croner baseline done' : `croner baseline failed: ${bl.error.message}`);
    const verification = dd.ok ? await verify(file, seed, opts) : null;
    return report(opts, seed, dd, baseline, bl, verification) ? 0 : 1;
  } finally {
    for (const child of children) child.kill();
    if (opts.keep) log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

benchMain('bench', parseOptions, USAGE, main);
