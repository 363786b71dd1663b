import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { Child, type Settled, settle } from '../shared/children.js';
import { benchMain } from '../shared/options.js';
import { int, kb, mb, ms, perSecond, rate, summarize, table } from '../shared/stats.js';
import { ADMIN_TOKEN } from './fixtures.js';
import { type BenchOptions, parseOptions, USAGE } from './options.js';
import type {
  DaemonParams,
  DaemonStarted,
  DaemonStopped,
  DaemonUsage,
  LoadParams,
  LoadReady,
  Loop,
  PhaseKind,
  PhaseReport,
  PhaseRequest,
  SeedParams,
  SeedResult,
  StoreParams,
  StoreReport,
} from './protocol.js';

// Queue benchmark (figures, not a test): N plans in one drydock on SQLite; the first pending page of 50 and
// approvals, over HTTP from a second process, beside the bare store calls in the same run. See
// bench/queue/README.md for the method.
//
// Processes, one after the other except the last two:
//   1. seed-child.js builds the database (sessions, tokens, plans with their runs, history) and the pools.
//   2. store-child.js times the bare store calls in-process on that file (no daemon has it open).
//   3. daemon-child.js runs startDaemon() on it; load-child.js drives it over keep-alive HTTP, one phase at a
//      time as this process orders, which reads the daemon's CPU around each phase.
//   4. This process reads the store back: one execute run per approved plan, nothing else.

const TARGETS = { listP99Ms: 20, listPerSecond: 2_000 };

const startedAt = Date.now();
const log = (line: string) =>
  process.stderr.write(`[bench +${((Date.now() - startedAt) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);

function verdict(pass: boolean): string {
  return pass ? 'PASS' : 'FAIL';
}

interface Phase {
  report: PhaseReport;
  daemonCpuMs: number;
}

interface Verification {
  ok: boolean;
  lines: string[];
}

/** Reads the store back after the daemon stopped: every approval made exactly one execute run, and no more. */
async function verify(file: string, seed: SeedResult, approved: string[]): Promise<Verification> {
  const store = new SqliteStore({ file });
  try {
    const db = store.db;
    db.exec('CREATE TEMP TABLE bench_approved (id TEXT PRIMARY KEY)');
    const insert = db.prepare('INSERT INTO bench_approved (id) VALUES (?)');
    db.transaction(() => {
      for (const id of approved) insert.run(id);
    })();
    const n = (sql: string, ...args: unknown[]) =>
      (db.prepare(sql).get(...args) as { n: number | null }).n ?? 0;
    const distinct = n('SELECT COUNT(*) AS n FROM bench_approved');
    // Approved, then carried out: the no-op executor (HTTP) and store-child (in-process) record each plan's
    // execution as the execute phase does, so every one of them ends executed.
    const nowExecuted = n(
      `SELECT COUNT(*) AS n FROM plans p JOIN bench_approved a ON a.id = p.id WHERE p.status = 'executed'`,
    );
    const exactlyOne = n(
      `SELECT COUNT(*) AS n FROM (SELECT r.executes_plan_id FROM runs r JOIN bench_approved a ON a.id = r.executes_plan_id
         GROUP BY r.executes_plan_id HAVING COUNT(*) = 1)`,
    );
    const execRuns = n('SELECT COUNT(*) AS n FROM runs r JOIN bench_approved a ON a.id = r.executes_plan_id');
    const completed = n(
      `SELECT COUNT(*) AS n FROM runs r JOIN bench_approved a ON a.id = r.executes_plan_id WHERE r.status = 'completed'`,
    );
    const allExec = n(`SELECT COUNT(*) AS n FROM runs WHERE phase = 'execute'`);
    const pendingNow = n(`SELECT COUNT(*) AS n FROM plans WHERE status = 'pending_approval'`);
    const pendingSeeded = seed.statuses.pending_approval ?? 0;
    const approverDecisions = n(
      'SELECT COUNT(*) AS n FROM decisions WHERE identity = ?',
      seed.identities.approver,
    );
    const stray = allExec - seed.executeRuns - execRuns;
    const ok =
      distinct === approved.length &&
      nowExecuted === distinct &&
      exactlyOne === distinct &&
      execRuns === distinct &&
      completed === distinct &&
      stray === 0 &&
      pendingNow === pendingSeeded - distinct &&
      approverDecisions === distinct;
    return {
      ok,
      lines: [
        `${int(distinct)} distinct plans approved (HTTP and in-process); in the store: ${int(nowExecuted)} executed, ` +
          `${int(exactlyOne)} with exactly one execute run (${int(execRuns)} execute runs, ${int(completed)} completed), ` +
          `${int(stray)} stray execute runs`,
        `pending plans: ${int(pendingSeeded)} seeded − ${int(distinct)} approved = ${int(pendingSeeded - distinct)} expected, ` +
          `${int(pendingNow)} found; ${int(approverDecisions)} decisions by ${seed.identities.approver}`,
      ],
    };
  } finally {
    await store.close();
  }
}

const na = 'n/a';

/** Which source was measured: the commit, and whether the working tree differed from it. */
function sourceVersion(): string {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { stdio: ['ignore', 'pipe', 'ignore'] }).toString();
    const head = git('rev-parse', '--short', 'HEAD').trim();
    const dirty =
      git('status', '--porcelain', '--untracked-files=no', '--', 'src', 'migrations').trim() !== '';
    return `commit ${head}${dirty ? ' + uncommitted changes in src/ or migrations/' : ''}`;
  } catch {
    return 'not a git checkout';
  }
}

function loopRow(label: string, loop: Loop | null, unit: string): string[] {
  if (!loop) return [label, na, na, na, na, na, ''];
  const s = summarize(loop.durations);
  return [
    label,
    `${rate(s.count, loop.wallMs)}`.replace('/s', ` ${unit}/s`),
    ms(s.p50),
    ms(s.p99),
    ms(s.max),
    int(s.count),
    loop.errors ? `${loop.errors} errors: ${loop.firstError}` : '',
  ];
}

/** Every request of a phase: measured, outside the window, and failed on the wire. */
const sent = (r: PhaseReport) => Object.values(r.statuses).reduce((a, b) => a + b, 0);

function phaseRow(phase: Phase, unit: string): string[] {
  const r = phase.report;
  const s = summarize(r.latencies);
  const total = sent(r);
  const notes = [
    `daemon ${ms(phase.daemonCpuMs / Math.max(1, total))} CPU/${unit.replace(/s$/, '')}`,
    `load gen ${ms(r.cpuMs / Math.max(1, total))}`,
  ];
  if (r.kind === 'list') notes.push(`${kb(r.bytesMean)} a response`);
  if (r.poolExhausted) notes.push('pool used up');
  return [
    `HTTP, ${r.concurrency} keep-alive connections`,
    `${rate(s.count, r.wallMs)}`.replace('/s', ` ${unit}/s`),
    ms(s.p50),
    ms(s.p99),
    ms(s.max),
    int(s.count),
    notes.join(', '),
  ];
}

function listSection(opts: BenchOptions, st: StoreReport | null, phases: Phase[]) {
  const judged = phases[0];
  const s = judged ? summarize(judged.report.latencies) : null;
  const perS = judged && s ? perSecond(s.count, judged.report.wallMs) : Number.NaN;
  const p99Pass = s !== null && s.count > 0 && s.p99 <= TARGETS.listP99Ms;
  const ratePass = Number.isFinite(perS) && perS >= TARGETS.listPerSecond;
  const checksOk = phases.every((p) => p.report.bad === 0 && p.report.latencies.length > 0);
  const rows: string[][] = [
    ['', 'throughput', 'p50', 'p99', 'max', 'calls', ''],
    loopRow('bare Store.listPlans (in-process)', st?.list ?? null, 'calls'),
    loopRow("expirePlans + listPlans (the handler's store calls)", st?.handler ?? null, 'calls'),
  ];
  if (st?.handlerIndexed) {
    rows.push(loopRow('  same + what-if index (status, expires_at)', st.handlerIndexed, 'calls'));
  }
  for (const phase of phases) rows.push(phaseRow(phase, 'req'));
  rows.push([
    `target (at ${opts.concurrency[0]} connections)`,
    `>= ${int(TARGETS.listPerSecond)} req/s  ${verdict(ratePass)}`,
    '',
    `<= ${TARGETS.listP99Ms} ms  ${verdict(p99Pass)}`,
    '',
    '',
    '',
  ]);
  const lines = [
    'List: GET /v1/plans?status=pending_approval&limit=50 (the first pending page), viewer token',
    table(rows),
    '',
  ];
  for (const p of phases) {
    const r = p.report;
    const statuses = Object.entries(r.statuses)
      .map(([code, count]) => `${int(count)} × ${code}`)
      .join(', ');
    lines.push(
      `  ${r.concurrency} connections: ${statuses} (${int(r.warmupRequests)} outside the window); ` +
        `${int(r.checked)} answers parsed, ${int(r.bad)} wrong${r.firstBad ? ` (first: ${r.firstBad})` : ''}`,
    );
  }
  const pass = p99Pass && ratePass && checksOk;
  lines.push(
    `verdict: ${verdict(pass)} at ${opts.concurrency[0]} connections: ${s ? rate(s.count, judged!.report.wallMs) : na} ` +
      `(>= ${int(TARGETS.listPerSecond)}/s ${verdict(ratePass)}), p99 ${s ? ms(s.p99) : na} ` +
      `(<= ${TARGETS.listP99Ms} ms ${verdict(p99Pass)})${checksOk ? '' : '; some responses were wrong'}`,
  );
  return { lines, pass };
}

function approveSection(st: StoreReport | null, phases: Phase[]) {
  const rows: string[][] = [
    ['', 'throughput', 'p50', 'p99', 'max', 'approvals', ''],
    loopRow('bare Store.decidePlan, approve rule (in-process)', st?.decide ?? null, 'approvals'),
    loopRow('PlanDecisions.decide (in-process, no HTTP)', st?.service ?? null, 'approvals'),
  ];
  for (const phase of phases) rows.push(phaseRow(phase, 'approvals'));
  const lines = [
    'Approve: POST /v1/plans/:id/approve {sha256}, approver token, each a distinct pending plan, once',
    table(rows),
    '',
  ];
  let ok = (st?.decide.errors ?? 1) === 0 && (st?.service.errors ?? 1) === 0;
  for (const p of phases) {
    const r = p.report;
    const statuses = Object.entries(r.statuses)
      .map(([code, count]) => `${int(count)} × ${code}`)
      .join(', ');
    const total = sent(r);
    ok &&= r.bad === 0 && r.approved.length === total && total > 0;
    lines.push(
      `  ${r.concurrency} connections: ${int(total)} sent, ${statuses} (${int(r.warmupRequests)} outside the window); ` +
        `${int(r.bad)} answers wrong${r.firstBad ? ` (first: ${r.firstBad})` : ''}`,
    );
  }
  lines.push(
    `answers: ${verdict(ok)} every approval answered 200 with the plan approved and its execute run` +
      `${st ? `; in-process errors: ${st.decide.errors + st.service.errors}` : ''}`,
  );
  return { lines, ok };
}

async function usage(daemon: Child): Promise<DaemonUsage> {
  daemon.send({ type: 'usage' });
  return daemon.next<DaemonUsage>('usage');
}

async function main(opts: BenchOptions): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'drydock-queue-'));
  const dataDir = join(dir, 'data');
  const file = join(dataDir, 'drydock.db');
  const poolsFile = join(dir, 'pools.json');
  const children: Child[] = [];
  const loadBefore = loadavg()[0]!;
  try {
    log(
      `seeding ${int(opts.plans)} plans (${opts.pendingPct} % pending) over ${int(opts.sessions)} sessions in ${dir}`,
    );
    const seedChild = new Child('seed', new URL('seed-child.js', import.meta.url), {
      dir,
      file,
      poolsFile,
      plans: opts.plans,
      sessions: opts.sessions,
      pendingPct: opts.pendingPct,
      markdownBytes: opts.markdownBytes,
      git: opts.git,
      expiryIndex: opts.expiryIndex,
      now: Date.now(),
    } satisfies SeedParams);
    children.push(seedChild);
    const seed = await seedChild.next<SeedResult>('seeded');
    await seedChild.exited;
    log(`seeded in ${ms(seed.seedMs)}: ${mb(seed.fileBytes)}, ${int(seed.runs)} runs`);

    log(`bare store: ${opts.storeSeconds} s per loop, in-process on the same file`);
    const storeChild = new Child('store baseline', new URL('store-child.js', import.meta.url), {
      file,
      poolsFile,
      seconds: opts.storeSeconds,
      approver: seed.identities.approver,
      expiryIndex: opts.expiryIndex,
    } satisfies StoreParams);
    children.push(storeChild);
    const st: Settled<StoreReport> = await settle(storeChild.next<StoreReport>('store'));
    await storeChild.exited;
    log(st.ok ? 'bare store done' : `bare store failed: ${st.error.message}`);

    const daemonArgs = (process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
    const daemon = new Child(
      'daemon',
      new URL('daemon-child.js', import.meta.url),
      { dataDir, adminToken: ADMIN_TOKEN } satisfies DaemonParams,
      daemonArgs,
    );
    children.push(daemon);
    const started = await daemon.next<DaemonStarted>('started');
    log(`daemon listening on ${started.url} (startDaemon ${ms(started.startMs)})`);
    const load = new Child('load', new URL('load-child.js', import.meta.url), {
      url: started.url,
      poolsFile,
      viewerToken: seed.tokens.viewer,
      approverToken: seed.tokens.approver,
    } satisfies LoadParams);
    children.push(load);
    await load.next<LoadReady>('ready');

    const run = async (kind: PhaseKind, concurrency: number): Promise<Phase> => {
      const seconds = kind === 'list' ? opts.listSeconds : opts.approveSeconds;
      const warmupMs = kind === 'list' ? (opts.quick ? 500 : 1_000) : 300;
      log(`${kind} over HTTP: ${concurrency} connections, ${warmupMs} ms warm-up + ${seconds} s`);
      const before = await usage(daemon);
      load.send({
        type: 'phase',
        kind,
        concurrency,
        warmupMs,
        measureMs: seconds * 1000,
        // Each approve phase gets an equal slice of the pending plans kept for HTTP: the first one must
        // not use them all up and leave the next with nothing to approve.
        maxPlans: Math.floor(seed.pools.http / opts.concurrency.length),
      } satisfies PhaseRequest);
      const report = await load.next<PhaseReport>('phase-done');
      const after = await usage(daemon);
      return { report, daemonCpuMs: after.cpuMs - before.cpuMs };
    };
    const listPhases: Phase[] = [];
    for (const c of opts.concurrency) listPhases.push(await run('list', c));
    const approvePhases: Phase[] = [];
    for (const c of opts.concurrency) approvePhases.push(await run('approve', c));
    load.send({ type: 'close' });
    await load.exited;

    // The execute runs the approvals started go through the daemon's queue; let it finish them.
    const httpApproved = approvePhases.flatMap((p) => p.report.approved);
    const drainStart = Date.now();
    let last = await usage(daemon);
    while (last.executed < httpApproved.length && Date.now() - drainStart < 30_000) {
      await new Promise((r) => setTimeout(r, 100));
      last = await usage(daemon);
    }
    const drainMs = Date.now() - drainStart;
    daemon.send({ type: 'stop' });
    const stopped = await daemon.next<DaemonStopped>('stopped');
    await daemon.exited;
    log(`daemon stopped; its executor was handed ${int(stopped.usage.executed)} runs`);

    const approved = [...httpApproved, ...(st.ok ? st.value.approved : [])];
    const verification = await verify(file, seed, approved);

    const st0 = st.ok ? st.value : null;
    const pending = seed.statuses.pending_approval ?? 0;
    const mix = Object.entries(seed.statuses)
      .sort((a, b) => b[1] - a[1])
      .map(([s, n]) => `${s} ${int(n)}`)
      .join(', ');
    const out: string[] = [
      '',
      `queue benchmark: the plan queue of one drydock on SQLite${opts.quick ? ' (quick)' : ''}${opts.expiryIndex ? ', WHAT-IF: with the expiry index' : ''}`,
      `node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} CPUs; ` +
        `daemon and load generator each in their own process on this machine; ` +
        `load average (1 min) ${loadBefore.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after`,
      `store: ${int(opts.plans)} plans over ${int(seed.sessions)} sessions (${mix}); ${int(seed.runs)} runs, ` +
        `${int(seed.decisions)} decisions; plan markdown ${kb(seed.markdownBytes.mean)} mean, ${kb(seed.markdownBytes.max)} max; ` +
        `${mb(seed.fileBytes)} file; seeded in ${ms(seed.seedMs)}`,
      `workspace: ${seed.workspace === 'git' ? 'a git repository; plans carry its HEAD, so approve runs `git rev-parse` (checkFresh)' : 'plain directory; plans carry no commit, approve runs no git'}`,
      `source measured: ${sourceVersion()}`,
      `daemon: startDaemon() in ${ms(started.startMs)} (${started.recovered} runs recovered), no-op executor (runs complete at once), ` +
        'model client at a closed port, pino at info counting lines',
      '',
    ];
    let pass = true;
    const list = listSection(opts, st0, listPhases);
    out.push(...list.lines, '');
    pass &&= list.pass;
    const approve = approveSection(st0, approvePhases);
    out.push(...approve.lines, '');
    if (!st.ok) {
      out.push(`bare store: FAIL ${st.error.message}`);
      pass = false;
    }
    if (st0) {
      out.push(`Store.expirePlans' UPDATE, which the scheduler tick's expiry sweep runs: ${st0.expirePlan}`);
      if (st0.expirePlanIndexed) out.push(`  with the what-if index: ${st0.expirePlanIndexed}`);
      out.push(
        `  (${int(pending)} pending plans when the list was measured; first page held ${st0.pageItems} items)`,
      );
    }
    const u = stopped.usage;
    out.push(
      `daemon: ${int(u.executed)} execute runs handed to the no-op executor (${int(httpApproved.length)} HTTP approvals; ` +
        `queue drained ${ms(drainMs)} after the last), ${ms(u.cpuMs)} CPU in all, peak RSS ${mb(stopped.maxRss)}, ` +
        `${int(u.logLines)} log lines, ${u.warnings} warnings or errors`,
      `read-back: ${verdict(verification.ok)} ${verification.lines.join('\n  ')}`,
      '',
      'HTTP rows: closed loop, each connection sends its next request when its previous answer is in; measured are the',
      'requests answered inside the window (latency: request sent to answer read to the end, in the load process);',
      'throughput = those / window. Bare rows: each call timed alone in the calling process, back to back.',
      "CPU per request: the process's CPU time over the whole phase (warm-up included) / all requests of the phase.",
      `overall: ${verdict(pass && approve.ok && verification.ok)}`,
    );
    process.stdout.write(`${out.join('\n')}\n`);
    return pass && approve.ok && verification.ok ? 0 : 1;
  } finally {
    for (const child of children) child.kill();
    if (opts.keep) log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

benchMain('bench', parseOptions, USAGE, main);
