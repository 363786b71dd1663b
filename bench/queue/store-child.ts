import { readFileSync } from 'node:fs';
import { systemClock } from '../../src/clock.js';
import type { Run } from '../../src/domain/types.js';
import { silentLogger } from '../../src/logger.js';
import { PlanDecisions } from '../../src/plans/decisions.js';
import { PlanLifecycle } from '../../src/plans/lifecycle.js';
import { RunEvents } from '../../src/runs/events.js';
import type { RunQueue } from '../../src/runs/queue.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { openTarget } from '../shared/store-target.js';
import { childParams, cpuMs, fail, finish } from './child-io.js';
import { approveRule, CREATE_EXPIRY_INDEX, DROP_EXPIRY_INDEX, EXPIRE_SQL } from './fixtures.js';
import type { Loop, PoolPlan, Pools, StoreParams, StoreReport } from './protocol.js';
import { type BenchSql, postgresSql, sqliteSql } from './sql.js';

// Child: the baselines, in-process on the seeded file (or the PostgreSQL database holding its copy) while no
// daemon has it open. Each call is timed
// on its own (performance.now() around the awaited call):
//   - bare Store.listPlans of the first pending page of 50, as GET /v1/plans asks for it;
//   - the expiry sweep's expirePlans(now) (the scheduler tick runs it), then that listPlans;
//   - the same with a what-if partial index on pending plans' expires_at, created here and dropped again;
//   - bare Store.decidePlan with the approve rule, one distinct pending plan per call;
//   - PlanDecisions.decide(id, 'approve'): what the approve handler runs (expiry sweep, plan/session/run
//     reads, the git HEAD check, decidePlan, the plan_decided event), with a queue that only collects.
// The approvals' execute runs are then carried out on paper as the execute phase would (plan executing, then
// executed, run completed), so the daemon starts on a store it has nothing to recover or reconcile in.

const p = childParams<StoreParams>();
const pools = JSON.parse(readFileSync(p.poolsFile, 'utf8')) as Pools;
const store = await openTarget(p.target, true);
/** The bench's own statements (the what-if index, EXPLAIN): on the SQLite store's connection, or one apart. */
const sql: BenchSql =
  p.target.kind === 'sqlite' ? sqliteSql((store as SqliteStore).db) : await postgresSql(p.target.url);
const filter = { status: 'pending_approval', limit: 50 } as const;

/** Calls `fn` back to back: `warmup` calls untimed, then timed ones for `seconds` (or until `limit`). */
async function loop(seconds: number, warmup: number, fn: (i: number) => Promise<unknown>, limit = Infinity) {
  let i = 0;
  for (; i < Math.min(warmup, limit); i++) await fn(i);
  const out: Loop = { durations: [], wallMs: 0, cpuMs: 0, errors: 0, firstError: null };
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const end = start + seconds * 1000;
  for (; i < limit; i++) {
    const t0 = performance.now();
    if (t0 >= end) break;
    try {
      await fn(i);
    } catch (err) {
      out.errors += 1;
      out.firstError ??= (err as Error).message;
    }
    out.durations.push(performance.now() - t0);
  }
  out.wallMs = performance.now() - start;
  out.cpuMs = cpuMs(cpu0);
  return out;
}

const explain = () => sql.explain(EXPIRE_SQL, 0, 0);

async function main(): Promise<StoreReport> {
  const first = await store.listPlans(filter);
  const list = await loop(p.seconds, 200, () => store.listPlans(filter));
  const handler = await loop(p.seconds, 50, async () => {
    await store.expirePlans(Date.now());
    return store.listPlans(filter);
  });
  const expirePlan = await explain();

  let handlerIndexed: Loop | null = null;
  let expirePlanIndexed: string | null = null;
  if (!p.expiryIndex) {
    await sql.exec(CREATE_EXPIRY_INDEX);
    try {
      expirePlanIndexed = await explain();
      handlerIndexed = await loop(p.seconds, 200, async () => {
        await store.expirePlans(Date.now());
        return store.listPlans(filter);
      });
    } finally {
      await sql.exec(DROP_EXPIRY_INDEX);
    }
  }

  const approved: string[] = [];
  const executeRuns: Run[] = [];
  const approve = (pool: PoolPlan[], act: (plan: PoolPlan) => Promise<{ run: Run | null }>) => {
    return async (i: number) => {
      const plan = pool[i]!;
      const out = await act(plan);
      approved.push(plan[0]);
      if (out.run) executeRuns.push(out.run);
    };
  };
  const decide = await loop(
    p.seconds,
    50,
    approve(pools.store, ([id, sha]) => store.decidePlan(id, approveRule(p.approver, sha, Date.now()))),
    pools.store.length,
  );

  const queue = { submit: () => {} } as unknown as RunQueue;
  const lifecycle = new PlanLifecycle({ store, clock: systemClock, logger: silentLogger() });
  const decisions = new PlanDecisions({
    store,
    clock: systemClock,
    logger: silentLogger(),
    events: new RunEvents(store, systemClock),
    queue,
    lifecycle,
  });
  const service = await loop(
    p.seconds,
    20,
    approve(pools.service, ([id, sha]) =>
      decisions.decide(id, 'approve', { identity: p.approver, sha256: sha }),
    ),
    pools.service.length,
  );

  // As if executed, with the books the execute phase keeps: left queued, the daemon's recovery would run
  // them while HTTP is measured; completed with the plan still approved, its start-up reconcile would
  // rightly fail the plan (an approved plan whose execute run has ended).
  const now = Date.now();
  for (const run of executeRuns) {
    const planId = run.executesPlanId!;
    if (!(await lifecycle.startExecution(planId))) throw new Error(`plan ${planId} did not start executing`);
    if (!(await lifecycle.finishExecution(planId)))
      throw new Error(`plan ${planId} was not recorded executed`);
    await store.transitionRun(run.id, ['queued'], 'completed', { startedAt: now, finishedAt: now });
  }
  await sql.close();
  await store.close();
  return {
    type: 'store',
    list,
    handler,
    handlerIndexed,
    decide,
    service,
    pageItems: first.items.length,
    approved,
    expirePlan,
    expirePlanIndexed,
  };
}

main().then(finish, fail);
