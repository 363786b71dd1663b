import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { createHarness, type Harness, type TestStore } from '../support/harness.js';

// Spend caps through the daemon's own services and HTTP app (a real SQLite file, then PostgreSQL; the fake
// clock): a fire, a run-now and a cron slot past a cap, the day's reset at midnight of limits.timezone, and
// GET /v1/usage. Runs are collected, not executed: their receipts are written into the store as the agent
// would.

const MIN = 60_000;
/** 2026-06-01 10:00 in Tokyo (UTC+9, no summer time): its day ends at 15:00 UTC. */
const T0 = Date.parse('2026-06-01T01:00:00.000Z');
const TOKYO_MIDNIGHT = Date.parse('2026-06-01T15:00:00.000Z');

let h: Harness<Store>;
afterEach(async () => h?.close());

describe.each(['sqlite', 'postgres'] as TestStore[])('on %s', (backend) => {
  function harness(patch: (c: Harness['config']) => void = () => {}): Promise<Harness<Store>> {
    return createHarness({
      store: backend,
      now: T0,
      patch: (c) => {
        c.scheduler.jitter.enabled = false;
        c.limits.timezone = 'Asia/Tokyo';
        patch(c);
      },
    });
  }

  async function generic(
    limits: Record<string, number>,
    name = 'triage',
  ): Promise<{ id: string; token: string }> {
    const res = await h.call('POST', '/v1/triggers', {
      role: 'admin',
      body: {
        kind: 'generic',
        name,
        prompt: 'Triage {{trigger}}.',
        workspace: h.workspace,
        limits,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.limits).toEqual(limits);
    return res.body;
  }

  const fire = (t: { id: string; token: string }) =>
    h.call('POST', `/v1/triggers/${t.id}/fire`, { token: t.token, body: {} });

  /** The receipt the agent would have written for a run. */
  const spend = (runId: string, costUsd: number) => h.store.updateRun(runId, { costUsd });

  describe('a fire past a cap', () => {
    it("answers 429 spend_cap naming the trigger's daily_runs, the spend and when it resets; the delivery is recorded capped", async () => {
      h = await harness();
      const t = await generic({ daily_runs: 2 });
      expect((await fire(t)).status).toBe(201);
      expect((await fire(t)).status).toBe(201);
      const refused = await fire(t);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({
        code: 'spend_cap',
        details: {
          scope: 'trigger',
          id: t.id,
          cap: 'daily_runs',
          limit: 2,
          spent: 2,
          resets_at: new Date(TOKYO_MIDNIGHT).toISOString(),
        },
      });
      expect(refused.body.error.message).toContain(`trigger ${t.id}'s daily daily_runs (2 of 2 runs)`);
      expect(refused.headers.get('retry-after')).toBe('Mon, 01 Jun 2026 15:00:00 GMT');
      expect((await h.store.listRuns({ limit: 10 })).items).toHaveLength(2);
      const deliveries = await h.call('GET', `/v1/deliveries?trigger_id=${t.id}`);
      expect(deliveries.body.items[0]).toMatchObject({ outcome: 'capped', run_ids: [] });
      expect(deliveries.body.items[0].detail).toMatch(/^spend cap reached: trigger/);
    });

    it("counts the receipts of the trigger's runs against daily_usd, and starts counting again at midnight in limits.timezone", async () => {
      h = await harness();
      const t = await generic({ daily_usd: 1 });
      const first = await fire(t);
      await spend(first.body.run.id, 0.6);
      const second = await fire(t);
      expect(second.status).toBe(201);
      await spend(second.body.run.id, 0.5);
      const refused = await fire(t);
      expect(refused.status).toBe(429);
      expect(refused.body.error.details).toMatchObject({ cap: 'daily_usd', limit: 1, spent: 1.1 });
      // A millisecond before Tokyo's midnight it is still the same day (15:00 UTC, not 00:00 UTC).
      h.clock.set(TOKYO_MIDNIGHT - 1);
      expect((await fire(t)).status).toBe(429);
      h.clock.set(TOKYO_MIDNIGHT);
      const next = await fire(t);
      expect(next.status).toBe(201);
      await spend(next.body.run.id, 0.99);
      const last = await fire(t);
      expect(last.status).toBe(201);
      await spend(last.body.run.id, 0.01);
      const again = await fire(t);
      expect(again.status).toBe(429);
      expect(again.body.error.details.resets_at).toBe('2026-06-02T15:00:00.000Z');
    });

    it('the global cap (config limits) stops every trigger', async () => {
      h = await harness((c) => {
        c.limits.daily_runs = 1;
      });
      const a = await generic({}, 'triage');
      const b = await generic({}, 'review');
      expect((await fire(a)).status).toBe(201);
      const refused = await fire(b);
      expect(refused.status).toBe(429);
      expect(refused.body.error.details).toMatchObject({ scope: 'global', id: null, cap: 'daily_runs' });
    });
  });

  describe("changing a trigger's caps", () => {
    it('an operator lowers or adds a cap; only an admin raises or removes one', async () => {
      h = await harness();
      const t = await generic({ daily_usd: 5 });
      const patch = (role: 'operator' | 'admin', limits: Record<string, number>) =>
        h.call('PATCH', `/v1/triggers/${t.id}`, { role, body: { limits } });
      expect((await patch('operator', { daily_usd: 3, daily_runs: 10 })).status).toBe(200);
      const raised = await patch('operator', { daily_usd: 4, daily_runs: 10 });
      expect(raised.status).toBe(403);
      expect(raised.body.error.code).toBe('forbidden');
      expect(raised.body.error.message).toContain('only an admin raises or removes');
      expect((await patch('operator', { daily_usd: 3 })).status).toBe(403);
      expect((await patch('admin', { daily_usd: 4 })).status).toBe(200);
      expect((await h.store.getTrigger(t.id))!.limits).toEqual({ daily_usd: 4 });
    });
  });

  describe('a run-now past a cap', () => {
    it("is refused with 429 spend_cap naming the session's cap", async () => {
      h = await harness();
      const s = await h.call('POST', '/v1/sessions', {
        body: { workspace: h.workspace, limits: { daily_usd: 2 } },
      });
      expect(s.body.limits).toEqual({ daily_usd: 2 });
      const j = await h.call('POST', `/v1/sessions/${s.body.id}/jobs`, {
        body: { cron: '0 9 * * *', prompt: 'p' },
      });
      const run = await h.call('POST', `/v1/jobs/${j.body.id}/run`);
      expect(run.status).toBe(201);
      await spend(run.body.id, 2);
      const refused = await h.call('POST', `/v1/jobs/${j.body.id}/run`);
      expect(refused.status).toBe(429);
      expect(refused.body.error.details).toMatchObject({
        scope: 'session',
        id: s.body.id,
        cap: 'daily_usd',
        spent: 2,
      });
    });
  });

  describe('a cron slot past a cap', () => {
    it("is recorded capped in the job's history, counted, announced once a day (limit.reached), and the job moves on to its next slot", async () => {
      h = await harness((c) => {
        c.notifications.webhooks = [
          { url: 'http://127.0.0.1:9/hooks/caps', events: ['limit.reached'], secret: null, format: 'json' },
        ];
      });
      const s = await h.call('POST', '/v1/sessions', {
        body: { workspace: h.workspace, limits: { daily_runs: 1 } },
      });
      const j = await h.call('POST', `/v1/sessions/${s.body.id}/jobs`, {
        body: { cron: '*/10 * * * *', prompt: 'p' },
      });
      const finish = (id: string) =>
        h.store.transitionRun(id, ['queued'], 'completed', { finishedAt: h.clock.now() });

      h.clock.set(T0 + 10 * MIN);
      expect(await h.scheduler.tick()).toMatchObject({ fired: 1, capped: 0 });
      await finish(h.runs[0]!.id);
      h.clock.set(T0 + 20 * MIN);
      expect(await h.scheduler.tick()).toMatchObject({ fired: 0, capped: 1 });
      h.clock.set(T0 + 30 * MIN);
      expect(await h.scheduler.tick()).toMatchObject({ fired: 0, capped: 1 });
      expect(h.runs).toHaveLength(1);

      const slots = await h.call('GET', `/v1/jobs/${j.body.id}/slots`);
      expect(slots.body.items.map((x: any) => [x.outcome, x.run_id])).toEqual([
        ['fired', h.runs[0]!.id],
        ['capped', null],
        ['capped', null],
      ]);
      const job = await h.store.getJob(j.body.id);
      expect(job).toMatchObject({ nextNominalAt: T0 + 40 * MIN, pendingSlotAt: null, fireCount: 1 });
      // Once a day per scope, across replicas: the first capped slot noted it, the second found it noted.
      const metric = await h.services.metrics.registry.getSingleMetricAsString(
        'drydock_spend_caps_reached_total',
      );
      expect(metric).toContain('drydock_spend_caps_reached_total{scope="session",cap="daily_runs"} 1');
      expect(
        await h.store.noteSpendCap('session', s.body.id, '2026-06-01', 'daily_runs', h.clock.now()),
      ).toBe(false);
      // One notification, written with the note (the notifier posts it; not started here).
      const notes = await h.call('GET', '/v1/notifications?event=limit.reached', { role: 'admin' });
      expect(notes.body.items).toHaveLength(1);
      expect(notes.body.items[0]).toMatchObject({
        event: 'limit.reached',
        status: 'pending',
        run_id: null,
        plan_id: null,
        data: {
          run_id: null,
          scope: 'session',
          scope_id: s.body.id,
          cap: 'daily_runs',
          limit: 1,
          spent: 1,
          day: '2026-06-01',
          resets_at: new Date(TOKYO_MIDNIGHT).toISOString(),
          links: { usage: '/ui/usage' },
        },
      });
      expect(notes.body.items[0].data.title).toMatch(/^spend cap reached: session /);

      // The next day of Tokyo, the session's slots fire again.
      h.clock.set(TOKYO_MIDNIGHT + 10 * MIN);
      expect(await h.scheduler.tick()).toMatchObject({ fired: 1 });
    });
  });

  describe('a one-shot past a cap', () => {
    it('is recorded capped and waits as missed for a person, who may fire it once the cap allows', async () => {
      h = await harness();
      const s = await h.call('POST', '/v1/sessions', {
        body: { workspace: h.workspace, limits: { daily_runs: 1 } },
      });
      const other = await h.call('POST', `/v1/sessions/${s.body.id}/jobs`, {
        body: { cron: '5 10 * * *', timezone: 'Asia/Tokyo', prompt: 'first', recurring: false },
      });
      const once = await h.call('POST', `/v1/sessions/${s.body.id}/jobs`, {
        body: { cron: '10 10 * * *', timezone: 'Asia/Tokyo', prompt: 'second', recurring: false },
      });
      expect(once.status, JSON.stringify(once.body)).toBe(201);
      h.clock.set(T0 + 5 * MIN);
      expect(await h.scheduler.tick()).toMatchObject({ fired: 1 });
      expect(await h.store.getJob(other.body.id)).toBeNull();
      await h.store.transitionRun(h.runs[0]!.id, ['queued'], 'completed', { finishedAt: h.clock.now() });
      h.clock.set(T0 + 10 * MIN);
      expect(await h.scheduler.tick()).toMatchObject({ fired: 0, capped: 1 });
      // Not thrown away: it waits for a person, its slot recorded capped.
      expect(await h.store.getJob(once.body.id)).toMatchObject({
        status: 'missed',
        nextNominalAt: T0 + 10 * MIN,
      });
      expect((await h.store.listSlots(once.body.id)).map((x) => x.outcome)).toEqual(['capped']);
      // The next day of Tokyo a person fires it: once, its slot now fired, and the job is done.
      h.clock.set(TOKYO_MIDNIGHT + MIN);
      const run = await h.call('POST', `/v1/jobs/${once.body.id}/run`);
      expect(run.status, JSON.stringify(run.body)).toBe(201);
      expect(await h.store.getJob(once.body.id)).toBeNull();
      expect((await h.store.listSlots(once.body.id)).map((x) => [x.outcome, x.runId])).toEqual([
        ['fired', run.body.id],
      ]);
    });
  });

  describe('a backfill past a cap', () => {
    it('counts each backfilled slot against daily_runs: the slots past the cap are recorded capped, none is started, and limit.reached is noted', async () => {
      h = await harness();
      const s = await h.call('POST', '/v1/sessions', {
        body: { workspace: h.workspace, limits: { daily_runs: 2 } },
      });
      const j = await h.call('POST', `/v1/sessions/${s.body.id}/jobs`, {
        body: { cron: '*/10 * * * *', prompt: 'p', overlap: 'allow_all' },
      });
      h.clock.set(T0 + 55 * MIN);
      const res = await h.call('POST', `/v1/jobs/${j.body.id}/backfill`, {
        body: {
          from: new Date(T0 - 60 * MIN).toISOString(),
          to: new Date(T0 - 20 * MIN).toISOString(),
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.items.map((x: any) => x.outcome)).toEqual(['fired', 'fired', 'capped', 'capped']);
      expect(h.runs).toHaveLength(2);
      expect(
        await h.store.noteSpendCap('session', s.body.id, '2026-06-01', 'daily_runs', h.clock.now()),
      ).toBe(false);
    });
  });

  describe('GET /v1/usage', () => {
    it('sums runs, cost and tokens per day of limits.timezone and key, with each day and the totals', async () => {
      h = await harness();
      const t = await generic({});
      const a = await fire(t);
      await h.store.updateRun(a.body.run.id, {
        costUsd: 0.25,
        usage: { input_tokens: 100, output_tokens: 10 },
        model: 'claude-sonnet-4-5',
      });
      const b = await fire(t);
      await h.store.updateRun(b.body.run.id, {
        costUsd: 0.5,
        usage: { input_tokens: 200, output_tokens: 20 },
      });
      h.clock.set(TOKYO_MIDNIGHT + MIN);
      const c = await fire(t);
      await spend(c.body.run.id, 1);

      const byTrigger = await h.call('GET', '/v1/usage?by=trigger&from=2026-05-31&to=2026-06-02', {
        role: 'viewer',
      });
      expect(byTrigger.status).toBe(200);
      expect(byTrigger.body).toEqual({
        by: 'trigger',
        timezone: 'Asia/Tokyo',
        from: '2026-05-31',
        to: '2026-06-02',
        rows: [
          {
            day: '2026-06-01',
            key: t.id,
            name: 'triage',
            runs: 2,
            cost_usd: 0.75,
            input_tokens: 300,
            output_tokens: 30,
          },
          {
            day: '2026-06-02',
            key: t.id,
            name: 'triage',
            runs: 1,
            cost_usd: 1,
            input_tokens: 0,
            output_tokens: 0,
          },
        ],
        days: [
          { day: '2026-05-31', runs: 0, cost_usd: 0, input_tokens: 0, output_tokens: 0 },
          { day: '2026-06-01', runs: 2, cost_usd: 0.75, input_tokens: 300, output_tokens: 30 },
          { day: '2026-06-02', runs: 1, cost_usd: 1, input_tokens: 0, output_tokens: 0 },
        ],
        totals: { runs: 3, cost_usd: 1.75, input_tokens: 300, output_tokens: 30 },
      });
      const byModel = await h.call('GET', '/v1/usage?by=model&from=2026-06-01&to=2026-06-01');
      expect(byModel.body.rows.map((r: any) => [r.key, r.runs])).toEqual([
        [null, 1],
        ['claude-sonnet-4-5', 1],
      ]);
      // Default: the 30 days ending today (in Tokyo).
      const recent = await h.call('GET', '/v1/usage');
      expect(recent.body).toMatchObject({ by: 'session', from: '2026-05-04', to: '2026-06-02' });
      expect(recent.body.days).toHaveLength(30);
      expect(recent.body.totals.runs).toBe(3);

      const backwards = await h.call('GET', '/v1/usage?from=2026-06-02&to=2026-06-01');
      expect(backwards.status).toBe(422);
      expect(backwards.body.error.message).toBe('from (2026-06-02) is after to (2026-06-01)');
      expect((await h.call('GET', '/v1/usage?by=repo')).status).toBe(422);
      expect((await h.call('GET', '/v1/usage?from=2025-01-01&to=2026-06-01')).status).toBe(422);
    });
  });
});
