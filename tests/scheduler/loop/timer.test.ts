import { afterEach, beforeEach, expect, it } from 'vitest';
import { type Harness, T0 } from '../../support/harness.js';
import { advanceByTimer, settle, unjitteredHarness } from '../../support/scheduler-timer.js';

const MIN = 60_000;
let h: Harness;
beforeEach(async () => {
  h = await unjitteredHarness();
});
afterEach(async () => h.close());

it('runs on one timer that never waits more than 30 s, and fires due jobs on its own', async () => {
  const s = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
  for (let i = 0; i < 25; i++) {
    await h.call('POST', `/v1/sessions/${s.body.id}/jobs`, { body: { cron: '0 10 * * *', prompt: 'p' } });
  }
  h.scheduler.start();
  await settle();
  // 25 jobs, one timer.
  expect(h.clock.pendingTimers).toBe(1);
  // The earliest job is two hours away; the loop still wakes every 30 s to recompute.
  let wakes = 0;
  for (let t = 0; t < 10; t++) {
    h.clock.advance(30_000);
    await settle();
    wakes++;
    expect(h.clock.pendingTimers).toBe(1);
  }
  expect(wakes).toBe(10);
  expect(h.runs).toHaveLength(0);

  // Jump to 10:00 in 30 s steps: the first job fires without anyone calling tick().
  await advanceByTimer(h, T0 + 2 * 60 * MIN);
  expect(h.runs).toHaveLength(1);
  expect(h.runs[0]!.slotAt).toBe(T0 + 2 * 60 * MIN);
  await h.scheduler.stop();
  expect(h.clock.pendingTimers).toBe(0);
});

it('wakes at the due time when it is sooner than 30 s, and when kicked', async () => {
  const s = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
  h.clock.set(T0 + 59 * MIN + 50_000); // 08:59:50
  h.scheduler.start();
  await settle();
  await h.call('POST', `/v1/sessions/${s.body.id}/jobs`, { body: { cron: '0 9 * * *', prompt: 'p' } });
  // Creating the job kicked the loop, which now sleeps exactly until 09:00:00.
  await settle();
  h.clock.advance(9_999);
  await settle();
  expect(h.runs).toHaveLength(0);
  h.clock.advance(1);
  await settle();
  expect(h.runs).toHaveLength(1);
});

it('backs off while the store fails (1, 2, 4 ... at most 30 s), and goes back to its timer once it answers', async () => {
  const s = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
  await h.call('POST', `/v1/sessions/${s.body.id}/jobs`, { body: { cron: '* * * * *', prompt: 'p' } });
  let calls = 0;
  let down = true;
  const real = h.store.listReadyPendingJobIds;
  h.store.listReadyPendingJobIds = async (limit) => {
    calls += 1;
    if (down) throw new Error('connect ECONNREFUSED');
    return real(limit);
  };
  h.scheduler.start();
  h.clock.advance(0);
  await settle();
  expect(calls).toBe(1);
  // Each retry comes only after its wait: 1 s, then 2 s, 4 s, 8 s, 16 s, then 30 s at most.
  for (const wait of [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]) {
    const before = calls;
    h.clock.advance(wait - 1);
    await settle();
    expect(calls).toBe(before);
    h.clock.advance(1);
    await settle();
    expect(calls).toBe(before + 1);
  }
  down = false;
  expect(h.runs).toHaveLength(0);
  const before = calls;
  h.clock.advance(30_000);
  await settle();
  // The first tick that gets through fires the job once for the minutes it could not look at (catch-up),
  // then the loop sleeps on its timer again (at most 30 s), not on the retry schedule.
  expect(calls).toBe(before + 1);
  expect(h.runs).toHaveLength(1);
  h.clock.advance(30_000);
  await settle();
  expect(calls).toBe(before + 2);
  await h.scheduler.stop();
});
