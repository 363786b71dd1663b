import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, T0 } from '../support/harness.js';

// POST /v1/jobs/:id/backfill: the slots of a past range, each fired once under the job's overlap policy, up
// to a limit; a slot that has a run or an outcome is not fired again.

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

let h: Harness;
beforeEach(async () => {
  h = await createHarness({
    patch: (c) => {
      c.scheduler.jitter.enabled = false;
    },
  });
});
afterEach(async () => h.close());

const iso = (t: number) => new Date(t).toISOString();

async function jobWith(body: Record<string, unknown>): Promise<string> {
  const s = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
  const j = await h.call('POST', `/v1/sessions/${s.body.id}/jobs`, {
    body: { cron: '0 * * * *', prompt: 'review', ...body },
  });
  expect(j.status, JSON.stringify(j.body)).toBe(201);
  return j.body.id;
}

const backfill = (jobId: string, from: number, to: number, role?: 'viewer') =>
  h.call('POST', `/v1/jobs/${jobId}/backfill`, {
    body: { from: iso(from), to: iso(to) },
    ...(role ? { role } : {}),
  });

/** [hours before T0, outcome] of each item. */
const outcomes = (body: { items: { slot_at: string; outcome: string }[] }) =>
  body.items.map((i) => [(Date.parse(i.slot_at) - T0) / HOUR, i.outcome]);

describe('backfill', () => {
  it('fires every slot of the range under allow_all, once: asked again, it fires nothing', async () => {
    const job = await jobWith({ overlap: 'allow_all' });
    const first = await backfill(job, T0 - 5 * HOUR, T0);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(outcomes(first.body)).toEqual([
      [-5, 'fired'],
      [-4, 'fired'],
      [-3, 'fired'],
      [-2, 'fired'],
      [-1, 'fired'],
    ]);
    expect(h.runs.map((r) => r.slotAt)).toEqual([5, 4, 3, 2, 1].map((n) => T0 - n * HOUR));
    expect(first.body.items.map((i: { run_id: string }) => i.run_id)).toEqual(h.runs.map((r) => r.id));
    expect(h.runs.every((r) => r.source === 'schedule' && r.jobId === job)).toBe(true);

    const again = await backfill(job, T0 - 5 * HOUR, T0);
    expect(again.status).toBe(200);
    expect(again.body.items.map((i: { outcome: string }) => i.outcome)).toEqual(
      Array(5).fill('already_done'),
    );
    expect(h.runs).toHaveLength(5);
    // The job's own schedule goes on as before.
    expect((await h.store.getJob(job))!.nextNominalAt).toBe(T0 + HOUR);
  });

  it('applies the overlap policy: under skip only the first fires while its run keeps the session busy', async () => {
    const job = await jobWith({ overlap: 'skip' });
    const res = await backfill(job, T0 - 3 * HOUR, T0);
    expect(outcomes(res.body)).toEqual([
      [-3, 'fired'],
      [-2, 'skipped'],
      [-1, 'skipped'],
    ]);
    expect(h.runs).toHaveLength(1);
  });

  it('under buffer_all the rest wait their turn, and fire as the session goes idle', async () => {
    const job = await jobWith({ overlap: 'buffer_all' });
    const res = await backfill(job, T0 - 3 * HOUR, T0);
    expect(outcomes(res.body)).toEqual([
      [-3, 'fired'],
      [-2, 'buffered'],
      [-1, 'buffered'],
    ]);
    await h.store.transitionRun(h.runs[0]!.id, ['queued'], 'completed', { finishedAt: h.clock.now() });
    expect((await h.scheduler.tick()).fired).toBe(1);
    expect(h.runs.at(-1)!.slotAt).toBe(T0 - 2 * HOUR);
  });

  it('under buffer_one the first fires and the newest waits', async () => {
    const job = await jobWith({});
    const res = await backfill(job, T0 - 3 * HOUR, T0);
    expect(outcomes(res.body)).toEqual([
      [-3, 'fired'],
      [-2, 'coalesced'],
      [-1, 'pending'],
    ]);
  });

  it('does not fire again a slot the scheduler fired, nor the slot the schedule still holds', async () => {
    const job = await jobWith({ overlap: 'allow_all' });
    h.clock.set(T0 + HOUR);
    expect((await h.scheduler.tick()).fired).toBe(1);
    h.clock.set(T0 + 2 * HOUR + 30_000);
    // 09:00 fired by the scheduler; 10:00 is the job's next slot, due now but not yet taken by a pass.
    const res = await backfill(job, T0, T0 + 2 * HOUR + 1);
    expect(outcomes(res.body)).toEqual([
      [0, 'fired'],
      [1, 'already_done'],
      [2, 'already_done'],
    ]);
    expect((await h.scheduler.tick()).fired).toBe(1);
    expect(h.runs.map((r) => (r.slotAt! - T0) / HOUR)).toEqual([1, 0, 2]);
  });

  it('fires slots missed while the daemon was down', async () => {
    const job = await jobWith({});
    // Down until 13:00: 09:00 to 11:00 are older than the 1-hour catch-up window (one missed row, keyed
    // 09:00), 12:00 folds into 13:00, which fires.
    h.clock.set(T0 + 5 * HOUR);
    await h.scheduler.tick();
    expect((await h.store.listSlots(job)).map((s) => s.outcome)).toEqual(['missed', 'coalesced', 'fired']);
    await h.store.transitionRun(h.runs[0]!.id, ['queued'], 'completed', { finishedAt: h.clock.now() });
    const res = await h.call('POST', `/v1/jobs/${job}/backfill`, {
      body: { from: iso(T0 + HOUR), to: iso(T0 + 2 * HOUR) },
    });
    expect(outcomes(res.body)).toEqual([[1, 'fired']]);
    expect(h.runs.at(-1)!.slotAt).toBe(T0 + HOUR);
  });

  it('refuses a range over the limit, naming the limit and the count, and fires nothing', async () => {
    const job = await jobWith({ cron: '0 9 * * *' });
    const res = await backfill(job, T0 - 200 * DAY, T0);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toContain('200 slots');
    expect(res.body.error.message).toContain('limit of 100');
    expect(h.runs).toHaveLength(0);
    // 100 is allowed.
    expect((await backfill(job, T0 - 100 * DAY, T0)).body.items).toHaveLength(100);
  });

  it('refuses a backwards or future range, a one-shot, and a viewer', async () => {
    const job = await jobWith({});
    expect((await backfill(job, T0, T0 - HOUR)).status).toBe(422);
    expect((await backfill(job, T0 - HOUR, T0 + HOUR)).status).toBe(422);
    expect((await backfill(job, T0 - HOUR, T0, 'viewer')).status).toBe(403);
    const once = await jobWith({ cron: '0 9 * * *', recurring: false });
    expect((await backfill(once, T0 - DAY, T0)).body.error.message).toContain('one-shot');
    expect(
      (await h.call('POST', '/v1/jobs/job_missing/backfill', { body: { from: iso(0), to: iso(1) } })).status,
    ).toBe(404);
    expect(h.runs).toHaveLength(0);
  });
});
