import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { shownUrl } from '../../src/store/open.js';
import { Child } from '../shared/children.js';
import { check, type Judged, judgeWebhooks, ratio, ratioText, verdictLines } from '../shared/goals.js';
import { benchMain } from '../shared/options.js';
import { int, kb, mb, ms, perSecond, rate, type Summary, summarize, table, wrap } from '../shared/stats.js';
import { STORE_LABEL, type StoreKind, storesOf } from '../shared/store-options.js';
import { type BenchOptions, parseOptions, USAGE } from './options.js';
import { BODY_BYTES, payloadTemplate } from './payload.js';
import { type BenchDatabase, backendCpuBetween, createBenchDatabase } from './postgres.js';
import type {
  BareParams,
  DrydockParams,
  LoadReady,
  MethodTime,
  PhaseReport,
  PhaseRequest,
  RedeliverReport,
  RedeliverRequest,
  Started,
  Stopped,
  Target,
  Usage,
} from './protocol.js';

// Webhook benchmark (figures, not a test): signed 8 KB pull_request.opened deliveries, each with its own
// X-GitHub-Delivery and pull request number, at 50 keep-alive connections from a second process, against
// drydock's POST /webhooks/github (verify, deduplicate, record in the inbox and answer; the inbox then
// matches the triggers, creates the run and queues it) and, in the same run, against a bare hono +
// better-sqlite3 handler that only verifies the signature and inserts the body. See bench/webhooks/README.md
// for the method.
//
// Processes: bare-child.js and drydock-child.js (the two servers), load-child.js (the second process). The
// targets are loaded one after the other, bare first; this process reads each server's CPU around its phase,
// then reads both databases back after the servers stopped.

const HOURLY_CAP = 1_000_000;

const startedAt = Date.now();
const log = (line: string) =>
  process.stderr.write(`[bench +${((Date.now() - startedAt) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);

const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
const na = 'n/a';

interface Phase {
  report: PhaseReport;
  /** The server's usage; of replicas, their sum (combineUsage). */
  before: Usage;
  after: Usage;
  /** CPU of each server (each replica) over the phase, and when it started. */
  serverCpuMs: number[];
  serverCpuAtStart: number[];
  /** The servers' base URLs, in the order of serverCpuMs. */
  urls: string[];
  started: Started;
  /** Busy CPU of the whole machine over the phase (all processes), when /proc/stat is there. */
  machineBusyMs: number | null;
  machineWallMs: number;
  loadAverage: number;
  /**
   * drydock on PostgreSQL: CPU of its database's server processes over the phase (a lower bound, see
   * backendCpuBetween), and their CPU by pid when it started; null otherwise.
   */
  databaseCpuMs: number | null;
  databaseCpuAtStart: Map<number, number> | null;
}

/** Busy CPU time of the whole machine so far (Linux /proc/stat, in USER_HZ = 100 ticks a second). */
function machineBusyMs(): number | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
    return (user + nice + system + irq + softirq + steal) * 10;
  } catch {
    return null;
  }
}

interface Check {
  ok: boolean;
  lines: string[];
}

/**
 * drydock's database as the read-back queries it: the SQLite file (read-only) or the PostgreSQL database.
 * Counts and times come back as numbers from SQLite and as text for PostgreSQL's bigint: callers use Number().
 */
interface Reader {
  all<T>(sql: string, values?: readonly unknown[]): Promise<T[]>;
  close(): Promise<void>;
  /** SQL for the first element of deliveries.run_ids (a JSON array) of the delivery aliased `d`. */
  firstRunId: string;
  /** SQL for the order of arrival of deliveries. */
  arrival: string;
}

function sqliteReader(file: string): Reader {
  const db = new Database(file, { readonly: true });
  return {
    all: async <T>(sql: string, values: readonly unknown[] = []) => db.prepare(sql).all(...values) as T[],
    close: async () => {
      db.close();
    },
    firstRunId: `json_extract(d.run_ids, '$[0]')`,
    arrival: 'rowid',
  };
}

async function postgresReader(url: string): Promise<Reader> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    all: async <T>(sql: string, values: readonly unknown[] = []) =>
      (await client.query(sql, values as unknown[])).rows as T[],
    close: () => client.end(),
    firstRunId: 'd.run_ids->>0',
    arrival: 'seq',
  };
}

/** drydock's database after it stopped: one delivery per request, one run per delivery, nothing doubled. */
async function verifyDrydock(
  db: Reader,
  sent: number,
  answered: number,
  redelivery: RedeliverReport | null,
): Promise<Check & { inbox: InboxFigures }> {
  try {
    const n = async (sql: string) => Number((await db.all<{ n: number | string | null }>(sql))[0]?.n ?? 0);
    const counted = async <K extends string>(sql: string) =>
      (await db.all<Record<K, string> & { n: number | string }>(sql)).map((r) => ({ ...r, n: Number(r.n) }));
    const deliveries = await n(`SELECT COUNT(*) AS n FROM deliveries WHERE source = 'github'`);
    const outcomes = await counted<'outcome'>(
      `SELECT outcome, COUNT(*) AS n FROM deliveries GROUP BY outcome ORDER BY outcome`,
    );
    const accepted = await n(
      `SELECT COUNT(*) AS n FROM deliveries WHERE source = 'github' AND outcome = 'accepted'`,
    );
    const distinctKeys = await n(`SELECT COUNT(DISTINCT key) AS n FROM deliveries WHERE source = 'github'`);
    const runs = await n('SELECT COUNT(*) AS n FROM runs');
    const deliveryRuns = await n('SELECT COUNT(*) AS n FROM runs WHERE delivery_id IS NOT NULL');
    const doubled = await n(
      `SELECT COUNT(*) AS n FROM (SELECT delivery_id FROM runs WHERE delivery_id IS NOT NULL
         GROUP BY delivery_id HAVING COUNT(*) > 1) AS doubled`,
    );
    const notOne = await n(
      `SELECT COUNT(*) AS n FROM deliveries d
         LEFT JOIN (SELECT delivery_id, COUNT(*) AS c, MIN(id) AS run_id FROM runs GROUP BY delivery_id) r
           ON r.delivery_id = d.id
        WHERE d.outcome = 'accepted' AND (COALESCE(r.c, 0) != 1 OR ${db.firstRunId} != r.run_id
          OR json_array_length(d.run_ids) != 1)`,
    );
    const orphans = await n(
      `SELECT COUNT(*) AS n FROM runs r LEFT JOIN deliveries d ON d.id = r.delivery_id WHERE d.id IS NULL`,
    );
    const subjects = await n('SELECT COUNT(DISTINCT subject) AS n FROM runs');
    const sessions = await n(`SELECT COUNT(*) AS n FROM sessions WHERE scope_key LIKE 'trigger:%'`);
    const fires = await n(`SELECT COUNT(*) AS n FROM trigger_fires WHERE outcome = 'accepted'`);
    const statuses = await counted<'status'>(
      'SELECT status, COUNT(*) AS n FROM runs GROUP BY status ORDER BY status',
    );
    const planned = statuses.find((s) => s.status === 'planned')?.n ?? 0;
    // Each run a duplicate answer named is the run of that delivery in the database.
    let wrongRun = 0;
    if (redelivery) {
      const named = new Map(
        (
          await db.all<{ delivery_id: string; id: string }>(
            `SELECT delivery_id, id FROM runs WHERE delivery_id IS NOT NULL`,
          )
        ).map((r) => [r.delivery_id, r.id]),
      );
      wrongRun = Object.entries(redelivery.runs).filter(([dlv, run]) => named.get(dlv) !== run).length;
    }
    const redeliveredOk = redelivery
      ? redelivery.sameDelivery === redelivery.sent && redelivery.bad === 0 && wrongRun === 0
      : true;
    const times = (
      await db.all<{ r: number | string; p: number | string | null }>(
        `SELECT received_at AS r, processed_at AS p FROM deliveries WHERE source = 'github' ORDER BY ${db.arrival}`,
      )
    ).map((t) => ({ r: Number(t.r), p: t.p === null ? null : Number(t.p) }));
    const unprocessed = times.filter((t) => t.p === null).length;
    const waits = times.filter((t) => t.p !== null).map((t) => t.p! - t.r);
    const inbox: InboxFigures = {
      wait: summarize(waits),
      unprocessed,
      firstReceived: times.reduce((m, t) => Math.min(m, t.r), Number.POSITIVE_INFINITY),
      lastProcessed: times.reduce((m, t) => Math.max(m, t.p ?? 0), 0),
    };
    const ok =
      deliveries === sent &&
      accepted === sent &&
      answered === sent &&
      distinctKeys === deliveries &&
      runs === accepted &&
      deliveryRuns === runs &&
      doubled === 0 &&
      notOne === 0 &&
      orphans === 0 &&
      subjects === runs &&
      sessions === runs &&
      fires === runs &&
      planned === runs &&
      unprocessed === 0 &&
      redeliveredOk;
    const list = (rows: { n: number }[], key: (r: never) => string) =>
      rows.map((r) => `${key(r as never)} ${int(r.n)}`).join(', ') || 'none';
    const lines = [
      `${int(sent)} deliveries sent to drydock (warm-up included), ${int(answered)} answered 202 queued; ` +
        `in its database: ${int(deliveries)} deliveries (${int(distinctKeys)} distinct X-GitHub-Delivery; ` +
        `${list(outcomes, (r: { outcome: string }) => r.outcome)})`,
      `${int(runs)} runs (${list(statuses, (r: { status: string }) => r.status)}), ${int(subjects)} pull requests, ` +
        `${int(sessions)} trigger sessions, ${int(fires)} accepted trigger fires; ` +
        `deliveries with a run count other than one: ${int(notOne)}; delivery ids with more than one run: ${int(doubled)}; ` +
        `runs without a delivery: ${int(orphans)}`,
    ];
    if (redelivery) {
      const statuses = Object.entries(redelivery.statuses)
        .map(([code, c]) => `${int(c)} × ${code}`)
        .join(', ');
      const s = summarize(redelivery.latencies);
      lines.push(
        `${int(redelivery.sent)} redeliveries (same X-GitHub-Delivery and body, ${redelivery.concurrency} at a time): ${statuses || 'no answers'}; ` +
          `${int(redelivery.sameDelivery)} answered duplicate, accepted, naming the first delivery and one run, ${int(redelivery.bad)} not` +
          `${redelivery.firstBad ? ` (${redelivery.firstBad})` : ''}; runs named that are not the delivery's run in the database: ${int(wrongRun)}; ` +
          `p50 ${ms(s.p50)}, p99 ${ms(s.p99)}; ` +
          `no deliveries or runs added: ${verdict(deliveries === sent && runs === accepted)}`,
      );
    }
    return { ok, lines, inbox };
  } finally {
    await db.close();
  }
}

/** From drydock's database: how long deliveries waited in the inbox (processed_at - received_at). */
interface InboxFigures {
  wait: Summary;
  unprocessed: number;
  /** Epoch ms. */
  firstReceived: number;
  lastProcessed: number;
}

function verifyBare(file: string, sent: number): Check {
  const db = new Database(file, { readonly: true });
  try {
    const { rows, keys } = db
      .prepare('SELECT COUNT(*) AS rows, COUNT(DISTINCT delivery) AS keys FROM deliveries')
      .get() as { rows: number; keys: number };
    return {
      ok: rows === sent && keys === rows,
      lines: [
        `bare: ${int(sent)} deliveries sent, ${int(rows)} rows inserted (${int(keys)} distinct delivery ids)`,
      ],
    };
  } finally {
    db.close();
  }
}

async function usage1(child: Child): Promise<Usage> {
  child.send({ type: 'usage' });
  return child.next<Usage>('usage');
}

/** A server's usage; of replicas, their sum (see combineUsage). */
async function usage(servers: Child | Child[]): Promise<Usage> {
  if (!Array.isArray(servers)) return usage1(servers);
  return combineUsage(await Promise.all(servers.map(usage1)));
}

/**
 * Replicas as one server: CPU, RSS, runs executed, log lines and the store timers added up; the inbox depth is
 * the database's (each replica counts the same rows: the largest count, read last); event-loop delays the
 * worst.
 */
function combineUsage(list: Usage[]): Usage {
  if (list.length === 1) return list[0]!;
  const sum = (pick: (u: Usage) => number) => list.reduce((n, u) => n + pick(u), 0);
  const addTimes = (a: MethodTime | undefined, b: MethodTime): MethodTime => ({
    calls: (a?.calls ?? 0) + b.calls,
    wallMs: (a?.wallMs ?? 0) + b.wallMs,
    cpuMs: (a?.cpuMs ?? 0) + b.cpuMs,
    maxWallMs: Math.max(a?.maxWallMs ?? 0, b.maxWallMs),
  });
  const store: Record<string, MethodTime> = {};
  for (const u of list)
    for (const [name, t] of Object.entries(u.store)) store[name] = addTimes(store[name], t);
  return {
    type: 'usage',
    cpuMs: sum((u) => u.cpuMs),
    rss: sum((u) => u.rss),
    executed: sum((u) => u.executed),
    queued: Math.max(...list.map((u) => u.queued)),
    logLines: sum((u) => u.logLines),
    warnings: sum((u) => u.warnings),
    store,
    handler: list.slice(1).reduce((a, u) => addTimes(a, u.handler), list[0]!.handler),
    submit: list.slice(1).reduce((a, u) => addTimes(a, u.submit), list[0]!.submit),
    loopDelayP99Ms: Math.max(...list.map((u) => u.loopDelayP99Ms)),
    loopDelayMaxMs: Math.max(...list.map((u) => u.loopDelayMaxMs)),
  };
}

async function runPhase(
  load: Child,
  server: Child | Child[],
  /** Each server's start report: with replicas, one per replica (the first one's is the phase's). */
  started: Started[],
  target: Target,
  opts: BenchOptions,
  /** For the log: the target, and which store for drydock on more than one. */
  name: string = target,
  /** drydock on PostgreSQL: its database, whose server processes' CPU is read around the phase. */
  database: BenchDatabase | null = null,
): Promise<Phase> {
  log(`${name}: ${opts.concurrency} connections, ${opts.warmupSeconds} s warm-up + ${opts.seconds} s`);
  const servers = Array.isArray(server) ? server : [server];
  const db0 = database ? await database.backendCpu() : null;
  const beforeEach = await Promise.all(servers.map(usage1));
  const busy0 = machineBusyMs();
  const wall0 = Date.now();
  load.send({
    type: 'phase',
    target,
    urls: started.map((s) => s.url),
    concurrency: opts.concurrency,
    warmupMs: opts.warmupSeconds * 1000,
    measureMs: opts.seconds * 1000,
  } satisfies PhaseRequest);
  const report = await load.next<PhaseReport>('phase-done');
  const busy1 = machineBusyMs();
  const machineWallMs = Date.now() - wall0;
  const loadAverage = loadavg()[0]!;
  const afterEach = await Promise.all(servers.map(usage1));
  const db1 = database ? await database.backendCpu() : null;
  const s = summarize(report.latencies);
  log(
    `${name}: ${rate(s.count, report.wallMs)}, p99 ${ms(s.p99)}, ${report.errors} errors, ${report.bad} bad`,
  );
  const machine = busy0 === null || busy1 === null ? null : busy1 - busy0;
  return {
    report,
    before: combineUsage(beforeEach),
    after: combineUsage(afterEach),
    serverCpuMs: afterEach.map((u, i) => u.cpuMs - beforeEach[i]!.cpuMs),
    serverCpuAtStart: beforeEach.map((u) => u.cpuMs),
    urls: started.map((s) => s.url),
    started: started[0]!,
    machineBusyMs: machine,
    machineWallMs,
    loadAverage,
    databaseCpuMs: db0 && db1 ? backendCpuBetween(db0, db1) : null,
    databaseCpuAtStart: db0,
  };
}

function statusLine(r: PhaseReport): string {
  return Object.entries(r.statuses)
    .map(([code, c]) => `${int(c)} × ${code}`)
    .join(', ');
}

/** Seconds of the measured window, as req/s: first, slowest, last. */
function trend(r: PhaseReport): string {
  const full = r.perSecond.slice(0, Math.max(1, Math.floor(r.wallMs / 1000)));
  if (!full.length) return na;
  return `${int(full[0]!)} / ${int(Math.min(...full))} / ${int(full[full.length - 1]!)}`;
}

/** Which part of the daemon calls each store method during the phase. */
const CALLER: Record<string, string> = {
  recordWebhookDeliveries: 'answer: dedupe + record (group commit)',
  queuedWebhookDeliveries: 'inbox: read the queued',
  listTriggers: 'inbox: match',
  recordTriggerFire: 'inbox: match (filtered)',
  fireTrigger: 'inbox: session + run + fire',
  updateWebhookDelivery: 'inbox: settle delivery',
  transitionRun: 'queue: claim, finish run',
  getRun: 'queue: reread run',
  appendEvent: 'queue: run_finished event',
};

/** Where drydock's time went during its phase: the instrumented store methods, submit, and the rest. */
function breakdown(phase: Phase, deliveries: number, store: StoreKind): string[] {
  const { before, after } = phase;
  const delta = (a: MethodTime, b: MethodTime | undefined): MethodTime => ({
    calls: a.calls - (b?.calls ?? 0),
    wallMs: a.wallMs - (b?.wallMs ?? 0),
    cpuMs: a.cpuMs - (b?.cpuMs ?? 0),
    maxWallMs: a.maxWallMs,
  });
  const cpu = after.cpuMs - before.cpuMs;
  const per = Math.max(1, deliveries);
  const share = (c: number) => `${((100 * c) / Math.max(1e-9, cpu)).toFixed(1)} %`;
  const rows: string[][] = [
    ['', 'caller', 'calls', 'CPU / delivery', 'CPU / call', 'wall / call', 'wall max', 'of daemon CPU'],
  ];
  const row = (label: string, caller: string, t: MethodTime) => [
    label,
    caller,
    int(t.calls),
    ms(t.cpuMs / per),
    ms(t.cpuMs / Math.max(1, t.calls)),
    ms(t.wallMs / Math.max(1, t.calls)),
    ms(t.maxWallMs),
    share(t.cpuMs),
  ];
  const storeRows = Object.entries(after.store)
    .map(([name, t]) => [name, delta(t, before.store[name])] as const)
    .filter(([, t]) => t.calls > 0)
    .sort((a, b) => b[1].cpuMs - a[1].cpuMs);
  let storeCpu = 0;
  let other: MethodTime = { calls: 0, wallMs: 0, cpuMs: 0, maxWallMs: 0 };
  for (const [name, t] of storeRows) {
    storeCpu += t.cpuMs;
    const caller = CALLER[name];
    if (caller) rows.push(row(`Store.${name}`, caller, t));
    else
      other = {
        calls: other.calls + t.calls,
        wallMs: other.wallMs + t.wallMs,
        cpuMs: other.cpuMs + t.cpuMs,
        maxWallMs: Math.max(other.maxWallMs, t.maxWallMs),
      };
  }
  if (other.calls) rows.push(row('other Store methods', 'scheduler ticks', other));
  rows.push(['all store calls', '', '', ms(storeCpu / per), '', '', '', share(storeCpu)]);
  const submit = delta(after.submit, before.submit);
  rows.push(row('RunQueue.submit', 'webhook: enqueue (excl. store)', submit));
  const rest = cpu - storeCpu - submit.cpuMs;
  rows.push([
    'everything else',
    'HTTP, hono, verify, parse, pino, GC',
    '',
    ms(rest / per),
    '',
    '',
    '',
    share(rest),
  ]);
  rows.push(['daemon process CPU', '', '', ms(cpu / per), '', '', '', '100 %']);
  const handler = delta(after.handler, before.handler);
  return [
    `Where drydock's CPU went during its phase (warm-up included, ${int(deliveries)} deliveries; the inbox's work after the`,
    'phase is not in it; timers wrapped around the instance methods in the bench child; CPU = process.cpuUsage across',
    'the call, wall = performance.now):',
    ...(store === 'postgres'
      ? [
          "(PostgreSQL: the store's methods return promises; wall runs until the promise settles, with the time waiting for",
          "the server and for the pool; CPU is the synchronous part of the call only: the driver's work on the answers runs",
          'in later callbacks and counts under everything else.)',
        ]
      : []),
    table(rows),
    `TriggerService.receiveGithub, wall time per delivery (awaits included): mean ${ms(handler.wallMs / Math.max(1, handler.calls))}, ` +
      `max ${ms(handler.maxWallMs)}`,
  ];
}

/** drydock on one store (with --replicas: that many daemons on it): its phase, what its inbox and queue did after it, and the read-back. */
interface DrydockRun extends PassSpec {
  phase: Phase;
  inbox: InboxDrain;
  drained: { executed: number; waitedMs: number };
  stopped: Stopped;
  check: Check & { inbox: InboxFigures };
}

/**
 * With drydock on both stores: a column, before the goal, of PostgreSQL's figures over SQLite's (throughput as a
 * share, p99 and CPU per request as multiples).
 */
function addPostgresOverSqlite(
  rows: string[][],
  figures: readonly { run: DrydockRun; perSecond: number; p99: number }[],
): void {
  const sqlite = figures.find((f) => f.run.store === 'sqlite');
  const postgres = figures.find((f) => f.run.store === 'postgres');
  if (!sqlite || !postgres) return;
  const cpu = (f: { run: DrydockRun }) =>
    (f.run.phase.after.cpuMs - f.run.phase.before.cpuMs) / Math.max(1, f.run.phase.report.sent);
  const cells: Record<string, string> = {
    '': 'PostgreSQL / SQLite',
    throughput: ratioText(ratio(postgres.perSecond, sqlite.perSecond), '%'),
    'latency p50 / p99': `p99 ${ratioText(ratio(postgres.p99, sqlite.p99), '×')}`,
    'server CPU per request': ratioText(ratio(cpu(postgres), cpu(sqlite)), '×'),
  };
  for (const row of rows) row.splice(row.length - 1, 0, cells[row[0]!] ?? '');
}

/** Whether each column's answers and read-back were right, and the bare handler's: rows for the verdict. */
function webhookChecks(
  bare: Phase,
  bareCheck: Check,
  columns: readonly { subject: string; phase: Phase; check: Check }[],
): Judged[] {
  const answers = (subject: string, r: PhaseReport) => {
    const ok = r.errors === 0 && r.bad === 0;
    const problem = ok ? 'all right' : `${r.errors} errors, ${r.bad} wrong: ${r.firstBad ?? r.firstError}`;
    return check({ row: 'answers', subject, figure: 'errors and wrong answers' }, ok, problem, 'none');
  };
  const readBack = (subject: string, c: Check) =>
    check(
      { row: 'read-back', subject, figure: 'deliveries and runs' },
      c.ok,
      c.ok ? 'all right' : 'missing, doubled or stray',
      'one run per delivery, none doubled',
    );
  return [
    answers('bare', bare.report),
    readBack('bare', bareCheck),
    ...columns.flatMap((c) => [answers(c.subject, c.phase.report), readBack(c.subject, c.check)]),
  ];
}

function report(
  opts: BenchOptions,
  ready: LoadReady,
  bare: Phase,
  bareCheck: Check,
  runs: DrydockRun[],
): boolean {
  // On SQLite alone the output is the one the bench always printed; on PostgreSQL, or both, each drydock
  // column and verdict names its store.
  const single = runs.length === 1 && runs[0]!.store === 'sqlite';
  const named = (run: DrydockRun) => passLabel(run);
  const header = (run: DrydockRun) =>
    single ? 'drydock: POST /webhooks/github' : `drydock on ${named(run)}: POST /webhooks/github`;
  const b = summarize(bare.report.latencies);
  const bRate = perSecond(b.count, bare.report.wallMs);
  const bP99 = b.count ? b.p99 : Number.NaN;
  const figures = runs.map((run) => {
    const d = summarize(run.phase.report.latencies);
    const perS = perSecond(d.count, run.phase.report.wallMs);
    const p99 = d.count ? d.p99 : Number.NaN;
    return { run, d, perSecond: perS, p99, ratio: ratio(perS, bRate), p99Ratio: ratio(p99, bP99) };
  });
  type Figures = (typeof figures)[number];
  const judged = judgeWebhooks(
    { perSecond: bRate, p99Ms: bP99 },
    figures.map((f) => ({ subject: named(f.run), store: f.run.store, perSecond: f.perSecond, p99Ms: f.p99 })),
  );
  // Labels with replicas hold a comma ("PostgreSQL, 2 replicas").
  const sep = runs.some((run) => run.replicas !== null) ? '; ' : ', ';
  /** A row's goal and its verdict for each column: `>= 50 % of bare's: SQLite PASS, PostgreSQL n/a`. */
  const goal = (row: string, what: string) => {
    const mine = judged.filter((j) => j.row === row);
    return `${mine[0]!.goal} ${what}: ${mine.map((j) => `${j.subject} ${j.verdict}`).join(sep)}`;
  };
  const checks = webhookChecks(
    bare,
    bareCheck,
    figures.map((f) => ({ ...f.run, subject: named(f.run) })),
  );
  const dupVerdicts = checks
    .filter((c) => c.row === 'read-back' && c.subject !== 'bare')
    .map((c) => (single ? c.verdict : `${c.subject} ${c.verdict}`))
    .join(sep);

  const cpuPer = (p: Phase) => ms((p.after.cpuMs - p.before.cpuMs) / Math.max(1, p.report.sent));
  const busy = (cpu: number) =>
    `${((100 * cpu) / ((opts.warmupSeconds + opts.seconds) * 1000)).toFixed(0)} % of a core`;
  const loadPer = (p: Phase) =>
    `${ms(p.report.cpuMs / Math.max(1, p.report.sent))} (${busy(p.report.cpuMs)})`;
  const serverCpu = (p: Phase) => `${cpuPer(p)} (${busy(p.after.cpuMs - p.before.cpuMs)})`;
  const others = (p: Phase) => {
    if (p.machineBusyMs === null) return `load average ${p.loadAverage.toFixed(1)}`;
    const mine = p.after.cpuMs - p.before.cpuMs + p.report.cpuMs + (p.databaseCpuMs ?? 0);
    const cores = Math.max(0, p.machineBusyMs - mine) / p.machineWallMs;
    return `${cores.toFixed(1)} of ${availableParallelism()} cores busy (load average ${p.loadAverage.toFixed(1)})`;
  };
  /** Each replica's share: the answers its connections got, its CPU over the phase. */
  const perReplica = (p: Phase) =>
    p.serverCpuMs.length
      ? p.serverCpuMs
          .map((cpu, i) => {
            const origin = new URL(p.urls[i]!).origin;
            return `${int(p.report.byUrl[origin] ?? 0)} / ${busy(cpu)}`;
          })
          .join('; ')
      : na;
  const lat = (s: Summary) => (s.count ? `${ms(s.p50)} / ${ms(s.p99)}` : na);
  const each = (cell: (f: Figures) => string) => figures.map(cell);
  const blank = runs.map(() => '');

  const rows: string[][] = [
    [
      '',
      'bare: hono, verify, INSERT body',
      ...runs.map(header),
      ...(single ? ['drydock / bare'] : runs.map((run) => `${named(run)} / bare`)),
      'goal',
    ],
    [
      'throughput',
      rate(b.count, bare.report.wallMs).replace('/s', ' req/s'),
      ...each((f) => rate(f.d.count, f.run.phase.report.wallMs).replace('/s', ' req/s')),
      ...each((f) => ratioText(f.ratio, '%')),
      goal('throughput', "of bare's"),
    ],
    [
      'latency p50 / p99',
      lat(b),
      ...each((f) => lat(f.d)),
      ...each((f) => ratioText(f.p99Ratio, '×')),
      goal('p99', "bare's p99"),
    ],
    ['latency max', ms(b.max), ...each((f) => ms(f.d.max)), ...blank, ''],
    [
      'req/s by second: first / slowest / last',
      trend(bare.report),
      ...each((f) => trend(f.run.phase.report)),
      ...blank,
      '',
    ],
    [
      'requests measured (+ warm-up)',
      `${int(b.count)} (+ ${int(bare.report.warmupRequests)})`,
      ...each((f) => `${int(f.d.count)} (+ ${int(f.run.phase.report.warmupRequests)})`),
      ...blank,
      '',
    ],
    [
      'answers',
      `${statusLine(bare.report)}; ${bare.report.errors} errors`,
      ...each((f) => `${statusLine(f.run.phase.report)}; ${f.run.phase.report.errors} errors`),
      ...blank,
      '',
    ],
    ['server CPU per request', serverCpu(bare), ...each((f) => serverCpu(f.run.phase)), ...blank, ''],
    ...(runs.some((run) => run.replicas !== null)
      ? [
          [
            'per replica: answers (warm-up incl.) / CPU',
            '',
            ...each((f) => perReplica(f.run.phase)),
            ...blank,
            '',
          ],
        ]
      : []),
    ...(runs.some((run) => run.store === 'postgres')
      ? [
          [
            'PostgreSQL server processes CPU per request',
            '',
            ...each((f) =>
              f.run.phase.databaseCpuMs === null
                ? ''
                : `${ms(f.run.phase.databaseCpuMs / Math.max(1, f.run.phase.report.sent))} (${busy(f.run.phase.databaseCpuMs)}; at least)`,
            ),
            ...blank,
            '',
          ],
        ]
      : []),
    ['load process CPU per request', loadPer(bare), ...each((f) => loadPer(f.run.phase)), ...blank, ''],
    ['other processes on the machine', others(bare), ...each((f) => others(f.run.phase)), ...blank, ''],
    [
      'server event-loop delay p99 / max',
      `${ms(bare.after.loopDelayP99Ms)} / ${ms(bare.after.loopDelayMaxMs)}`,
      ...each((f) => `${ms(f.run.phase.after.loopDelayP99Ms)} / ${ms(f.run.phase.after.loopDelayMaxMs)}`),
      ...blank,
      '',
    ],
    [
      'verify (in-process, median)',
      `${(bare.started.micro.verifyUs).toFixed(1)} µs`,
      ...each(
        (f) =>
          `${f.run.phase.started.micro.verifyUs.toFixed(1)} µs (+ JSON.parse ${f.run.phase.started.micro.parseUs.toFixed(1)} µs)`,
      ),
      ...blank,
      '',
    ],
    [
      'server RSS after phase',
      mb(bare.after.rss),
      ...each(
        (f) =>
          `${mb(f.run.phase.after.rss)} (peak ${mb(f.run.stopped.maxRss)}; live heap at the end ${f.run.stopped.liveHeap === null ? na : mb(f.run.stopped.liveHeap)})`,
      ),
      ...blank,
      '',
    ],
    [
      'duplicate runs',
      '',
      ...each((f) => (f.run.check.ok ? '0 (read back, incl. redeliveries)' : 'see read-back')),
      ...blank,
      `none: ${dupVerdicts}`,
    ],
  ];
  addPostgresOverSqlite(rows, figures);
  const inboxRows: string[][] = [
    ['drydock inbox (the work behind the answers)', ...(single ? [''] : runs.map(named))],
    [
      'left queued when the load stopped',
      ...runs.map(
        ({ inbox }) =>
          `${int(inbox.queuedAtEnd)}; all processed ${inbox.drainMs === null ? 'NOT within 120 s' : `${ms(inbox.drainMs)} later`}`,
      ),
    ],
    [
      'answer to run queued (processed_at - received_at)',
      ...runs.map(
        ({ check: { inbox: w } }) =>
          `p50 ${ms(w.wait.p50)}, p99 ${ms(w.wait.p99)}, max ${ms(w.wait.max)} (${int(w.wait.count)} deliveries)`,
      ),
    ],
    [
      'deliveries answered and processed, per second',
      ...runs.map(({ check: { inbox: w }, phase }) => {
        const sustained = perSecond(phase.report.sent, w.lastProcessed - w.firstReceived);
        return `${int(sustained)}/s (${int(phase.report.sent)} from the first answer to the last run queued)`;
      }),
    ],
    [
      'server CPU per delivery, answered and processed',
      ...runs.map(
        ({ inbox, phase }) => `${ms(inbox.cpuMs / Math.max(1, phase.report.sent))} (phase and drain)`,
      ),
    ],
    ...(runs.some((run) => run.replicas !== null)
      ? [
          [
            'per replica: CPU, phase and drain',
            ...runs.map(({ inbox }) => inbox.serverCpuMs.map((c) => ms(c)).join('; ')),
          ],
        ]
      : []),
    ...(runs.some((run) => run.store === 'postgres')
      ? [
          [
            'PostgreSQL server processes CPU per delivery, answered and processed',
            ...runs.map(({ inbox, phase }) =>
              inbox.databaseCpuMs === null
                ? ''
                : `${ms(inbox.databaseCpuMs / Math.max(1, phase.report.sent))} (phase and drain; at least)`,
            ),
          ],
        ]
      : []),
  ];

  const title =
    `webhook benchmark: signed ${kb(ready.bodyBytes)} pull_request.opened deliveries, distinct delivery ids and PRs, ` +
    `${opts.concurrency} keep-alive connections from a second process, ${opts.warmupSeconds} s warm-up + ` +
    `${opts.seconds} s per target${opts.quick ? ' (quick)' : ''}`;
  const queueNote = (run: DrydockRun) =>
    run.drained.executed === run.phase.report.sent
      ? `all ${int(run.drained.executed)} runs were executed, the last ${ms(run.drained.waitedMs)} after the release`
      : `only ${int(run.drained.executed)} of ${int(run.phase.report.sent)} runs were executed within 120 s`;
  const perStore = (text: (run: DrydockRun) => string) =>
    single ? text(runs[0]!) : runs.map((run) => `on ${named(run)} ${text(run)}`).join('; ');
  const logNote = (run: DrydockRun) =>
    `${int(run.stopped.usage.logLines)} lines, ${run.stopped.usage.warnings} warnings or errors`;
  const executorNote = opts.instantRuns
    ? "the injected executor returns {status: 'planned'} at once (--instant-runs), so the queue claims, finishes and logs runs during the load"
    : "the injected executor holds every run until the load is over and the inbox drained (as agent runs minutes long keep a burst's runs queued), then returns {status: 'planned'}";
  const notes = [
    `drydock: runs.max_concurrent ${opts.maxConcurrent}; ${executorNote}; no agent, model call or git worktree is measured, but every`,
    'run goes through the real queue and store in the same process',
    `(${perStore(queueNote)}). pino at info, lines counted instead of written (${perStore(logNote)}). One github`,
    'trigger on pull_request.opened, created over POST',
    `/v1/triggers, its hourly cap then raised to ${int(HOURLY_CAP)} in the store (the API allows at most 10,000).`,
    ...(runs.some((run) => run.replicas !== null)
      ? [
          'With --replicas, each PostgreSQL column is that many daemons on a fresh database of its own (one per column),',
          'each with its own data directory, port and replica_id; the first applies the migrations and creates the trigger,',
          'the others start after it. Connection k of the load (and of the redeliveries) goes to replica k mod N. A',
          "column's server CPU, RSS, runs, log lines and breakdown are the sums over its replicas; the event-loop delay",
          'the worst of them; "per replica" shows each one\'s answers and CPU.',
        ]
      : []),
    ...(single
      ? []
      : [
          `drydock is measured on each store in turn (${runs.map(named).join(', then ')}), each daemon on its own data directory,`,
          'started once the one before it stopped, against the same bare phase. On PostgreSQL: a fresh database on the local server over TCP (127.0.0.1), the',
          "store's pool of 10 connections; the server's processes serving that database are not in the daemon's CPU: their",
          'CPU (from /proc, read around the phase; a connection closed in between is missed, hence "at least") has its own',
          'row and is left out of "other processes".',
        ]),
    'bare: one route, raw body, @octokit/webhooks verify, INSERT with the pragmas of the SQLite store; no dedupe, no',
    `logging. Load: ${ready.bodyBytes} B bodies (the @octokit/webhooks-examples pull_request.opened payload without its`,
    "API links, the description padded); body and signature are made before each request's clock starts",
    `(${ready.prepareUs.toFixed(1)} µs). Latency: request written to answer read to the end (closed loop: each connection`,
    'sends its next delivery when its answer is in). Throughput: measured answers / measured window. CPU per',
    "request: the process's CPU over the phase (warm-up included) / requests. Both servers, the load process and",
    'whatever else runs share the machine.',
  ];
  const out: string[] = ['', wrap(title), table(rows), '', table(inboxRows), ''];
  for (const run of runs) {
    if (!single) out.push(`drydock on ${named(run)}:`);
    out.push(
      ...(opts.breakdown
        ? breakdown(run.phase, run.phase.report.sent, run.store)
        : ['Breakdown off (--no-breakdown): drydock ran without timers around its store calls.']),
      '',
    );
  }
  for (const run of runs) {
    const who = single ? 'drydock:' : `drydock on ${named(run)}:`;
    out.push(
      ...run.check.lines.map((line, i) =>
        wrap(`${i === 0 ? `read-back: ${verdict(run.check.ok)} ${who}` : '  '} ${line}`, 110, '    '),
      ),
    );
  }
  out.push(
    wrap(`read-back: ${verdict(bareCheck.ok)} ${bareCheck.lines.join('; ')}`, 110, '    '),
    '',
    wrap(notes.join(' ')),
  );
  const v = verdictLines([...judged, ...checks]);
  out.push(...v.lines);
  process.stdout.write(`${out.join('\n')}\n`);
  return v.pass;
}

interface InboxDrain {
  queuedAtEnd: number;
  /** drydock on PostgreSQL: its database's server processes' CPU from the start of the phase to the empty inbox. */
  databaseCpuMs: number | null;
  /** From the end of the load to an empty inbox; null: not within 120 s. */
  drainMs: number | null;
  /** drydock's CPU from the start of its phase to the empty inbox. */
  cpuMs: number;
  /** The same, of each replica. */
  serverCpuMs: number[];
}

/** Waits (at most 120 s) until drydock's inbox processed every delivery the phase left queued. */
async function drainInbox(
  child: Child | Child[],
  phase: Phase,
  name: string,
  database: BenchDatabase | null,
): Promise<InboxDrain> {
  const from = Date.now();
  let u = await usage(child);
  const queuedAtEnd = u.queued;
  let logged = from;
  while (u.queued > 0 && Date.now() - from < 120_000) {
    await new Promise((r) => setTimeout(r, 100));
    u = await usage(child);
    if (Date.now() - logged > 5_000) {
      log(`${name}: ${int(u.queued)} deliveries still in the inbox`);
      logged = Date.now();
    }
  }
  const drainMs = u.queued === 0 ? Date.now() - from : null;
  log(
    `${name}: ${int(queuedAtEnd)} deliveries were queued at the end of the load; inbox empty after ${drainMs === null ? '(not within 120 s)' : ms(drainMs)}`,
  );
  const db0 = phase.databaseCpuAtStart;
  const databaseCpuMs = database && db0 ? backendCpuBetween(db0, await database.backendCpu()) : null;
  const servers = Array.isArray(child) ? child : [child];
  const each = await Promise.all(servers.map(usage1));
  const serverCpuMs = each.map((e, i) => e.cpuMs - phase.serverCpuAtStart[i]!);
  return { queuedAtEnd, drainMs, cpuMs: u.cpuMs - phase.before.cpuMs, serverCpuMs, databaseCpuMs };
}

/** One drydock column: a store, and with --replicas how many daemons share its database. */
interface PassSpec {
  store: StoreKind;
  /** null: one daemon, named by its store alone (no --replicas). */
  replicas: number | null;
}

/** A column's name: `PostgreSQL`, or with --replicas `PostgreSQL, 2 replicas`. */
function passLabel(pass: PassSpec): string {
  const replicas = pass.replicas === null ? '' : `, ${pass.replicas} replica${pass.replicas > 1 ? 's' : ''}`;
  return `${STORE_LABEL[pass.store]}${replicas}`;
}

/** The columns of a run, in order: SQLite, then PostgreSQL (once, or once per replica count). */
function passesOf(opts: BenchOptions): PassSpec[] {
  return storesOf(opts.store).flatMap<PassSpec>((store) =>
    store === 'postgres' && opts.replicas
      ? opts.replicas.map((replicas) => ({ store, replicas }))
      : [{ store, replicas: null }],
  );
}

async function main(opts: BenchOptions): Promise<number> {
  const passes = passesOf(opts);
  const single = passes.length === 1 && passes[0]!.store === 'sqlite';
  const dir = mkdtempSync(join(tmpdir(), 'drydock-webhooks-'));
  const repoDir = join(dir, 'clone');
  const bareFile = join(dir, 'bare', 'bare.db');
  /**
   * Each daemon has its own data directory; drydock on SQLite keeps `data` (its database file), the replicas of
   * a pass `data-postgres-<replicas>-<n>`.
   */
  const dataDirOf = (pass: PassSpec, n: number) =>
    join(
      dir,
      pass.store === 'sqlite'
        ? 'data'
        : pass.replicas === null
          ? `data-${pass.store}`
          : `data-${pass.store}-${pass.replicas}-${n + 1}`,
    );
  execFileSync('git', ['init', '-q', repoDir]);
  // Temporary secrets for temporary servers.
  const secret = randomBytes(24).toString('hex');
  const adminToken = `bench-admin-${randomBytes(16).toString('hex')}`;
  const repository = payloadTemplate().repository;
  const nodeArgs = (name: string) => (process.env[name] ?? '').split(/\s+/).filter(Boolean);
  const children: Child[] = [];
  const databases: BenchDatabase[] = [];
  try {
    const bareChild = new Child(
      'bare',
      new URL('bare-child.js', import.meta.url),
      { file: bareFile, secret } satisfies BareParams,
      nodeArgs('BENCH_BARE_NODE_ARGS'),
    );
    const drydockName = (pass: PassSpec) => (single ? 'drydock' : `drydock on ${passLabel(pass)}`);
    const drydockChild = (pass: PassSpec, n: number, databaseUrl: string | null) => {
      const replicated = pass.replicas !== null;
      const child = new Child(
        replicated ? `${drydockName(pass)}, replica ${n + 1}` : drydockName(pass),
        new URL('drydock-child.js', import.meta.url),
        {
          dataDir: dataDirOf(pass, n),
          databaseUrl,
          replicaId: replicated ? `bench-${pass.replicas}-${n + 1}` : null,
          createTrigger: n === 0,
          repoDir,
          repository,
          secret,
          adminToken,
          maxConcurrent: opts.maxConcurrent,
          hourlyCap: HOURLY_CAP,
          instrument: opts.breakdown,
          executor: opts.instantRuns ? 'instant' : 'held',
        } satisfies DrydockParams,
        ['--expose-gc', ...nodeArgs('BENCH_DRYDOCK_NODE_ARGS')],
      );
      children.push(child);
      return child;
    };
    /** A pass's database: PostgreSQL passes each get a fresh one, made when the pass starts. */
    const databaseFor = async (pass: PassSpec): Promise<BenchDatabase | null> => {
      if (pass.store !== 'postgres') return null;
      const db = await createBenchDatabase(opts.postgresUrl);
      databases.push(db);
      log(`PostgreSQL: database ${db.name} on ${shownUrl(opts.postgresUrl)}`);
      return db;
    };
    /**
     * A pass's daemons: the first one alone (it applies the migrations and creates the trigger), then the other
     * replicas, which serve that trigger.
     */
    const startDaemons = async (pass: PassSpec, db: BenchDatabase | null, first?: Child) => {
      const servers = [first ?? drydockChild(pass, 0, db?.url ?? null)];
      const started = [await servers[0]!.next<Started>('started')];
      for (let n = 1; n < (pass.replicas ?? 1); n++) {
        servers.push(drydockChild(pass, n, db!.url));
        started.push(await servers[n]!.next<Started>('started'));
      }
      return { servers, started };
    };
    const startedLine = (pass: PassSpec, started: Started[]) =>
      `${drydockName(pass)} on ${started.map((s) => s.url).join(', ')} (startDaemon ${started.map((s) => ms(s.startMs)).join(', ')}, trigger ${started[0]!.triggerId})`;
    // The first column's daemon starts with the other children; a later column's daemons start once the ones
    // before them stopped, so that no idle daemon (its scheduler ticks, its inbox polls) runs beside a phase.
    // With replicas, every column's daemons start when its turn comes.
    const firstDatabase = passes[0]!.replicas === null ? await databaseFor(passes[0]!) : null;
    const first =
      passes[0]!.replicas === null ? drydockChild(passes[0]!, 0, firstDatabase?.url ?? null) : null;
    const load = new Child('load', new URL('load-child.js', import.meta.url), { secret });
    children.push(bareChild, load);
    const [bareStarted, ready] = await Promise.all([
      bareChild.next<Started>('started'),
      load.next<LoadReady>('ready'),
    ]);
    const firstStarted = first ? await startDaemons(passes[0]!, firstDatabase, first) : null;
    log(
      `bare on ${bareStarted.url}; ${firstStarted ? `${startedLine(passes[0]!, firstStarted.started)}; ` : ''}` +
        `${ready.bodyBytes} B bodies for ${repository}`,
    );
    if (ready.bodyBytes !== BODY_BYTES) log(`note: bodies are ${ready.bodyBytes} B, not ${BODY_BYTES}`);

    const bare = await runPhase(load, bareChild, [bareStarted], 'bare', opts);
    bareChild.send({ type: 'stop' });
    await bareChild.next<Stopped>('stopped');
    await bareChild.exited;

    const runs: DrydockRun[] = [];
    for (const [i, pass] of passes.entries()) {
      let db = i === 0 ? firstDatabase : null;
      let daemons = i === 0 ? firstStarted : null;
      if (!daemons) {
        db = await databaseFor(pass);
        daemons = await startDaemons(pass, db);
        log(startedLine(pass, daemons.started));
      }
      const { servers, started } = daemons;
      const name = drydockName(pass);
      const phase = await runPhase(load, servers, started, 'drydock', opts, name, db);
      const inbox = await drainInbox(servers, phase, name, db);

      let redelivery: RedeliverReport | null = null;
      if (opts.redeliveries > 0) {
        const what = `redelivering ${opts.redeliveries} accepted deliveries`;
        log(single ? what : `${name}: ${what}`);
        load.send({
          type: 'redeliver',
          urls: started.map((s) => s.url),
          count: opts.redeliveries,
          concurrency: opts.concurrency,
        } satisfies RedeliverRequest);
        redelivery = await load.next<RedeliverReport>('redeliver-done');
      }
      if (i === passes.length - 1) {
        load.send({ type: 'close' });
        await load.exited;
      }

      // The runs wait in the daemons' queues; let the executors have them and finish them.
      for (const child of servers) child.send({ type: 'release' });
      const drainFrom = Date.now();
      let last = await usage(servers);
      while (last.executed < phase.report.sent && Date.now() - drainFrom < 120_000) {
        await new Promise((r) => setTimeout(r, 100));
        last = await usage(servers);
      }
      const drained = { executed: last.executed, waitedMs: Date.now() - drainFrom };
      for (const child of servers) child.send({ type: 'stop' });
      const stopped = combineStopped(
        await Promise.all(servers.map((child) => child.next<Stopped>('stopped'))),
      );
      await Promise.all(servers.map((child) => child.exited));
      log(single ? 'servers stopped; reading back' : `${name} stopped; reading back`);

      const answered = phase.report.statuses['202'] ?? 0;
      const reader = db ? await postgresReader(db.url) : sqliteReader(join(dataDirOf(pass, 0), 'drydock.db'));
      const check = await verifyDrydock(reader, phase.report.sent, answered - phase.report.bad, redelivery);
      runs.push({ ...pass, phase, inbox, drained, stopped, check });
    }
    const bareCheck = verifyBare(bareFile, bare.report.sent);
    const pass = report(opts, ready, bare, bareCheck, runs);
    return pass ? 0 : 1;
  } finally {
    for (const child of children) child.kill();
    if (opts.keep) {
      log(
        `kept ${dir}${databases.length ? ` and the PostgreSQL databases ${databases.map((d) => d.name).join(', ')}` : ''}`,
      );
    } else {
      rmSync(dir, { recursive: true, force: true });
      for (const db of databases) {
        await db.drop().catch((err: Error) => log(`could not drop database ${db.name}: ${err.message}`));
      }
    }
  }
}

/** Replicas' stop reports as one: usage added up (combineUsage), peak RSS and live heap added up. */
function combineStopped(list: Stopped[]): Stopped {
  if (list.length === 1) return list[0]!;
  const heaps = list.map((s) => s.liveHeap);
  return {
    type: 'stopped',
    usage: combineUsage(list.map((s) => s.usage)),
    maxRss: list.reduce((n, s) => n + s.maxRss, 0),
    liveHeap: heaps.includes(null) ? null : heaps.reduce<number>((n, h) => n + h!, 0),
  };
}

benchMain('bench', parseOptions, USAGE, main);
