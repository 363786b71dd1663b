import { describe, expect, it } from 'vitest';
import type { CronJob } from '../../../src/domain/types.js';
import {
  ConflictError,
  type DecideFn,
  JobLimitError,
  NotFoundError,
  type SlotTransition,
  type Store,
} from '../../../src/store/store.js';
import {
  DAY,
  givenRun,
  givenSession,
  HOUR,
  jobInput,
  MINUTE,
  runInput,
  type StoreFactory,
  T0,
  useStore,
} from './fixtures.js';

// JobStore: jobs, their schedule, and the scheduler's atomic step (advanceJobs), runJobNow, renewJob,
// redefineJob, jobOfTrigger, listSlots.

/** Nothing happens, unless the parts given say so. */
const transition = (t: Partial<SlotTransition>): SlotTransition => ({
  coalesce: [],
  missed: null,
  fire: null,
  pending: null,
  next: null,
  remove: false,
  ...t,
});

/** The job's next slot a day later. */
const dayAfter = (job: CronJob): SlotTransition['next'] => ({
  nominalAt: job.nextNominalAt! + DAY,
  dueAt: job.nextDueAt! + DAY,
  final: false,
});

/** A scheduler pass that reads the row it is given: fires the job's next slot if it is due at `now`. */
const fireIfDue =
  (runId: string, now: number): DecideFn =>
  (job) =>
    job.nextDueAt !== null && job.nextDueAt <= now
      ? transition({
          fire: { slotAt: job.nextNominalAt!, runId, dueAt: job.nextDueAt },
          next: dayAfter(job),
        })
      : null;

/** Slot and due time of jobInput's first slot. */
const SLOT = T0 + DAY;
const DUE = T0 + DAY + 4 * MINUTE;

export function jobContract(factory: StoreFactory): void {
  describe('jobs', () => {
    const ctx = useStore(factory);

    async function givenJob(id: string, over: Parameters<typeof jobInput>[2] = {}): Promise<CronJob> {
      const sessionId = over.sessionId ?? 'ses_1';
      if (!(await ctx.store.getSession(sessionId))) await givenSession(ctx.store, sessionId);
      return ctx.store.createJob(jobInput(id, sessionId, over), 50);
    }

    /** The runs of a job, oldest first. */
    async function runsOf(jobId: string, store: Store = ctx.store) {
      return (await store.listRuns({ jobId, limit: 100 })).items.reverse();
    }

    describe('creation and reads', () => {
      it('stores a job active, never fired, with what it was given', async () => {
        await givenSession(ctx.store, 'ses_1');
        const given = jobInput('job_1', 'ses_1', {
          options: { model: 'claude-opus-4-1', thinking: 'adaptive', budget_usd: 1 },
          overlap: 'buffer_all',
          jitterMaxSeconds: 120,
        });
        const job = await ctx.store.createJob(given, 50);
        expect(job).toEqual({
          ...given,
          bufferedSlots: [],
          status: 'active',
          pendingSlotAt: null,
          pendingFinal: false,
          pendingCoalesced: 0,
          lastSlotAt: null,
          fireCount: 0,
          triggerId: null,
          renewals: 0,
          renewedAt: null,
          renewedBy: null,
        });
        expect(await ctx.store.getJob('job_1')).toEqual(job);
        expect(await ctx.store.getJob('job_missing')).toBeNull();
      });

      it('refuses a job for an unknown session', async () => {
        await expect(ctx.store.createJob(jobInput('job_1', 'ses_missing'), 50)).rejects.toBeInstanceOf(
          NotFoundError,
        );
        expect(await ctx.store.countJobs()).toBe(0);
      });

      it('refuses a job beyond the per-session limit, counting only that session', async () => {
        await givenJob('job_1');
        await givenJob('job_2');
        await givenJob('job_other', { sessionId: 'ses_2' });
        const refused = ctx.store.createJob(jobInput('job_3', 'ses_1'), 2);
        await expect(refused).rejects.toBeInstanceOf(JobLimitError);
        await expect(refused).rejects.toMatchObject({ limit: 2, code: 'conflict' });
        expect(await ctx.store.getJob('job_3')).toBeNull();
        // Another session is not held back by it.
        await ctx.store.createJob(jobInput('job_other2', 'ses_2'), 2);
        expect(await ctx.store.countJobs()).toBe(4);
      });

      it('refuses a second job of a name in one session, naming the first; other sessions and unnamed jobs are free', async () => {
        await givenJob('job_1', { name: 'review' });
        const refused = ctx.store.createJob(jobInput('job_2', 'ses_1', { name: 'review' }), 50);
        await expect(refused).rejects.toBeInstanceOf(ConflictError);
        await expect(refused).rejects.toThrow(
          'session ses_1 already has a job named "review" (job_1); job names are unique within a session',
        );
        expect(await ctx.store.getJob('job_2')).toBeNull();
        // The same name in another session, and any number of jobs without one.
        await givenJob('job_3', { sessionId: 'ses_2', name: 'review' });
        await givenJob('job_4');
        await givenJob('job_5');
        expect((await ctx.store.listJobs('ses_1')).map((j) => [j.id, j.name])).toEqual([
          ['job_1', 'review'],
          ['job_4', null],
          ['job_5', null],
        ]);
        expect((await ctx.store.getJob('job_3'))?.name).toBe('review');
      });

      it('refuses one of two concurrent creations of a name in a session', async () => {
        await givenSession(ctx.store, 'ses_1');
        const peer = await ctx.peer();
        const results = await Promise.allSettled([
          ctx.store.createJob(jobInput('job_a', 'ses_1', { name: 'same' }), 50),
          peer.createJob(jobInput('job_b', 'ses_1', { name: 'same' }), 50),
        ]);
        expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
        expect((await ctx.store.listJobs('ses_1')).filter((j) => j.name === 'same')).toHaveLength(1);
      });

      it("lists a session's jobs by creation, counts all jobs and deletes one at a time", async () => {
        await givenJob('job_b', { createdAt: T0 + MINUTE });
        await givenJob('job_a', { createdAt: T0 + MINUTE });
        await givenJob('job_z', { createdAt: T0 });
        await givenJob('job_x', { sessionId: 'ses_2' });
        expect((await ctx.store.listJobs('ses_1')).map((j) => j.id)).toEqual(['job_z', 'job_a', 'job_b']);
        expect(await ctx.store.listJobs('ses_missing')).toEqual([]);
        expect(await ctx.store.countJobs()).toBe(4);
        expect(await ctx.store.deleteJob('job_a')).toBe(true);
        expect(await ctx.store.deleteJob('job_a')).toBe(false);
        expect(await ctx.store.getJob('job_a')).toBeNull();
        expect(await ctx.store.countJobs()).toBe(3);
      });

      it('finds the job of a scheduled trigger', async () => {
        await givenJob('job_t', { triggerId: 'trg_nightly' });
        await givenJob('job_plain');
        expect((await ctx.store.jobOfTrigger('trg_nightly'))?.id).toBe('job_t');
        expect((await ctx.store.getJob('job_t'))?.triggerId).toBe('trg_nightly');
        expect(await ctx.store.jobOfTrigger('trg_missing')).toBeNull();
      });
    });

    describe('schedule', () => {
      it('pauses and resumes a job with a freshly computed next slot', async () => {
        await givenJob('job_1');
        const paused = await ctx.store.updateJobSchedule('job_1', 'paused', null);
        expect(paused).toMatchObject({
          status: 'paused',
          nextNominalAt: null,
          nextDueAt: null,
          nextFinal: false,
        });
        const next = { nominalAt: T0 + 2 * DAY, dueAt: T0 + 2 * DAY + MINUTE, final: true };
        const resumed = await ctx.store.updateJobSchedule('job_1', 'active', next);
        expect(resumed).toMatchObject({
          status: 'active',
          nextNominalAt: next.nominalAt,
          nextDueAt: next.dueAt,
          nextFinal: true,
        });
        expect(await ctx.store.getJob('job_1')).toEqual(resumed);
        expect(await ctx.store.updateJobSchedule('job_missing', 'paused', null)).toBeNull();
      });

      it('lists the ids of active jobs due at a time, earliest first, up to a limit', async () => {
        await givenJob('job_late', { nextDueAt: T0 + 3 * MINUTE });
        await givenJob('job_early', { nextDueAt: T0 + MINUTE });
        await givenJob('job_now', { nextDueAt: T0 + 2 * MINUTE });
        await givenJob('job_future', { nextDueAt: T0 + HOUR });
        await givenJob('job_paused', { nextDueAt: T0 });
        await givenJob('job_done', { nextNominalAt: null, nextDueAt: null });
        await ctx.store.updateJobSchedule('job_paused', 'paused', {
          nominalAt: T0,
          dueAt: T0,
          final: false,
        });
        expect(await ctx.store.listDueJobIds(T0 + 3 * MINUTE, 10)).toEqual([
          'job_early',
          'job_now',
          'job_late',
        ]);
        expect(await ctx.store.listDueJobIds(T0 + 3 * MINUTE, 2)).toEqual(['job_early', 'job_now']);
        // Due at exactly its time.
        expect(await ctx.store.listDueJobIds(T0 + MINUTE, 10)).toEqual(['job_early']);
        expect(await ctx.store.listDueJobIds(T0 + MINUTE - 1, 10)).toEqual([]);
      });

      it('knows the earliest due time of any active job', async () => {
        expect(await ctx.store.earliestDueAt()).toBeNull();
        await givenJob('job_paused', { nextDueAt: T0 });
        await ctx.store.updateJobSchedule('job_paused', 'paused', { nominalAt: T0, dueAt: T0, final: false });
        await givenJob('job_done', { nextNominalAt: null, nextDueAt: null });
        expect(await ctx.store.earliestDueAt()).toBeNull();
        await givenJob('job_b', { nextDueAt: T0 + 2 * HOUR });
        await givenJob('job_a', { nextDueAt: T0 + HOUR });
        expect(await ctx.store.earliestDueAt()).toBe(T0 + HOUR);
      });

      it('renews a recurring job: a new expiry, and finality read again against it', async () => {
        await givenJob('job_1', { nextFinal: true, expiresAt: T0 + DAY });
        const renewed = await ctx.store.renewJob('job_1', T0 + 8 * DAY, 'bob', T0 + HOUR);
        expect(renewed).toMatchObject({
          expiresAt: T0 + 8 * DAY,
          nextFinal: false,
          renewals: 1,
          renewedAt: T0 + HOUR,
          renewedBy: 'bob',
        });
        // A renewal that ends before the next slot makes it final again.
        const short = await ctx.store.renewJob('job_1', SLOT, 'carol', T0 + 2 * HOUR);
        expect(short).toMatchObject({ expiresAt: SLOT, nextFinal: true, renewals: 2, renewedBy: 'carol' });
        expect(await ctx.store.getJob('job_1')).toEqual(short);
        expect(await ctx.store.renewJob('job_missing', T0 + DAY, 'bob', T0)).toBeNull();
      });

      it('renewing reads the finality of a waiting slot again too', async () => {
        await givenJob('job_1', { expiresAt: T0 + DAY });
        await ctx.store.advanceJobs(['job_1'], DUE, () =>
          transition({
            pending: { slotAt: SLOT, final: true, coalesced: 0 },
            next: { nominalAt: SLOT + DAY, dueAt: DUE + DAY, final: true },
          }),
        );
        const renewed = await ctx.store.renewJob('job_1', SLOT + 7 * DAY, 'bob', DUE);
        expect(renewed).toMatchObject({ pendingSlotAt: SLOT, pendingFinal: false, nextFinal: false });
        const short = await ctx.store.renewJob('job_1', SLOT, 'bob', DUE);
        expect(short).toMatchObject({ pendingFinal: true, nextFinal: true });
      });

      it('does not renew a one-shot', async () => {
        const once = await givenJob('job_once', { recurring: false, expiresAt: null, nextFinal: true });
        const after = await ctx.store.renewJob('job_once', T0 + 7 * DAY, 'bob', T0);
        expect(after).toEqual(once);
      });

      it("redefines a scheduled trigger's job: new definition and next slot, same history", async () => {
        await givenJob('job_t', { triggerId: 'trg_1' });
        await ctx.store.advanceJobs(['job_t'], DUE, fireIfDue('run_1', DUE));
        await ctx.store.advanceJobs(['job_t'], DUE + DAY, () =>
          transition({
            pending: { slotAt: SLOT + DAY, final: false, coalesced: 0 },
            next: { nominalAt: SLOT + 2 * DAY, dueAt: DUE + 2 * DAY, final: false },
          }),
        );
        const before = (await ctx.store.getJob('job_t'))!;
        const redefined = await ctx.store.redefineJob(
          jobInput('job_t', 'ses_1', {
            cron: '30 22 * * 1-5',
            effectiveCron: '30 22 * * 1-5',
            timezone: 'Europe/Berlin',
            prompt: 'the new prompt',
            approximate: false,
            options: { budget_usd: 3 },
            expiresAt: null,
            nextNominalAt: T0 + 3 * DAY,
            nextDueAt: T0 + 3 * DAY + 5 * MINUTE,
            nextFinal: false,
            triggerId: 'trg_1',
          }),
          'paused',
        );
        expect(redefined).toEqual({
          ...before,
          cron: '30 22 * * 1-5',
          effectiveCron: '30 22 * * 1-5',
          timezone: 'Europe/Berlin',
          prompt: 'the new prompt',
          approximate: false,
          options: { budget_usd: 3 },
          status: 'paused',
          expiresAt: null,
          nextNominalAt: T0 + 3 * DAY,
          nextDueAt: T0 + 3 * DAY + 5 * MINUTE,
          nextFinal: false,
          pendingSlotAt: null,
          pendingFinal: false,
          pendingCoalesced: 0,
        });
        expect(redefined).toMatchObject({
          fireCount: 1,
          lastSlotAt: SLOT,
          createdAt: T0,
          sessionId: 'ses_1',
        });
        expect((await ctx.store.listSlots('job_t')).map((s) => s.outcome)).toEqual(['fired']);
        expect(await ctx.store.redefineJob(jobInput('job_missing', 'ses_1'), 'active')).toBeNull();
      });

      it("redefines a session's job: recurring may change, the name stays", async () => {
        await givenJob('job_n', { name: 'nightly' });
        const redefined = await ctx.store.redefineJob(
          jobInput('job_n', 'ses_1', { recurring: false, expiresAt: null, prompt: 'once' }),
          'active',
        );
        expect(redefined).toMatchObject({
          name: 'nightly',
          recurring: false,
          expiresAt: null,
          prompt: 'once',
        });
      });
    });

    describe('advanceJobs', () => {
      it('fires a slot: one queued run keyed by (job, slot), the slot recorded, the job moved on', async () => {
        await givenJob('job_1', { options: { budget_usd: 1.5 }, createdBy: 'carol' });
        const results = await ctx.store.advanceJobs(['job_1'], DUE + 5, fireIfDue('run_1', DUE + 5));
        expect(results).toHaveLength(1);
        const [r] = results;
        expect(r?.jobId).toBe('job_1');
        expect(r?.transition.fire).toEqual({ slotAt: SLOT, runId: 'run_1', dueAt: DUE });
        expect(r?.run).toMatchObject({
          id: 'run_1',
          sessionId: 'ses_1',
          jobId: 'job_1',
          slotAt: SLOT,
          source: 'schedule',
          phase: 'plan',
          status: 'queued',
          prompt: 'prompt of job_1',
          requestedBy: 'carol',
          overrides: { budget_usd: 1.5 },
          coalescedSlots: 0,
          createdAt: DUE + 5,
        });
        expect(await ctx.store.getRun('run_1')).toEqual(r?.run);
        expect(await ctx.store.listSlots('job_1')).toEqual([
          {
            jobId: 'job_1',
            slotAt: SLOT,
            lastSlotAt: SLOT,
            slots: 1,
            outcome: 'fired',
            runId: 'run_1',
            recordedAt: DUE + 5,
          },
        ]);
        expect(await ctx.store.getJob('job_1')).toMatchObject({
          status: 'active',
          lastSlotAt: SLOT,
          fireCount: 1,
          nextNominalAt: SLOT + DAY,
          nextDueAt: DUE + DAY,
          nextFinal: false,
        });
        expect(await ctx.store.listDueJobIds(DUE + 5, 10)).toEqual([]);
      });

      it("a scheduled trigger's job fires runs of that trigger", async () => {
        await givenJob('job_t', { triggerId: 'trg_1' });
        const [r] = await ctx.store.advanceJobs(['job_t'], DUE, fireIfDue('run_t', DUE));
        expect(r?.run?.triggerId).toBe('trg_1');
      });

      it('decides from the freshest row and whether the session has a run in progress', async () => {
        await givenJob('job_1');
        const next = { nominalAt: T0 + 2 * DAY, dueAt: T0 + 2 * DAY + 2 * MINUTE, final: true };
        await ctx.store.updateJobSchedule('job_1', 'active', next);
        const seen: [CronJob, boolean][] = [];
        const look: DecideFn = (job, busy) => {
          seen.push([job, busy]);
          return null;
        };
        expect(await ctx.store.advanceJobs(['job_1'], T0, look)).toEqual([]);
        const run = await givenRun(ctx.store, 'run_busy');
        await ctx.store.advanceJobs(['job_1'], T0, look);
        await ctx.store.transitionRun(run.id, ['queued'], 'running', { startedAt: T0 });
        await ctx.store.advanceJobs(['job_1'], T0, look);
        await ctx.store.transitionRun(run.id, ['running'], 'awaiting_input');
        await ctx.store.advanceJobs(['job_1'], T0, look);
        await ctx.store.transitionRun(run.id, ['awaiting_input'], 'completed', { finishedAt: T0 });
        await ctx.store.advanceJobs(['job_1'], T0, look);
        // A run in another session does not make this one busy.
        await givenRun(ctx.store, 'run_elsewhere', { sessionId: 'ses_2' });
        await ctx.store.advanceJobs(['job_1'], T0, look);

        expect(seen.map(([, busy]) => busy)).toEqual([false, true, true, true, false, false]);
        expect(seen[0]?.[0]).toEqual(await ctx.store.getJob('job_1'));
        expect(seen[0]?.[0]).toMatchObject({
          nextNominalAt: next.nominalAt,
          nextDueAt: next.dueAt,
          nextFinal: true,
        });
      });

      it('a slot fired earlier in the same pass makes the session busy for its next job', async () => {
        await givenJob('job_a', { nextDueAt: DUE });
        await givenJob('job_b', { nextDueAt: DUE });
        const busyAt: boolean[] = [];
        const results = await ctx.store.advanceJobs(['job_a', 'job_b'], DUE, (job, busy) => {
          busyAt.push(busy);
          return busy
            ? transition({
                pending: { slotAt: job.nextNominalAt!, final: false, coalesced: 0 },
                next: dayAfter(job),
              })
            : fireIfDue(`run_${job.id}`, DUE)(job, busy, []);
        });
        expect(busyAt).toEqual([false, true]);
        expect(results.map((r) => r.run?.id ?? null)).toEqual(['run_job_a', null]);
        expect(await ctx.store.getJob('job_b')).toMatchObject({ pendingSlotAt: SLOT, fireCount: 0 });
      });

      it('skips jobs that vanished and jobs the decision leaves alone', async () => {
        await givenJob('job_a');
        await givenJob('job_b');
        const results = await ctx.store.advanceJobs(['job_missing', 'job_a', 'job_b'], DUE, (job) =>
          job.id === 'job_b' ? fireIfDue('run_b', DUE)(job, false, []) : null,
        );
        expect(results.map((r) => r.jobId)).toEqual(['job_b']);
        expect(await ctx.store.getJob('job_a')).toMatchObject({ fireCount: 0, nextDueAt: DUE });
        expect(await ctx.store.listSlots('job_a')).toEqual([]);
      });

      it('a busy session: the slot waits as pending, later slots coalesce, and the fire counts them', async () => {
        await givenJob('job_1');
        await givenRun(ctx.store, 'run_busy');
        expect(await ctx.store.listReadyPendingJobIds(10)).toEqual([]);
        // Day 1: the session is busy, the slot waits.
        await ctx.store.advanceJobs(['job_1'], DUE, (job) =>
          transition({ pending: { slotAt: SLOT, final: false, coalesced: 0 }, next: dayAfter(job) }),
        );
        expect(await ctx.store.getJob('job_1')).toMatchObject({
          pendingSlotAt: SLOT,
          pendingFinal: false,
          pendingCoalesced: 0,
          nextNominalAt: SLOT + DAY,
          fireCount: 0,
        });
        // A job whose session is busy is not ready.
        expect(await ctx.store.listReadyPendingJobIds(10)).toEqual([]);
        // Day 2: still busy; the newer slot replaces the waiting one, which is recorded as coalesced.
        await ctx.store.advanceJobs(['job_1'], DUE + DAY, (job) =>
          transition({
            coalesce: [SLOT],
            pending: { slotAt: SLOT + DAY, final: true, coalesced: 1 },
            next: dayAfter(job),
          }),
        );
        expect(await ctx.store.getJob('job_1')).toMatchObject({
          pendingSlotAt: SLOT + DAY,
          pendingFinal: true,
          pendingCoalesced: 1,
        });
        await ctx.store.transitionRun('run_busy', ['queued'], 'canceled', { finishedAt: DUE + DAY });
        expect(await ctx.store.listReadyPendingJobIds(10)).toEqual(['job_1']);
        // Idle: the waiting slot fires and takes the coalesced one with it.
        const at = DUE + DAY + HOUR;
        const [r] = await ctx.store.advanceJobs(['job_1'], at, (job) =>
          transition({
            fire: { slotAt: job.pendingSlotAt!, runId: 'run_fire', dueAt: null },
            next: { nominalAt: job.nextNominalAt!, dueAt: job.nextDueAt!, final: job.nextFinal },
          }),
        );
        expect(r?.run).toMatchObject({ id: 'run_fire', slotAt: SLOT + DAY, coalescedSlots: 1 });
        expect(await ctx.store.getJob('job_1')).toMatchObject({
          pendingSlotAt: null,
          pendingFinal: false,
          pendingCoalesced: 0,
          lastSlotAt: SLOT + DAY,
          fireCount: 1,
        });
        expect(await ctx.store.listSlots('job_1')).toEqual([
          expect.objectContaining({ slotAt: SLOT, outcome: 'coalesced', slots: 1, runId: 'run_fire' }),
          expect.objectContaining({
            slotAt: SLOT + DAY,
            outcome: 'fired',
            runId: 'run_fire',
            recordedAt: at,
          }),
        ]);
        expect(await ctx.store.listReadyPendingJobIds(10)).toEqual([]);
      });

      it('lists ready pending jobs oldest pending slot first, up to a limit', async () => {
        for (const [id, slot] of [
          ['job_c', SLOT + 2 * HOUR],
          ['job_a', SLOT],
          ['job_b', SLOT + HOUR],
        ] as const) {
          await givenJob(id, { sessionId: `ses_${id}` });
          await ctx.store.advanceJobs([id], DUE, (job) =>
            transition({ pending: { slotAt: slot, final: false, coalesced: 0 }, next: dayAfter(job) }),
          );
        }
        expect(await ctx.store.listReadyPendingJobIds(10)).toEqual(['job_a', 'job_b', 'job_c']);
        expect(await ctx.store.listReadyPendingJobIds(2)).toEqual(['job_a', 'job_b']);
        await givenRun(ctx.store, 'run_busy', { sessionId: 'ses_job_a' });
        expect(await ctx.store.listReadyPendingJobIds(10)).toEqual(['job_b', 'job_c']);
      });

      it('records slots missed while down as one range, and a missed one-shot waits for a person', async () => {
        await givenJob('job_r');
        await ctx.store.advanceJobs(['job_r'], T0 + 5 * DAY, () =>
          transition({
            missed: { firstAt: SLOT, lastAt: SLOT + 3 * DAY, slots: 4 },
            next: { nominalAt: SLOT + 4 * DAY, dueAt: DUE + 4 * DAY, final: false },
          }),
        );
        expect(await ctx.store.listSlots('job_r')).toEqual([
          {
            jobId: 'job_r',
            slotAt: SLOT,
            lastSlotAt: SLOT + 3 * DAY,
            slots: 4,
            outcome: 'missed',
            runId: null,
            recordedAt: T0 + 5 * DAY,
          },
        ]);
        expect(await ctx.store.getJob('job_r')).toMatchObject({ status: 'active', fireCount: 0 });

        await givenJob('job_once', { recurring: false, expiresAt: null, nextFinal: true });
        await ctx.store.advanceJobs(['job_once'], T0 + 5 * DAY, (job) =>
          transition({
            missed: { firstAt: SLOT, lastAt: SLOT, slots: 1 },
            next: { nominalAt: job.nextNominalAt!, dueAt: job.nextDueAt!, final: true },
            status: 'missed',
          }),
        );
        expect(await ctx.store.getJob('job_once')).toMatchObject({ status: 'missed', nextNominalAt: SLOT });
        // A missed job is not due any more.
        expect(await ctx.store.listDueJobIds(T0 + 6 * DAY, 10)).toEqual(['job_r']);
      });

      it('removes the job after its final fire; its run and slots stay', async () => {
        await givenJob('job_once', { recurring: false, expiresAt: null, nextFinal: true });
        const [r] = await ctx.store.advanceJobs(['job_once'], DUE, (job) =>
          transition({ fire: { slotAt: job.nextNominalAt!, runId: 'run_once', dueAt: DUE }, remove: true }),
        );
        expect(r?.run?.id).toBe('run_once');
        expect(await ctx.store.getJob('job_once')).toBeNull();
        expect(await ctx.store.getRun('run_once')).toMatchObject({ jobId: 'job_once', slotAt: SLOT });
        expect(await ctx.store.listSlots('job_once')).toEqual([
          expect.objectContaining({ slotAt: SLOT, outcome: 'fired', runId: 'run_once' }),
        ]);
      });

      it('lists the slots of a job in slot order', async () => {
        await givenJob('job_1');
        await ctx.store.advanceJobs(['job_1'], T0 + 10 * DAY, () =>
          transition({
            coalesce: [SLOT + 5 * DAY, SLOT + 4 * DAY],
            missed: { firstAt: SLOT, lastAt: SLOT + 3 * DAY, slots: 4 },
            fire: { slotAt: SLOT + 6 * DAY, runId: 'run_1', dueAt: null },
            next: { nominalAt: SLOT + 10 * DAY, dueAt: DUE + 10 * DAY, final: false },
          }),
        );
        const slots = await ctx.store.listSlots('job_1');
        expect(slots.map((s) => [s.slotAt, s.outcome])).toEqual([
          [SLOT, 'missed'],
          [SLOT + 4 * DAY, 'coalesced'],
          [SLOT + 5 * DAY, 'coalesced'],
          [SLOT + 6 * DAY, 'fired'],
        ]);
        expect(await ctx.store.getRun('run_1')).toMatchObject({ coalescedSlots: 2 });
        expect(await ctx.store.listSlots('job_missing')).toEqual([]);
      });

      it('two passes racing on one job fire its slot once; the later one sees it fired', async () => {
        await givenJob('job_1');
        const other = await ctx.peer();
        // Neither pass fails: each decides from the row as the other left it.
        const passes = await Promise.all([
          ctx.store.advanceJobs(['job_1'], DUE, fireIfDue('run_a', DUE)),
          other.advanceJobs(['job_1'], DUE, fireIfDue('run_b', DUE)),
        ]);
        const runs = await runsOf('job_1');
        expect(runs).toHaveLength(1);
        expect(runs[0]).toMatchObject({ slotAt: SLOT });
        // The pass that fired reports the run; no pass reports a run that does not exist.
        const reported = passes.flatMap((rs) => rs.flatMap((r) => (r.run ? [r.run.id] : [])));
        expect(reported).toEqual([runs[0]?.id]);
        expect(await ctx.store.getJob('job_1')).toMatchObject({ fireCount: 1, nextNominalAt: SLOT + DAY });
        expect(await ctx.store.listSlots('job_1')).toEqual([
          expect.objectContaining({ slotAt: SLOT, outcome: 'fired', runId: runs[0]?.id }),
        ]);
      });

      it('many passes racing over several jobs of several sessions fire each slot once', async () => {
        const ids = Array.from({ length: 6 }, (_, i) => `job_${i}`);
        for (const [i, id] of ids.entries()) await givenJob(id, { sessionId: `ses_${i}` });
        const other = await ctx.peer();
        let n = 0;
        const pass = (store: Store) =>
          store.advanceJobs(ids, DUE, (job, busy) => fireIfDue(`run_${job.id}_${n++}`, DUE)(job, busy, []));
        await Promise.all([pass(ctx.store), pass(other), pass(ctx.store), pass(other)]);
        for (const id of ids) {
          expect(await runsOf(id)).toHaveLength(1);
          expect(await ctx.store.getJob(id)).toMatchObject({ fireCount: 1 });
        }
      });

      it('a pass deciding from a stale row cannot fire a slot twice, and writes nothing of its step', async () => {
        await givenJob('job_1');
        await ctx.store.advanceJobs(['job_1'], DUE, fireIfDue('run_a', DUE));
        // This decision ignores the row it is given: the slot fired already.
        const stale: DecideFn = () =>
          transition({
            coalesce: [SLOT - DAY],
            fire: { slotAt: SLOT, runId: 'run_b', dueAt: DUE },
            next: { nominalAt: SLOT + 5 * DAY, dueAt: DUE + 5 * DAY, final: false },
          });
        await expect(ctx.store.advanceJobs(['job_1'], DUE + 1, stale)).rejects.toThrow();
        expect(await ctx.store.getRun('run_b')).toBeNull();
        expect(await runsOf('job_1')).toHaveLength(1);
        expect(await ctx.store.listSlots('job_1')).toEqual([
          expect.objectContaining({ slotAt: SLOT, outcome: 'fired', runId: 'run_a' }),
        ]);
        expect(await ctx.store.getJob('job_1')).toMatchObject({ fireCount: 1, nextNominalAt: SLOT + DAY });
      });
    });

    describe('overlap policies and backfill', () => {
      it("hands decide the session's active runs, the job's and a person's", async () => {
        await givenJob('job_1');
        await givenRun(ctx.store, 'run_sched', { jobId: 'job_1', slotAt: SLOT - DAY, source: 'schedule' });
        await givenRun(ctx.store, 'run_person', { jobId: null, source: 'manual' });
        await givenRun(ctx.store, 'run_elsewhere', { sessionId: 'ses_2' });
        const seen: unknown[] = [];
        await ctx.store.advanceJobs(['job_1'], DUE, (_job, busy, runs) => {
          seen.push(busy, runs);
          return null;
        });
        expect(seen).toEqual([
          true,
          // Oldest first (both made at T0 here: by id).
          [
            { id: 'run_person', jobId: null, source: 'manual', slotAt: null },
            { id: 'run_sched', jobId: 'job_1', source: 'schedule', slotAt: SLOT - DAY },
          ],
        ]);
      });

      it('records skipped, buffered and canceled slots and keeps the queue; a buffered slot fires later', async () => {
        await givenJob('job_1');
        await ctx.store.advanceJobs(['job_1'], DUE, fireIfDue('run_1', DUE));
        const A = SLOT + DAY;
        const B = SLOT + 2 * DAY;
        const C = SLOT + 3 * DAY;
        await ctx.store.advanceJobs(['job_1'], C, () =>
          transition({
            skip: [A],
            buffer: [B, C],
            pending: { slotAt: B, final: false, coalesced: 0 },
            queue: [C],
            cancel: [{ runId: 'run_1', slotAt: SLOT }],
            next: { nominalAt: C + DAY, dueAt: C + DAY, final: false },
          }),
        );
        expect(await ctx.store.getJob('job_1')).toMatchObject({ pendingSlotAt: B, bufferedSlots: [C] });
        const outcomes = async () =>
          (await ctx.store.listSlots('job_1')).map((x) => [x.slotAt, x.outcome, x.runId]);
        expect(await outcomes()).toEqual([
          [SLOT, 'canceled', 'run_1'],
          [A, 'skipped', null],
          [B, 'buffered', null],
          [C, 'buffered', null],
        ]);
        // B fires: its row becomes `fired` with the run; C waits at the head; last_slot_at is B.
        await ctx.store.advanceJobs(['job_1'], C, () =>
          transition({
            fire: { slotAt: B, runId: 'run_b', dueAt: null },
            pending: { slotAt: C, final: false, coalesced: 0 },
            next: { nominalAt: C + DAY, dueAt: C + DAY, final: false },
          }),
        );
        expect(await outcomes()).toEqual([
          [SLOT, 'canceled', 'run_1'],
          [A, 'skipped', null],
          [B, 'fired', 'run_b'],
          [C, 'buffered', null],
        ]);
        expect(await ctx.store.getJob('job_1')).toMatchObject({
          pendingSlotAt: C,
          bufferedSlots: [],
          lastSlotAt: B,
          fireCount: 2,
        });
        // An older slot fired (a backfill) does not move last_slot_at back.
        await ctx.store.advanceJobs(['job_1'], C, () =>
          transition({
            fire: { slotAt: SLOT - DAY, runId: 'run_old', dueAt: null },
            pending: { slotAt: C, final: false, coalesced: 0 },
            next: { nominalAt: C + DAY, dueAt: C + DAY, final: false },
          }),
        );
        expect(await ctx.store.getJob('job_1')).toMatchObject({ lastSlotAt: B, fireCount: 3 });
      });

      it('backfillJob offers each slot not yet handled, to the job as the slots before left it', async () => {
        await givenJob('job_1');
        // SLOT - 3 days has a run; SLOT - 2 days was skipped; SLOT is the job's next slot.
        await givenRun(ctx.store, 'run_had', { jobId: 'job_1', slotAt: SLOT - 3 * DAY, source: 'schedule' });
        await ctx.store.transitionRun('run_had', ['queued'], 'completed', { finishedAt: T0 });
        await ctx.store.advanceJobs(['job_1'], T0, () =>
          transition({ skip: [SLOT - 2 * DAY], next: { nominalAt: SLOT, dueAt: DUE, final: false } }),
        );
        const offered: [number, number, string[]][] = [];
        const slots = [SLOT - 4 * DAY, SLOT - 3 * DAY, SLOT - 2 * DAY, SLOT - DAY, SLOT];
        const result = await ctx.store.backfillJob('job_1', slots, T0, (job, runs, slotAt) => {
          offered.push([slotAt, job.fireCount, runs.map((r) => r.id)]);
          return transition({
            fire: { slotAt, runId: `run_${offered.length}`, dueAt: null },
            next: { nominalAt: job.nextNominalAt!, dueAt: job.nextDueAt!, final: false },
          });
        });
        // Each offer sees the job and the session as the one before left them (its run is active).
        expect(offered).toEqual([
          [SLOT - 4 * DAY, 0, []],
          [SLOT - DAY, 1, ['run_1']],
        ]);
        expect(result?.already).toEqual([SLOT - 3 * DAY, SLOT - 2 * DAY, SLOT]);
        expect(result?.results.map((r) => r.run?.id)).toEqual(['run_1', 'run_2']);
        expect(result?.job).toMatchObject({ fireCount: 2, nextNominalAt: SLOT });
        expect(await ctx.store.backfillJob('job_missing', slots, T0, () => null)).toBeNull();
      });
    });

    describe('runJobNow', () => {
      it('runs an active job now as a manual run outside its slots; the job stays', async () => {
        await givenJob('job_1');
        const first = await ctx.store.runJobNow(
          'job_1',
          runInput('run_now1', 'ses_1', { requestedBy: 'bob' }),
        );
        const second = await ctx.store.runJobNow(
          'job_1',
          runInput('run_now2', 'ses_1', { createdAt: T0 + MINUTE }),
        );
        expect(first).toMatchObject({
          id: 'run_now1',
          jobId: 'job_1',
          slotAt: null,
          source: 'manual',
          requestedBy: 'bob',
          status: 'queued',
        });
        expect(second).toMatchObject({ id: 'run_now2', jobId: 'job_1', slotAt: null });
        expect(await ctx.store.getJob('job_1')).toMatchObject({ status: 'active', fireCount: 0 });
        expect(await ctx.store.listSlots('job_1')).toEqual([]);
      });

      it('fires the slot of a missed one-shot exactly once, records it fired, and deletes the job', async () => {
        await givenJob('job_once', { recurring: false, expiresAt: null, nextFinal: true });
        await ctx.store.advanceJobs(['job_once'], T0 + 3 * DAY, (job) =>
          transition({
            missed: { firstAt: SLOT, lastAt: SLOT, slots: 1 },
            next: { nominalAt: job.nextNominalAt!, dueAt: job.nextDueAt!, final: true },
            status: 'missed',
          }),
        );
        const at = T0 + 4 * DAY;
        const run = await ctx.store.runJobNow('job_once', runInput('run_now', 'ses_1', { createdAt: at }));
        expect(run).toMatchObject({ id: 'run_now', jobId: 'job_once', slotAt: SLOT, source: 'manual' });
        expect(await ctx.store.getJob('job_once')).toBeNull();
        // The slot recorded as missed is now the fired one.
        expect(await ctx.store.listSlots('job_once')).toEqual([
          expect.objectContaining({ slotAt: SLOT, outcome: 'fired', runId: 'run_now', recordedAt: at }),
        ]);
        expect(await ctx.store.runJobNow('job_once', runInput('run_again', 'ses_1'))).toBeNull();
        expect(await ctx.store.getRun('run_again')).toBeNull();
      });

      it('two people running a missed one-shot at once start one run; the other finds no job', async () => {
        await givenJob('job_once', { recurring: false, expiresAt: null, nextFinal: true });
        await ctx.store.updateJobSchedule('job_once', 'missed', { nominalAt: SLOT, dueAt: DUE, final: true });
        const other = await ctx.peer();
        const out = await Promise.all([
          ctx.store.runJobNow('job_once', runInput('run_a', 'ses_1')),
          other.runJobNow('job_once', runInput('run_b', 'ses_1')),
        ]);
        const started = out.filter((r) => r !== null);
        expect(started).toHaveLength(1);
        expect(await runsOf('job_once')).toEqual([
          expect.objectContaining({ id: started[0]?.id, slotAt: SLOT }),
        ]);
        expect(await ctx.store.getJob('job_once')).toBeNull();
      });

      it('is null for an unknown job', async () => {
        await givenSession(ctx.store, 'ses_1');
        expect(await ctx.store.runJobNow('job_missing', runInput('run_x', 'ses_1'))).toBeNull();
        expect(await ctx.store.getRun('run_x')).toBeNull();
      });
    });
  });
}
