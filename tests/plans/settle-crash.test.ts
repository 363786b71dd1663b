import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { waitFor } from '../support/daemon.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { type FreshDatabase, freshDatabase, postgresAvailable, withClient } from '../support/postgres.js';
import { type DaemonProcess, serveProcess } from '../support/process-daemon.js';
import { approveAs, calls, jobIn, plannedJob, proposes, runUntil, tokenIn } from './helpers.js';

// The plan_settling reaction (src/plans/settle.ts) across a SIGKILL. The execute phase records its own
// result, and its failures, on the plan; a cancel settles the plan at once (onCanceled). The end only the
// reaction settles is an execute run that fails before its phase opens (here: its model retired between the
// plan's approval and its execution): the reaction to that run's run_finished moves the plan from
// `approved` to `execution_failed`.
//
// The effect is held, not raced: the test holds the plan's row with a lock of its own, so the daemon's
// settling UPDATE waits on it; once PostgreSQL shows that UPDATE waiting, and the reaction's cursor still
// before the run's run_finished (moved first, a crash now would lose the effect), the daemon is SIGKILLed. A
// backend waiting on a lock does not notice its client died (client_connection_check_interval is 0 by
// default): left alone, it applies the dead daemon's write as soon as the lock goes. Both endings are real,
// and each is a case below:
// - the write never reaches the database (the test ends that backend first): the next daemon's reaction
//   settles the plan, once (the start-up reconcile leaves a run_finished the reaction has still to read to
//   it: only what the log cannot tell is the reconcile's);
// - the write lands after its daemon died (the cursor never moved past the event): the next daemon is handed
//   the event again and changes nothing.
// Either way the plan is settled exactly once as seen from outside (its status and reason stay as first
// written; no daemon's log says it moved the plan more than once), nothing was executed, and a later
// restart changes nothing.

const postgres = await postgresAvailable('settling a plan across a SIGKILL');

/** The model the plan was made with, retired (as of the second daemon's configuration) before it executes. */
const RETIRED = 'claude-sonnet-5-5';
/** How long a step may take on a loaded machine. */
const STEP_MS = 30_000;

let model: ModelServer | undefined;
const children: ChildProcess[] = [];
const cleanups: (() => Promise<unknown> | unknown)[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const c of cleanups.splice(0).reverse()) await c();
  await model?.close();
  model = undefined;
});

interface World {
  db: FreshDatabase;
  repo: string;
  /** A daemon on the test's database and data directory (one replica name throughout); `retired`: config. */
  serve(opts: { retired: boolean }): Promise<DaemonProcess>;
}

async function world(): Promise<World> {
  model = await startModelServer();
  const tmp = tempDir('drydock-settle-crash-');
  cleanups.push(() => tmp.remove());
  const db = await freshDatabase();
  cleanups.push(() => db.drop());
  // PostgreSQL's default, written down: a backend waiting on a lock does not look whether its client is
  // still there, so a killed daemon's waiting write stays until the test says what becomes of it.
  await withClient(db.url, (c) =>
    c.query(`ALTER DATABASE "${db.name}" SET client_connection_check_interval = 0`),
  );
  const repo = join(tmp.path, 'repo');
  makeRepo(repo, { 'README.md': '# demo\n' });
  const retiredConfig = join(tmp.path, 'retired.yaml');
  writeFileSync(
    retiredConfig,
    `anthropic:
  model: claude-opus-5-5
models:
  ${RETIRED}:
    retires_on: '2000-01-01'
    replacement: claude-opus-5-5
`,
  );
  const dataDir = join(tmp.path, 'data');
  return {
    db,
    repo,
    serve: ({ retired }) =>
      serveProcess(dataDir, model!.url, children, retired ? { DRYDOCK_CONFIG: retiredConfig } : {}, {
        store: db,
      }),
  };
}

interface Approved {
  planId: string;
  execRunId: string;
  /** A plan-phase run of the same session, parked on a question: the execute run waits behind it. */
  askRunId: string;
}

/**
 * First daemon, before the model retired: a plan, a second run of its session parked on a question, the
 * plan approved by alice (its execute run queued behind the parked run, since a session runs one run at a
 * time). Stopped gracefully: everything stays as it is in the database.
 */
async function approvedBehindAQuestion(w: World): Promise<Approved> {
  const first = await w.serve({ retired: false });
  const { sessionId, jobId } = await jobIn(first, w.repo, { model: RETIRED }, 'Add a greeting file');
  model!.enqueue(proposes());
  const { plan } = await plannedJob(first, jobId);
  const asking = await first.api('POST', `/v1/sessions/${sessionId}/jobs`, {
    cron: '0 9 * * *',
    prompt: 'Ask first',
  });
  expect(asking.status, JSON.stringify(asking.body)).toBe(201);
  model!.enqueue(
    calls('ask', 'AskUserQuestion', {
      questions: [
        {
          question: 'Which greeting?',
          header: 'Greeting',
          multiSelect: false,
          options: [
            { label: 'Hello', description: 'plain' },
            { label: 'Hi', description: 'short' },
          ],
        },
      ],
    }),
  );
  const fired = await first.api('POST', `/v1/jobs/${asking.body.id}/run`);
  expect(fired.status, JSON.stringify(fired.body)).toBe(201);
  await runUntil(first, fired.body.id, ['awaiting_input']);

  const store = await openPostgresStore({ url: w.db.url, migrate: false });
  const alice = await tokenIn(store, 'alice').finally(() => store.close());
  const exec = await approveAs(first, plan, alice);
  expect(exec.status).toBe('queued');
  expect(await first.stop()).toBe(0);
  return { planId: plan.id, execRunId: exec.id, askRunId: fired.body.id };
}

/** The test's own connections: one in a transaction that holds the plan's row (see `holdPlan`), one to look. */
interface PlanHold {
  client: pg.Client;
  /** The holding backend's pid: the settling write waits on it. */
  pid: number;
  /**
   * Outside the transaction: PostgreSQL shows a transaction the activity of other sessions as of its first
   * look (pg_stat_activity is a snapshot per transaction), so what waits is watched from here.
   */
  observer: pg.Client;
}

async function connected(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'settle-crash-test' });
  await client.connect();
  cleanups.push(() => client.end().catch(() => {}));
  return client;
}

/**
 * Holds the plan's row until rolled back. FOR NO KEY UPDATE conflicts with every UPDATE of the row (what the
 * settling write needs) and with nothing else: a foreign-key check against the plan (a new decision) would
 * not wait on it.
 */
async function holdPlan(w: World, planId: string): Promise<PlanHold> {
  const client = await connected(w.db.url);
  await client.query('BEGIN');
  const row = await client.query('SELECT status FROM plans WHERE id = $1 FOR NO KEY UPDATE', [planId]);
  expect(row.rows[0]?.status).toBe('approved');
  const pid = Number((await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
  return { client, pid, observer: await connected(w.db.url) };
}

/** The plan_settling reaction's durable cursor: the id of the last event it is done with. */
async function settlingCursor(q: pg.ClientBase | string): Promise<number> {
  const sql = "SELECT cursor FROM reaction_cursors WHERE name = 'plan_settling'";
  const rows = typeof q === 'string' ? await withClient(q, (c) => c.query(sql)) : await q.query(sql);
  return Number(rows.rows[0]?.cursor ?? -1);
}

/** The statements of other sessions that wait on the hold's lock. */
async function waitingOn(hold: PlanHold): Promise<string[]> {
  const { rows } = await hold.observer.query(
    'SELECT query FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
    [hold.pid],
  );
  return rows.map((r) => String(r.query));
}

const isSettlingWrite = (query: string) => /^UPDATE plans SET status = \$1, failure_reason/.test(query);

interface Held {
  hold: PlanHold;
  /** The killed daemon. */
  killed: DaemonProcess;
  execRun: { id: string; error: string };
  /** run_finished of the execute run: its id in the event log. */
  finishedAt: number;
}

/**
 * Second daemon, with the model retired: the plan's row held, the parked run canceled, so the execute run
 * starts and fails before its phase opens. Its run_finished is stored; the reaction's settling write waits
 * on the lock and its cursor has not moved past the event: SIGKILL.
 */
async function killedWhileSettling(w: World, a: Approved): Promise<Held> {
  const second = await w.serve({ retired: true });
  expect((await second.api('GET', `/v1/runs/${a.execRunId}`)).body.status).toBe('queued');
  const hold = await holdPlan(w, a.planId);
  const canceled = await second.api('POST', `/v1/runs/${a.askRunId}/cancel`);
  expect(canceled.status, JSON.stringify(canceled.body)).toBe(200);

  const run = await runUntil(second, a.execRunId, ['failed', 'completed', 'canceled'], STEP_MS);
  expect(run.status).toBe('failed');
  expect(run.error).toMatch(new RegExp(`^${RETIRED} retired on 2000-01-01`));
  const finished = await hold.observer.query(
    "SELECT id FROM run_events WHERE run_id = $1 AND type = 'run_finished'",
    [a.execRunId],
  );
  expect(finished.rows).toHaveLength(1);
  const finishedAt = Number(finished.rows[0].id);

  const waiting = await waitFor(
    async () => {
      const queries = await waitingOn(hold);
      return queries.length > 0 ? queries : undefined;
    },
    STEP_MS,
    "the settling write to wait on the plan's row",
  );
  expect(waiting, 'statements waiting on the plan row').toHaveLength(1);
  expect(isSettlingWrite(waiting[0]!), waiting[0]).toBe(true);
  // The effect is under way and not done: the cursor must still be before the event, or a crash now loses it.
  expect(await settlingCursor(hold.observer)).toBeLessThan(finishedAt);

  await second.kill();
  return { hold, killed: second, execRun: { id: run.id, error: run.error }, finishedAt };
}

/** Ends the killed daemon's connections (the one waiting on the lock among them), and waits until they are gone. */
async function endConnectionsOfTheDead(hold: PlanHold): Promise<void> {
  const theirs = "datname = current_database() AND application_name LIKE 'drydock%'";
  await hold.observer.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE ${theirs}`);
  await waitFor(
    async () =>
      Number(
        (await hold.observer.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE ${theirs}`)).rows[0].n,
      ) === 0,
    STEP_MS,
    "the killed daemon's connections to end",
  );
}

const planOf = async (d: DaemonProcess, id: string) => (await d.api('GET', `/v1/plans/${id}`)).body;

/** Lines of the daemon's log that say it failed this plan's execution (one per move it made). */
function settlingLines(d: DaemonProcess, planId: string): string[] {
  return `${d.stdout()}\n${d.stderr()}`
    .split('\n')
    .filter((l) => l.includes('"plan execution failed"') && l.includes(planId));
}

/** Waits until the daemon's reaction is done with the event (handed over again after the restart). */
async function settlingPassed(w: World, finishedAt: number): Promise<void> {
  await waitFor(
    async () => (await settlingCursor(w.db.url)) >= finishedAt,
    STEP_MS,
    "the settling reaction's cursor to pass the execute run's run_finished",
  );
}

/**
 * Settled by the reaction, in its words (the start-up reconcile leaves a run_finished the reaction has still
 * to read to the reaction, and would write a reason of its own).
 */
function expectSettledFor(plan: any, execRun: Held['execRun']): void {
  expect(plan.status).toBe('execution_failed');
  expect(plan.failure_reason).toBe(
    `the execute run ${execRun.id} ended (failed: ${execRun.error}) before the plan's result was recorded`,
  );
}

/** A further restart changes nothing: same plan, no settling line; the daemon stops cleanly. */
async function restartChangesNothing(w: World, planId: string, settled: unknown): Promise<void> {
  const again = await w.serve({ retired: true });
  expect(await planOf(again, planId)).toEqual(settled);
  expect(settlingLines(again, planId)).toEqual([]);
  expect(await again.stop()).toBe(0);
  // Nothing was executed at any point: no branch of the plan in the repository.
  expect(git(w.repo, 'branch', '--list', `drydock/${planId}`)).toBe('');
}

describe.skipIf(!postgres)('settling a plan across a SIGKILL, on PostgreSQL', () => {
  it('killed before the settling write reached the database: the next daemon settles the plan, once', async () => {
    const w = await world();
    const a = await approvedBehindAQuestion(w);
    const { hold, killed, execRun, finishedAt } = await killedWhileSettling(w, a);
    await endConnectionsOfTheDead(hold);
    await hold.client.query('ROLLBACK');
    const untouched = (
      await hold.observer.query('SELECT status, failure_reason FROM plans WHERE id = $1', [a.planId])
    ).rows[0];
    expect(untouched).toEqual({ status: 'approved', failure_reason: null });
    expect(settlingLines(killed, a.planId)).toEqual([]);

    const third = await w.serve({ retired: true });
    const settled = await waitFor(
      async () => {
        const plan = await planOf(third, a.planId);
        return plan.status === 'approved' ? undefined : plan;
      },
      STEP_MS,
      'the plan to be settled',
    );
    expectSettledFor(settled, execRun);
    await settlingPassed(w, finishedAt);
    expect(await planOf(third, a.planId)).toEqual(settled);
    expect(settlingLines(third, a.planId)).toHaveLength(1);
    expect(await third.stop()).toBe(0);

    await restartChangesNothing(w, a.planId, settled);
  }, 180_000);

  it('killed while the settling write waited: it lands after its daemon died, and the next daemon, handed the event again, changes nothing', async () => {
    const w = await world();
    const a = await approvedBehindAQuestion(w);
    const { hold, killed, execRun, finishedAt } = await killedWhileSettling(w, a);
    // The dead daemon's write still waits on the lock after the kill: let it go.
    expect((await waitingOn(hold)).filter(isSettlingWrite)).toHaveLength(1);
    await hold.client.query('ROLLBACK');
    const landed = await waitFor(
      async () => {
        const { rows } = await hold.observer.query('SELECT status, failure_reason FROM plans WHERE id = $1', [
          a.planId,
        ]);
        return rows[0].status === 'approved' ? undefined : rows[0];
      },
      STEP_MS,
      "the dead daemon's settling write to land",
    );
    expect(landed.status).toBe('execution_failed');
    expectSettledFor(landed, execRun);
    // It died before it could say so, and before its cursor moved past the event.
    expect(settlingLines(killed, a.planId)).toEqual([]);
    expect(await settlingCursor(hold.observer)).toBeLessThan(finishedAt);

    const third = await w.serve({ retired: true });
    await settlingPassed(w, finishedAt);
    const settled = await planOf(third, a.planId);
    expectSettledFor(settled, execRun);
    expect(settled.failure_reason).toBe(landed.failure_reason);
    expect(settlingLines(third, a.planId)).toEqual([]);
    expect(await third.stop()).toBe(0);

    await restartChangesNothing(w, a.planId, settled);
  }, 180_000);
});
