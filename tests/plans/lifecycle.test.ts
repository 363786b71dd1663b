import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PLAN_STATUSES } from '../../src/domain/types.js';
import { newId } from '../../src/ids.js';
import { silentLogger } from '../../src/logger.js';
import { PlanLifecycle } from '../../src/plans/lifecycle.js';
import { type TestDaemon, waitFor } from '../support/daemon.js';
import { createHarness, type Harness } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { seedPlan, signIn, ui } from '../ui/helpers.js';
import { planned, proposes, world } from './helpers.js';

const DAY = 86_400_000;

describe('the plan service (src/plans/lifecycle.ts)', () => {
  let h: Harness;
  let lifecycle: PlanLifecycle;
  beforeEach(async () => {
    h = await createHarness();
    lifecycle = new PlanLifecycle({ store: h.store, clock: h.clock, logger: silentLogger() });
  });
  afterEach(() => h.close());

  it('supersedes with the injected clock, not the machine’s', async () => {
    const { plan } = await seedPlan(h, { subject: 'acme/app#7' });
    h.clock.advance(5_000);
    expect(await lifecycle.supersede('acme/app#7')).toEqual([plan.id]);
    const after = (await h.store.getPlan(plan.id))!;
    expect(after.status).toBe('superseded');
    expect(after.decidedAt).toBe(h.clock.now());
  });

  it('logs plan_closed on the run of each plan it supersedes or expires, after the change', async () => {
    const logged: { runId: string; type: string; data: unknown; status: string | undefined }[] = [];
    const events = {
      emit: async (runId: string, type: string, data: any) => {
        logged.push({ runId, type, data, status: (await h.store.getPlan(data.plan_id))?.status });
        return { id: logged.length, runId, seq: logged.length, type, data, at: h.clock.now() } as any;
      },
    };
    const closing = new PlanLifecycle({ store: h.store, clock: h.clock, logger: silentLogger(), events });
    const superseded = await seedPlan(h, { subject: 'acme/app#7' });
    const expiring = await seedPlan(h);
    expect(await closing.supersede('acme/app#7')).toEqual([superseded.plan.id]);
    h.clock.advance(8 * DAY);
    expect(await closing.expire()).toBe(1);
    expect(await closing.expire()).toBe(0);
    expect(logged).toEqual([
      {
        runId: superseded.plan.runId,
        type: 'plan_closed',
        data: { plan_id: superseded.plan.id, plan_status: 'superseded' },
        status: 'superseded',
      },
      {
        runId: expiring.plan.runId,
        type: 'plan_closed',
        data: { plan_id: expiring.plan.id, plan_status: 'expired' },
        status: 'expired',
      },
    ]);
  });

  it('moves a plan only along the legal transitions', async () => {
    const { plan } = await seedPlan(h);
    // Pending is not approved: an execution cannot start, finish or fail on it.
    expect(await lifecycle.startExecution(plan.id)).toBe(false);
    expect(await lifecycle.finishExecution(plan.id)).toBe(false);
    expect(await lifecycle.failExecution(plan.id, 'x')).toBe(false);
    await expect(lifecycle.failExecution(plan.id, 'x', 'pending_approval')).rejects.toThrow(
      'PlanLifecycle: a plan cannot go from pending_approval to execution_failed',
    );
    expect((await h.store.getPlan(plan.id))!).toMatchObject({
      status: 'pending_approval',
      failureReason: null,
    });

    // A decision whose rule asks for a move the table lacks is refused inside the transaction: nothing written.
    const decision = {
      id: newId('dec'),
      planId: plan.id,
      kind: 'approve' as const,
      identity: 'approver-user',
      comment: null,
      sha256: plan.sha256,
      createdAt: h.clock.now(),
    };
    await expect(lifecycle.decide(plan.id, () => ({ decision, planStatus: 'executed' }))).rejects.toThrow(
      'PlanLifecycle: a plan cannot go from pending_approval to executed',
    );
    expect(await h.store.listDecisions(plan.id)).toEqual([]);

    const approved = await lifecycle.decide(plan.id, () => ({ decision, planStatus: 'approved' }));
    expect(approved.plan.status).toBe('approved');
    expect(await lifecycle.startExecution(plan.id)).toBe(true);
    // A run resumed after a question or a restart starts again: still executing.
    expect(await lifecycle.startExecution(plan.id)).toBe(true);
    expect(await lifecycle.finishExecution(plan.id)).toBe(true);
    expect(await lifecycle.failExecution(plan.id, 'late')).toBe(false);
    expect((await h.store.getPlan(plan.id))!).toMatchObject({ status: 'executed', failureReason: null });
  });

  it('a canceled execute run’s plan is failed by the time the cancel answers', async () => {
    const { plan } = await seedPlan(h);
    const runId = newId('run');
    const now = h.clock.now();
    await lifecycle.decide(plan.id, (fresh) => ({
      decision: {
        id: newId('dec'),
        planId: fresh.id,
        kind: 'approve',
        identity: 'approver-user',
        comment: null,
        sha256: fresh.sha256,
        createdAt: now,
      },
      planStatus: 'approved',
      // Left queued in the store: nothing executes it before the cancel.
      run: {
        id: runId,
        sessionId: fresh.sessionId,
        jobId: null,
        slotAt: null,
        source: 'manual',
        prompt: 'Carry out the plan',
        requestedBy: fresh.requestedBy,
        createdAt: now,
        phase: 'execute',
        executesPlanId: fresh.id,
      },
    }));
    const res = await h.call('POST', `/v1/runs/${runId}/cancel`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await h.store.getPlan(plan.id))!).toMatchObject({
      status: 'execution_failed',
      failureReason: `the execute run ${runId} ended (canceled: canceled) before the plan's result was recorded`,
    });
  });

  it('pages change nothing on GET: an overdue plan shows and lists as expired until the sweep writes it', async () => {
    const { plan } = await seedPlan(h);
    h.clock.advance(DAY + 1);
    const me = await signIn(h.app, h.tokens.approver);
    const version = await h.store.plansVersion();

    const page = await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie: me.cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<dd id="plan-status" data-status="expired" title="expired">expired</dd>');
    expect(page.text).toContain('This plan has expired: it can no longer be decided.');
    const pending = await ui(h.app, 'GET', '/ui', { cookie: me.cookie });
    expect(pending.text).not.toContain(`data-plan="${plan.id}"`);
    const expired = await ui(h.app, 'GET', '/ui?status=expired', { cookie: me.cookie });
    expect(expired.text).toContain(`data-plan="${plan.id}"`);
    const all = await ui(h.app, 'GET', '/ui?status=any', { cookie: me.cookie });
    expect(all.text).toMatch(
      new RegExp(
        `data-plan="${plan.id}"[\\s\\S]*?<td class="plan-status"><span class="status" data-status="expired"`,
      ),
    );
    expect((await h.call('GET', `/v1/plans/${plan.id}`)).body.status).toBe('expired');

    // Nothing of that wrote.
    expect(await h.store.plansVersion()).toBe(version);
    expect((await h.store.getPlan(plan.id))!).toMatchObject({ status: 'pending_approval', decidedAt: null });

    // The sweep does, once.
    expect(await lifecycle.expire()).toBe(1);
    expect(await lifecycle.expire()).toBe(0);
    expect((await h.store.getPlan(plan.id))!).toMatchObject({ status: 'expired', decidedAt: h.clock.now() });
  });

  it('every plan status is a key of the transitions table', async () => {
    const { PLAN_TRANSITIONS, planSourcesOf } = await import('../../src/domain/plan-status.js');
    expect(Object.keys(PLAN_TRANSITIONS).sort()).toEqual([...PLAN_STATUSES].sort());
    expect(planSourcesOf('execution_failed')).toEqual(['approved', 'executing']);
    expect(planSourcesOf('pending_approval')).toEqual([]);
  });
});

describe('the daemon’s sweep', () => {
  let model: ModelServer;
  let d: TestDaemon | undefined;
  beforeEach(async () => {
    model = await startModelServer();
  });
  afterEach(async () => {
    await d?.stop();
    d = undefined;
    await model.close();
  });

  it('writes a plan nobody decided in time expired', async () => {
    const w = await world(model, {}, (c) => {
      c.plans.ttl_ms = 200;
      c.scheduler.max_wait_ms = 50;
    });
    d = w.d;
    model.enqueue(proposes());
    const { plan } = await planned(w);
    const stored = await waitFor(
      async () => {
        const p = await w.d.daemon.store.getPlan(plan.id);
        return p?.status === 'expired' ? p : undefined;
      },
      5_000,
      'the sweep to expire the plan',
    );
    expect(stored.decidedAt).toBeGreaterThanOrEqual(stored.expiresAt);
  });
});
