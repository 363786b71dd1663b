import { int, ms, wrap } from './stats.js';
import { STORE_LABEL, type StoreKind } from './store-options.js';

// The goals the queue and webhook benchmarks judge their figures against, in one table, and the judging:
// figures in, one row per goal out (its figure, the goal, PASS or FAIL). A goal whose figures the run did not
// measure (PostgreSQL's share of SQLite's throughput when one store ran) is 'n/a': neither a pass nor a
// failure, and said so. The benchmarks print these rows beside their tables and a verdict line listing every
// failure; their exit status is 1 when one failed.

export type Verdict = 'PASS' | 'FAIL' | 'n/a';

/** How a figure and its limit are shown: a rate, a duration, a share of another figure, a multiple of one. */
export type Unit = 'req/s' | 'approvals/s' | 'ms' | '%' | '×';

export interface Goal {
  op: '>=' | '<=';
  limit: number;
  unit: Unit;
}

/** Every goal, in one place. Shares and multiples are fractions: 0.5 is "at least half". */
export const GOALS = {
  queue: {
    /** GET /v1/plans over HTTP at the first concurrency (16): SQLite's rate, both stores' p99. */
    listRate: { op: '>=', limit: 2_000, unit: 'req/s' },
    listP99: { op: '<=', limit: 20, unit: 'ms' },
    /** PostgreSQL's list rate over SQLite's, both at the first concurrency. */
    listShare: { op: '>=', limit: 0.5, unit: '%' },
    /** POST /v1/plans/:id/approve over HTTP at the first concurrency: SQLite's rate and p99. */
    approveRate: { op: '>=', limit: 1_500, unit: 'approvals/s' },
    approveP99: { op: '<=', limit: 20, unit: 'ms' },
    /** PostgreSQL's approval rate over SQLite's. */
    approveShare: { op: '>=', limit: 0.5, unit: '%' },
    /** The daemon's CPU per approval over HTTP minus PlanDecisions.decide's CPU per call in-process, each store. */
    approveHttpCpu: { op: '<=', limit: 0.3, unit: 'ms' },
  },
  webhooks: {
    /** drydock's answers per second over the bare handler's, each store (each replica count). */
    share: { op: '>=', limit: 0.5, unit: '%' },
    /** drydock's p99 over the bare handler's. */
    p99Ratio: { op: '<=', limit: 1.2, unit: '×' },
  },
} as const satisfies Record<string, Record<string, Goal>>;

/** One goal judged: whose figure, which, its value, the goal, the verdict. */
export interface Judged {
  /** The table row it belongs to, as the benchmark names it ('list', 'approve', 'throughput', ...). */
  row: string;
  /** Whose figure: 'SQLite', 'PostgreSQL', 'PostgreSQL, 2 replicas'. */
  subject: string;
  /** Which figure: 'throughput', 'p99', 'throughput / SQLite's', ... */
  figure: string;
  /** The value as printed; 'n/a' when not measured, 'none' when measured but without a value. */
  measured: string;
  /** The goal as printed: '>= 2,000 req/s'. */
  goal: string;
  verdict: Verdict;
  /** Why a goal is n/a. */
  reason?: string;
}

function show(value: number, unit: Unit): string {
  switch (unit) {
    case 'req/s':
    case 'approvals/s':
      return `${int(value)} ${unit}`;
    case 'ms':
      return ms(value);
    case '%':
      return `${(100 * value).toFixed(1)} %`;
    case '×':
      return `${value.toFixed(2)}×`;
  }
}

/** A goal as printed: '>= 2,000 req/s', '<= 20 ms', '>= 50 %', '<= 1.2×'. */
export function goalText(goal: Goal): string {
  const limit =
    goal.unit === '%'
      ? `${100 * goal.limit} %`
      : goal.unit === '×'
        ? `${goal.limit}×`
        : goal.unit === 'ms'
          ? `${goal.limit} ms`
          : `${int(goal.limit)} ${goal.unit}`;
  return `${goal.op} ${limit}`;
}

/** What a judged row is about. */
export interface About {
  row: string;
  subject: string;
  figure: string;
}

/**
 * Judges `value` against `goal`. A string instead of a number says the figure was not measured (the string
 * says why): n/a. A number that is not finite (no answers, a division by zero) fails.
 */
export function judge(about: About, goal: Goal, value: number | string): Judged {
  const base = { ...about, goal: goalText(goal) };
  if (typeof value === 'string') return { ...base, measured: 'n/a', verdict: 'n/a', reason: value };
  if (!Number.isFinite(value)) return { ...base, measured: 'none', verdict: 'FAIL' };
  // A figure at the limit up to rounding (1.0 - 0.7 is 0.30000000000000004) meets it.
  const slack = 1e-9 * Math.max(1, Math.abs(goal.limit));
  const pass = goal.op === '>=' ? value >= goal.limit - slack : value <= goal.limit + slack;
  return { ...base, measured: show(value, goal.unit), verdict: pass ? 'PASS' : 'FAIL' };
}

/** A check that is right or wrong rather than a figure against a limit (answers, read-back). */
export function check(about: About, ok: boolean, measured: string, goal: string): Judged {
  return { ...about, measured, goal, verdict: ok ? 'PASS' : 'FAIL' };
}

/** `a / b`, NaN when either is not a finite number or b is 0. */
export function ratio(a: number, b: number): number {
  return Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : Number.NaN;
}

/** A ratio for a table cell: a share ('24 %') or a multiple ('3.47×'); 'n/a' when not a number. */
export function ratioText(value: number, unit: '%' | '×'): string {
  return Number.isFinite(value) ? show(value, unit) : 'n/a';
}

/** One judged row in a cell: 'p99 <= 20 ms: 6.31 ms PASS', or '...: n/a' (the subject first when `withSubject`). */
export function judgedText(j: Judged, withSubject = false): string {
  const who = withSubject ? `${j.subject} ` : '';
  const value = j.verdict === 'n/a' ? 'n/a' : `${j.measured} ${j.verdict}`;
  return `${who}${j.figure} ${j.goal}: ${value}`;
}

/** The goals of a table row, one line each (those of one subject, or of all, each naming its subject). */
export function goalLines(judged: readonly Judged[], row: string, subject?: string): string[] {
  return judged
    .filter((j) => j.row === row && (subject === undefined || j.subject === subject))
    .map((j) => judgedText(j, subject === undefined));
}

/** The last lines of a report: PASS or FAIL, then every failure on a line of its own, then what was not judged. */
export function verdictLines(judged: readonly Judged[]): { pass: boolean; lines: string[] } {
  const failed = judged.filter((j) => j.verdict === 'FAIL');
  const passed = judged.filter((j) => j.verdict === 'PASS');
  const absent = judged.filter((j) => j.verdict === 'n/a');
  const pass = failed.length === 0;
  const lines = [
    `verdict: ${pass ? 'PASS' : 'FAIL'}: ${passed.length} of ${passed.length + failed.length} met` +
      (absent.length ? `, ${absent.length} not judged (n/a)` : ''),
  ];
  for (const j of failed)
    lines.push(`  FAIL ${j.subject}, ${j.row}: ${j.figure} ${j.measured} (goal ${j.goal})`);
  if (absent.length) {
    const reasons = [...new Set(absent.map((j) => j.reason))];
    lines.push(
      wrap(
        `  n/a: ${absent.map((j) => `${j.subject}, ${j.row}: ${j.figure}`).join('; ')} (${reasons.join('; ')})`,
        110,
        '    ',
      ),
    );
  }
  return { pass, lines };
}

/** One store's queue figures, at the first concurrency (the judged one). */
export interface QueueFigures {
  listPerSecond: number;
  listP99Ms: number;
  approvePerSecond: number;
  approveP99Ms: number;
  /** The daemon's CPU per approval over HTTP (warm-up included, as printed), ms. */
  approveDaemonCpuMs: number;
  /** PlanDecisions.decide's CPU per call in-process, ms. */
  approveInProcessCpuMs: number;
}

const notMeasured = (kind: StoreKind) => `${STORE_LABEL[kind]} not measured in this run`;

/** The queue benchmark's goals judged, for each store that ran; those of a store that did not are n/a. */
export function judgeQueue(figures: Partial<Record<StoreKind, QueueFigures>>): Judged[] {
  const g = GOALS.queue;
  const { sqlite, postgres } = figures;
  const about = (row: string, kind: StoreKind, figure: string): About => ({
    row,
    subject: STORE_LABEL[kind],
    figure,
  });
  const of = (kind: StoreKind, pick: (f: QueueFigures) => number): number | string => {
    const f = figures[kind];
    return f ? pick(f) : notMeasured(kind);
  };
  const share = (pick: (f: QueueFigures) => number): number | string =>
    !postgres
      ? notMeasured('postgres')
      : !sqlite
        ? notMeasured('sqlite')
        : ratio(pick(postgres), pick(sqlite));
  const httpCpu = (f: QueueFigures) => f.approveDaemonCpuMs - f.approveInProcessCpuMs;
  return [
    judge(
      about('list', 'sqlite', 'throughput'),
      g.listRate,
      of('sqlite', (f) => f.listPerSecond),
    ),
    judge(
      about('list', 'sqlite', 'p99'),
      g.listP99,
      of('sqlite', (f) => f.listP99Ms),
    ),
    judge(
      about('list', 'postgres', "throughput / SQLite's"),
      g.listShare,
      share((f) => f.listPerSecond),
    ),
    judge(
      about('list', 'postgres', 'p99'),
      g.listP99,
      of('postgres', (f) => f.listP99Ms),
    ),
    judge(
      about('approve', 'sqlite', 'throughput'),
      g.approveRate,
      of('sqlite', (f) => f.approvePerSecond),
    ),
    judge(
      about('approve', 'sqlite', 'p99'),
      g.approveP99,
      of('sqlite', (f) => f.approveP99Ms),
    ),
    judge(
      about('approve', 'postgres', "throughput / SQLite's"),
      g.approveShare,
      share((f) => f.approvePerSecond),
    ),
    ...(['sqlite', 'postgres'] as const).map((kind) =>
      judge(about('approve', kind, 'daemon CPU over in-process'), g.approveHttpCpu, of(kind, httpCpu)),
    ),
  ];
}

/** drydock's answers in one column of the webhook benchmark: a store, with --replicas that many daemons. */
export interface WebhookFigures {
  /** The column's name: 'SQLite', 'PostgreSQL, 2 replicas'. */
  subject: string;
  store: StoreKind;
  perSecond: number;
  p99Ms: number;
}

/**
 * The webhook benchmark's goals judged for each drydock column against the bare handler of the same run; a
 * store no column measured has its goals n/a.
 */
export function judgeWebhooks(
  bare: { perSecond: number; p99Ms: number },
  columns: readonly WebhookFigures[],
): Judged[] {
  const g = GOALS.webhooks;
  const out: Judged[] = [];
  for (const kind of ['sqlite', 'postgres'] as const) {
    const mine = columns.filter((c) => c.store === kind);
    const subjects = mine.length ? mine : [null];
    for (const c of subjects) {
      const subject = c?.subject ?? STORE_LABEL[kind];
      const value = (pick: (c: WebhookFigures) => number): number | string =>
        c ? pick(c) : notMeasured(kind);
      out.push(
        judge(
          { row: 'throughput', subject, figure: "answers / bare's" },
          g.share,
          value((f) => ratio(f.perSecond, bare.perSecond)),
        ),
        judge(
          { row: 'p99', subject, figure: "p99 / bare's" },
          g.p99Ratio,
          value((f) => ratio(f.p99Ms, bare.p99Ms)),
        ),
      );
    }
  }
  return out;
}
