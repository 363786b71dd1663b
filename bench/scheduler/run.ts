import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Run } from '../../src/domain/types.js';
import { createBenchDatabase, type FreshDatabase } from '../shared/bench-database.js';
import { Child, type Settled, settle } from '../shared/children.js';
import { benchMain } from '../shared/options.js';
import { int, kb, mb, ms, p50p99, type Summary, summarize, table } from '../shared/stats.js';
import { STORE_LABEL, storesOf } from '../shared/store-options.js';
import { openTarget } from '../shared/store-target.js';
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
  StoreTarget,
} from './protocol.js';

// Scheduler benchmark (figures, not a test): N active recurring jobs over M sessions in one drydock on
// SQLite (or PostgreSQL, or one after the other: --store), beside a baseline of one croner instance per job.
// See bench/scheduler/README.md for the method.
//
// Timeline (each system in its own child process, so RSS and CPU are its own):
//   1. seed.js builds the database (jobFromRequest + Store.createJob) and picks the due minute Md.
//   2. drydock-child.js opens it and starts; it idles for the idle window ending 2 s before Md, then the
//      due jobs fire during Md.
//   3. croner-child.js is started once drydock has started; its due minute is Md + 1 min (or later), so the
//      two due minutes never overlap. Its idle window overlaps drydock's due minute: CPU time is counted
//      per process, and the machine has a core for each.
//   With --store both, steps 1-2 run again on PostgreSQL once the first pass (SQLite, with the baseline) is
//   over: a fresh database, seeded the same way, a new due minute. The baseline runs in the first pass only.

const TARGETS = { rssBytes: 300e6, startMs: 3_000, p99Ms: 1_000 };

const startedAt = Date.now();
/** 1-minute load averages: at start and right after each due minute. Lateness is real time: it suffers when
 *  other processes want the same cores. */
const loads: number[] = [loadavg()[0]!];
const loadLabels: string[] = ['start'];
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
async function verify(target: StoreTarget, seed: SeedResult, opts: BenchOptions): Promise<Verification> {
  const store = await openTarget(target, false);
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

/** One drydock run on one store: its seeding, its report, its read-back. */
interface Pass {
  target: StoreTarget;
  seed: SeedResult;
  drydock: Settled<DrydockReport>;
  verification: Verification | null;
}

/** A pass's figures as the report shows them, with its verdicts. */
interface PassFigures {
  label: string;
  /** How the pass is named in the lines under the table: "drydock" alone, "drydock on SQLite" beside another. */
  name: string;
  pass: Pass;
  dd: DrydockReport | null;
  all: Summary;
  whenDue: Summary;
  waited: Summary;
  recorded: Summary;
  executed: Summary;
  rssPass: boolean;
  startPass: boolean;
  latePass: boolean;
}

function figuresOf(pass: Pass, opts: BenchOptions, alone: boolean): PassFigures {
  const label = STORE_LABEL[pass.target.kind];
  const dueAt = new Map(pass.seed.due.map((d) => [d.id, d.dueAt]));
  const dd = pass.drydock.ok ? pass.drydock.value : null;
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
  return {
    label,
    name: alone ? 'drydock' : `drydock on ${label}`,
    pass,
    dd,
    all,
    whenDue,
    waited,
    recorded,
    executed,
    rssPass: dd !== null && dd.started.rssAfterStart <= TARGETS.rssBytes && dd.maxRss <= TARGETS.rssBytes,
    startPass: dd !== null && dd.started.startMs <= TARGETS.startMs,
    latePass: dd !== null && all.count === opts.due && all.p99 <= TARGETS.p99Ms,
  };
}

function report(
  opts: BenchOptions,
  passes: readonly Pass[],
  baseline: BaselineRun,
  baselineReport: Settled<BaselineReport> | null,
): boolean {
  const figs = passes.map((pass) => figuresOf(pass, opts, passes.length === 1));
  const bl = baselineReport?.ok ? baselineReport.value : null;
  const nBaseline = bl?.count ?? baseline.ready?.count ?? 0;

  const blLate = summarize(bl?.lateness ?? []);
  const na = 'n/a';
  const idleS = opts.idleSeconds;
  const cpu = (f: { userMs: number; systemMs: number; windowMs: number }) =>
    `${ms(f.userMs + f.systemMs)} (${pct(f.userMs + f.systemMs, f.windowMs)})`;
  const dist = (s: Summary) => (s.count ? `${p50p99(s)}, max ${ms(s.max)}` : na);
  /** One cell per pass: `cell` of its report, or n/a when it has none. */
  const each = (cell: (dd: DrydockReport, f: PassFigures) => string) =>
    figs.map((f) => (f.dd ? cell(f.dd, f) : na));
  const eachFig = (cell: (f: PassFigures) => string) => figs.map(cell);
  const verdicts = (pick: (f: PassFigures) => boolean) => figs.map((f) => verdict(pick(f))).join(' / ');

  const rows: string[][] = [
    [
      '',
      ...figs.map((f) => `drydock (${f.label}, one timer)`),
      `baseline (croner per job, N=${nBaseline ? int(nBaseline) : na})`,
      'target',
    ],
    [
      'jobs held',
      ...each((dd) => `${int(dd.started.jobsHeld)} in ${int(opts.sessions)} sessions`),
      nBaseline
        ? `${int(nBaseline)} Cron instances${nBaseline < opts.jobs ? ' (largest that fits)' : ''}`
        : na,
      '',
    ],
    [
      'RSS after start',
      ...each((dd) => mb(dd.started.rssAfterStart)),
      bl ? mb(bl.rssAfterStart) : na,
      `<= 300 MB   ${verdicts((f) => f.rssPass)}`,
    ],
    ['peak RSS (whole run)', ...each((dd) => mb(dd.maxRss)), bl ? mb(bl.maxRss) : na, ''],
    [
      '  per job',
      ...each((dd) => kb(dd.started.rssAfterStart / opts.jobs)),
      bl ? `${kb(bl.rssAfterStart / bl.count)} (heap ${kb(bl.perInstanceHeapBytes)})` : na,
      '',
    ],
    [
      'JS heap after start',
      ...each((dd) => mb(dd.started.heapAfterStart)),
      bl ? mb(bl.heapAfterStart) : na,
      '',
    ],
    [
      'start time',
      ...each((dd) => `${ms(dd.started.startMs)} (startDaemon → end of first tick)`),
      bl ? `${ms(bl.createMs)} (new Cron × ${int(bl.count)})` : na,
      `<= 3 s      ${verdicts((f) => f.startPass)}`,
    ],
    ['  until HTTP listening', ...each((dd) => ms(dd.started.daemonReadyMs)), '', ''],
    [
      '  from spawn',
      ...each((dd) => `${ms(dd.started.spawnToFirstTickMs)} (node boot, imports, start)`),
      bl ? `${ms(bl.spawnToReadyMs)} (to ready, w/o the due instances)` : na,
      '',
    ],
    [`idle CPU (${idleS} s)`, ...each((dd) => cpu(dd.idle)), bl ? cpu(bl.idle) : na, ''],
    [
      '  user / system',
      ...each((dd) => `${ms(dd.idle.userMs)} / ${ms(dd.idle.systemMs)}`),
      bl ? `${ms(bl.idle.userMs)} / ${ms(bl.idle.systemMs)}` : na,
      '',
    ],
    [
      '  wake-ups, fires',
      ...each((dd) => `${dd.idle.wakeups} timer arms, ${dd.idle.firesDuringIdle} fires`),
      bl ? `a ≤ 30 s timer per instance, ${bl.idle.firesDuringIdle} fires` : na,
      '',
    ],
    [
      'due fires',
      ...each((_, f) => `${int(f.all.count)} of ${int(opts.due)}`),
      bl ? `${int(blLate.count)} of ${int(bl.due)}, ${bl.duplicateFires} duplicate` : na,
      '',
    ],
    [
      'lateness p50 / p99',
      ...eachFig((f) => p50p99(f.all)),
      p50p99(blLate),
      `p99 <= 1 s  ${verdicts((f) => f.latePass)}`,
    ],
    ['lateness max', ...eachFig((f) => ms(f.all.max)), ms(blLate.max), ''],
    [
      '  fired when due (onLateness)',
      ...each((_, f) => `${int(f.whenDue.count)}: ${dist(f.whenDue)}`),
      bl ? 'all (no idle-only rule)' : na,
      '',
    ],
    [
      '  waited for a busy session',
      ...each(
        (dd, f) => `${int(f.waited.count)}: ${dist(f.waited)} (ticks saw ${int(dd.ticks.pending)} wait)`,
      ),
      '',
      '',
    ],
    ['  run.createdAt − due', ...each((_, f) => dist(f.recorded)), '', ''],
    ['  executor called − due', ...each((_, f) => dist(f.executed)), '', ''],
    [
      'CPU, due minute',
      ...each((dd) => `${ms(dd.dueCpuMs)} over ${ms(dd.dueWindowMs)}`),
      bl ? `${ms(bl.dueCpuMs)} over ${ms(bl.dueWindowMs)}` : na,
      '',
    ],
    [
      '  per due job',
      ...each(
        (dd) =>
          `${(dd.dueCpuMs / opts.due).toFixed(2)} ms; ${int(dd.ticks.duringDue)} ticks, ${int(dd.dueLogLines)} log lines`,
      ),
      bl ? `${(bl.dueCpuMs / Math.max(1, bl.due)).toFixed(2)} ms (incl. the idle timers)` : na,
      '',
    ],
  ];

  const title =
    `scheduler benchmark: ${int(opts.jobs)} jobs, ${int(opts.sessions)} sessions, ` +
    `${int(opts.due)} due in one minute${opts.dueSpreadSeconds === 60 ? '' : ` (within its first ${opts.dueSpreadSeconds} s)`}, ` +
    `idle ${idleS} s${opts.quick ? ' (quick)' : ''}` +
    (figs.length > 1
      ? `; drydock on ${figs.map((f) => f.label).join(', then on ')}, one pass each (baseline in the first)`
      : '');
  const out: string[] = ['', title, table(rows), ''];

  for (const f of figs) {
    const { dd, name, all, whenDue } = f;
    if (!dd) out.push(`${name}: ${(f.pass.drydock as { error: Error }).error.message}`);
    if (dd) {
      out.push(
        `${name}: ${verdict(f.rssPass)} RSS ${mb(Math.max(dd.started.rssAfterStart, dd.maxRss))} (peak) <= 300 MB; ` +
          `${verdict(f.startPass)} start ${ms(dd.started.startMs)} <= 3 s; ` +
          `${verdict(f.latePass)} lateness p99 ${ms(all.p99)} <= 1 s (all ${int(opts.due)} due jobs, ` +
          `fire = the scheduler hands the run over; the ${int(whenDue.count)} fired when due: p99 ${ms(whenDue.p99)})`,
      );
      if (dd.warnings) out.push(`${name} logged ${dd.warnings} warnings or errors (see stderr)`);
      if (!dd.httpOk) out.push(`${name}: GET /healthz did not answer 200`);
    }
    const v = f.pass.verification;
    if (v) {
      const of = figs.length > 1 ? ` (${f.label})` : '';
      out.push(`verification${of} ${v.ok ? 'OK' : 'FAILED'}: ${v.lines.join('; ')}`);
    }
  }
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
      (figs.length === 1 ? '(start, after drydock, after the baseline)' : `(${loadLabels.join(', ')})`) +
      (busy ? ': other processes competed for the cores, so the lateness figures are pessimistic' : ''),
  );
  if (figs.some((f) => f.pass.target.kind === 'postgres')) {
    out.push(
      'PostgreSQL: RSS and CPU are the drydock process’s own; the server’s processes (same machine, same cores)',
      'are not counted in them. The database was seeded through the PostgreSQL store, then ANALYZEd.',
    );
  }
  for (const f of figs) {
    const { seed } = f.pass;
    out.push(
      `seeding${figs.length > 1 ? ` (${f.label})` : ''}: ${ms(seed.seedMs)}, ${int(seed.distinctSchedules)} distinct schedules (expression + zone), ` +
        `${int(seed.rerolls)} candidates rolled again for firing inside the run, database ${mb(seed.fileBytes)}`,
    );
  }
  out.push(
    'due times: the due jobs nominally fire at minute M (their cron matches M in their own zone); their',
    `jittered due time is M + frac(id) × ${opts.dueSpreadSeconds} s (written with Store.updateJobSchedule). Lateness = the time the`,
    'scheduler handed the run over (onRun) − that due time. The croner copies fire at M + whole seconds.',
  );
  process.stdout.write(`${out.join('\n')}\n`);
  return figs.every(
    (f) => f.dd !== null && f.rssPass && f.startPass && f.latePass && (f.pass.verification?.ok ?? false),
  );
}

/** Seeds one store, runs drydock on it (and the baseline beside it, when asked) and reads the store back. */
async function runPass(
  opts: BenchOptions,
  target: StoreTarget,
  dataDir: string,
  mixFile: string,
  withBaseline: boolean,
  children: Child[],
  tag: string,
): Promise<{ pass: Pass; baseline: BaselineRun | null; baselineReport: Settled<BaselineReport> | null }> {
  const idleMs = opts.idleSeconds * 1000;
  const into =
    target.kind === 'sqlite' ? target.file : `PostgreSQL database ${new URL(target.url).pathname.slice(1)}`;
  log(`seeding ${int(opts.jobs)} jobs over ${int(opts.sessions)} sessions into ${into}`);
  const seedChild = new Child('seed', new URL('seed.js', import.meta.url), {
    target,
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
      target,
      dataDir,
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

  let baseline: BaselineRun | null = null;
  let baselineReport: Promise<Settled<BaselineReport>> | null = null;
  if (withBaseline) {
    baseline = await startBaseline(opts, mixFile);
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
  }
  log(
    `waiting: idle ${opts.idleSeconds} s, then the due ` +
      (baselineReport ? 'minutes (the run ends about a minute after the last)' : 'minute'),
  );

  const dd = await drydockReport;
  loads.push(loadavg()[0]!);
  loadLabels.push(`after drydock${tag}`);
  log(dd.ok ? `drydock${tag} done` : `drydock${tag} failed: ${dd.error.message}`);
  const bl = baselineReport ? await baselineReport : null;
  if (bl) {
    loads.push(loadavg()[0]!);
    loadLabels.push('after the baseline');
    log(bl.ok ? 'croner baseline done' : `croner baseline failed: ${bl.error.message}`);
  }
  const verification = dd.ok ? await verify(target, seed, opts) : null;
  return { pass: { target, seed, drydock: dd, verification }, baseline, baselineReport: bl };
}

async function main(opts: BenchOptions): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'drydock-bench-'));
  const kinds: StoreTarget['kind'][] = storesOf(opts.store);
  const children: Child[] = [];
  const databases: FreshDatabase[] = [];
  const passes: Pass[] = [];
  let baseline: BaselineRun = { child: null, ready: null, attempts: [] };
  let baselineReport: Settled<BaselineReport> | null = null;
  try {
    for (const [n, kind] of kinds.entries()) {
      let target: StoreTarget;
      let dataDir = dir;
      if (kind === 'sqlite') {
        target = { kind, file: join(dir, 'drydock.db') };
      } else {
        const db = await createBenchDatabase(opts.postgresUrl, 'scheduler');
        databases.push(db);
        target = { kind, url: db.url };
        // Its own data directory: nothing the SQLite pass's daemon left behind is shared.
        dataDir = join(dir, 'postgres');
        mkdirSync(dataDir);
      }
      const tag = kinds.length > 1 ? ` on ${STORE_LABEL[kind]}` : '';
      const mixFile = join(dir, n === 0 ? 'mix.json' : `mix-${kind}.json`);
      const result = await runPass(opts, target, dataDir, mixFile, n === 0, children, tag);
      passes.push(result.pass);
      if (result.baseline) {
        baseline = result.baseline;
        baselineReport = result.baselineReport;
      }
      // The next pass starts on a quiet machine: every child of this one has exited.
      for (const child of children) child.kill();
      await Promise.all(children.map((c) => c.exited));
    }
    return report(opts, passes, baseline, baselineReport) ? 0 : 1;
  } finally {
    for (const child of children) child.kill();
    if (opts.keep) {
      log(`kept ${dir}`);
      for (const db of databases) log(`kept PostgreSQL database ${db.name}`);
    } else {
      rmSync(dir, { recursive: true, force: true });
      for (const db of databases) {
        await db.drop().catch((err: Error) => log(`could not drop database ${db.name}: ${err.message}`));
      }
    }
  }
}

benchMain('bench', parseOptions, USAGE, main);
