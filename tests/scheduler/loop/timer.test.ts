import { afterEach, beforeEach, expect, it } from 'vitest';
import { createHarness, type Harness, T0 } from '../../support/harness.js';

const MIN = 60_000;
let h: Harness;
beforeEach(async () => {
  h = await createHarness({
    patch: (c) => {
      c.scheduler.jitter.enabled = false;
    },
  });
});
afterEach(async () => h.close());

/** Lets the loop's async work (store calls, awaits) run after a timer fired. */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

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
  while (h.clock.now() < T0 + 2 * 60 * MIN) {
    h.clock.advance(30_000);
    await settle();
  }
  await settle();
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
