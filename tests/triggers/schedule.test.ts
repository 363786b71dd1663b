import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Run } from '../../src/domain/types.js';
import { silentLogger } from '../../src/logger.js';
import { jitterOptions } from '../../src/scheduler/job-request.js';
import { Scheduler } from '../../src/scheduler/loop.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { type Harness, T0 } from '../support/harness.js';
import { unjitteredHarness } from '../support/scheduler-timer.js';
import { signIn, ui } from '../ui/helpers.js';

// Schedules that last: a scheduled trigger never expires and fires through the scheduler's own job rules;
// a session's recurring job can be renewed for another expiry period.

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

let h: Harness;
beforeEach(async () => {
  h = await unjitteredHarness();
});
afterEach(async () => h.close());

async function nightly(extra: Record<string, unknown> = {}) {
  const r = await h.call('POST', '/v1/triggers', {
    body: {
      kind: 'schedule',
      name: 'nightly review',
      cron: '0 3 * * *',
      timezone: 'UTC',
      prompt: 'Review what changed yesterday.',
      workspace: h.workspace,
      options: { execute_mode: 'manual' },
      ...extra,
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

/** Runs every slot up to `until`, settling each run at once (a run that never ends would hold its session). */
async function advance(scheduler: Scheduler, store: SqliteStore, runs: Run[], until: number): Promise<void> {
  while (h.clock.now() < until) {
    h.clock.set(Math.min(until, h.clock.now() + HOUR));
    await scheduler.tick();
    for (const run of runs) await store.transitionRun(run.id, ['queued'], 'completed', {});
  }
}

describe('scheduled triggers', () => {
  it('fire exactly once per slot for 30 days, across a restart, and never expire', async () => {
    const t = await nightly();
    expect(t.schedule).toMatchObject({
      cron: '0 3 * * *',
      timezone: 'UTC',
      status: 'active',
      next_fire_at: new Date(T0 - 5 * HOUR + DAY).toISOString(), // T0 is 08:00 UTC: the next 03:00 is tomorrow
    });
    const job = (await h.call('GET', `/v1/jobs/${t.schedule.job_id}`)).body;
    expect(job).toMatchObject({ expires_at: null, trigger_id: t.id, renew: null });

    // 12 days with the first scheduler.
    await advance(h.scheduler, h.store, h.runs, T0 + 12 * DAY);
    await h.scheduler.stop();
    expect(h.runs).toHaveLength(12);

    // A second daemon (its own connection and scheduler) takes over for the remaining 18 days, after 2 h
    // of downtime inside the catch-up window.
    const store = new SqliteStore({ file: join(h.config.data_dir, 'drydock.db'), now: () => h.clock.now() });
    const runs: Run[] = [];
    const scheduler = new Scheduler({
      store,
      clock: h.clock,
      logger: silentLogger(),
      onRun: (run) => runs.push(run),
      catchupWindowMs: h.config.scheduler.catchup_window_ms,
      maxWaitMs: h.config.scheduler.max_wait_ms,
      batchSize: 10,
      jitter: jitterOptions(h.config),
      maxBuffered: 100,
      cancelRun: async () => false,
    });
    try {
      await advance(scheduler, store, runs, T0 + 30 * DAY);
      const all = [...h.runs, ...runs];
      expect(all).toHaveLength(30);
      const slots = all.map((r) => r.slotAt!);
      expect(new Set(slots).size).toBe(30);
      for (const [i, slot] of slots.entries()) expect(slot).toBe(T0 - 5 * HOUR + (i + 1) * DAY);
      expect(all.every((r) => r.triggerId === t.id && r.source === 'schedule')).toBe(true);
      expect(all.every((r) => r.requestedBy === 'trigger:nightly review')).toBe(true);
      expect(all.every((r) => r.overrides.execute_mode === 'manual')).toBe(true);
      // Still scheduled after 30 days: a session's job would have expired after 7.
      const after = (await h.call('GET', `/v1/triggers/${t.id}`)).body;
      expect(after.schedule).toMatchObject({ status: 'active', fire_count: 30 });
    } finally {
      await scheduler.stop();
      await store.close();
    }
  });

  it('are paused and resumed by enabling them; slots that passed while off are skipped', async () => {
    const t = await nightly();
    const off = await h.call('PATCH', `/v1/triggers/${t.id}`, { body: { enabled: false } });
    expect(off.body.schedule.status).toBe('paused');
    await advance(h.scheduler, h.store, h.runs, T0 + 3 * DAY);
    expect(h.runs).toHaveLength(0);
    const on = await h.call('PATCH', `/v1/triggers/${t.id}`, { body: { enabled: true } });
    expect(on.body.schedule).toMatchObject({
      status: 'active',
      next_fire_at: new Date(T0 - 5 * HOUR + 4 * DAY).toISOString(),
    });
    await advance(h.scheduler, h.store, h.runs, T0 + 4 * DAY);
    expect(h.runs.map((r) => r.slotAt)).toEqual([T0 - 5 * HOUR + 4 * DAY]);
  });

  it('take a new schedule, prompt and zone by PATCH; delete removes the job', async () => {
    const t = await nightly();
    const r = await h.call('PATCH', `/v1/triggers/${t.id}`, {
      body: { cron: '30 6 * * MON', timezone: 'europe/kyiv', prompt: 'Weekly review.' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.schedule).toMatchObject({
      cron: '30 6 * * MON',
      timezone: 'Europe/Kyiv',
      job_id: t.schedule.job_id,
    });
    const job = (await h.call('GET', `/v1/jobs/${t.schedule.job_id}`)).body;
    expect(job).toMatchObject({ prompt: 'Weekly review.', expires_at: null });
    expect((await h.call('DELETE', `/v1/triggers/${t.id}`)).status).toBe(204);
    expect((await h.call('GET', `/v1/jobs/${t.schedule.job_id}`)).status).toBe(404);
  });

  it('take overlap and jitter at creation and by PATCH; their job follows, and drops what waited', async () => {
    const t = await nightly({ overlap: 'buffer_all', jitter: { max_seconds: 0, approximate: true } });
    expect(t.schedule).toMatchObject({
      overlap: 'buffer_all',
      jitter: { max_seconds: 0, approximate: true },
      approximate: true,
    });
    const jobId = t.schedule.job_id;
    expect(await h.store.getJob(jobId)).toMatchObject({ overlap: 'buffer_all', jitterMaxSeconds: 0 });
    // A run keeps the session busy: two nights wait their turn (each pass a few minutes past the night's
    // approximate slot).
    const first = Date.parse(t.schedule.next_fire_at);
    for (let d = 0; d < 3; d++) {
      h.clock.set(first + d * DAY + 10 * 60_000);
      await h.scheduler.tick();
    }
    expect((await h.store.listSlots(jobId)).map((x) => x.outcome)).toEqual(['fired', 'buffered', 'buffered']);

    const r = await h.call('PATCH', `/v1/triggers/${t.id}`, {
      body: { overlap: 'skip', jitter: { max_seconds: null } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.schedule).toMatchObject({
      overlap: 'skip',
      jitter: { max_seconds: null, approximate: true },
    });
    expect(await h.store.getJob(jobId)).toMatchObject({
      overlap: 'skip',
      jitterMaxSeconds: null,
      pendingSlotAt: null,
      bufferedSlots: [],
    });
    expect((await h.store.listSlots(jobId)).map((x) => x.outcome)).toEqual(['fired', 'skipped', 'skipped']);
    // Only a schedule trigger takes them.
    const generic = await h.call('POST', '/v1/triggers', {
      body: { kind: 'generic', name: 'g', prompt: 'p', workspace: h.workspace, overlap: 'skip' },
    });
    expect(generic.status).toBe(422);
  });

  it('refuse what does not fit, with the reason', async () => {
    const bad = async (body: Record<string, unknown>) =>
      (
        await h.call('POST', '/v1/triggers', {
          body: { kind: 'schedule', name: 'x', prompt: 'p', workspace: h.workspace, ...body },
        })
      ).body.error;
    expect((await bad({})).message).toBe('a schedule trigger needs cron, e.g. "0 3 * * *"');
    expect((await bad({ cron: '61 * * * *' })).code).toBe('invalid_cron');
    expect((await bad({ cron: '0 3 * * *', timezone: 'Mars/Olympus' })).code).toBe('invalid_timezone');
    expect((await bad({ cron: '0 3 * * *', prompt: 'Review {{repository}}' })).message).toMatch(
      /no event to fill \{\{placeholders\}\} from/,
    );
    expect((await bad({ cron: '0 3 * * *', workspace: undefined })).message).toBe(
      'a schedule trigger needs a workspace directory',
    );
    const generic = await h.call('POST', '/v1/triggers', {
      body: { kind: 'generic', name: 'g', prompt: 'p', workspace: h.workspace, cron: '0 3 * * *' },
    });
    expect(generic.body.error.message).toBe(
      'cron, timezone, approximate, overlap and jitter are for schedule triggers',
    );
  });

  it('own their job and session: those are changed through the trigger', async () => {
    const t = await nightly();
    for (const [method, path] of [
      ['DELETE', `/v1/jobs/${t.schedule.job_id}`],
      ['POST', `/v1/jobs/${t.schedule.job_id}/pause`],
      ['POST', `/v1/jobs/${t.schedule.job_id}/renew`],
      ['DELETE', `/v1/sessions/${t.schedule.session_id}`],
    ] as const) {
      const r = await h.call(method, path);
      expect(r.status, `${method} ${path}`).toBe(409);
      expect(r.body.error.code).toBe('managed_by_trigger');
    }
    const patched = await h.call('PATCH', `/v1/jobs/${t.schedule.job_id}`, { body: { cron: '0 4 * * *' } });
    expect(patched.status).toBe(409);
    expect(patched.body.error.code).toBe('managed_by_trigger');
  });
});

describe('renewing a job', () => {
  it('gives a recurring job another expiry period from now, recorded; its last slot is no longer final', async () => {
    const s = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
    const j = (
      await h.call('POST', `/v1/sessions/${s.body.id}/jobs`, { body: { cron: '0 3 * * *', prompt: 'p' } })
    ).body;
    expect(j.expires_at).toBe(new Date(T0 + 7 * DAY).toISOString());
    expect(j.renew).toBe(`POST /v1/jobs/${j.id}/renew (drydock jobs renew ${j.id})`);
    // Seven days on, the job's next slot is its last (the first at or after expiry)... then it is renewed.
    await advance(h.scheduler, h.store, h.runs, T0 + 7 * DAY + HOUR);
    expect((await h.call('GET', `/v1/jobs/${j.id}`)).body.next_fire_final).toBe(true);
    const r = await h.call('POST', `/v1/jobs/${j.id}/renew`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      expires_at: new Date(T0 + 14 * DAY + HOUR).toISOString(),
      next_fire_final: false,
      renewals: 1,
      renewed_by: 'operator-user',
      renewed_at: new Date(T0 + 7 * DAY + HOUR).toISOString(),
    });
    // It keeps firing past the first expiry.
    await advance(h.scheduler, h.store, h.runs, T0 + 10 * DAY);
    expect(h.runs).toHaveLength(10);
    expect((await h.call('GET', `/v1/jobs/${j.id}`)).status).toBe(200);
  });

  it('a one-shot has nothing to renew', async () => {
    const s = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
    const j = (
      await h.call('POST', `/v1/sessions/${s.body.id}/jobs`, {
        body: { cron: '0 3 * * *', prompt: 'p', recurring: false },
      })
    ).body;
    const r = await h.call('POST', `/v1/jobs/${j.id}/renew`);
    expect(r.status).toBe(409);
    expect(r.body.error.message).toBe(`job ${j.id} is a one-shot: it has no expiry to renew`);
  });
});

describe('what a queued run waits on', () => {
  it('its session busy with an earlier run, or its turn in the queue', async () => {
    const s = await h.call('POST', '/v1/sessions', { body: { workspace: h.workspace } });
    const j = (
      await h.call('POST', `/v1/sessions/${s.body.id}/jobs`, { body: { cron: '0 3 * * *', prompt: 'p' } })
    ).body;
    const first = (await h.call('POST', `/v1/jobs/${j.id}/run`)).body;
    h.clock.set(h.clock.now() + 1000);
    const second = (await h.call('POST', `/v1/jobs/${j.id}/run`)).body;
    expect((await h.call('GET', `/v1/runs/${first.id}`)).body.waiting_on).toEqual({
      kind: 'queue',
      detail: 'its turn in the queue: it starts in a moment',
    });
    expect((await h.call('GET', `/v1/runs/${second.id}`)).body.waiting_on).toEqual({
      kind: 'session',
      run_id: first.id,
      detail: `its session is busy with run ${first.id} (queued); a session runs one run at a time`,
    });
  });
});

describe('the schedules page', () => {
  it('lists scheduled triggers with their next three fire times, escaped', async () => {
    await nightly({ name: 'nightly <review>' });
    const { cookie } = await signIn(h.app, h.tokens.viewer);
    const page = await ui(h.app, 'GET', '/ui/schedules', { cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain('nightly &lt;review&gt;');
    expect(page.text).toContain('<code>0 3 * * *</code>');
    for (let day = 1; day <= 3; day++) {
      const at = new Date(T0 - 5 * HOUR + day * DAY).toISOString();
      expect(page.text).toContain(`<time datetime="${at}" title=`);
    }
    expect(page.text).toContain('aria-current="page">Schedules');
    const api = (await h.call('GET', '/v1/triggers')).body.items[0];
    expect(api.schedule.next_fire_times).toEqual(
      [1, 2, 3].map((day) => new Date(T0 - 5 * HOUR + day * DAY).toISOString()),
    );
  });
});
