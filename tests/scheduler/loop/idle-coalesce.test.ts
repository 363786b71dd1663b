import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Harness, T0 } from '../../support/harness.js';
import { unjitteredHarness } from '../../support/scheduler-timer.js';

const MIN = 60_000;

let h: Harness;
beforeEach(async () => {
  // Jitter off: these tests are about which slots fire, not when inside the window.
  h = await unjitteredHarness();
});
afterEach(async () => h.close());

async function session(): Promise<string> {
  const res = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function job(sessionId: string, body: Record<string, unknown>): Promise<any> {
  const res = await h.call('POST', `/v1/sessions/${sessionId}/jobs`, { body: { prompt: 'review', ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const finish = (runId: string) =>
  h.store.transitionRun(runId, ['queued', 'running'], 'completed', { finishedAt: h.clock.now() });

describe('idle-only firing', () => {
  it('waits while the session is busy, coalesces slots, and fires once when idle', async () => {
    const s = await session();
    const j = await job(s, { cron: '*/10 * * * *' });
    expect(j.next_fire_at).toBe('2026-06-01T08:10:00.000Z');

    h.clock.set(T0 + 10 * MIN);
    let report = await h.scheduler.tick();
    expect(report.fired).toBe(1);
    expect(h.runs.map((r) => r.slotAt)).toEqual([T0 + 10 * MIN]);
    const first = h.runs[0]!;

    // The run is still going: the next two slots wait, the older one folded into the newer.
    h.clock.set(T0 + 20 * MIN);
    report = await h.scheduler.tick();
    expect(report).toMatchObject({ fired: 0, pending: 1 });
    h.clock.set(T0 + 30 * MIN);
    report = await h.scheduler.tick();
    expect(report).toMatchObject({ fired: 0, pending: 1, coalesced: 1 });
    const waiting = await h.store.getJob(j.id);
    expect(waiting).toMatchObject({
      pendingSlotAt: T0 + 30 * MIN,
      pendingCoalesced: 1,
      nextNominalAt: T0 + 40 * MIN,
    });

    // Still busy at 30:10: nothing new.
    h.clock.set(T0 + 30 * MIN + 10_000);
    expect((await h.scheduler.tick()).fired).toBe(0);

    await finish(first.id);
    report = await h.scheduler.tick();
    expect(report.fired).toBe(1);
    const second = h.runs[1]!;
    expect(second).toMatchObject({
      slotAt: T0 + 30 * MIN,
      coalescedSlots: 1,
      source: 'schedule',
      status: 'queued',
    });

    const slots = await h.store.listSlots(j.id);
    expect(slots.map((x) => [x.slotAt - T0, x.outcome, x.runId])).toEqual([
      [10 * MIN, 'fired', first.id],
      [20 * MIN, 'coalesced', second.id],
      [30 * MIN, 'fired', second.id],
    ]);
    const after = await h.store.getJob(j.id);
    expect(after).toMatchObject({
      pendingSlotAt: null,
      pendingCoalesced: 0,
      fireCount: 2,
      nextNominalAt: T0 + 40 * MIN,
    });
  });

  it('fires one job of a session at a time when several fall due together', async () => {
    const s = await session();
    const a = await job(s, { cron: '0 9 * * *' });
    const b = await job(s, { cron: '0 9 * * *' });
    h.clock.set(T0 + 60 * MIN);
    const report = await h.scheduler.tick();
    expect(report).toMatchObject({ fired: 1, pending: 1 });
    expect(h.runs).toHaveLength(1);
    await finish(h.runs[0]!.id);
    expect((await h.scheduler.tick()).fired).toBe(1);
    expect(new Set(h.runs.map((r) => r.jobId))).toEqual(new Set([a.id, b.id]));
    // Nothing else is waiting now.
    await finish(h.runs[1]!.id);
    expect((await h.scheduler.tick()).fired).toBe(0);
  });

  it('does not let one busy session hold back another', async () => {
    const s1 = await session();
    const s2 = await session();
    await job(s1, { cron: '*/5 * * * *' });
    await job(s2, { cron: '*/5 * * * *' });
    h.clock.set(T0 + 5 * MIN);
    expect((await h.scheduler.tick()).fired).toBe(2);
    await finish(h.runs.find((r) => r.sessionId === s2)!.id);
    h.clock.set(T0 + 10 * MIN);
    const report = await h.scheduler.tick();
    expect(report).toMatchObject({ fired: 1, pending: 1 });
    expect(h.runs.at(-1)!.sessionId).toBe(s2);
  });
});

describe('one-shots and expiry', () => {
  it('deletes a one-shot after it fires', async () => {
    const s = await session();
    const j = await job(s, { cron: '15 8 * * *', recurring: false });
    expect(j.expires_at).toBeNull();
    h.clock.set(T0 + 15 * MIN);
    expect((await h.scheduler.tick()).fired).toBe(1);
    expect(await h.store.getJob(j.id)).toBeNull();
    expect((await h.call('GET', `/v1/jobs/${j.id}`)).status).toBe(404);
    expect(h.runs[0]).toMatchObject({ jobId: j.id, slotAt: T0 + 15 * MIN });
  });

  it('fires a recurring job one final time at its first slot at or after expiry, then deletes it', async () => {
    const s = await session();
    const j = await job(s, { cron: '0 12 * * *' });
    expect(j.expires_at).toBe('2026-06-08T08:00:00.000Z');
    const fired: string[] = [];
    for (let day = 0; day < 10; day++) {
      h.clock.set(Date.parse(`2026-06-${String(1 + day).padStart(2, '0')}T12:00:00.000Z`));
      await h.scheduler.tick();
      for (const r of h.runs.splice(0)) {
        fired.push(new Date(r.slotAt!).toISOString().slice(0, 10));
        await finish(r.id);
      }
    }
    // June 1..7 before expiry, June 8 12:00 is the first slot after expiry at 08:00: the final fire.
    expect(fired).toEqual([
      '2026-06-01',
      '2026-06-02',
      '2026-06-03',
      '2026-06-04',
      '2026-06-05',
      '2026-06-06',
      '2026-06-07',
      '2026-06-08',
    ]);
    expect(await h.store.getJob(j.id)).toBeNull();
  });

  it('keeps a final slot that had to wait, and deletes the job once it fires', async () => {
    const s = await session();
    const j = await job(s, { cron: '0 12 * * *' });
    const busy = await h.store.createRun({
      id: 'run_busy',
      sessionId: s,
      jobId: null,
      slotAt: null,
      source: 'manual',
      prompt: 'x',
      requestedBy: 'operator-user',
      createdAt: h.clock.now(),
    });
    h.clock.set(Date.parse('2026-06-08T12:00:00.000Z'));
    const report = await h.scheduler.tick();
    // Days 1..7 passed more than the catch-up window ago (missed); the final slot waits for idle.
    expect(report).toMatchObject({ fired: 0, pending: 1, missed: 7 });
    expect(await h.store.getJob(j.id)).toMatchObject({ pendingFinal: true, nextNominalAt: null });
    await finish(busy.id);
    expect((await h.scheduler.tick()).fired).toBe(1);
    expect(await h.store.getJob(j.id)).toBeNull();
  });
});
