import { beforeEach, describe, expect, it } from 'vitest';
import type { NewNotification, Notification, PlanDelivery } from '../../../src/domain/types.js';
import { InvalidCursorError } from '../../../src/store/store.js';
import { FOREIGN_CURSOR, givenPlan, givenRun, MINUTE, type StoreFactory, T0, useStore } from './fixtures.js';

// OutboxStore: delivering executed plans (a worker claims a due delivery for one attempt; each step is
// written as it completes) and the notification outbox (rows written with the cursor that found them;
// claimed for an attempt, settled).

/** A delivery as the worker first writes it: every field but those given empty. */
const freshDelivery = (over: Partial<PlanDelivery>): PlanDelivery => ({
  status: 'pending',
  target: null,
  branch: null,
  remote: null,
  commit: null,
  pushedAt: null,
  pullRequestUrl: null,
  pullRequestNumber: null,
  commentUrl: null,
  attempts: 0,
  lastError: null,
  nextAttemptAt: null,
  claimedUntil: null,
  settledAt: null,
  ...over,
});

export function outboxContract(factory: StoreFactory): void {
  describe('plan deliveries', () => {
    const ctx = useStore(factory);

    const executed = (id: string, createdAt = T0) =>
      givenPlan(ctx.store, id, { status: 'executed', createdAt });
    /** An executed plan whose delivery is pending from `at`. */
    async function pendingFrom(id: string, at: number): Promise<void> {
      await executed(id);
      expect(await ctx.store.updatePlanDelivery(id, [null], { status: 'pending', nextAttemptAt: at })).toBe(
        true,
      );
    }

    it('lists executed plans the worker has not looked at yet, oldest first', async () => {
      await executed('pln_b', T0 + 2);
      await executed('pln_a', T0 + 1);
      await executed('pln_c', T0 + 3);
      await givenPlan(ctx.store, 'pln_pending');
      await givenPlan(ctx.store, 'pln_failed', { status: 'execution_failed' });
      const undecided = async (limit = 10) =>
        (await ctx.store.listUndecidedPlanDeliveries(limit)).map((p) => p.id);
      expect(await undecided()).toEqual(['pln_a', 'pln_b', 'pln_c']);
      expect(await undecided(2)).toEqual(['pln_a', 'pln_b']);
      expect(await ctx.store.updatePlanDelivery('pln_a', [null], { status: 'off' })).toBe(true);
      expect(await undecided()).toEqual(['pln_b', 'pln_c']);
      expect((await ctx.store.getPlan('pln_a'))?.delivery).toEqual(freshDelivery({ status: 'off' }));
    });

    it('writes delivery fields only from an expected status; undefined keeps a field, null clears it', async () => {
      await executed('pln_1');
      expect(await ctx.store.updatePlanDelivery('pln_1', ['pending'], { status: 'delivered' })).toBe(false);
      expect((await ctx.store.getPlan('pln_1'))?.delivery).toBeNull();
      expect(
        await ctx.store.updatePlanDelivery('pln_1', [null], {
          status: 'pending',
          branch: 'drydock/pln_1',
          remote: 'origin https://github.com/acme/app.git',
          nextAttemptAt: T0,
        }),
      ).toBe(true);
      expect(await ctx.store.updatePlanDelivery('pln_1', [null], { status: 'off' })).toBe(false);
      expect(
        await ctx.store.updatePlanDelivery('pln_1', ['retrying', 'pending'], {
          target: 'head',
          commit: 'c'.repeat(40),
          pushedAt: T0 + 1,
          pullRequestUrl: 'https://github.com/acme/app/pull/9',
          pullRequestNumber: 9,
          commentUrl: 'https://github.com/acme/app/pull/3#issuecomment-1',
          lastError: 'HTTP 502',
          attempts: 2,
          claimedUntil: T0 + MINUTE,
        }),
      ).toBe(true);
      const full = freshDelivery({
        status: 'pending',
        target: 'head',
        branch: 'drydock/pln_1',
        remote: 'origin https://github.com/acme/app.git',
        commit: 'c'.repeat(40),
        pushedAt: T0 + 1,
        pullRequestUrl: 'https://github.com/acme/app/pull/9',
        pullRequestNumber: 9,
        commentUrl: 'https://github.com/acme/app/pull/3#issuecomment-1',
        attempts: 2,
        lastError: 'HTTP 502',
        nextAttemptAt: T0,
        claimedUntil: T0 + MINUTE,
      });
      expect((await ctx.store.getPlan('pln_1'))?.delivery).toEqual(full);
      expect(
        await ctx.store.updatePlanDelivery('pln_1', ['pending'], {
          status: 'delivered',
          lastError: null,
          nextAttemptAt: null,
          claimedUntil: null,
          settledAt: T0 + 2,
          branch: undefined,
        }),
      ).toBe(true);
      expect((await ctx.store.getPlan('pln_1'))?.delivery).toEqual({
        ...full,
        status: 'delivered',
        lastError: null,
        nextAttemptAt: null,
        claimedUntil: null,
        settledAt: T0 + 2,
      });
      // Nothing to write is not a write.
      expect(await ctx.store.updatePlanDelivery('pln_1', ['delivered'], {})).toBe(false);
      expect(await ctx.store.updatePlanDelivery('pln_missing', [null], { status: 'off' })).toBe(false);
    });

    it('lists deliveries due at a time and held by no worker, earliest first', async () => {
      await pendingFrom('pln_late', T0 + 2 * MINUTE);
      await pendingFrom('pln_early', T0);
      await pendingFrom('pln_mid', T0 + MINUTE);
      await pendingFrom('pln_future', T0 + 10 * MINUTE);
      await pendingFrom('pln_retry', T0 + MINUTE + 1);
      await ctx.store.updatePlanDelivery('pln_retry', ['pending'], { status: 'retrying' });
      await pendingFrom('pln_done', T0);
      await ctx.store.updatePlanDelivery('pln_done', ['pending'], { status: 'delivered', settledAt: T0 });
      const due = async (now: number, limit = 10) => ctx.store.duePlanDeliveries(now, limit);
      expect(await due(T0 + 2 * MINUTE)).toEqual(['pln_early', 'pln_mid', 'pln_retry', 'pln_late']);
      expect(await due(T0 + 2 * MINUTE, 2)).toEqual(['pln_early', 'pln_mid']);
      expect(await due(T0)).toEqual(['pln_early']);
      await ctx.store.claimPlanDelivery('pln_early', T0, T0 + 5 * MINUTE, 'r-a');
      expect(await due(T0 + 2 * MINUTE)).toEqual(['pln_mid', 'pln_retry', 'pln_late']);
      expect(await due(T0 + 5 * MINUTE)).toEqual(['pln_early', 'pln_mid', 'pln_retry', 'pln_late']);
    });

    it('knows when the next delivery is due, or its holder may have died', async () => {
      expect(await ctx.store.nextPlanDeliveryAt()).toBeNull();
      await pendingFrom('pln_1', T0 + MINUTE);
      await pendingFrom('pln_2', T0 + 3 * MINUTE);
      expect(await ctx.store.nextPlanDeliveryAt()).toBe(T0 + MINUTE);
      await ctx.store.claimPlanDelivery('pln_1', T0 + MINUTE, T0 + 5 * MINUTE, 'r-a');
      expect(await ctx.store.nextPlanDeliveryAt()).toBe(T0 + 3 * MINUTE);
      await ctx.store.updatePlanDelivery('pln_2', ['pending'], { status: 'failed', settledAt: T0 });
      expect(await ctx.store.nextPlanDeliveryAt()).toBe(T0 + 5 * MINUTE);
      await ctx.store.updatePlanDelivery('pln_1', ['pending'], { status: 'delivered', settledAt: T0 });
      expect(await ctx.store.nextPlanDeliveryAt()).toBeNull();
    });

    it('a worker holds a due delivery for one attempt; another takes it only when the hold lapses', async () => {
      await pendingFrom('pln_1', T0 + MINUTE);
      expect(await ctx.store.claimPlanDelivery('pln_1', T0, T0 + 5 * MINUTE, 'r-a')).toBeNull();
      const held = await ctx.store.claimPlanDelivery('pln_1', T0 + MINUTE, T0 + 5 * MINUTE, 'r-a');
      expect(held).toMatchObject({ id: 'pln_1', status: 'executed' });
      expect(held?.delivery).toMatchObject({ attempts: 1, claimedUntil: T0 + 5 * MINUTE });
      expect(await ctx.store.claimPlanDelivery('pln_1', T0 + 2 * MINUTE, T0 + 6 * MINUTE, 'r-a')).toBeNull();
      const again = await ctx.store.claimPlanDelivery('pln_1', T0 + 5 * MINUTE, T0 + 9 * MINUTE, 'r-a');
      expect(again?.delivery).toMatchObject({ attempts: 2, claimedUntil: T0 + 9 * MINUTE });
      await ctx.store.updatePlanDelivery('pln_1', ['pending'], { status: 'delivered', settledAt: T0 });
      expect(
        await ctx.store.claimPlanDelivery('pln_1', T0 + 20 * MINUTE, T0 + 30 * MINUTE, 'r-a'),
      ).toBeNull();
      expect(await ctx.store.claimPlanDelivery('pln_missing', T0, T0 + MINUTE, 'r-a')).toBeNull();
    });

    it("a replica's restart takes back the claims it held, and only those, on deliveries still to make", async () => {
      await pendingFrom('pln_a', T0);
      await pendingFrom('pln_b', T0);
      await pendingFrom('pln_c', T0);
      await ctx.store.claimPlanDelivery('pln_a', T0, T0 + 5 * MINUTE, 'r-a');
      await ctx.store.claimPlanDelivery('pln_b', T0, T0 + 5 * MINUTE, 'r-b');
      await ctx.store.claimPlanDelivery('pln_c', T0, T0 + 5 * MINUTE, 'r-a');
      await ctx.store.updatePlanDelivery('pln_c', ['pending'], { status: 'delivered', settledAt: T0 });
      expect(await ctx.store.duePlanDeliveries(T0 + MINUTE, 10)).toEqual([]);
      expect(await ctx.store.releasePlanDeliveryClaims('r-a')).toBe(1);
      // pln_a is due again at once, counted as attempted; r-b's claim and the delivered plan stay as they were.
      expect(await ctx.store.duePlanDeliveries(T0 + MINUTE, 10)).toEqual(['pln_a']);
      expect((await ctx.store.getPlan('pln_a'))?.delivery).toMatchObject({ attempts: 1, claimedUntil: null });
      expect((await ctx.store.getPlan('pln_b'))?.delivery?.claimedUntil).toBe(T0 + 5 * MINUTE);
      expect((await ctx.store.getPlan('pln_c'))?.delivery?.status).toBe('delivered');
      expect(await ctx.store.releasePlanDeliveryClaims('r-a')).toBe(0);
      const again = await ctx.store.claimPlanDelivery('pln_a', T0 + MINUTE, T0 + 6 * MINUTE, 'r-a');
      expect(again?.delivery).toMatchObject({ attempts: 2, claimedUntil: T0 + 6 * MINUTE });
    });

    it('of workers on two processes claiming one delivery at once, one holds it', async () => {
      await pendingFrom('pln_1', T0);
      const other = await ctx.peer();
      const out = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? other : ctx.store).claimPlanDelivery('pln_1', T0, T0 + MINUTE + i, 'r-a'),
        ),
      );
      const held = out.filter((p) => p !== null);
      expect(held).toHaveLength(1);
      expect((await ctx.store.getPlan('pln_1'))?.delivery).toMatchObject({
        attempts: 1,
        claimedUntil: held[0]?.delivery?.claimedUntil,
      });
    });
  });

  describe('notifications', () => {
    const ctx = useStore(factory);
    /** Positions in the event log of five events. */
    let rowids: number[] = [];
    beforeEach(async () => {
      await givenRun(ctx.store, 'run_1');
      for (let i = 0; i < 5; i++) await ctx.store.appendEvent('run_1', 'plan.pending', { i }, T0 + i);
      rowids = (await ctx.store.eventsAfter(0, ['plan.pending'], 10)).events.map((e) => e.rowid);
    });

    const row = (id: string, event: number, over: Partial<NewNotification> = {}): NewNotification => ({
      id,
      eventRowid: rowids[event]!,
      webhook: 'wh_slack',
      webhookUrl: 'https://hooks.example.com/services',
      event: 'plan.pending',
      runId: 'run_1',
      planId: null,
      data: { title: `event ${event}` },
      body: `{"event":${event}}`,
      nextAttemptAt: T0,
      createdAt: T0,
      ...over,
    });

    it('writes rows with the cursor that found them; a row per (event, webhook) once; the cursor never goes back', async () => {
      expect(await ctx.store.notificationCursor()).toBeNull();
      expect(
        await ctx.store.enqueueNotifications(
          [row('ntf_1', 0), row('ntf_2', 0, { webhook: 'wh_ci' })],
          rowids[1]!,
        ),
      ).toBe(2);
      expect(await ctx.store.notificationCursor()).toBe(rowids[1]);
      // Found again (another daemon, or a restart): nothing new.
      expect(await ctx.store.enqueueNotifications([row('ntf_1b', 0), row('ntf_3', 2)], rowids[3]!)).toBe(1);
      expect(await ctx.store.notificationCursor()).toBe(rowids[3]);
      expect(await ctx.store.enqueueNotifications([], rowids[2]!)).toBe(0);
      expect(await ctx.store.notificationCursor()).toBe(rowids[3]);
      expect(await ctx.store.enqueueNotifications([], rowids[4]!)).toBe(0);
      expect(await ctx.store.notificationCursor()).toBe(rowids[4]);
      const listed = (await ctx.store.listNotifications({ limit: 10 })).items;
      expect(listed.map((n) => n.id).sort()).toEqual(['ntf_1', 'ntf_2', 'ntf_3']);
      expect(listed.find((n) => n.id === 'ntf_1')).toEqual({
        ...row('ntf_1', 0),
        status: 'pending',
        attempts: 0,
        lastError: null,
        deliveredAt: null,
      } satisfies Notification);
    });

    it('claims due rows for an attempt, held until a time, oldest due first', async () => {
      await ctx.store.enqueueNotifications(
        [
          row('ntf_late', 0, { nextAttemptAt: T0 + 2 }),
          row('ntf_early', 1, { nextAttemptAt: T0 }),
          row('ntf_mid', 2, { nextAttemptAt: T0 + 1 }),
          row('ntf_future', 3, { nextAttemptAt: T0 + MINUTE }),
        ],
        rowids[3]!,
      );
      const first = await ctx.store.claimNotifications(T0 + 2, T0 + 30_000, 2);
      // The two due first, handed out in log order.
      expect(first.map((n) => n.id)).toEqual(['ntf_early', 'ntf_mid']);
      expect(first.map((n) => [n.attempts, n.nextAttemptAt, n.status])).toEqual([
        [1, T0 + 30_000, 'pending'],
        [1, T0 + 30_000, 'pending'],
      ]);
      expect((await ctx.store.claimNotifications(T0 + 2, T0 + 30_000, 10)).map((n) => n.id)).toEqual([
        'ntf_late',
      ]);
      expect(await ctx.store.claimNotifications(T0 + 2, T0 + 30_000, 10)).toEqual([]);
      // A hold that ran out (its sender died) makes the row due again.
      const retaken = await ctx.store.claimNotifications(T0 + 30_000, T0 + 60_000, 10);
      expect(retaken.map((n) => [n.id, n.attempts])).toEqual([
        ['ntf_late', 2],
        ['ntf_early', 2],
        ['ntf_mid', 2],
      ]);
      expect(await ctx.store.nextNotificationDue()).toBe(T0 + MINUTE);
    });

    it('a row is claimed once when senders on two processes claim at once', async () => {
      await ctx.store.enqueueNotifications(
        rowids.map((_, i) => row(`ntf_${i}`, i)),
        rowids[4]!,
      );
      const other = await ctx.peer();
      const out = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          (i % 2 ? other : ctx.store).claimNotifications(T0, T0 + MINUTE, 2),
        ),
      );
      const claimed = out.flat().map((n) => n.id);
      expect(claimed.sort()).toEqual(['ntf_0', 'ntf_1', 'ntf_2', 'ntf_3', 'ntf_4']);
      const all = (await ctx.store.listNotifications({ limit: 10 })).items;
      expect(all.every((n) => n.attempts === 1)).toBe(true);
    });

    it('settles an attempt on a pending row only', async () => {
      await ctx.store.enqueueNotifications(
        [row('ntf_ok', 0), row('ntf_retry', 1), row('ntf_bad', 2)],
        rowids[2]!,
      );
      await ctx.store.claimNotifications(T0, T0 + MINUTE, 10);
      await ctx.store.settleNotification('ntf_ok', { status: 'delivered', at: T0 + 5 });
      await ctx.store.settleNotification('ntf_retry', {
        status: 'pending',
        nextAttemptAt: T0 + 10 * MINUTE,
        error: 'HTTP 503',
      });
      await ctx.store.settleNotification('ntf_bad', { status: 'failed', error: 'HTTP 410' });
      const byId = async () =>
        Object.fromEntries((await ctx.store.listNotifications({ limit: 10 })).items.map((n) => [n.id, n]));
      let rows = await byId();
      expect(rows.ntf_ok).toMatchObject({ status: 'delivered', deliveredAt: T0 + 5, nextAttemptAt: null });
      expect(rows.ntf_retry).toMatchObject({
        status: 'pending',
        nextAttemptAt: T0 + 10 * MINUTE,
        lastError: 'HTTP 503',
      });
      expect(rows.ntf_bad).toMatchObject({ status: 'failed', lastError: 'HTTP 410', nextAttemptAt: null });
      // A late outcome of an attempt does not undo a settled row.
      await ctx.store.settleNotification('ntf_ok', { status: 'failed', error: 'late' });
      await ctx.store.settleNotification('ntf_ok', {
        status: 'pending',
        nextAttemptAt: T0 + 9,
        error: 'late',
      });
      await ctx.store.settleNotification('ntf_bad', { status: 'delivered', at: T0 + 9 });
      rows = await byId();
      expect(rows.ntf_ok).toMatchObject({ status: 'delivered', lastError: null, nextAttemptAt: null });
      expect(rows.ntf_bad).toMatchObject({ status: 'failed', deliveredAt: null });
      expect(await ctx.store.nextNotificationDue()).toBe(T0 + 10 * MINUTE);
      expect(await ctx.store.countNotifications()).toEqual({ pending: 1, delivered: 1, failed: 1 });
    });

    it('knows when the earliest pending row is due', async () => {
      expect(await ctx.store.nextNotificationDue()).toBeNull();
      await ctx.store.enqueueNotifications(
        [row('ntf_a', 0, { nextAttemptAt: T0 + 3 }), row('ntf_b', 1, { nextAttemptAt: T0 + 1 })],
        rowids[1]!,
      );
      expect(await ctx.store.nextNotificationDue()).toBe(T0 + 1);
      await ctx.store.claimNotifications(T0 + 1, T0 + MINUTE, 10);
      expect(await ctx.store.nextNotificationDue()).toBe(T0 + 3);
    });

    it('lists rows newest first, filtered by status and event, a page at a time', async () => {
      await ctx.store.enqueueNotifications(
        [
          row('ntf_a', 0, { createdAt: T0 }),
          row('ntf_c', 1, { createdAt: T0 + 1 }),
          row('ntf_b', 2, { createdAt: T0 + 1 }),
          row('ntf_d', 3, { createdAt: T0 + 2, event: 'question.pending' }),
        ],
        rowids[3]!,
      );
      await ctx.store.claimNotifications(T0, T0 + MINUTE, 10);
      await ctx.store.settleNotification('ntf_a', { status: 'failed', error: 'x' });
      const pages: string[][] = [];
      let cursor: string | undefined;
      do {
        const page = await ctx.store.listNotifications({ limit: 2, cursor });
        pages.push(page.items.map((n) => n.id));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      expect(pages).toEqual([
        ['ntf_d', 'ntf_c'],
        ['ntf_b', 'ntf_a'],
      ]);
      const ids = async (f: { status?: Notification['status']; event?: string }) =>
        (await ctx.store.listNotifications({ ...f, limit: 10 })).items.map((n) => n.id);
      expect(await ids({ status: 'failed' })).toEqual(['ntf_a']);
      expect(await ids({ event: 'question.pending' })).toEqual(['ntf_d']);
      expect(await ids({ status: 'pending', event: 'plan.pending' })).toEqual(['ntf_c', 'ntf_b']);
      await expect(ctx.store.listNotifications({ limit: 2, cursor: FOREIGN_CURSOR })).rejects.toBeInstanceOf(
        InvalidCursorError,
      );
    });

    it('counts rows by status, every status present', async () => {
      expect(await ctx.store.countNotifications()).toEqual({ pending: 0, delivered: 0, failed: 0 });
      await ctx.store.enqueueNotifications([row('ntf_a', 0), row('ntf_b', 1)], rowids[1]!);
      expect(await ctx.store.countNotifications()).toEqual({ pending: 2, delivered: 0, failed: 0 });
    });
  });
}
