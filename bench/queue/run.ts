import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { shownUrl } from '../../src/store/open.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { createBenchDatabase, type FreshDatabase } from '../shared/bench-database.js';
import { Child, type Settled, settle } from '../shared/children.js';
import {
  check,
  goalLines,
  type Judged,
  judgeQueue,
  type QueueFigures,
  ratio,
  ratioText,
  verdictLines,
} from '../shared/goals.js';
import { benchMain } from '../shared/options.js';
import { int, kb, mb, ms, perSecond, rate, summarize, table } from '../shared/stats.js';
import { STORE_LABEL, type StoreKind, storesOf } from '../shared/store-options.js';
import type { StoreTarget } from '../shared/store-target.js';
import { ADMIN_TOKEN } from './fixtures.js';
import { type BenchOptions, parseOptions, USAGE } from './options.js';
import { copySeed, type SeedCopy } from './postgres.js';
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
import { postgresSql, sqliteSql } from './sql.js';

// Queue benchmark (figures, not a test): N plans in one drydock on SQLite (or PostgreSQL, or both one after
// the other); the first pending page of 50 and approvals, over HTTP from a second process, beside the bare
// store calls in the same run. See bench/queue/README.md for the method.
//
// Processes, one after the other except the last two:
//   1. seed-child.js builds the database (sessions, tokens, plans with their runs, history) and the pools;
//      for PostgreSQL this process then copies that file into a fresh database (postgres.ts).
//   2. store-child.js times the bare store calls in-process on that file (no daemon has it open).
//   3. daemon-child.js runs startDaemon() on it; load-child.js drives it over keep-alive HTTP, one phase at a
//      time as this process orders, which reads the daemon's CPU around each phase.
//   4. This process reads the store back: one execute run per approved plan, nothing else.
// Steps 2 to 4 run once per store.

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
async function verify(target: StoreTarget, seed: SeedResult, approved: string[]): Promise<Verification> {
  const store = target.kind === 'sqlite' ? new SqliteStore({ file: target.file }) : null;
  const db = target.kind === 'sqlite' ? sqliteSql(store!.db) : await postgresSql(target.url);
  try {
    await db.exec('CREATE TEMP TABLE bench_approved (id TEXT PRIMARY KEY)');
    await db.insertIds('bench_approved', approved);
    const n = (sql: string, ...args: unknown[]) => db.count(sql, ...args);
    const distinct = await n('SELECT COUNT(*) AS n FROM bench_approved');
    // Approved, then carried out: the no-op executor (HTTP) and store-child (in-process) record each plan's
    // execution as the execute phase does, so every one of them ends executed.
    const nowExecuted = await n(
      `SELECT COUNT(*) AS n FROM plans p JOIN bench_approved a ON a.id = p.id WHERE p.status = 'executed'`,
    );
    const exactlyOne = await n(
      `SELECT COUNT(*) AS n FROM (SELECT r.executes_plan_id FROM runs r JOIN bench_approved a ON a.id = r.executes_plan_id
         GROUP BY r.executes_plan_id HAVING COUNT(*) = 1) AS once`,
    );
    const execRuns = await n(
      'SELECT COUNT(*) AS n FROM runs r JOIN bench_approved a ON a.id = r.executes_plan_id',
    );
    const completed = await n(
      `SELECT COUNT(*) AS n FROM runs r JOIN bench_approved a ON a.id = r.executes_plan_id WHERE r.status = 'completed'`,
    );
    const allExec = await n(`SELECT COUNT(*) AS n FROM runs WHERE phase = 'execute'`);
    const pendingNow = await n(`SELECT COUNT(*) AS n FROM plans WHERE status = 'pending_approval'`);
    const pendingSeeded = seed.statuses.pending_approval ?? 0;
    const approverDecisions = await n(
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
    await db.close();
    await store?.close();
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

/** A row of the list or approve table: its cells, and the figures the ratios and goals are made from. */
interface Row {
  /** Label, throughput, p50, p99, max, count. */
  cells: string[];
  /** What the row notes (CPU per request, errors); '' when nothing. */
  notes: string;
  perSecond: number;
  p99: number;
  /** HTTP rows: the throughput and daemon CPU against the in-process call; '' otherwise. */
  vsInProcess: string;
  /** The HTTP row at the first concurrency: the one the goals judge. */
  judged: boolean;
}

function loopRow(label: string, loop: Loop | null, unit: string): Row {
  if (!loop) {
    const cells = [label, na, na, na, na, na];
    return { cells, notes: '', perSecond: Number.NaN, p99: Number.NaN, vsInProcess: '', judged: false };
  }
  const s = summarize(loop.durations);
  return {
    cells: [
      label,
      `${rate(s.count, loop.wallMs)}`.replace('/s', ` ${unit}/s`),
      ms(s.p50),
      ms(s.p99),
      ms(s.max),
      int(s.count),
    ],
    notes: loop.errors ? `${loop.errors} errors: ${loop.firstError}` : '',
    perSecond: perSecond(s.count, loop.wallMs),
    p99: s.count ? s.p99 : Number.NaN,
    vsInProcess: '',
    judged: false,
  };
}

/** Every request of a phase: measured, outside the window, and failed on the wire. */
const sent = (r: PhaseReport) => Object.values(r.statuses).reduce((a, b) => a + b, 0);

/** The daemon's CPU per request of a phase (warm-up included), ms. */
const daemonCpuPer = (phase: Phase) => phase.daemonCpuMs / Math.max(1, sent(phase.report));

/** The in-process loop's CPU per call, ms. */
const loopCpuPer = (loop: Loop) => loop.cpuMs / Math.max(1, loop.durations.length);

/** An HTTP row against the in-process call: its throughput over the call's, its daemon CPU minus the call's. */
function versus(phase: Phase, row: Row, loop: Loop | null, baseline: Row): string {
  if (!loop) return na;
  const extra = daemonCpuPer(phase) - loopCpuPer(loop);
  return `${ratioText(ratio(row.perSecond, baseline.perSecond), '×')}, ${extra >= 0 ? '+' : ''}${ms(extra)} CPU`;
}

function phaseRow(phase: Phase, unit: string, judged: boolean): Row {
  const r = phase.report;
  const s = summarize(r.latencies);
  const total = sent(r);
  const notes = [
    `daemon ${ms(phase.daemonCpuMs / Math.max(1, total))} CPU/${unit.replace(/s$/, '')}`,
    `load gen ${ms(r.cpuMs / Math.max(1, total))}`,
  ];
  if (r.kind === 'list') notes.push(`${kb(r.bytesMean)} a response`);
  if (r.poolExhausted) notes.push('pool used up');
  return {
    cells: [
      `HTTP, ${r.concurrency} keep-alive connections`,
      `${rate(s.count, r.wallMs)}`.replace('/s', ` ${unit}/s`),
      ms(s.p50),
      ms(s.p99),
      ms(s.max),
      int(s.count),
    ],
    notes: notes.join(', '),
    perSecond: perSecond(s.count, r.wallMs),
    p99: s.count ? s.p99 : Number.NaN,
    vsInProcess: '',
    judged,
  };
}

/** The HTTP rows of a table, each beside the in-process row it is compared with. */
function httpRows(phases: Phase[], unit: string, loop: Loop | null, baseline: Row): Row[] {
  return phases.map((phase, i) => {
    const row = phaseRow(phase, unit, i === 0);
    return { ...row, vsInProcess: versus(phase, row, loop, baseline) };
  });
}

/** A list or approve table of one store: its rows, the answers' notes, whether every answer was right. */
interface Section {
  kind: 'list' | 'approve';
  title: string;
  /** The name of the count column. */
  unit: string;
  rows: Row[];
  /** The HTTP phases, in the order of their rows. */
  phases: Phase[];
  notes: string[];
  ok: boolean;
}

const LIST_TITLE =
  'List: GET /v1/plans?status=pending_approval&limit=50 (the first pending page), viewer token';
const APPROVE_TITLE =
  'Approve: POST /v1/plans/:id/approve {sha256}, approver token, each a distinct pending plan, once';

function statusNotes(r: PhaseReport): string {
  return Object.entries(r.statuses)
    .map(([code, count]) => `${int(count)} × ${code}`)
    .join(', ');
}

/** `whatIf`: the what-if index loop ran (no --expiry-index), so its row is there, n/a if the loops failed. */
function listSection(st: StoreReport | null, phases: Phase[], whatIf: boolean): Section {
  const bare = loopRow('bare Store.listPlans (in-process)', st?.list ?? null, 'calls');
  const rows: Row[] = [
    bare,
    loopRow("expirePlans + listPlans (the handler's store calls)", st?.handler ?? null, 'calls'),
  ];
  if (whatIf) {
    rows.push(loopRow('  same + what-if index (status, expires_at)', st?.handlerIndexed ?? null, 'calls'));
  }
  rows.push(...httpRows(phases, 'req', st?.list ?? null, bare));
  const ok = phases.every((p) => p.report.bad === 0 && p.report.latencies.length > 0);
  const notes = phases.map(
    ({ report: r }) =>
      `  ${r.concurrency} connections: ${statusNotes(r)} (${int(r.warmupRequests)} outside the window); ` +
      `${int(r.checked)} answers parsed, ${int(r.bad)} wrong${r.firstBad ? ` (first: ${r.firstBad})` : ''}`,
  );
  return { kind: 'list', title: LIST_TITLE, unit: 'calls', rows, phases, notes, ok };
}

function approveSection(st: StoreReport | null, phases: Phase[]): Section {
  const service = loopRow('PlanDecisions.decide (in-process, no HTTP)', st?.service ?? null, 'approvals');
  const rows: Row[] = [
    loopRow('bare Store.decidePlan, approve rule (in-process)', st?.decide ?? null, 'approvals'),
    service,
    ...httpRows(phases, 'approvals', st?.service ?? null, service),
  ];
  const notes: string[] = [];
  let ok = (st?.decide.errors ?? 1) === 0 && (st?.service.errors ?? 1) === 0;
  for (const { report: r } of phases) {
    const total = sent(r);
    ok &&= r.bad === 0 && r.approved.length === total && total > 0;
    notes.push(
      `  ${r.concurrency} connections: ${int(total)} sent, ${statusNotes(r)} (${int(r.warmupRequests)} outside the window); ` +
        `${int(r.bad)} answers wrong${r.firstBad ? ` (first: ${r.firstBad})` : ''}`,
    );
  }
  notes.push(
    `answers: ${verdict(ok)} every approval answered 200 with the plan approved and its execute run` +
      `${st ? `; in-process errors: ${st.decide.errors + st.service.errors}` : ''}`,
  );
  return { kind: 'approve', title: APPROVE_TITLE, unit: 'approvals', rows, phases, notes, ok };
}

/** One store's figures for the goals: the HTTP phases at the first concurrency, PlanDecisions.decide's CPU. */
function figuresOf(st: StoreReport | null, list: Section, approve: Section): QueueFigures {
  const judgedRow = (s: Section) => s.rows.find((r) => r.judged);
  return {
    listPerSecond: judgedRow(list)?.perSecond ?? Number.NaN,
    listP99Ms: judgedRow(list)?.p99 ?? Number.NaN,
    approvePerSecond: judgedRow(approve)?.perSecond ?? Number.NaN,
    approveP99Ms: judgedRow(approve)?.p99 ?? Number.NaN,
    approveDaemonCpuMs: approve.phases[0] ? daemonCpuPer(approve.phases[0]) : Number.NaN,
    approveInProcessCpuMs: st ? loopCpuPer(st.service) : Number.NaN,
  };
}

/** Whether a pass's answers, in-process loops and read-back were right, as rows for the verdict. */
function passChecks(pass: Pass, list: Section, approve: Section): Judged[] {
  const subject = STORE_LABEL[pass.kind];
  const right = (ok: boolean) => (ok ? 'all right' : 'some wrong or missing');
  return [
    check({ row: 'list', subject, figure: 'answers' }, list.ok, right(list.ok), 'all right'),
    check({ row: 'approve', subject, figure: 'answers' }, approve.ok, right(approve.ok), 'all right'),
    check(
      { row: 'in-process loops', subject, figure: 'ran' },
      pass.st.ok,
      pass.st.ok ? 'without error' : pass.st.error.message,
      'without error',
    ),
    check(
      { row: 'read-back', subject, figure: 'execute runs' },
      pass.verification.ok,
      right(pass.verification.ok),
      'one per approval, none stray',
    ),
  ];
}

/** Every pass's sections, its figures judged against the goals, and the checks. */
function judgeAll(opts: BenchOptions, passes: Pass[]) {
  const st = (p: Pass) => (p.st.ok ? p.st.value : null);
  const lists = passes.map((p) => listSection(st(p), p.listPhases, !opts.expiryIndex));
  const approves = passes.map((p) => approveSection(st(p), p.approvePhases));
  const figures: Partial<Record<StoreKind, QueueFigures>> = {};
  for (const [i, p] of passes.entries()) figures[p.kind] = figuresOf(st(p), lists[i]!, approves[i]!);
  const judged = judgeQueue(figures);
  const checks = passes.flatMap((p, i) => passChecks(p, lists[i]!, approves[i]!));
  return { lists, approves, judged, verdict: verdictLines([...judged, ...checks]) };
}

async function usage(daemon: Child): Promise<DaemonUsage> {
  daemon.send({ type: 'usage' });
  return daemon.next<DaemonUsage>('usage');
}

/** drydock on one store: the bare store loops, the daemon under load, and the read-back. */
interface Pass {
  kind: StoreKind;
  st: Settled<StoreReport>;
  started: DaemonStarted;
  listPhases: Phase[];
  approvePhases: Phase[];
  httpApproved: string[];
  /** From the last approval answered to the daemon's executor having been handed every execute run. */
  drainMs: number;
  stopped: DaemonStopped;
  verification: Verification;
}

/** Where a pass's store is and what the orchestrator needs to drive it. */
interface PassSetup {
  target: StoreTarget;
  dataDir: string;
  poolsFile: string;
  seed: SeedResult;
  /** Log prefix: '' with one store, 'on SQLite: ' with both. */
  tag: string;
}

async function runPass(opts: BenchOptions, setup: PassSetup, children: Child[]): Promise<Pass> {
  const { target, seed, tag } = setup;
  const where = target.kind === 'sqlite' ? 'on the same file' : 'on the same database';
  log(`${tag}bare store: ${opts.storeSeconds} s per loop, in-process ${where}`);
  const storeChild = new Child('store baseline', new URL('store-child.js', import.meta.url), {
    target,
    poolsFile: setup.poolsFile,
    seconds: opts.storeSeconds,
    approver: seed.identities.approver,
    expiryIndex: opts.expiryIndex,
  } satisfies StoreParams);
  children.push(storeChild);
  const st: Settled<StoreReport> = await settle(storeChild.next<StoreReport>('store'));
  await storeChild.exited;
  log(st.ok ? `${tag}bare store done` : `${tag}bare store failed: ${st.error.message}`);

  const daemonArgs = (process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const daemon = new Child(
    'daemon',
    new URL('daemon-child.js', import.meta.url),
    {
      dataDir: setup.dataDir,
      databaseUrl: target.kind === 'postgres' ? target.url : null,
      adminToken: ADMIN_TOKEN,
    } satisfies DaemonParams,
    daemonArgs,
  );
  children.push(daemon);
  const started = await daemon.next<DaemonStarted>('started');
  log(`${tag}daemon listening on ${started.url} (startDaemon ${ms(started.startMs)})`);
  const load = new Child('load', new URL('load-child.js', import.meta.url), {
    url: started.url,
    poolsFile: setup.poolsFile,
    viewerToken: seed.tokens.viewer,
    approverToken: seed.tokens.approver,
  } satisfies LoadParams);
  children.push(load);
  await load.next<LoadReady>('ready');

  const run = async (kind: PhaseKind, concurrency: number): Promise<Phase> => {
    const seconds = kind === 'list' ? opts.listSeconds : opts.approveSeconds;
    const warmupMs = kind === 'list' ? (opts.quick ? 500 : 1_000) : 300;
    log(`${tag}${kind} over HTTP: ${concurrency} connections, ${warmupMs} ms warm-up + ${seconds} s`);
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
  log(`${tag}daemon stopped; its executor was handed ${int(stopped.usage.executed)} runs`);

  const approved = [...httpApproved, ...(st.ok ? st.value.approved : [])];
  const verification = await verify(target, seed, approved);
  return {
    kind: target.kind,
    st,
    started,
    listPhases,
    approvePhases,
    httpApproved,
    drainMs,
    stopped,
    verification,
  };
}

/** The PostgreSQL database of a run: its name and how the seeded file was copied into it. */
interface PostgresCopy {
  name: string;
  copy: SeedCopy;
}

/** What every report starts with: the machine, the store as seeded, the source measured. */
function header(
  opts: BenchOptions,
  seed: SeedResult,
  loadBefore: number,
  passes: Pass[],
  postgres: PostgresCopy | null,
): string[] {
  const mix = Object.entries(seed.statuses)
    .sort((a, b) => b[1] - a[1])
    .map(([s, n]) => `${s} ${int(n)}`)
    .join(', ');
  const on = passes.map((p) => STORE_LABEL[p.kind]).join(' and on ');
  const lines = [
    '',
    `queue benchmark: the plan queue of one drydock on ${on}${passes.length > 1 ? ', one after the other' : ''}${opts.quick ? ' (quick)' : ''}${opts.expiryIndex ? ', WHAT-IF: with the expiry index' : ''}`,
    `node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} CPUs; ` +
      `daemon and load generator each in their own process on this machine; ` +
      `load average (1 min) ${loadBefore.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after`,
    `store: ${int(opts.plans)} plans over ${int(seed.sessions)} sessions (${mix}); ${int(seed.runs)} runs, ` +
      `${int(seed.decisions)} decisions; plan markdown ${kb(seed.markdownBytes.mean)} mean, ${kb(seed.markdownBytes.max)} max; ` +
      `${mb(seed.fileBytes)} file; seeded in ${ms(seed.seedMs)}`,
  ];
  if (postgres) {
    lines.push(
      `PostgreSQL: database ${postgres.name}, the seeded file copied into it with migrate-store's code ` +
        `(${int(postgres.copy.rows)} rows in ${ms(postgres.copy.copyMs)}), then ANALYZE; ${mb(postgres.copy.databaseBytes)} (pg_database_size)`,
    );
  }
  lines.push(
    `workspace: ${seed.workspace === 'git' ? 'a git repository; plans carry its HEAD, so approve runs `git rev-parse` (checkFresh)' : 'plain directory; plans carry no commit, approve runs no git'}`,
    `source measured: ${sourceVersion()}`,
  );
  return lines;
}

const FOOTER = [
  'HTTP rows: closed loop, each connection sends its next request when its previous answer is in; measured are the',
  'requests answered inside the window (latency: request sent to answer read to the end, in the load process);',
  'throughput = those / window. Bare rows: each call timed alone in the calling process, back to back.',
  "CPU per request: the process's CPU time over the whole phase (warm-up included) / all requests of the phase.",
  "HTTP / in-process: the HTTP row's throughput over the in-process call's (bare Store.listPlans for the list,",
  "PlanDecisions.decide for approve), and the daemon's CPU per request minus that call's CPU per call in its loop.",
  'Goals: judged at the first concurrency; "n/a" when a figure they compare was not measured in this run.',
];

/** A store's table: its rows beside the in-process calls, and under the judged row its goals. */
function sectionLines(section: Section, judged: readonly Judged[]): string[] {
  const rows: string[][] = [['', 'throughput', 'p50', 'p99', 'max', section.unit, 'HTTP / in-process', '']];
  for (const row of section.rows) {
    rows.push([...row.cells, row.vsInProcess, row.notes]);
    if (!row.judged) continue;
    for (const [i, goal] of goalLines(judged, section.kind).entries())
      rows.push([i === 0 ? '  goals' : '', '', '', '', '', '', '', goal]);
  }
  return [section.title, table(rows), '', ...section.notes];
}

/** What a pass did beside the tables: the expiry UPDATE's plan, the daemon's totals, the read-back. */
function passLines(seed: SeedResult, p: Pass, on: string): string[] {
  const out: string[] = [];
  const s0 = p.st.ok ? p.st.value : null;
  if (!p.st.ok) out.push(`${on}bare store: FAIL ${p.st.error.message}`);
  if (s0) {
    out.push(
      `${on}Store.expirePlans' UPDATE, which the scheduler tick's expiry sweep runs: ${s0.expirePlan}`,
    );
    if (s0.expirePlanIndexed) out.push(`  with the what-if index: ${s0.expirePlanIndexed}`);
    out.push(
      `  (${int(seed.statuses.pending_approval ?? 0)} pending plans when the list was measured; first page held ${s0.pageItems} items)`,
    );
  }
  const u = p.stopped.usage;
  out.push(
    `${on}daemon: ${int(u.executed)} execute runs handed to the no-op executor (${int(p.httpApproved.length)} HTTP approvals; ` +
      `queue drained ${ms(p.drainMs)} after the last), ${ms(u.cpuMs)} CPU in all, peak RSS ${mb(p.stopped.maxRss)}, ` +
      `${int(u.logLines)} log lines, ${u.warnings} warnings or errors`,
    `${on}read-back: ${verdict(p.verification.ok)} ${p.verification.lines.join('\n  ')}`,
  );
  return out;
}

/** drydock on one store: its tables, then the verdict. */
function reportOne(opts: BenchOptions, seed: SeedResult, pass: Pass, head: string[]): boolean {
  const { lists, approves, judged, verdict: v } = judgeAll(opts, [pass]);
  const out: string[] = [
    ...head,
    `daemon: startDaemon() in ${ms(pass.started.startMs)} (${pass.started.recovered} runs recovered), no-op executor (runs complete at once), ` +
      'model client at a closed port, pino at info counting lines',
    '',
    ...sectionLines(lists[0]!, judged),
    '',
    ...sectionLines(approves[0]!, judged),
    '',
    ...passLines(seed, pass, ''),
    '',
    ...FOOTER,
    ...v.lines,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  return v.pass;
}

/** A row of every store as one cell each: throughput, p50, p99, max (count). */
const mergedCell = (row: Row) =>
  row.cells[1] === na
    ? na
    : `${row.cells[1]}, p50 ${row.cells[2]}, p99 ${row.cells[3]}, max ${row.cells[4]} (${row.cells[5]})`;

/** PostgreSQL's row over SQLite's: throughput as a share, p99 as a multiple. */
const postgresOverSqlite = ([sqlite, postgres]: Row[]) =>
  `throughput ${ratioText(ratio(postgres!.perSecond, sqlite!.perSecond), '%')}, ` +
  `p99 ${ratioText(ratio(postgres!.p99, sqlite!.p99), '×')}`;

/** Each store's goals in its column, a goal a row. */
function goalRows(columns: string[][]): string[][] {
  const height = Math.max(...columns.map((c) => c.length));
  return Array.from({ length: height }, (_, i) => [
    i === 0 ? '  goals' : '',
    ...columns.map((c) => c[i] ?? ''),
    '',
  ]);
}

/** One kind of table (list or approve) of every store, a column each, with PostgreSQL / SQLite and the goals. */
function mergedLines(sections: Section[], labels: string[], judged: readonly Judged[]): string[] {
  const rows: string[][] = [['', ...labels.map((l) => `drydock on ${l}`), 'PostgreSQL / SQLite']];
  for (const [i, first] of sections[0]!.rows.entries()) {
    const each = sections.map((s) => s.rows[i]!);
    rows.push([first.cells[0]!, ...each.map(mergedCell), postgresOverSqlite(each)]);
    if (each.some((r) => r.notes)) rows.push(['', ...each.map((r) => r.notes), '']);
    if (each.some((r) => r.vsInProcess))
      rows.push(['  HTTP / in-process', ...each.map((r) => r.vsInProcess), '']);
    if (first.judged) rows.push(...goalRows(labels.map((l) => goalLines(judged, sections[0]!.kind, l))));
  }
  const notes = sections.flatMap((s, i) => [`on ${labels[i]}:`, ...s.notes]);
  return [sections[0]!.title, table(rows), '', ...notes];
}

/** drydock on SQLite and on PostgreSQL: the rows of reportOne's tables, a column per store, then the verdict. */
function reportBoth(opts: BenchOptions, seed: SeedResult, passes: Pass[], head: string[]): boolean {
  const { lists, approves, judged, verdict: v } = judgeAll(opts, passes);
  const labels = passes.map((p) => STORE_LABEL[p.kind]);
  const out: string[] = [
    ...head,
    ...passes.map(
      (p, i) =>
        `daemon on ${labels[i]}: startDaemon() in ${ms(p.started.startMs)} (${p.started.recovered} runs recovered), ` +
        'no-op executor (runs complete at once), model client at a closed port, pino at info counting lines',
    ),
    '',
    ...mergedLines(lists, labels, judged),
    '',
    ...mergedLines(approves, labels, judged),
    '',
    ...passes.flatMap((p, i) => passLines(seed, p, `on ${labels[i]}: `)),
    '',
    ...FOOTER,
    'The stores were measured one after the other, each with its own daemon, on copies of the same seeded store.',
    ...v.lines,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  return v.pass;
}

async function main(opts: BenchOptions): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'drydock-queue-'));
  const dataDir = join(dir, 'data');
  const file = join(dataDir, 'drydock.db');
  const poolsFile = join(dir, 'pools.json');
  const kinds = storesOf(opts.store);
  const children: Child[] = [];
  let database: FreshDatabase | null = null;
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

    // Copied before any pass: the SQLite pass changes the file (approvals, execute runs).
    let postgres: PostgresCopy | null = null;
    if (kinds.includes('postgres')) {
      database = await createBenchDatabase(opts.postgresUrl, 'queue');
      log(`PostgreSQL: database ${database.name} on ${shownUrl(opts.postgresUrl)}; copying the seeded file`);
      const copy = await copySeed(file, database.url, opts.expiryIndex);
      log(`copied ${int(copy.rows)} rows in ${ms(copy.copyMs)}: ${mb(copy.databaseBytes)}`);
      postgres = { name: database.name, copy };
    }

    const passes: Pass[] = [];
    for (const kind of kinds) {
      const setup: PassSetup =
        kind === 'sqlite'
          ? { target: { kind, file }, dataDir, poolsFile, seed, tag: '' }
          : {
              target: { kind, url: database!.url },
              // Its own data directory: nothing of the SQLite pass's daemon is shared.
              dataDir: join(dir, 'data-postgres'),
              poolsFile,
              seed,
              tag: '',
            };
      if (kinds.length > 1) setup.tag = `on ${STORE_LABEL[kind]}: `;
      passes.push(await runPass(opts, setup, children));
    }
    const head = header(opts, seed, loadBefore, passes, postgres);
    const pass =
      passes.length === 1 ? reportOne(opts, seed, passes[0]!, head) : reportBoth(opts, seed, passes, head);
    return pass ? 0 : 1;
  } finally {
    for (const child of children) child.kill();
    if (opts.keep) {
      log(`kept ${dir}${database ? ` and the PostgreSQL database ${database.name}` : ''}`);
    } else {
      rmSync(dir, { recursive: true, force: true });
      await database
        ?.drop()
        .catch((err: Error) => log(`could not drop database ${database!.name}: ${err.message}`));
    }
  }
}

benchMain('bench', parseOptions, USAGE, main);
