import {
  type DrillContext,
  must,
  type RunRow,
  redone,
  runRows,
  startPlanRuns,
  waitEnded,
  waitPlanRequests,
  withDb,
} from './drill-context.js';
import { logWindow } from './drill-logs.js';
import { call } from './http.js';
import { bump, secs, sleep } from './stats.js';

// Drill 4 of issue 24: a replica that stops answering without dying. Plan runs wait on the model on replica A
// (B is frozen for the second it takes to create them, so that A claims every one);
// A is frozen (SIGSTOP) for longer than runs.lease_ms plus a sweep, so B takes its runs over and does them
// again; then A is thawed (SIGCONT) and finds its model answers waiting. What does A write then? Counted:
// runs with more than one plan, run_finished written twice, events stored after run_finished; then every
// pending plan of those runs is approved (as a busy approver would, one after the other) and the plans
// executed twice are counted (a plan run whose plans got more than one execute run).

export interface StopFigures {
  runs: number;
  /** Running runs by the replica that claimed them, at the SIGSTOP. */
  heldBy: Record<string, number>;
  frozenMs: number;
  rows: RunRow[];
  redone: number;
  /** From the SIGCONT until every run had ended (null: not within the wait). */
  endedAfterMs: number | null;
  severalPlans: number;
  plans: number;
  severalFinishes: number;
  /** Runs with events after their first run_finished, and how many such events. */
  runsWithEventsAfterFinish: number;
  eventsAfterFinish: number;
  /** Approvals of every pending plan: answers by status. */
  approvals: Record<string, number>;
  /** Execute runs started for these runs' plans, by status once ended. */
  executions: Record<string, number>;
  /** Plan runs whose plans were executed more than once. */
  executedTwice: number;
  /** 'run taken over: its replica stopped' lines in B's log. */
  takenOverByB: number;
}

const RUNS = 8;
/** How long A stays frozen: past a 6 s lease, B's 5 s sweep and its model answer. */
const FROZEN_MS = 14_000;
const END_WAIT_MS = 90_000;

export async function stopDrill(ctx: DrillContext): Promise<StopFigures> {
  const [a, b] = ctx.replicas as [(typeof ctx.replicas)[0], (typeof ctx.replicas)[0]];
  const before = ctx.model.tally.plans;
  // B would claim some of them on the wake-up A sends: frozen, it cannot (it holds no run meanwhile).
  b.daemon.freeze('SIGSTOP');
  let runs: Awaited<ReturnType<typeof startPlanRuns>>;
  try {
    runs = await startPlanRuns(ctx, RUNS, [a], 'stop');
    await waitPlanRequests(ctx, before, RUNS);
  } finally {
    b.daemon.freeze('SIGCONT');
  }
  const heldBy = await withDb(ctx, async (db) => {
    const rows = await db.all<{ claimed_by: string | null; n: number }>(
      `SELECT claimed_by, COUNT(*) AS n FROM runs WHERE id = ANY(?) AND status = 'running' GROUP BY claimed_by`,
      runs.ids,
    );
    return Object.fromEntries(rows.map((r) => [r.claimed_by ?? 'unclaimed', r.n]));
  });
  const t0 = Date.now();
  ctx.log(`stop: SIGSTOP ${a.id} for ${secs(FROZEN_MS)} (it holds ${heldBy[a.id] ?? 0} runs)`);
  a.daemon.freeze('SIGSTOP');
  try {
    await sleep(FROZEN_MS);
  } finally {
    a.daemon.freeze('SIGCONT');
  }
  const thawedAt = Date.now();
  const endedAt = await waitEnded(ctx, runs.ids, END_WAIT_MS);
  const rows = await runRows(ctx, runs.ids);
  const approvals = await approveAllPending(ctx, b, runs.sessionIds);
  const executions = await settleExecutions(ctx, runs.ids);
  const takenOver = logWindow(b.logFile, t0, Date.now()).all.get('run taken over: its replica stopped') ?? 0;
  return {
    runs: RUNS,
    heldBy,
    frozenMs: thawedAt - t0,
    rows,
    redone: redone(rows),
    endedAfterMs: endedAt === null ? null : endedAt - thawedAt,
    severalPlans: rows.filter((r) => r.plans > 1).length,
    plans: rows.reduce((n, r) => n + r.plans, 0),
    severalFinishes: rows.filter((r) => r.finishes > 1).length,
    runsWithEventsAfterFinish: rows.filter((r) => r.after_finish > 0).length,
    eventsAfterFinish: rows.reduce((n, r) => n + r.after_finish, 0),
    approvals,
    executions: executions.byStatus,
    executedTwice: executions.twice,
    takenOverByB: takenOver,
  };
}

/** Every plan pending approval in `sessionIds`, approved through `via` by the approver; answers by status. */
async function approveAllPending(
  ctx: DrillContext,
  via: DrillContext['replicas'][number],
  sessionIds: readonly string[],
): Promise<Record<string, number>> {
  const answers: Record<string, number> = {};
  for (const sessionId of sessionIds) {
    const page = await must(
      ctx,
      via,
      'GET',
      `/v1/plans?status=pending_approval&session_id=${sessionId}&limit=100`,
      undefined,
      200,
      ctx.tokens.approver,
    );
    for (const plan of page.items ?? []) {
      const r = await call(via.url, 'POST', `/v1/plans/${plan.id}/approve`, {
        token: ctx.tokens.approver,
        body: { sha256: plan.sha256 },
      });
      bump(answers, r.ok ? String(r.status) : `error ${r.error}`);
    }
  }
  return answers;
}

/** Waits for the execute runs of `planRunIds`' plans to end; their end states, and plan runs executed twice. */
async function settleExecutions(
  ctx: DrillContext,
  planRunIds: readonly string[],
): Promise<{ byStatus: Record<string, number>; twice: number }> {
  const read = () =>
    withDb(ctx, (db) =>
      db.all<{ id: string; status: string; plan_run: string }>(
        `SELECT x.id, x.status, p.run_id AS plan_run FROM runs x JOIN plans p ON p.id = x.executes_plan_id
         WHERE p.run_id = ANY(?)`,
        planRunIds,
      ),
    );
  const ids = (await read()).map((x) => x.id);
  if (ids.length) await waitEnded(ctx, ids, END_WAIT_MS);
  const rows = await read();
  const byStatus: Record<string, number> = {};
  const perPlanRun: Record<string, number> = {};
  for (const x of rows) {
    bump(byStatus, x.status);
    bump(perPlanRun, x.plan_run);
  }
  return { byStatus, twice: Object.values(perPlanRun).filter((n) => n > 1).length };
}
