import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Child } from '../shared/children.js';
import { benchMain } from '../shared/options.js';
import { int, kb, mb, ms, perSecond, rate, type Summary, summarize, table, wrap } from '../shared/stats.js';
import { type BenchOptions, parseOptions, USAGE } from './options.js';
import { BODY_BYTES, payloadTemplate } from './payload.js';
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

const TARGETS = { ratio: 0.5, p99Ms: 50 };
const HOURLY_CAP = 1_000_000;

const startedAt = Date.now();
const log = (line: string) =>
  process.stderr.write(`[bench +${((Date.now() - startedAt) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);

const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
const na = 'n/a';

interface Phase {
  report: PhaseReport;
  before: Usage;
  after: Usage;
  started: Started;
  /** Busy CPU of the whole machine over the phase (all processes), when /proc/stat is there. */
  machineBusyMs: number | null;
  machineWallMs: number;
  loadAverage: number;
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

/** drydock's database after it stopped: one delivery per request, one run per delivery, nothing doubled. */
function verifyDrydock(
  file: string,
  sent: number,
  answered: number,
  redelivery: RedeliverReport | null,
): Check & { inbox: InboxFigures } {
  const db = new Database(file, { readonly: true });
  try {
    const n = (sql: string) => (db.prepare(sql).get() as { n: number | null }).n ?? 0;
    const deliveries = n(`SELECT COUNT(*) AS n FROM deliveries WHERE source = 'github'`);
    const outcomes = db
      .prepare(`SELECT outcome, COUNT(*) AS n FROM deliveries GROUP BY outcome ORDER BY outcome`)
      .all() as { outcome: string; n: number }[];
    const accepted = n(
      `SELECT COUNT(*) AS n FROM deliveries WHERE source = 'github' AND outcome = 'accepted'`,
    );
    const distinctKeys = n(`SELECT COUNT(DISTINCT key) AS n FROM deliveries WHERE source = 'github'`);
    const runs = n('SELECT COUNT(*) AS n FROM runs');
    const deliveryRuns = n('SELECT COUNT(*) AS n FROM runs WHERE delivery_id IS NOT NULL');
    const doubled = n(
      `SELECT COUNT(*) AS n FROM (SELECT delivery_id FROM runs WHERE delivery_id IS NOT NULL
         GROUP BY delivery_id HAVING COUNT(*) > 1)`,
    );
    const notOne = n(
      `SELECT COUNT(*) AS n FROM deliveries d
         LEFT JOIN (SELECT delivery_id, COUNT(*) AS c, MIN(id) AS run_id FROM runs GROUP BY delivery_id) r
           ON r.delivery_id = d.id
        WHERE d.outcome = 'accepted' AND (COALESCE(r.c, 0) != 1 OR json_extract(d.run_ids, '$[0]') != r.run_id
          OR json_array_length(d.run_ids) != 1)`,
    );
    const orphans = n(
      `SELECT COUNT(*) AS n FROM runs r LEFT JOIN deliveries d ON d.id = r.delivery_id WHERE d.id IS NULL`,
    );
    const subjects = n('SELECT COUNT(DISTINCT subject) AS n FROM runs');
    const sessions = n(`SELECT COUNT(*) AS n FROM sessions WHERE scope_key LIKE 'trigger:%'`);
    const fires = n(`SELECT COUNT(*) AS n FROM trigger_fires WHERE outcome = 'accepted'`);
    const statuses = db
      .prepare('SELECT status, COUNT(*) AS n FROM runs GROUP BY status ORDER BY status')
      .all() as { status: string; n: number }[];
    const planned = statuses.find((s) => s.status === 'planned')?.n ?? 0;
    // Each run a duplicate answer named is the run of that delivery in the database.
    const runOf = db.prepare(`SELECT id FROM runs WHERE delivery_id = ?`).pluck();
    const wrongRun = redelivery
      ? Object.entries(redelivery.runs).filter(([dlv, run]) => runOf.get(dlv) !== run).length
      : 0;
    const redeliveredOk = redelivery
      ? redelivery.sameDelivery === redelivery.sent && redelivery.bad === 0 && wrongRun === 0
      : true;
    const times = db
      .prepare(
        `SELECT received_at AS r, processed_at AS p FROM deliveries WHERE source = 'github' ORDER BY rowid`,
      )
      .all() as { r: number; p: number | null }[];
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
    db.close();
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

async function usage(child: Child): Promise<Usage> {
  child.send({ type: 'usage' });
  return child.next<Usage>('usage');
}

async function runPhase(
  load: Child,
  server: Child,
  started: Started,
  target: Target,
  opts: BenchOptions,
): Promise<Phase> {
  log(`${target}: ${opts.concurrency} connections, ${opts.warmupSeconds} s warm-up + ${opts.seconds} s`);
  const before = await usage(server);
  const busy0 = machineBusyMs();
  const wall0 = Date.now();
  load.send({
    type: 'phase',
    target,
    url: started.url,
    concurrency: opts.concurrency,
    warmupMs: opts.warmupSeconds * 1000,
    measureMs: opts.seconds * 1000,
  } satisfies PhaseRequest);
  const report = await load.next<PhaseReport>('phase-done');
  const busy1 = machineBusyMs();
  const machineWallMs = Date.now() - wall0;
  const loadAverage = loadavg()[0]!;
  const after = await usage(server);
  const s = summarize(report.latencies);
  log(
    `${target}: ${rate(s.count, report.wallMs)}, p99 ${ms(s.p99)}, ${report.errors} errors, ${report.bad} bad`,
  );
  const machine = busy0 === null || busy1 === null ? null : busy1 - busy0;
  return { report, before, after, started, machineBusyMs: machine, machineWallMs, loadAverage };
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
  recordDeliveries: 'answer: dedupe + record (group commit)',
  queuedDeliveries: 'inbox: read the queued',
  listTriggers: 'inbox: match',
  recordTriggerFire: 'inbox: match (filtered)',
  fireTrigger: 'inbox: session + run + fire',
  updateDelivery: 'inbox: settle delivery',
  transitionRun: 'queue: claim, finish run',
  getRun: 'queue: reread run',
  appendEvent: 'queue: run_finished event',
};

/** Where drydock's time went during its phase: the instrumented store methods, submit, and the rest. */
function breakdown(phase: Phase, deliveries: number): string[] {
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
    table(rows),
    `TriggerService.receiveGithub, wall time per delivery (awaits included): mean ${ms(handler.wallMs / Math.max(1, handler.calls))}, ` +
      `max ${ms(handler.maxWallMs)}`,
  ];
}

function report(
  opts: BenchOptions,
  ready: LoadReady,
  bare: Phase,
  drydock: Phase,
  bareCheck: Check,
  drydockCheck: Check & { inbox: InboxFigures },
  inbox: InboxDrain,
  drained: { executed: number; waitedMs: number },
  stopped: Stopped,
): boolean {
  const b = summarize(bare.report.latencies);
  const d = summarize(drydock.report.latencies);
  const bRate = perSecond(b.count, bare.report.wallMs);
  const dRate = perSecond(d.count, drydock.report.wallMs);
  const ratio = dRate / bRate;
  const ratioPass = Number.isFinite(ratio) && ratio >= TARGETS.ratio;
  const p99Pass = d.count > 0 && d.p99 <= TARGETS.p99Ms;
  const answersOk =
    drydock.report.errors === 0 &&
    drydock.report.bad === 0 &&
    bare.report.errors === 0 &&
    bare.report.bad === 0;
  const dupPass = drydockCheck.ok;

  const cpuPer = (p: Phase) => ms((p.after.cpuMs - p.before.cpuMs) / Math.max(1, p.report.sent));
  const busy = (cpu: number) =>
    `${((100 * cpu) / ((opts.warmupSeconds + opts.seconds) * 1000)).toFixed(0)} % of a core`;
  const loadPer = (p: Phase) =>
    `${ms(p.report.cpuMs / Math.max(1, p.report.sent))} (${busy(p.report.cpuMs)})`;
  const serverCpu = (p: Phase) => `${cpuPer(p)} (${busy(p.after.cpuMs - p.before.cpuMs)})`;
  const others = (p: Phase) => {
    if (p.machineBusyMs === null) return `load average ${p.loadAverage.toFixed(1)}`;
    const mine = p.after.cpuMs - p.before.cpuMs + p.report.cpuMs;
    const cores = Math.max(0, p.machineBusyMs - mine) / p.machineWallMs;
    return `${cores.toFixed(1)} of ${availableParallelism()} cores busy (load average ${p.loadAverage.toFixed(1)})`;
  };
  const lat = (s: Summary) => (s.count ? `${ms(s.p50)} / ${ms(s.p99)}` : na);

  const rows: string[][] = [
    ['', 'bare: hono, verify, INSERT body', 'drydock: POST /webhooks/github', 'drydock / bare', 'target'],
    [
      'throughput',
      rate(b.count, bare.report.wallMs).replace('/s', ' req/s'),
      rate(d.count, drydock.report.wallMs).replace('/s', ' req/s'),
      Number.isFinite(ratio) ? `${(100 * ratio).toFixed(0)} %` : na,
      `>= 50 % of bare   ${verdict(ratioPass)}`,
    ],
    ['latency p50 / p99', lat(b), lat(d), '', `p99 <= 50 ms      ${verdict(p99Pass)}`],
    ['latency max', ms(b.max), ms(d.max), '', ''],
    ['req/s by second: first / slowest / last', trend(bare.report), trend(drydock.report), '', ''],
    [
      'requests measured (+ warm-up)',
      `${int(b.count)} (+ ${int(bare.report.warmupRequests)})`,
      `${int(d.count)} (+ ${int(drydock.report.warmupRequests)})`,
      '',
      '',
    ],
    [
      'answers',
      `${statusLine(bare.report)}; ${bare.report.errors} errors`,
      `${statusLine(drydock.report)}; ${drydock.report.errors} errors`,
      '',
      '',
    ],
    ['server CPU per request', serverCpu(bare), serverCpu(drydock), '', ''],
    ['load process CPU per request', loadPer(bare), loadPer(drydock), '', ''],
    ['other processes on the machine', others(bare), others(drydock), '', ''],
    [
      'server event-loop delay p99 / max',
      `${ms(bare.after.loopDelayP99Ms)} / ${ms(bare.after.loopDelayMaxMs)}`,
      `${ms(drydock.after.loopDelayP99Ms)} / ${ms(drydock.after.loopDelayMaxMs)}`,
      '',
      '',
    ],
    [
      'verify (in-process, median)',
      `${(bare.started.micro.verifyUs).toFixed(1)} µs`,
      `${drydock.started.micro.verifyUs.toFixed(1)} µs (+ JSON.parse ${drydock.started.micro.parseUs.toFixed(1)} µs)`,
      '',
      '',
    ],
    [
      'server RSS after phase',
      mb(bare.after.rss),
      `${mb(drydock.after.rss)} (peak ${mb(stopped.maxRss)}; live heap at the end ${stopped.liveHeap === null ? na : mb(stopped.liveHeap)})`,
      '',
      '',
    ],
    [
      'duplicate runs',
      '',
      drydockCheck.ok ? '0 (read back, incl. redeliveries)' : 'see read-back',
      '',
      `none              ${verdict(dupPass)}`,
    ],
  ];
  const w = drydockCheck.inbox;
  const sustained = perSecond(drydock.report.sent, w.lastProcessed - w.firstReceived);
  const inboxRows: string[][] = [
    ['drydock inbox (the work behind the answers)', ''],
    [
      'left queued when the load stopped',
      `${int(inbox.queuedAtEnd)}; all processed ${inbox.drainMs === null ? 'NOT within 120 s' : `${ms(inbox.drainMs)} later`}`,
    ],
    [
      'answer to run queued (processed_at - received_at)',
      `p50 ${ms(w.wait.p50)}, p99 ${ms(w.wait.p99)}, max ${ms(w.wait.max)} (${int(w.wait.count)} deliveries)`,
    ],
    [
      'deliveries answered and processed, per second',
      `${int(sustained)}/s (${int(drydock.report.sent)} from the first answer to the last run queued)`,
    ],
    [
      'server CPU per delivery, answered and processed',
      `${ms(inbox.cpuMs / Math.max(1, drydock.report.sent))} (phase and drain)`,
    ],
  ];

  const title =
    `webhook benchmark: signed ${kb(ready.bodyBytes)} pull_request.opened deliveries, distinct delivery ids and PRs, ` +
    `${opts.concurrency} keep-alive connections from a second process, ${opts.warmupSeconds} s warm-up + ` +
    `${opts.seconds} s per target${opts.quick ? ' (quick)' : ''}`;
  const queueNote =
    drained.executed === drydock.report.sent
      ? `all ${int(drained.executed)} runs were executed, the last ${ms(drained.waitedMs)} after the release`
      : `only ${int(drained.executed)} of ${int(drydock.report.sent)} runs were executed within 120 s`;
  const executorNote = opts.instantRuns
    ? "the injected executor returns {status: 'planned'} at once (--instant-runs), so the queue claims, finishes and logs runs during the load"
    : "the injected executor holds every run until the load is over and the inbox drained (as agent runs minutes long keep a burst's runs queued), then returns {status: 'planned'}";
  const notes = [
    `drydock: runs.max_concurrent ${opts.maxConcurrent}; ${executorNote}; no agent, model call or git worktree is measured, but every`,
    'run goes through the real queue and store in the same process',
    `(${queueNote}). pino at info, lines counted instead of written (${int(stopped.usage.logLines)} lines,`,
    `${stopped.usage.warnings} warnings or errors). One github trigger on pull_request.opened, created over POST`,
    `/v1/triggers, its hourly cap then raised to ${int(HOURLY_CAP)} in the store (the API allows at most 10,000).`,
    'bare: one route, raw body, @octokit/webhooks verify, INSERT with the pragmas of the SQLite store; no dedupe, no',
    `logging. Load: ${ready.bodyBytes} B bodies (the @octokit/webhooks-examples pull_request.opened payload without its`,
    "API links, the description padded); body and signature are made before each request's clock starts",
    `(${ready.prepareUs.toFixed(1)} µs). Latency: request written to answer read to the end (closed loop: each connection`,
    'sends its next delivery when its answer is in). Throughput: measured answers / measured window. CPU per',
    "request: the process's CPU over the phase (warm-up included) / requests. Both servers, the load process and",
    'whatever else runs share the machine.',
  ];
  const out: string[] = [
    '',
    wrap(title),
    table(rows),
    '',
    table(inboxRows),
    '',
    ...(opts.breakdown
      ? breakdown(drydock, drydock.report.sent)
      : ['Breakdown off (--no-breakdown): drydock ran without timers around its store calls.']),
    '',
    ...drydockCheck.lines.map((line, i) =>
      wrap(`${i === 0 ? `read-back: ${verdict(drydockCheck.ok)} drydock:` : '  '} ${line}`, 110, '    '),
    ),
    wrap(`read-back: ${verdict(bareCheck.ok)} ${bareCheck.lines.join('; ')}`, 110, '    '),
    '',
    wrap(notes.join(' ')),
  ];
  const pass = ratioPass && p99Pass && dupPass && answersOk && bareCheck.ok;
  out.push(
    `overall: ${verdict(pass)} (throughput ${verdict(ratioPass)}, p99 ${verdict(p99Pass)}, no duplicate runs ${verdict(dupPass)}, ` +
      `answers ${verdict(answersOk)}${answersOk ? '' : `: ${drydock.report.firstBad ?? drydock.report.firstError ?? bare.report.firstBad ?? bare.report.firstError}`})`,
  );
  process.stdout.write(`${out.join('\n')}\n`);
  return pass;
}

interface InboxDrain {
  queuedAtEnd: number;
  /** From the end of the load to an empty inbox; null: not within 120 s. */
  drainMs: number | null;
  /** drydock's CPU from the start of its phase to the empty inbox. */
  cpuMs: number;
}

/** Waits (at most 120 s) until drydock's inbox processed every delivery the phase left queued. */
async function drainInbox(child: Child, phase: Phase): Promise<InboxDrain> {
  const from = Date.now();
  let u = await usage(child);
  const queuedAtEnd = u.queued;
  let logged = from;
  while (u.queued > 0 && Date.now() - from < 120_000) {
    await new Promise((r) => setTimeout(r, 100));
    u = await usage(child);
    if (Date.now() - logged > 5_000) {
      log(`drydock: ${int(u.queued)} deliveries still in the inbox`);
      logged = Date.now();
    }
  }
  const drainMs = u.queued === 0 ? Date.now() - from : null;
  log(
    `drydock: ${int(queuedAtEnd)} deliveries were queued at the end of the load; inbox empty after ${drainMs === null ? '(not within 120 s)' : ms(drainMs)}`,
  );
  return { queuedAtEnd, drainMs, cpuMs: u.cpuMs - phase.before.cpuMs };
}

async function main(opts: BenchOptions): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'drydock-webhooks-'));
  const dataDir = join(dir, 'data');
  const repoDir = join(dir, 'clone');
  const bareFile = join(dir, 'bare', 'bare.db');
  execFileSync('git', ['init', '-q', repoDir]);
  // Temporary secrets for temporary servers.
  const secret = randomBytes(24).toString('hex');
  const adminToken = `bench-admin-${randomBytes(16).toString('hex')}`;
  const repository = payloadTemplate().repository;
  const nodeArgs = (name: string) => (process.env[name] ?? '').split(/\s+/).filter(Boolean);
  const children: Child[] = [];
  try {
    const bareChild = new Child(
      'bare',
      new URL('bare-child.js', import.meta.url),
      { file: bareFile, secret } satisfies BareParams,
      nodeArgs('BENCH_BARE_NODE_ARGS'),
    );
    const drydockChild = new Child(
      'drydock',
      new URL('drydock-child.js', import.meta.url),
      {
        dataDir,
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
    const load = new Child('load', new URL('load-child.js', import.meta.url), { secret });
    children.push(bareChild, drydockChild, load);
    const [bareStarted, drydockStarted, ready] = await Promise.all([
      bareChild.next<Started>('started'),
      drydockChild.next<Started>('started'),
      load.next<LoadReady>('ready'),
    ]);
    log(
      `bare on ${bareStarted.url}; drydock on ${drydockStarted.url} (startDaemon ${ms(drydockStarted.startMs)}, ` +
        `trigger ${drydockStarted.triggerId}); ${ready.bodyBytes} B bodies for ${repository}`,
    );
    if (ready.bodyBytes !== BODY_BYTES) log(`note: bodies are ${ready.bodyBytes} B, not ${BODY_BYTES}`);

    const bare = await runPhase(load, bareChild, bareStarted, 'bare', opts);
    bareChild.send({ type: 'stop' });
    await bareChild.next<Stopped>('stopped');
    await bareChild.exited;

    const drydock = await runPhase(load, drydockChild, drydockStarted, 'drydock', opts);
    const inbox = await drainInbox(drydockChild, drydock);

    let redelivery: RedeliverReport | null = null;
    if (opts.redeliveries > 0) {
      log(`redelivering ${opts.redeliveries} accepted deliveries`);
      load.send({
        type: 'redeliver',
        url: drydockStarted.url,
        count: opts.redeliveries,
        concurrency: opts.concurrency,
      } satisfies RedeliverRequest);
      redelivery = await load.next<RedeliverReport>('redeliver-done');
    }
    load.send({ type: 'close' });
    await load.exited;

    // The runs wait in the daemon's queue; let the executor have them and finish them.
    drydockChild.send({ type: 'release' });
    const drainFrom = Date.now();
    let last = await usage(drydockChild);
    while (last.executed < drydock.report.sent && Date.now() - drainFrom < 120_000) {
      await new Promise((r) => setTimeout(r, 100));
      last = await usage(drydockChild);
    }
    const drained = { executed: last.executed, waitedMs: Date.now() - drainFrom };
    drydockChild.send({ type: 'stop' });
    const stopped = await drydockChild.next<Stopped>('stopped');
    await drydockChild.exited;
    log('servers stopped; reading back');

    const answered = drydock.report.statuses['202'] ?? 0;
    const drydockCheck = verifyDrydock(
      join(dataDir, 'drydock.db'),
      drydock.report.sent,
      answered - drydock.report.bad,
      redelivery,
    );
    const bareCheck = verifyBare(bareFile, bare.report.sent);
    const pass = report(opts, ready, bare, drydock, bareCheck, drydockCheck, inbox, drained, stopped);
    return pass ? 0 : 1;
  } finally {
    for (const child of children) child.kill();
    if (opts.keep) log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

benchMain('bench', parseOptions, USAGE, main);
