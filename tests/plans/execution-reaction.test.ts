import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { createLogger } from '../../src/logger.js';
import { PlanLifecycle } from '../../src/plans/lifecycle.js';
import { ExecutionSettler } from '../../src/plans/settle.js';
import { Reactions } from '../../src/reactions/reactions.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { givenPlan, givenRun, T0 } from '../store/contract/fixtures.js';
import { tempDir } from '../support/harness.js';

// Settling a plan is a reaction to run_finished in the stored log: an execute run that ended without its
// result recorded fails its plan, once, however often the event is handed over (a restart between the
// settling and the cursor's move hands it over again).

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function setup() {
  const tmp = tempDir('drydock-settling-');
  cleanups.push(() => tmp.remove());
  const store = new SqliteStore({ file: join(tmp.path, 'drydock.db') });
  cleanups.push(() => store.close());
  const lines: string[] = [];
  const logger = createLogger('debug', { write: (l: string) => void lines.push(l) });
  const lifecycle = new PlanLifecycle({ store, clock: systemClock, logger });
  const executions = new ExecutionSettler({ store, logger, lifecycle });
  const reactions = new Reactions({
    store,
    clock: systemClock,
    logger,
    holder: 'r-a',
    reactions: [executions],
  });
  return { store, executions, reactions, lines };
}

/** An execute run of plan `planId` that ended `status` (run_finished appended with the move). */
async function endedExecuteRun(
  store: SqliteStore,
  id: string,
  planId: string,
  status: 'failed' | 'completed',
) {
  await givenRun(store, id, { phase: 'execute', executesPlanId: planId });
  expect(await store.transitionRun(id, ['queued'], 'running', { startedAt: T0 })).toBe(true);
  const receipt = {
    at: T0 + 1,
    event: (run: { status: string }) => ({ type: 'run_finished', data: { status: run.status } }),
    stored: () => {},
  };
  expect(
    await store.transitionRun(id, ['running'], status, { finishedAt: T0 + 1, error: 'boom', receipt }),
  ).toBe(true);
}

it('an execute run that ended with its plan still executing fails the plan, once, however often the event comes', async () => {
  const { store, executions, reactions } = setup();
  await reactions.init();
  await givenPlan(store, 'pln_a', { status: 'executing' });
  await endedExecuteRun(store, 'run_exec_a', 'pln_a', 'failed');
  const { events } = await store.eventsAfter(0, ['run_finished'], 10);
  expect(events.map((e) => e.runId)).toEqual(['run_exec_a']);

  await reactions.runOnce();
  const failed = await store.getPlan('pln_a');
  expect(failed?.status).toBe('execution_failed');
  expect(failed?.failureReason).toContain('run_exec_a');

  // Handed over again (a crash before the cursor moved): nothing changes.
  await executions.react(events[0]!);
  expect(await store.getPlan('pln_a')).toEqual(failed);
  expect(await store.reactionCursor('plan_settling')).toBe(await store.eventLogEnd());
});

it('a plan whose result the execute phase recorded stays executed', async () => {
  const { store, reactions } = setup();
  await reactions.init();
  await givenPlan(store, 'pln_b', { status: 'executed' });
  await endedExecuteRun(store, 'run_exec_b', 'pln_b', 'completed');
  await reactions.runOnce();
  expect((await store.getPlan('pln_b'))?.status).toBe('executed');
});

it('the start-up reconcile leaves to the reaction an end it has still to read, and settles one the log cannot tell', async () => {
  const { store, executions, reactions } = setup();
  await givenPlan(store, 'pln_old', { status: 'executing' });
  await endedExecuteRun(store, 'run_exec_old', 'pln_old', 'failed');
  // The reaction starts after that end (a first start places its cursor at the log's end).
  await reactions.init();
  await givenPlan(store, 'pln_new', { status: 'executing' });
  await endedExecuteRun(store, 'run_exec_new', 'pln_new', 'failed');

  expect(await executions.reconcile()).toBe(1);
  const old = await store.getPlan('pln_old');
  expect(old?.status).toBe('execution_failed');
  expect(old?.failureReason).toContain('when drydock started');
  expect((await store.getPlan('pln_new'))?.status).toBe('executing');

  await reactions.runOnce();
  const settled = await store.getPlan('pln_new');
  expect(settled?.status).toBe('execution_failed');
  expect(settled?.failureReason).toBe(
    "the execute run run_exec_new ended (failed: boom) before the plan's result was recorded",
  );
  expect(await store.getPlan('pln_old')).toEqual(old);
});
