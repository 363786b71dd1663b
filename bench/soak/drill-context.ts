import { FINISHED_RUN_STATUSES } from '../../src/domain/types.js';
import { type AuditDb, openPostgresAudit } from './audit-db.js';
import { call } from './http.js';
import type { ScriptedModel } from './model.js';
import type { Replica } from './replicas.js';
import type { ScratchCluster } from './scratch-postgres.js';
import { sleep } from './stats.js';

// What every outage drill works with (drills.ts sets it up once): the scratch cluster, the replicas, the
// scripted model, the tokens; and the moves they share: start plan runs over the API, wait until the model
// holds their requests, wait until they ended, and read what became of them from the database.

export interface DrillContext {
  cluster: ScratchCluster;
  replicas: readonly Replica[];
  model: ScriptedModel;
  tokens: { admin: string; approver: string };
  /** The git workspace every drill session works on. */
  workspace: string;
  /** The model's answers: the k-th waits baseMs + (k mod 8) / 7 x spreadMs, so that of 8 runs asking at once
   *  some get their answer early in a fault and some late. The listen drill sets spreadMs to 0 (it times its
   *  cut against the answer). */
  modelDelay: { baseMs: number; spreadMs: number };
  leaseMs: number;
  log(line: string): void;
}

/** The drill's plan runs: one each in a session of its own (a session runs one run at a time). */
export interface PlanRuns {
  ids: string[];
  sessionIds: string[];
  /** Date.now() when the last one was created. */
  createdAt: number;
}

/** What the store says of one run after a drill. */
export interface RunRow {
  id: string;
  status: string;
  attempt: number;
  claimed_by: string | null;
  /** run_interrupted events with retrying: true. */
  retried: number;
  plans: number;
  finishes: number;
  /** Events stored after the first run_finished. */
  after_finish: number;
}

const FINISHED: readonly string[] = FINISHED_RUN_STATUSES;

/** A call that must answer `expect` (the drills' setup runs while the database is up). */
export async function must(
  ctx: DrillContext,
  via: Replica,
  method: string,
  path: string,
  body: object | undefined,
  expect: number,
  token = ctx.tokens.admin,
): Promise<any> {
  const r = await call(via.url, method, path, { token, ...(body ? { body } : {}) });
  if (!r.ok || r.status !== expect) {
    throw new Error(
      `drill: ${method} ${path} on ${via.id}: ${r.ok ? `${r.status} ${JSON.stringify(r.body)}` : r.error}`,
    );
  }
  return r.body;
}

/**
 * `n` plan runs started now over the API (a session, a one-shot-looking job that never fires on its own,
 * POST /v1/jobs/:id/run), through `via` (each replica in turn when it is a list).
 */
export async function startPlanRuns(
  ctx: DrillContext,
  n: number,
  via: readonly Replica[],
  tag: string,
): Promise<PlanRuns> {
  const made = await Promise.all(
    Array.from({ length: n }, async (_, k) => {
      const r = via[k % via.length]!;
      const session = await must(
        ctx,
        r,
        'POST',
        '/v1/sessions',
        {
          workspace: ctx.workspace,
          name: `drill ${tag} ${k + 1}`,
        },
        201,
      );
      // 1 January, midnight: never due within a drill.
      const job = await must(
        ctx,
        r,
        'POST',
        `/v1/sessions/${session.id}/jobs`,
        {
          cron: '0 0 1 1 *',
          timezone: 'UTC',
          prompt: `Drill ${tag} run ${k + 1}: look over the README and propose tidying it.`,
        },
        201,
      );
      return { session: session.id as string, job: job.id as string, via: r };
    }),
  );
  const runs = await Promise.all(made.map((m) => must(ctx, m.via, 'POST', `/v1/jobs/${m.job}/run`, {}, 201)));
  return {
    ids: runs.map((r) => String(r.id)),
    sessionIds: made.map((m) => m.session),
    createdAt: Date.now(),
  };
}

/** Waits until the model received `count` plan requests more than `before` (its tally); Date.now() then. */
export async function waitPlanRequests(
  ctx: DrillContext,
  before: number,
  count: number,
  timeoutMs = 30_000,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (ctx.model.tally.plans < before + count) {
    if (Date.now() > deadline) {
      throw new Error(
        `drill: the model received ${ctx.model.tally.plans - before} of ${count} plan requests in ${timeoutMs} ms`,
      );
    }
    await sleep(20);
  }
  return Date.now();
}

/** A fresh connection for `fn`, tried again every 250 ms until `timeoutMs` (the database may be restarting). */
export async function withDb<T>(
  ctx: DrillContext,
  fn: (db: AuditDb) => Promise<T>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let db: AuditDb | null = null;
    try {
      db = await openPostgresAudit(ctx.cluster.url);
      return await fn(db);
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(250);
    } finally {
      await db?.close().catch(() => {});
    }
  }
}

/**
 * Waits until every run of `ids` ended (a finished status, no claim) and stayed so for `quietMs` (a replica
 * that lost its claim may still write late). Date.now() when they first all ended, or null after `timeoutMs`.
 */
export async function waitEnded(
  ctx: DrillContext,
  ids: readonly string[],
  timeoutMs: number,
  quietMs = 3_000,
): Promise<number | null> {
  const deadline = Date.now() + timeoutMs;
  let endedAt: number | null = null;
  while (Date.now() < deadline) {
    const open = await withDb(ctx, async (db) => {
      const rows = await db.all<{ status: string; claimed_by: string | null }>(
        'SELECT status, claimed_by FROM runs WHERE id = ANY(?)',
        ids,
      );
      return rows.filter((r) => !FINISHED.includes(r.status) || r.claimed_by !== null).length;
    });
    if (open > 0) endedAt = null;
    else endedAt ??= Date.now();
    if (endedAt !== null && Date.now() - endedAt >= quietMs) return endedAt;
    await sleep(250);
  }
  return null;
}

/** What the store says of `ids`: status, attempt, retries, plans, run_finished events and events after it. */
export async function runRows(ctx: DrillContext, ids: readonly string[]): Promise<RunRow[]> {
  return withDb(ctx, (db) =>
    db.all<RunRow>(
      `SELECT r.id, r.status, r.attempt, r.claimed_by,
         (SELECT COUNT(*) FROM run_events e WHERE e.run_id = r.id AND e.type = 'run_interrupted'
            AND (e.data::jsonb ->> 'retrying') = 'true') AS retried,
         (SELECT COUNT(*) FROM plans p WHERE p.run_id = r.id) AS plans,
         (SELECT COUNT(*) FROM run_events e WHERE e.run_id = r.id AND e.type = 'run_finished') AS finishes,
         (SELECT COUNT(*) FROM run_events e WHERE e.run_id = r.id AND e.seq > (
            SELECT MIN(f.seq) FROM run_events f WHERE f.run_id = r.id AND f.type = 'run_finished')) AS after_finish
       FROM runs r WHERE r.id = ANY(?) ORDER BY r.id`,
      ids,
    ),
  );
}

/** Runs redone: retried after an interruption (a run_interrupted event with retrying) or on attempt > 1. */
export function redone(rows: readonly RunRow[]): number {
  return rows.filter((r) => r.retried > 0 || r.attempt > 1).length;
}

/** "planned 6, interrupted 2" */
export function byStatus(rows: readonly RunRow[]): string {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([s, n]) => `${s} ${n}`)
    .join(', ');
}
