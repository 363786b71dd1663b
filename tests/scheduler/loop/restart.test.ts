import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Run } from '../../../src/domain/types.js';
import { silentLogger } from '../../../src/logger.js';
import { jitterOptions } from '../../../src/scheduler/job-request.js';
import { Scheduler } from '../../../src/scheduler/loop.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { type Harness, T0 } from '../../support/harness.js';
import { unjitteredHarness } from '../../support/scheduler-timer.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

let h: Harness;
const extra: { stop(): Promise<void> }[] = [];
beforeEach(async () => {
  h = await unjitteredHarness();
});
afterEach(async () => {
  for (const x of extra.splice(0)) await x.stop();
  await h.close();
});

/** A second daemon process's view: its own connection to the same file and its own scheduler. */
function secondScheduler(runs: Run[]): { store: SqliteStore; scheduler: Scheduler } {
  const store = new SqliteStore({ file: join(h.config.data_dir, 'drydock.db'), now: () => h.clock.now() });
  const scheduler = new Scheduler({
    store,
    clock: h.clock,
    logger: silentLogger(),
    onRun: (run) => runs.push(run),
    catchupWindowMs: h.config.scheduler.catchup_window_ms,
    maxWaitMs: h.config.scheduler.max_wait_ms,
    batchSize: 7,
    jitter: jitterOptions(h.config),
    maxBuffered: 100,
    cancelRun: async () => false,
  });
  extra.push({
    stop: async () => {
      await scheduler.stop();
      await store.close();
    },
  });
  return { store, scheduler };
}

async function setup(cron: string, recurring = true): Promise<{ sessionId: string; jobId: string }> {
  const s = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
  const j = await h.call('POST', `/v1/sessions/${s.body.id}/jobs`, {
    body: { cron, prompt: 'p', recurring },
  });
  expect(j.status).toBe(201);
  return { sessionId: s.body.id, jobId: j.body.id };
}

describe('restart after downtime', () => {
  it('inside the catch-up window: the passed slot fires once, late', async () => {
    const { jobId } = await setup('0 * * * *');
    h.clock.set(T0 + HOUR); // 09:00 fires
    await h.scheduler.tick();
    await h.store.transitionRun(h.runs[0]!.id, ['queued'], 'completed', {});
    await h.scheduler.stop();

    // Down from 09:00 to 10:40: the 10:00 slot passed 40 minutes ago, inside the 1 h window.
    h.clock.set(T0 + 2 * HOUR + 40 * MIN);
    const runs: Run[] = [];
    const { scheduler } = secondScheduler(runs);
    const report = await scheduler.tick();
    expect(report).toMatchObject({ fired: 1, missed: 0 });
    expect(runs.map((r) => r.slotAt)).toEqual([T0 + 2 * HOUR]);
    expect(await h.store.getJob(jobId)).toMatchObject({ nextNominalAt: T0 + 3 * HOUR });
  });

  it('outside the window: old slots are recorded missed, the newest within the window fires', async () => {
    const { jobId } = await setup('0 * * * *');
    // Never ticked since 08:00; now 12:30: slots 09, 10, 11 are older than an hour, 12:00 is not.
    h.clock.set(T0 + 4 * HOUR + 30 * MIN);
    const runs: Run[] = [];
    const { scheduler } = secondScheduler(runs);
    const report = await scheduler.tick();
    expect(report).toMatchObject({ fired: 1, missed: 3 });
    expect(runs.map((r) => r.slotAt)).toEqual([T0 + 4 * HOUR]);
    const slots = await h.store.listSlots(jobId);
    expect(slots.map((s) => [s.slotAt - T0, s.lastSlotAt - T0, s.slots, s.outcome])).toEqual([
      [HOUR, 3 * HOUR, 3, 'missed'],
      [4 * HOUR, 4 * HOUR, 1, 'fired'],
    ]);
  });

  it('entirely outside the window: nothing fires, the slots are missed and the next one is scheduled', async () => {
    const { jobId } = await setup('0 9 * * *');
    h.clock.set(Date.parse('2026-06-03T12:00:00.000Z'));
    const runs: Run[] = [];
    const { scheduler } = secondScheduler(runs);
    const report = await scheduler.tick();
    expect(report).toMatchObject({ fired: 0, missed: 3 });
    expect(runs).toEqual([]);
    expect(await h.store.getJob(jobId)).toMatchObject({
      status: 'active',
      nextNominalAt: Date.parse('2026-06-04T09:00:00.000Z'),
    });
  });

  it('a one-shot missed while down waits for a person, who can run it once', async () => {
    const { jobId } = await setup('0 10 * * *', false);
    h.scheduler.start();
    await h.scheduler.stop();
    // Down from 08:00 to 10:30; the one-shot's 10:00 slot passed while down.
    h.clock.set(T0 + 2 * HOUR + 30 * MIN);
    const runs: Run[] = [];
    const { scheduler } = secondScheduler(runs);
    scheduler.start();
    await scheduler.tick();
    expect(runs).toEqual([]);
    const missed = await h.call('GET', `/v1/jobs/${jobId}`);
    expect(missed.body).toMatchObject({ status: 'missed', next_fire_at: '2026-06-01T10:00:00.000Z' });
    // Later ticks leave it alone.
    h.clock.advance(HOUR);
    await scheduler.tick();
    expect(runs).toEqual([]);

    const run = await h.call('POST', `/v1/jobs/${jobId}/run`);
    expect(run.status).toBe(201);
    expect(run.body).toMatchObject({ job_id: jobId, slot_at: '2026-06-01T10:00:00.000Z', source: 'manual' });
    expect((await h.call('GET', `/v1/jobs/${jobId}`)).status).toBe(404);
    const slots = await h.store.listSlots(jobId);
    expect(slots.map((s) => [s.outcome, s.runId])).toEqual([['fired', run.body.id]]);
  });
});

describe('two schedulers on one database file', () => {
  it('never create two runs for one slot', async () => {
    const s = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
    // 40 sessions x 1 job each so that many slots fall due in the same tick.
    const sessions: string[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
      sessions.push(r.body.id);
      await h.call('POST', `/v1/sessions/${r.body.id}/jobs`, { body: { cron: '*/5 * * * *', prompt: 'p' } });
    }
    expect(s.status).toBe(201);
    const runsB: Run[] = [];
    const b = secondScheduler(runsB);
    for (let step = 1; step <= 6; step++) {
      h.clock.set(T0 + step * 5 * MIN);
      // Alternate who lists first; the other always races on a list that has just gone stale.
      const [x, y] = step % 2 ? [h.scheduler, b.scheduler] : [b.scheduler, h.scheduler];
      await Promise.all([x.tick(), y.tick()]);
      for (const r of [...h.runs, ...runsB]) {
        await h.store.transitionRun(r.id, ['queued'], 'completed', {});
      }
    }
    const all = [...h.runs, ...runsB];
    expect(all).toHaveLength(40 * 6);
    const keys = all.map((r) => `${r.jobId}@${r.slotAt}`);
    expect(new Set(keys).size).toBe(keys.length);
    // Both took part.
    expect(h.runs.length).toBeGreaterThan(0);
    expect(runsB.length).toBeGreaterThan(0);
  });

  it('the store itself refuses a second run for the same (job, slot)', async () => {
    const { sessionId, jobId } = await setup('0 9 * * *');
    const run = (id: string) =>
      h.store.createRun({
        id,
        sessionId,
        jobId,
        slotAt: T0 + HOUR,
        source: 'schedule',
        prompt: 'p',
        requestedBy: 'x',
        createdAt: h.clock.now(),
      });
    await run('run_a');
    await expect(run('run_b')).rejects.toThrow(/UNIQUE constraint failed/);
  });
});
