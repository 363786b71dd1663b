import { type AuditDb, openPostgresAudit } from './audit-db.js';
import {
  type DrillContext,
  type RunRow,
  redone,
  runRows,
  startPlanRuns,
  waitEnded,
  waitPlanRequests,
  withDb,
} from './drill-context.js';
import { type LogWindow, logWindow } from './drill-logs.js';
import { call } from './http.js';
import { listenBackends } from './listeners.js';
import { bump, secs, sleep } from './stats.js';

// Drills 1-3 of issue 24: the database goes away while plan runs wait on the model, and comes back.
//   - restart: `pg_ctlcluster stop -m fast` (sessions ended cleanly), then `start` 2 s after the stop began;
//   - crash: `pg_ctlcluster stop -m immediate` (no shutdown checkpoint: recovery at the start), `start` 17 s
//     after the stop began.
// The database is back when it accepts a connection again (polled every 50 ms while `start` runs: the wrapper
// returns a second or more after that).
// Measured: what became of the runs (redone, ended how, several plans), each replica's warnings and errors
// from the fault until the runs ended, what a client polling the API got meanwhile, and after the database
// answers again, how long until each replica's /readyz says 200 and its LISTEN connection is back (wake-ups
// from the other replica work again).

export interface OutageSpec {
  name: string;
  mode: 'fast' | 'immediate';
  /** From the stop's start to the start's start, ms (0: start right after the stop). */
  downMs: number;
}

export interface OutageFigures {
  spec: OutageSpec;
  runs: number;
  /** Claimed by each replica when the database went (by replica id). */
  heldBy: Record<string, number>;
  /** From the stop's start until the server accepted a connection again. */
  downMs: number;
  /** How long `pg_ctlcluster stop` took, and `start` until the server accepted a connection. */
  stopMs: number;
  startMs: number;
  rows: RunRow[];
  redone: number;
  /** From the database's return until every run had ended (null: not within the wait). */
  endedAfterMs: number | null;
  /** By replica id: its log from the stop's start until the runs ended (or the wait ran out). */
  logs: Map<string, LogWindow>;
  /** A client reading GET /v1/runs/:id from each replica every POLL_MS while the drill ran: answers by status. */
  api: Record<string, number>;
  /** By replica id, ms after the database's return (null: not within WAKE_WAIT_MS). */
  readyAfterMs: Map<string, number | null>;
  listenAfterMs: Map<string, number | null>;
}

const RUNS = 8;
/** The stop begins this long after the last run asked the model: answers (2-4 s after the requests) then
 *  come both during the outage and after it. */
const STOP_AFTER_MS = 1_000;
const POLL_MS = 500;
/** How long the drill waits for the runs to end after the database is back. */
const END_WAIT_MS = 150_000;
/** How long it looks for /readyz and the LISTEN connection after the database is back. */
const WAKE_WAIT_MS = 90_000;
const PROBE_EVERY_MS = 100;

export async function outageDrill(ctx: DrillContext, spec: OutageSpec): Promise<OutageFigures> {
  const before = ctx.model.tally.plans;
  const runs = await startPlanRuns(ctx, RUNS, ctx.replicas, spec.name);
  const askedAt = await waitPlanRequests(ctx, before, RUNS);
  // Every run waits on its model answer now (base to base + spread after the request).
  const heldBy = await claims(ctx, runs.ids);
  const poll = pollApi(ctx, runs.ids);
  await sleep(Math.max(0, askedAt + STOP_AFTER_MS - Date.now()));
  const t0 = Date.now();
  ctx.log(
    `${spec.name}: ${RUNS} runs asked the model ${secs(t0 - askedAt)} ago; pg_ctlcluster stop -m ${spec.mode}`,
  );
  await ctx.cluster.stopServer(spec.mode);
  const stoppedAt = Date.now();
  await sleep(Math.max(0, t0 + spec.downMs - Date.now()));
  const startAt = Date.now();
  const starting = ctx.cluster.startServer();
  const upAt = await accepting(ctx);
  await starting;
  ctx.log(`${spec.name}: database back after ${secs(upAt - t0)}`);
  const [wake, endedAt] = await Promise.all([probeWakeups(ctx, upAt), waitEnded(ctx, runs.ids, END_WAIT_MS)]);
  const api = await poll.stop();
  const to = endedAt ?? Date.now();
  const rows = await runRows(ctx, runs.ids);
  return {
    spec,
    runs: RUNS,
    heldBy,
    downMs: upAt - t0,
    stopMs: stoppedAt - t0,
    startMs: upAt - startAt,
    rows,
    redone: redone(rows),
    endedAfterMs: endedAt === null ? null : endedAt - upAt,
    logs: new Map(ctx.replicas.map((r) => [r.id, logWindow(r.logFile, t0, to)])),
    api,
    readyAfterMs: wake.ready,
    listenAfterMs: wake.listen,
  };
}

/** Date.now() once the cluster accepts a connection (tried every 50 ms, for at most 60 s). */
async function accepting(ctx: DrillContext): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const db = await openPostgresAudit(ctx.cluster.url);
      const at = Date.now();
      await db.close();
      return at;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(50);
    }
  }
}

/** Running runs of `ids` by the replica that claimed them. */
async function claims(ctx: DrillContext, ids: readonly string[]): Promise<Record<string, number>> {
  const rows = await withDb(ctx, (db) =>
    db.all<{ claimed_by: string | null; n: number }>(
      `SELECT claimed_by, COUNT(*) AS n FROM runs WHERE id = ANY(?) AND status = 'running' GROUP BY claimed_by`,
      ids,
    ),
  );
  return Object.fromEntries(rows.map((r) => [r.claimed_by ?? 'unclaimed', r.n]));
}

/** A client reading the drill's runs from every replica while it lasts (the 503 warnings come from these). */
function pollApi(ctx: DrillContext, ids: readonly string[]): { stop(): Promise<Record<string, number>> } {
  const answers: Record<string, number> = {};
  let running = true;
  const loop = (async () => {
    for (let k = 0; running; k++) {
      await Promise.all(
        ctx.replicas.map(async (r) => {
          const reply = await call(r.url, 'GET', `/v1/runs/${ids[k % ids.length]}`, {
            token: ctx.tokens.admin,
            timeoutMs: 5_000,
          });
          bump(answers, reply.ok ? String(reply.status) : `error ${reply.error}`);
        }),
      );
      await sleep(POLL_MS);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return answers;
    },
  };
}

/**
 * From `upAt` (the database accepts connections again), every PROBE_EVERY_MS: each replica's /readyz, and
 * its LISTEN connection in pg_stat_activity. Times after `upAt`, by replica id.
 */
async function probeWakeups(
  ctx: DrillContext,
  upAt: number,
): Promise<{ ready: Map<string, number | null>; listen: Map<string, number | null> }> {
  const ready = new Map<string, number | null>(ctx.replicas.map((r) => [r.id, null]));
  const listen = new Map<string, number | null>(ctx.replicas.map((r) => [r.id, null]));
  const done = () => [...ready.values(), ...listen.values()].every((v) => v !== null);
  let db: AuditDb | null = null;
  while (!done() && Date.now() - upAt < WAKE_WAIT_MS) {
    const tick = Date.now();
    await Promise.all(
      ctx.replicas.map(async (r) => {
        if (ready.get(r.id) !== null) return;
        const reply = await call(r.url, 'GET', '/readyz', { timeoutMs: 1_000 });
        if (reply.ok && reply.status === 200) ready.set(r.id, Date.now() - upAt);
      }),
    );
    try {
      db ??= await openPostgresAudit(ctx.cluster.url);
      const found = await listenBackends(db, ctx.replicas);
      for (const [id, b] of found)
        if (b.listening && listen.get(id) === null) listen.set(id, Date.now() - upAt);
    } catch {
      await db?.close().catch(() => {});
      db = null;
    }
    await sleep(Math.max(0, tick + PROBE_EVERY_MS - Date.now()));
  }
  await db?.close().catch(() => {});
  return { ready, listen };
}
