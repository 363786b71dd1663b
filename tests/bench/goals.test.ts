import { describe, expect, it } from 'vitest';
import {
  GOALS,
  goalLines,
  goalText,
  type Judged,
  judge,
  judgeQueue,
  judgeWebhooks,
  type QueueFigures,
  verdictLines,
} from '../../bench/shared/goals.js';

// The benchmarks' goals as the queue and webhook benchmarks judge them: figures in, one row per goal out. A
// goal misjudged here (a pass printed for a figure that misses it, a PASS for a figure not measured) would let
// a regression through the benchmarks' verdicts unseen.

const about = { row: 'list', subject: 'SQLite', figure: 'throughput' };

/** A store whose every queue figure meets its goals, with room. */
const good: QueueFigures = {
  listPerSecond: 9_000,
  listP99Ms: 7,
  approvePerSecond: 2_000,
  approveP99Ms: 12,
  approveDaemonCpuMs: 0.9,
  approveInProcessCpuMs: 0.8,
};

const find = (rows: Judged[], subject: string, row: string, figure: string) => {
  const found = rows.filter((j) => j.subject === subject && j.row === row && j.figure === figure);
  expect(found, `${subject} ${row} ${figure}`).toHaveLength(1);
  return found[0]!;
};

describe('judge', () => {
  it('passes a figure at its limit and fails one just beyond it, either way round', () => {
    const atLeast = GOALS.queue.listRate;
    expect(judge(about, atLeast, 2_000).verdict).toBe('PASS');
    expect(judge(about, atLeast, 1_999.9).verdict).toBe('FAIL');
    const atMost = GOALS.queue.listP99;
    expect(judge(about, atMost, 20).verdict).toBe('PASS');
    expect(judge(about, atMost, 20.01).verdict).toBe('FAIL');
    expect(judge(about, atMost, 0).verdict).toBe('PASS');
  });

  it('meets a limit that a difference reaches up to rounding', () => {
    expect(1.0 - 0.7).toBeGreaterThan(0.3);
    expect(judge(about, GOALS.queue.approveHttpCpu, 1.0 - 0.7).verdict).toBe('PASS');
    expect(judge(about, GOALS.queue.approveHttpCpu, 0.301).verdict).toBe('FAIL');
  });

  it('fails a figure that was measured but has no value, and leaves one not measured n/a', () => {
    expect(judge(about, GOALS.queue.listRate, Number.NaN)).toMatchObject({
      verdict: 'FAIL',
      measured: 'none',
    });
    expect(judge(about, GOALS.queue.listRate, Number.POSITIVE_INFINITY).verdict).toBe('FAIL');
    expect(judge(about, GOALS.queue.listRate, 'PostgreSQL not measured')).toMatchObject({
      verdict: 'n/a',
      measured: 'n/a',
      reason: 'PostgreSQL not measured',
    });
  });

  it('prints the figure and the goal in the same unit', () => {
    expect(goalText(GOALS.queue.listRate)).toBe('>= 2,000 req/s');
    expect(goalText(GOALS.queue.approveP99)).toBe('<= 20 ms');
    expect(goalText(GOALS.queue.approveShare)).toBe('>= 50 %');
    expect(goalText(GOALS.webhooks.p99Ratio)).toBe('<= 1.2×');
    expect(judge(about, GOALS.queue.listShare, 0.496)).toMatchObject({ measured: '49.6 %', verdict: 'FAIL' });
    expect(judge(about, GOALS.webhooks.p99Ratio, 1.48)).toMatchObject({ measured: '1.48×', verdict: 'FAIL' });
  });
});

describe('judgeQueue', () => {
  it('judges SQLite alone and leaves every PostgreSQL goal n/a, never PASS', () => {
    const rows = judgeQueue({ sqlite: good });
    expect(rows.filter((j) => j.subject === 'SQLite').every((j) => j.verdict === 'PASS')).toBe(true);
    const postgres = rows.filter((j) => j.subject === 'PostgreSQL');
    expect(postgres.map((j) => j.figure).sort()).toEqual(
      ['daemon CPU over in-process', 'p99', "throughput / SQLite's", "throughput / SQLite's"].sort(),
    );
    expect(postgres.every((j) => j.verdict === 'n/a')).toBe(true);
    expect(verdictLines(rows).pass).toBe(true);
  });

  it("judges PostgreSQL's throughput by its share of SQLite's, at 50 %", () => {
    const at = judgeQueue({
      sqlite: good,
      postgres: { ...good, listPerSecond: 4_500, approvePerSecond: 1_000 },
    });
    expect(find(at, 'PostgreSQL', 'list', "throughput / SQLite's").verdict).toBe('PASS');
    expect(find(at, 'PostgreSQL', 'approve', "throughput / SQLite's").verdict).toBe('PASS');
    const below = judgeQueue({
      sqlite: good,
      postgres: { ...good, listPerSecond: 4_400, approvePerSecond: 999 },
    });
    expect(find(below, 'PostgreSQL', 'list', "throughput / SQLite's")).toMatchObject({
      verdict: 'FAIL',
      measured: '48.9 %',
    });
    expect(find(below, 'PostgreSQL', 'approve', "throughput / SQLite's").verdict).toBe('FAIL');
    // PostgreSQL's own rate is not held to SQLite's 2,000 req/s: 840 of SQLite's 1,500 is more than half.
    const slowBoth = judgeQueue({
      sqlite: { ...good, listPerSecond: 1_500 },
      postgres: { ...good, listPerSecond: 840 },
    });
    expect(find(slowBoth, 'SQLite', 'list', 'throughput').verdict).toBe('FAIL');
    expect(find(slowBoth, 'PostgreSQL', 'list', "throughput / SQLite's").verdict).toBe('PASS');
  });

  it('holds both stores to the list p99, SQLite alone to the approve rate and p99', () => {
    const rows = judgeQueue({
      sqlite: { ...good, approvePerSecond: 508, approveP99Ms: 51 },
      postgres: { ...good, listP99Ms: 36.7, approvePerSecond: 2_000, approveP99Ms: 89 },
    });
    expect(find(rows, 'PostgreSQL', 'list', 'p99').verdict).toBe('FAIL');
    expect(find(rows, 'SQLite', 'approve', 'throughput').verdict).toBe('FAIL');
    expect(find(rows, 'SQLite', 'approve', 'p99').verdict).toBe('FAIL');
    expect(
      rows.filter((j) => j.subject === 'PostgreSQL' && j.row === 'approve' && j.figure === 'p99'),
    ).toEqual([]);
  });

  it('judges the CPU HTTP adds to an approval over the in-process call, on each store', () => {
    const rows = judgeQueue({
      sqlite: { ...good, approveDaemonCpuMs: 2.25, approveInProcessCpuMs: 0.77 },
      postgres: { ...good, approveDaemonCpuMs: 1.1, approveInProcessCpuMs: 0.8 },
    });
    expect(find(rows, 'SQLite', 'approve', 'daemon CPU over in-process')).toMatchObject({
      verdict: 'FAIL',
      measured: '1.48 ms',
    });
    expect(find(rows, 'PostgreSQL', 'approve', 'daemon CPU over in-process').verdict).toBe('PASS');
  });

  it('fails a store whose phase gave no figure, and judges PostgreSQL alone without SQLite', () => {
    const none = judgeQueue({ sqlite: { ...good, listPerSecond: Number.NaN, listP99Ms: Number.NaN } });
    expect(find(none, 'SQLite', 'list', 'throughput').verdict).toBe('FAIL');
    expect(find(none, 'SQLite', 'list', 'p99').verdict).toBe('FAIL');
    const alone = judgeQueue({ postgres: good });
    expect(alone.filter((j) => j.subject === 'SQLite').every((j) => j.verdict === 'n/a')).toBe(true);
    expect(find(alone, 'PostgreSQL', 'list', "throughput / SQLite's").verdict).toBe('n/a');
    expect(find(alone, 'PostgreSQL', 'list', 'p99').verdict).toBe('PASS');
  });
});

describe('judgeWebhooks', () => {
  const bare = { perSecond: 6_000, p99Ms: 20 };

  it("judges each column's answers against the bare handler: half its rate, 1.2 times its p99", () => {
    const rows = judgeWebhooks(bare, [
      { subject: 'SQLite', store: 'sqlite', perSecond: 3_000, p99Ms: 24 },
      { subject: 'PostgreSQL', store: 'postgres', perSecond: 2_999, p99Ms: 24.1 },
    ]);
    expect(find(rows, 'SQLite', 'throughput', "answers / bare's").verdict).toBe('PASS');
    expect(find(rows, 'SQLite', 'p99', "p99 / bare's").verdict).toBe('PASS');
    expect(find(rows, 'PostgreSQL', 'throughput', "answers / bare's").verdict).toBe('FAIL');
    expect(find(rows, 'PostgreSQL', 'p99', "p99 / bare's").verdict).toBe('FAIL');
  });

  it('judges every replica count, and leaves the store that did not run n/a', () => {
    const rows = judgeWebhooks(bare, [
      { subject: 'PostgreSQL, 1 replica', store: 'postgres', perSecond: 3_500, p99Ms: 22 },
      { subject: 'PostgreSQL, 2 replicas', store: 'postgres', perSecond: 2_000, p99Ms: 30 },
    ]);
    expect(find(rows, 'PostgreSQL, 1 replica', 'throughput', "answers / bare's").verdict).toBe('PASS');
    expect(find(rows, 'PostgreSQL, 2 replicas', 'throughput', "answers / bare's").verdict).toBe('FAIL');
    expect(find(rows, 'PostgreSQL, 2 replicas', 'p99', "p99 / bare's").verdict).toBe('FAIL');
    expect(rows.filter((j) => j.subject === 'SQLite').map((j) => j.verdict)).toEqual(['n/a', 'n/a']);
    expect(rows.some((j) => j.subject === 'PostgreSQL')).toBe(false);
  });

  it('fails drydock when the bare handler gave no figure to compare with', () => {
    const rows = judgeWebhooks({ perSecond: Number.NaN, p99Ms: Number.NaN }, [
      { subject: 'SQLite', store: 'sqlite', perSecond: 3_000, p99Ms: 24 },
    ]);
    expect(find(rows, 'SQLite', 'throughput', "answers / bare's").verdict).toBe('FAIL');
  });
});

describe('verdictLines and goalLines', () => {
  it('names every failure, says what was not judged, and fails only on a failure', () => {
    const rows = judgeQueue({
      sqlite: { ...good, listP99Ms: 20.8 },
      postgres: { ...good, approvePerSecond: 250 },
    });
    const v = verdictLines(rows);
    expect(v.pass).toBe(false);
    expect(v.lines[0]).toBe('verdict: FAIL: 7 of 9 met');
    expect(v.lines.slice(1, 3)).toEqual([
      '  FAIL SQLite, list: p99 20.8 ms (goal <= 20 ms)',
      "  FAIL PostgreSQL, approve: throughput / SQLite's 12.5 % (goal >= 50 %)",
    ]);

    const alone = verdictLines(judgeQueue({ sqlite: good }));
    expect(alone.pass).toBe(true);
    expect(alone.lines[0]).toBe('verdict: PASS: 5 of 5 met, 4 not judged (n/a)');
    expect(alone.lines.join('\n')).toContain('PostgreSQL not measured in this run');
  });

  it("lists a row's goals, one store's or every store's", () => {
    const rows = judgeQueue({ sqlite: good });
    expect(goalLines(rows, 'list', 'SQLite')).toEqual([
      'throughput >= 2,000 req/s: 9,000 req/s PASS',
      'p99 <= 20 ms: 7.00 ms PASS',
    ]);
    expect(goalLines(rows, 'list')).toContain("PostgreSQL throughput / SQLite's >= 50 %: n/a");
  });
});
