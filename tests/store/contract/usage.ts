import { describe, expect, it } from 'vitest';
import { spendDayNamed, spendDaysBetween } from '../../../src/domain/spend.js';
import {
  DAY,
  givenRun,
  givenSession,
  HOUR,
  type StoreFactory,
  T0,
  triggerInput,
  useStore,
} from './fixtures.js';

// UsageStore: a day's spend counted by the database from the runs' receipts (created_at in the day), the
// caps of sessions and triggers, usage per day and key, and the once-a-day note of a cap with what announces it.

const day = spendDayNamed('2026-01-05', 'UTC');

export function usageContract(factory: StoreFactory): void {
  describe('usage and spend caps', () => {
    const ctx = useStore(factory);

    async function seed(): Promise<void> {
      const { store } = ctx;
      await givenSession(ctx.store, 'ses_1', { limits: { daily_usd: 3 } });
      await givenSession(ctx.store, 'ses_2');
      await store.createTrigger(triggerInput('trg_1', { name: 'nightly', limits: { daily_runs: 2 } }));
      await givenRun(store, 'run_a', { sessionId: 'ses_1', triggerId: 'trg_1' });
      await givenRun(store, 'run_b', { sessionId: 'ses_1', createdAt: T0 + HOUR });
      await givenRun(store, 'run_c', { sessionId: 'ses_2', triggerId: 'trg_1', createdAt: T0 + 2 * HOUR });
      // The day before and the day after: not today's.
      await givenRun(store, 'run_old', { sessionId: 'ses_1', createdAt: day.start - 1 });
      await givenRun(store, 'run_next', { sessionId: 'ses_2', createdAt: day.end });
      await store.updateRun('run_a', {
        costUsd: 1.5,
        usage: { input_tokens: 10, output_tokens: 1 },
        model: 'm1',
      });
      await store.updateRun('run_b', {
        costUsd: 0.25,
        usage: { input_tokens: 20, output_tokens: 2 },
        model: 'm1',
      });
      await store.updateRun('run_c', { costUsd: 2, model: 'm2' });
      await store.updateRun('run_old', { costUsd: 100 });
      await store.updateRun('run_next', { costUsd: 7 });
    }

    it("tallies a day's runs and receipts per session, per trigger and in all, with the scopes that have caps", async () => {
      await seed();
      const s = await ctx.store.spendState(day);
      expect(s.global).toEqual({ runs: 3, costUsd: 3.75 });
      expect(s.sessions.get('ses_1')).toEqual({ runs: 2, costUsd: 1.75 });
      expect(s.sessions.get('ses_2')).toEqual({ runs: 1, costUsd: 2 });
      expect(s.triggers.get('trg_1')).toEqual({ runs: 2, costUsd: 3.5 });
      expect([...s.sessionLimits]).toEqual([['ses_1', { daily_usd: 3 }]]);
      expect([...s.triggerLimits]).toEqual([['trg_1', { daily_runs: 2 }]]);
      const next = await ctx.store.spendState(spendDayNamed('2026-01-06', 'UTC'));
      expect(next.global).toEqual({ runs: 1, costUsd: 7 });
    });

    it('sums usage per day and key, keys in order, runs without one first', async () => {
      await seed();
      const days = spendDaysBetween('2026-01-04', '2026-01-06', 'UTC');
      const byTrigger = await ctx.store.usage('trigger', days);
      expect(byTrigger).toEqual([
        { day: '2026-01-04', key: null, name: null, runs: 1, costUsd: 100, inputTokens: 0, outputTokens: 0 },
        {
          day: '2026-01-05',
          key: null,
          name: null,
          runs: 1,
          costUsd: 0.25,
          inputTokens: 20,
          outputTokens: 2,
        },
        {
          day: '2026-01-05',
          key: 'trg_1',
          name: 'nightly',
          runs: 2,
          costUsd: 3.5,
          inputTokens: 10,
          outputTokens: 1,
        },
        { day: '2026-01-06', key: null, name: null, runs: 1, costUsd: 7, inputTokens: 0, outputTokens: 0 },
      ]);
      const byModel = await ctx.store.usage('model', [day]);
      expect(byModel.map((r) => [r.key, r.runs, r.costUsd])).toEqual([
        ['m1', 2, 1.75],
        ['m2', 1, 2],
      ]);
      const bySession = await ctx.store.usage('session', [day]);
      expect(bySession.map((r) => [r.key, r.name, r.runs])).toEqual([
        ['ses_1', 'session ses_1', 2],
        ['ses_2', 'session ses_2', 1],
      ]);
      expect(await ctx.store.usage('session', [])).toEqual([]);
    });

    it('notes a cap once a day per scope, writing what announces it only the first time', async () => {
      const { store } = ctx;
      const notice = (id: string) => ({
        id,
        eventRowid: null,
        webhook: 'wh_1',
        webhookUrl: 'https://hooks.example.com/x',
        event: 'limit.reached',
        runId: null,
        planId: null,
        data: { title: 'cap' },
        body: '{}',
        nextAttemptAt: T0,
        createdAt: T0,
      });
      expect(await store.noteSpendCap('global', null, '2026-01-05', 'daily_usd', T0, [notice('ntf_1')])).toBe(
        true,
      );
      expect(
        await store.noteSpendCap('global', null, '2026-01-05', 'daily_runs', T0, [notice('ntf_2')]),
      ).toBe(false);
      expect(await store.noteSpendCap('global', null, '2026-01-06', 'daily_usd', T0 + DAY, [])).toBe(true);
      expect(await store.noteSpendCap('session', 'ses_1', '2026-01-05', 'daily_usd', T0)).toBe(true);
      const listed = await store.listNotifications({ event: 'limit.reached', limit: 10 });
      expect(listed.items.map((n) => [n.id, n.runId, n.eventRowid])).toEqual([['ntf_1', null, null]]);
      // A notification of no run event is claimed like any other.
      const [claimed] = await store.claimNotifications(T0, T0 + 1000, 5);
      expect(claimed).toMatchObject({ id: 'ntf_1', attempts: 1 });
    });
  });
}
