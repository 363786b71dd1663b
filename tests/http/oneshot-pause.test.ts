import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { createJob, createSession, HOUR } from './helpers.js';

let h: Harness;
let sessionId: string;
beforeEach(async () => {
  h = await createHarness();
  sessionId = (await createSession(h)).id;
});
afterEach(async () => h.close());

describe('a paused one-shot', () => {
  it('keeps its slot while paused and fires at it when resumed in time', async () => {
    const job = await createJob(h, sessionId, { cron: '30 9 * * *', recurring: false });
    const paused = await h.call('POST', `/v1/jobs/${job.id}/pause`);
    expect(paused.body).toMatchObject({ status: 'paused', next_fire_at: '2026-06-01T09:30:00.000Z' });
    // Paused: the scheduler leaves it alone even when its time comes.
    expect(await h.store.listDueJobIds(Date.parse('2026-06-02T00:00:00Z'), 10)).toEqual([]);
    const resumed = await h.call('POST', `/v1/jobs/${job.id}/resume`);
    expect(resumed.body).toMatchObject({ status: 'active', next_fire_at: '2026-06-01T09:30:00.000Z' });
  });

  it('becomes missed when its time passed while paused, and waits for a person', async () => {
    const job = await createJob(h, sessionId, { cron: '30 9 * * *', recurring: false });
    await h.call('POST', `/v1/jobs/${job.id}/pause`);
    h.clock.advance(3 * HOUR); // 11:00, past 09:30
    const resumed = await h.call('POST', `/v1/jobs/${job.id}/resume`);
    expect(resumed.body).toMatchObject({ status: 'missed', next_fire_at: '2026-06-01T09:30:00.000Z' });
    expect(await h.store.listDueJobIds(h.clock.now() + 10 * 24 * HOUR, 10)).toEqual([]);
    const run = await h.call('POST', `/v1/jobs/${job.id}/run`);
    expect(run.body).toMatchObject({ slot_at: '2026-06-01T09:30:00.000Z', source: 'manual' });
    expect((await h.call('GET', `/v1/jobs/${job.id}`)).status).toBe(404);
  });
});

it('stores a time zone in its canonical spelling', async () => {
  const job = await createJob(h, sessionId, { timezone: 'europe/berlin' });
  expect(job.timezone).toBe('Europe/Berlin');
  expect(job.next_fire_at).toBe('2026-06-02T07:30:00.000Z'); // 09:30 CEST; 08:00Z is 10:00 CEST, past it today
});
