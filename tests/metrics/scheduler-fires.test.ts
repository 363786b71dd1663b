import { afterEach, beforeEach, expect, it } from 'vitest';
import { type Harness, T0 } from '../support/harness.js';
import { advanceByTimer, settle, unjitteredHarness } from '../support/scheduler-timer.js';

// drydock_scheduler_fires_total counts the slots the scheduler's passes handle, on the fake clock.

const MIN = 60_000;
let h: Harness;
beforeEach(async () => {
  h = await unjitteredHarness();
});
afterEach(async () => h.close());

async function fires(outcome: string): Promise<number> {
  const metric = await h.services.metrics.fires.get();
  return metric.values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
}

it('a cron fire moves drydock_scheduler_fires_total{outcome="fired"}, through the timer pass', async () => {
  const s = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
  expect(s.status).toBe(201);
  const job = await h.call('POST', `/v1/sessions/${s.body.id}/jobs`, {
    body: { cron: '*/5 * * * *', prompt: 'p' },
  });
  expect(job.status).toBe(201);
  expect(await fires('fired')).toBe(0);

  // The timer's pass at 08:05 fires the slot.
  h.scheduler.start();
  await settle();
  await advanceByTimer(h, T0 + 5 * MIN);
  expect(h.runs).toHaveLength(1);
  expect(await fires('fired')).toBe(1);
  await h.scheduler.stop();
  const text = await h.services.metrics.registry.metrics();
  expect(text).toMatch(/drydock_scheduler_fires_total\{outcome="fired"\} 1\n/);
});
