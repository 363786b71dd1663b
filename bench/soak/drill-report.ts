import { byStatus } from './drill-context.js';
import type { ListenTrial } from './drill-listen.js';
import { BOOKKEEPING_FAILED, topMessages, UNAVAILABLE_503 } from './drill-logs.js';
import type { OutageFigures } from './drill-outage.js';
import type { StopFigures } from './drill-stop.js';
import { counts, secs, table } from './stats.js';

// The drills' figures as one table (drill, figure, value), then the warnings behind the log counts.

export interface DrillResults {
  outages: OutageFigures[];
  stop: StopFigures | null;
  listen: ListenTrial[] | null;
}

const ms = (v: number | null | undefined, none = 'never') => (v === null || v === undefined ? none : secs(v));
const byReplica = (m: Map<string, number | null>, none: string) =>
  [...m.entries()].map(([id, v]) => `${id} ${ms(v, none)}`).join(', ');

function outageRows(f: OutageFigures): string[][] {
  const title = f.spec.mode === 'fast' ? 'database restart' : `database crash, ${secs(f.spec.downMs)}`;
  const bad = f.rows.filter((r) => r.status === 'interrupted' || r.status === 'failed').length;
  const rows: string[][] = [
    [
      title,
      `down (stop -m ${f.spec.mode} issued ... a connection accepted again)`,
      `${secs(f.downMs)} (stop took ${secs(f.stopMs)}, start until accepting ${secs(f.startMs)})`,
    ],
    ['', 'plan runs waiting on the model, stop 1 s after they asked', `${f.runs} (${counts(f.heldBy)})`],
    ['', 'runs redone (run_interrupted retrying, or attempt > 1)', `${f.redone} of ${f.runs}`],
    ['', 'ended', byStatus(f.rows)],
    ['', 'ended interrupted or failed', String(bad)],
    ['', 'runs with more than one plan', String(f.rows.filter((r) => r.plans > 1).length)],
    ['', 'every run ended, after the database was back', ms(f.endedAfterMs, 'not within 150 s')],
  ];
  for (const [id, w] of f.logs) {
    rows.push([
      '',
      `${id} log, stop to end: lines >= warn (bookkeeping failed, 503)`,
      `${w.atLeastWarn} (${w.byMessage.get(BOOKKEEPING_FAILED) ?? 0}, ${w.byMessage.get(UNAVAILABLE_503) ?? 0})`,
    ]);
  }
  rows.push(['', 'API answers to GET /v1/runs/:id, each replica every 0.5 s', counts(f.api)]);
  rows.push([
    `wake-up after the ${f.spec.mode === 'fast' ? 'restart' : 'crash'}`,
    '/readyz 200, after the database was back',
    byReplica(f.readyAfterMs, 'not within 90 s'),
  ]);
  rows.push(['', 'LISTEN connection back (pg_stat_activity)', byReplica(f.listenAfterMs, 'not within 90 s')]);
  return rows;
}

function stopRows(s: StopFigures): string[][] {
  return [
    ['SIGSTOP past the lease', 'replica-a frozen (SIGSTOP ... SIGCONT)', secs(s.frozenMs)],
    ['', 'plan runs waiting on the model at the SIGSTOP', `${s.runs} (${counts(s.heldBy)})`],
    ['', 'runs redone (taken over: run_interrupted retrying, or attempt > 1)', `${s.redone} of ${s.runs}`],
    ['', "'run taken over' lines in replica-b's log", String(s.takenOverByB)],
    ['', 'ended', byStatus(s.rows)],
    ['', 'every run ended, after the SIGCONT', ms(s.endedAfterMs, 'not within 90 s')],
    ['', 'runs with more than one plan (plans in all)', `${s.severalPlans} (${s.plans})`],
    ['', 'runs with run_finished more than once', String(s.severalFinishes)],
    [
      '',
      'events stored after run_finished (on runs)',
      `${s.eventsAfterFinish} (${s.runsWithEventsAfterFinish})`,
    ],
    ['', 'approving every pending plan: answers', counts(s.approvals)],
    ['', 'execute runs of these plans, ended', counts(s.executions)],
    ['', 'plan runs executed more than once', String(s.executedTwice)],
  ];
}

function listenRows(trials: readonly ListenTrial[]): string[][] {
  return trials.map((t, i) => [
    i === 0 ? 'LISTEN cut' : '',
    t.leadMs === null
      ? `no cut (control): stream on ${t.streamer}, run on ${t.executor}`
      : `cut ${secs(t.leadMs)} before the answer, stream opened ${t.openAfterCut ? 'after' : 'before'} it: ` +
        `on ${t.streamer}, run on ${t.executor}`,
    `${t.received} of ${t.stored} events, run_finished ${t.gotFinished ? `after ${ms(t.finishedAfterMs)}` : 'never'}, ` +
      `closed ${t.closed ? `after ${ms(t.closedAfterMs)}` : 'not within 40 s'}` +
      (t.leadMs === null
        ? ''
        : t.cut
          ? `; LISTEN back after ${ms(t.listenBackMs)}`
          : '; no LISTEN backend found'),
  ]);
}

export function report(r: DrillResults, o: { header: string[] }): string[] {
  const rows: string[][] = [['drill', 'figure', 'value']];
  for (const f of r.outages) rows.push(...outageRows(f));
  if (r.stop) rows.push(...stopRows(r.stop));
  if (r.listen) rows.push(...listenRows(r.listen));
  const details = r.outages.flatMap((f) => [
    `${f.spec.name}: warnings and errors from the stop until the runs ended`,
    ...[...f.logs].map(([id, w]) => `  ${id}: ${topMessages(w)}`),
  ]);
  return ['', ...o.header, '', ...table(rows, 2, ''), '', ...details];
}
