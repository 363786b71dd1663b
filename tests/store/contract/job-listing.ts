import { describe, expect, it } from 'vitest';
import { InvalidCursorError } from '../../../src/store/store.js';
import {
  allPages,
  DAY,
  FOREIGN_CURSOR,
  givenSession,
  jobInput,
  MINUTE,
  planInput,
  type StoreFactory,
  T0,
  triggerInput,
  useStore,
} from './fixtures.js';

// JobStore's listing across sessions (GET /v1/jobs, the Schedules page): filters, keyset pages, and the latest
// slots of a page of jobs in one read.

export function jobListingContract(factory: StoreFactory): void {
  describe('jobs across sessions', () => {
    const ctx = useStore(factory);

    /**
     * ses_1: job_a (active, expires in 7 days), job_b (paused, expires in 2 days), job_c (a one-shot that never
     * expires); ses_2: job_d; a scheduled trigger trg_s whose job job_s never expires. Created in that order.
     */
    async function given(): Promise<void> {
      const { store } = ctx;
      await givenSession(store, 'ses_1');
      await givenSession(store, 'ses_2');
      await store.createJob(jobInput('job_a', 'ses_1', { createdAt: T0 }), 50);
      await store.createJob(
        jobInput('job_b', 'ses_1', { createdAt: T0 + MINUTE, expiresAt: T0 + 2 * DAY }),
        50,
      );
      await store.updateJobSchedule('job_b', 'paused', null);
      await store.createJob(
        jobInput('job_c', 'ses_1', { createdAt: T0 + 2 * MINUTE, recurring: false, expiresAt: null }),
        50,
      );
      await store.createJob(jobInput('job_d', 'ses_2', { createdAt: T0 + 3 * MINUTE }), 50);
      await store.createScheduleTrigger({
        trigger: triggerInput('trg_s', { kind: 'schedule', events: [], workspace: '/srv/repo' }),
        session: {
          id: 'ses_s',
          name: 'nightly',
          workspace: '/srv/repo',
          workspaceKind: 'plain',
          owner: 'admin',
          defaults: {},
          scopeKey: 'schedule:trg_s',
        },
        job: jobInput('job_s', 'ses_s', {
          triggerId: 'trg_s',
          createdAt: T0 + 4 * MINUTE,
          expiresAt: null,
        }),
      });
    }

    const ids = async (f: Omit<Parameters<typeof ctx.store.listJobPage>[0], 'limit'>) =>
      (await ctx.store.listJobPage({ ...f, limit: 50 })).items.map((j) => j.id);

    it('lists every session’s jobs and scheduled triggers’ jobs in the order they were made, in pages', async () => {
      await given();
      const pages = await allPages((cursor) => ctx.store.listJobPage({ limit: 2, cursor }));
      expect(pages.map((p) => p.map((j) => j.id))).toEqual([
        ['job_a', 'job_b'],
        ['job_c', 'job_d'],
        ['job_s'],
      ]);
      const first = await ctx.store.listJobPage({ limit: 5 });
      expect(first.nextCursor).toBeNull();
      expect(first.items[4]).toMatchObject({ id: 'job_s', triggerId: 'trg_s', sessionId: 'ses_s' });
    });

    it('filters by session, trigger, and whether a job is a scheduled trigger’s', async () => {
      await given();
      expect(await ids({ sessionId: 'ses_1' })).toEqual(['job_a', 'job_b', 'job_c']);
      expect(await ids({ triggerId: 'trg_s' })).toEqual(['job_s']);
      expect(await ids({ triggerId: 'trg_none' })).toEqual([]);
      expect(await ids({ ofTrigger: false })).toEqual(['job_a', 'job_b', 'job_c', 'job_d']);
      expect(await ids({ ofTrigger: true })).toEqual(['job_s']);
      expect(await ids({ sessionId: 'ses_1', ofTrigger: true })).toEqual([]);
    });

    it('enabled: active jobs, and a trigger’s job only while its trigger is enabled', async () => {
      await given();
      expect(await ids({ enabled: true })).toEqual(['job_a', 'job_c', 'job_d', 'job_s']);
      expect(await ids({ enabled: false })).toEqual(['job_b']);
      // The trigger's flag is its word, even before its job is paused to follow it.
      await ctx.store.updateTrigger('trg_s', { enabled: false, updatedAt: T0 + DAY });
      expect(await ids({ enabled: true })).toEqual(['job_a', 'job_c', 'job_d']);
      expect(await ids({ enabled: false })).toEqual(['job_b', 'job_s']);
    });

    it('expiring before a time: jobs that never expire are left out', async () => {
      await given();
      expect(await ids({ expiringBefore: T0 + 3 * DAY })).toEqual(['job_b']);
      expect(await ids({ expiringBefore: T0 + 8 * DAY })).toEqual(['job_a', 'job_b', 'job_d']);
      expect(await ids({ expiringBefore: T0 + 2 * DAY })).toEqual([]);
      expect(await ids({ expiringBefore: T0 + 8 * DAY, sessionId: 'ses_2' })).toEqual(['job_d']);
    });

    it('refuses a cursor it did not issue', async () => {
      await expect(ctx.store.listJobPage({ limit: 2, cursor: FOREIGN_CURSOR })).rejects.toBeInstanceOf(
        InvalidCursorError,
      );
    });

    it('reads the latest slots of several jobs at once, newest first, with the plan of each slot’s run', async () => {
      await given();
      const { store } = ctx;
      const slots = Array.from({ length: 11 }, (_, i) => T0 + DAY + i * DAY);
      const fireAt = T0 + 12 * DAY;
      // Eleven slots coalesced, then the twelfth fires one run that proposes a plan.
      await store.advanceJobs(['job_a'], fireAt, () => ({
        coalesce: slots,
        missed: null,
        fire: { slotAt: fireAt, runId: 'run_f', dueAt: fireAt },
        pending: null,
        next: { nominalAt: fireAt + DAY, dueAt: fireAt + DAY, final: false },
        remove: false,
      }));
      const run = (await store.getRun('run_f'))!;
      await store.createPlan(planInput('pln_f', run));
      await store.updateRun('run_f', { planId: 'pln_f' });
      await store.advanceJobs(['job_d'], fireAt, () => ({
        coalesce: [],
        missed: { firstAt: T0 + DAY, lastAt: T0 + 3 * DAY, slots: 3 },
        fire: null,
        pending: null,
        next: null,
        remove: false,
      }));

      const recent = await store.recentSlots(['job_a', 'job_b', 'job_d'], 10);
      expect([...recent.keys()].sort()).toEqual(['job_a', 'job_d']);
      const a = recent.get('job_a')!;
      expect(a.map((s) => s.slotAt)).toEqual([fireAt, ...slots.slice(2).reverse()]);
      expect(a[0]).toEqual({
        jobId: 'job_a',
        slotAt: fireAt,
        lastSlotAt: fireAt,
        slots: 1,
        outcome: 'fired',
        runId: 'run_f',
        recordedAt: fireAt,
        planId: 'pln_f',
      });
      // A coalesced slot is linked to the run it was folded into, and so to its plan.
      expect(a[1]).toMatchObject({ outcome: 'coalesced', runId: 'run_f', planId: 'pln_f' });
      expect(recent.get('job_d')).toEqual([
        {
          jobId: 'job_d',
          slotAt: T0 + DAY,
          lastSlotAt: T0 + 3 * DAY,
          slots: 3,
          outcome: 'missed',
          runId: null,
          recordedAt: fireAt,
          planId: null,
        },
      ]);
      expect(await store.recentSlots([], 10)).toEqual(new Map());
    });
  });
}
