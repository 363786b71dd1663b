import { beforeEach, describe, expect, it } from 'vitest';
import type { ConversationFrame } from '../../../src/domain/frame.js';
import type { Run, RunEvent, RunSettings, RunStatus } from '../../../src/domain/types.js';
import {
  ConflictError,
  type Fence,
  FencedError,
  InvalidCursorError,
  type Receipt,
  type Store,
} from '../../../src/store/store.js';
import {
  allPages,
  DAY,
  FOREIGN_CURSOR,
  fulfilled,
  givenPlan,
  givenRun,
  givenSession,
  HOUR,
  MINUTE,
  planInput,
  runInput,
  SECOND,
  type StoreFactory,
  T0,
  useStore,
} from './fixtures.js';

// RunStore: runs and their status moves, conversations, the event log (per run, and the whole log in
// order for the notifier), the execute phase's call journal, a subject's active runs, and the claims by which
// replicas share the runs (one run at a time per session, leases, take-overs).

const SETTINGS: RunSettings = {
  model: 'claude-sonnet-4-5',
  maxTokens: 16000,
  maxTurns: 40,
  budgetUsd: 2,
  thinking: { budget_tokens: 2048 },
  effort: null,
  request: { thinking: { type: 'enabled', budget_tokens: 2048 }, effort: null, notes: ['kept as asked'] },
};

export function runContract(factory: StoreFactory): void {
  describe('runs', () => {
    const ctx = useStore(factory);

    describe('creation and reads', () => {
      it('stores a run queued, in plan phase, its own conversation, nothing spent yet', async () => {
        await givenSession(ctx.store, 'ses_1');
        const run = await ctx.store.createRun(runInput('run_1', 'ses_1'));
        expect(run).toEqual({
          id: 'run_1',
          sessionId: 'ses_1',
          jobId: null,
          slotAt: null,
          source: 'manual',
          phase: 'plan',
          status: 'queued',
          prompt: 'prompt of run_1',
          requestedBy: 'alice',
          coalescedSlots: 0,
          createdAt: T0,
          startedAt: null,
          finishedAt: null,
          activeMs: 0,
          error: null,
          conversationId: 'run_1',
          model: null,
          overrides: {},
          settings: {},
          turns: 0,
          usage: {},
          costUsd: 0,
          planId: null,
          attempt: 1,
          revisesPlanId: null,
          executesPlanId: null,
          executeMode: null,
          resultCommit: null,
          diffStat: null,
          changedFiles: null,
          triggerId: null,
          deliveryId: null,
          subject: null,
          checkout: null,
          waitingOn: null,
          planningBase: null,
        });
        expect(await ctx.store.getRun('run_1')).toEqual(run);
        expect(await ctx.store.getRun('run_missing')).toBeNull();
      });

      it('keeps what a run is given: phase, conversation, plan links, trigger, subject, checkout', async () => {
        const plan = await givenPlan(ctx.store, 'pln_1');
        const checkout = {
          repository: 'acme/app',
          clone: '/srv/clones/acme-app',
          headSha: 'f'.repeat(40),
          headRef: 'feature',
          baseRef: 'main',
          baseSha: 'e'.repeat(40),
          number: 12,
        };
        const run = await ctx.store.createRun(
          runInput('run_x', 'ses_1', {
            phase: 'execute',
            conversationId: 'conv_x',
            executesPlanId: plan.id,
            revisesPlanId: 'pln_0',
            overrides: { execute_mode: 'auto', network: true },
            triggerId: 'trg_1',
            deliveryId: 'dlv_1',
            subject: 'acme/app#12',
            checkout,
            source: 'delivery',
            jobId: 'job_1',
            slotAt: T0 - MINUTE,
          }),
        );
        expect(run).toMatchObject({
          phase: 'execute',
          conversationId: 'conv_x',
          executesPlanId: 'pln_1',
          revisesPlanId: 'pln_0',
          overrides: { execute_mode: 'auto', network: true },
          triggerId: 'trg_1',
          deliveryId: 'dlv_1',
          subject: 'acme/app#12',
          checkout,
          source: 'delivery',
          jobId: 'job_1',
          slotAt: T0 - MINUTE,
        });
        expect(await ctx.store.getRun('run_x')).toEqual(run);
      });

      it('holds one run per (job, slot); manual runs of a job (no slot) are not limited', async () => {
        await givenRun(ctx.store, 'run_a', { jobId: 'job_1', slotAt: T0 });
        await expect(givenRun(ctx.store, 'run_b', { jobId: 'job_1', slotAt: T0 })).rejects.toThrow();
        expect(await ctx.store.getRun('run_b')).toBeNull();
        await givenRun(ctx.store, 'run_c', { jobId: 'job_1', slotAt: T0 + MINUTE });
        await givenRun(ctx.store, 'run_d', { jobId: 'job_1', slotAt: null });
        await givenRun(ctx.store, 'run_e', { jobId: 'job_1', slotAt: null });
        expect((await ctx.store.listRuns({ jobId: 'job_1', limit: 10 })).items).toHaveLength(4);
      });

      it('holds one execute run per plan', async () => {
        const plan = await givenPlan(ctx.store, 'pln_1');
        await givenRun(ctx.store, 'run_exec1', { phase: 'execute', executesPlanId: plan.id });
        await expect(
          givenRun(ctx.store, 'run_exec2', { phase: 'execute', executesPlanId: plan.id }),
        ).rejects.toThrow();
        expect(await ctx.store.getRun('run_exec2')).toBeNull();
      });

      it('lists runs newest first, ties broken by id, filtered, a page at a time', async () => {
        await givenRun(ctx.store, 'run_1', { createdAt: T0 });
        await givenRun(ctx.store, 'run_3', { createdAt: T0 + MINUTE });
        await givenRun(ctx.store, 'run_2', { createdAt: T0 + MINUTE });
        await givenRun(ctx.store, 'run_4', { createdAt: T0 + 2 * MINUTE, jobId: 'job_1' });
        await givenRun(ctx.store, 'run_5', {
          createdAt: T0 + 3 * MINUTE,
          sessionId: 'ses_2',
          jobId: 'job_1',
        });
        const pages = await allPages((cursor) => ctx.store.listRuns({ limit: 2, cursor }));
        expect(pages.map((p) => p.map((r) => r.id))).toEqual([
          ['run_5', 'run_4'],
          ['run_3', 'run_2'],
          ['run_1'],
        ]);
        const ids = async (f: Omit<Parameters<typeof ctx.store.listRuns>[0], 'limit'>) =>
          (await ctx.store.listRuns({ ...f, limit: 10 })).items.map((r) => r.id);
        expect(await ids({ sessionId: 'ses_2' })).toEqual(['run_5']);
        expect(await ids({ jobId: 'job_1' })).toEqual(['run_5', 'run_4']);
        expect(await ids({ sessionId: 'ses_1', jobId: 'job_1' })).toEqual(['run_4']);
        await ctx.store.transitionRun('run_2', ['queued'], 'running', { startedAt: T0 });
        expect(await ids({ status: 'running' })).toEqual(['run_2']);
        expect(await ids({ status: 'failed' })).toEqual([]);
        await expect(ctx.store.listRuns({ limit: 2, cursor: FOREIGN_CURSOR })).rejects.toBeInstanceOf(
          InvalidCursorError,
        );
      });
    });

    describe('status moves', () => {
      it('moves a run only from an expected status, keeping its first start', async () => {
        await givenRun(ctx.store, 'run_1');
        expect(await ctx.store.transitionRun('run_1', ['running'], 'completed')).toBe(false);
        expect(await ctx.store.getRun('run_1')).toMatchObject({ status: 'queued' });

        expect(
          await ctx.store.transitionRun('run_1', ['queued'], 'running', {
            startedAt: T0 + SECOND,
            activeMs: 0,
          }),
        ).toBe(true);
        expect(
          await ctx.store.transitionRun('run_1', ['running'], 'awaiting_input', { activeMs: 1500 }),
        ).toBe(true);
        // Resumed after the answer: a later start does not replace the first.
        expect(
          await ctx.store.transitionRun('run_1', ['awaiting_input'], 'running', { startedAt: T0 + MINUTE }),
        ).toBe(true);
        expect(
          await ctx.store.transitionRun('run_1', ['queued', 'running'], 'failed', {
            finishedAt: T0 + 2 * MINUTE,
            error: 'model overloaded',
            attempt: 2,
            activeMs: 500,
          }),
        ).toBe(true);
        expect(await ctx.store.getRun('run_1')).toMatchObject({
          status: 'failed',
          startedAt: T0 + SECOND,
          finishedAt: T0 + 2 * MINUTE,
          error: 'model overloaded',
          attempt: 2,
          activeMs: 2000,
        });
        // A finished run moves no more unless asked from its status.
        expect(
          await ctx.store.transitionRun('run_1', ['queued', 'running', 'awaiting_input'], 'canceled'),
        ).toBe(false);
        expect(await ctx.store.transitionRun('run_missing', ['queued'], 'running')).toBe(false);
      });

      it('an error is kept unless given, and cleared with null', async () => {
        await givenRun(ctx.store, 'run_1');
        await ctx.store.transitionRun('run_1', ['queued'], 'interrupted', { error: 'daemon stopped' });
        await ctx.store.transitionRun('run_1', ['interrupted'], 'queued', { attempt: 2 });
        expect(await ctx.store.getRun('run_1')).toMatchObject({ error: 'daemon stopped', attempt: 2 });
        await ctx.store.transitionRun('run_1', ['queued'], 'running', { error: null });
        expect(await ctx.store.getRun('run_1')).toMatchObject({ status: 'running', error: null, attempt: 2 });
      });

      it('every run status can be stored and read back', async () => {
        await givenRun(ctx.store, 'run_1');
        let from: RunStatus = 'queued';
        for (const to of [
          'running',
          'awaiting_input',
          'planned',
          'completed',
          'failed',
          'canceled',
          'budget_exceeded',
          'interrupted',
          'refused',
          'queued',
        ] as const) {
          expect(await ctx.store.transitionRun('run_1', [from], to)).toBe(true);
          expect((await ctx.store.getRun('run_1'))?.status).toBe(to);
          from = to;
        }
      });

      it('of two workers taking the same queued run, one wins', async () => {
        await givenRun(ctx.store, 'run_1');
        const other = await ctx.peer();
        const takes = await Promise.all([
          ctx.store.transitionRun('run_1', ['queued'], 'running', { startedAt: T0 + 1 }),
          other.transitionRun('run_1', ['queued'], 'running', { startedAt: T0 + 2 }),
          ctx.store.transitionRun('run_1', ['queued'], 'running', { startedAt: T0 + 3 }),
          other.transitionRun('run_1', ['queued'], 'running', { startedAt: T0 + 4 }),
        ]);
        expect(takes.filter(Boolean)).toHaveLength(1);
        const winner = takes.indexOf(true) + 1;
        expect(await ctx.store.getRun('run_1')).toMatchObject({ status: 'running', startedAt: T0 + winner });
      });

      it('records what a run is carried out with and its progress; unset fields stay', async () => {
        await givenRun(ctx.store, 'run_1');
        await ctx.store.updateRun('run_1', {
          conversationId: 'conv_2',
          model: 'claude-sonnet-4-5',
          settings: SETTINGS,
          turns: 3,
          usage: { input_tokens: 1200, output_tokens: 300, cache_read_tokens: 5000 },
          costUsd: 0.0421,
          planId: 'pln_1',
          attempt: 2,
          executeMode: 'edits',
          resultCommit: 'c'.repeat(40),
          diffStat: ' 2 files changed, 10 insertions(+)',
          changedFiles: ['src/a.ts', 'README.md'],
          planningBase: {
            commit: 'b'.repeat(40),
            uncommitted: { count: 3, paths: ['a b.txt', 'drafts/', 'src/ü.ts'] },
          },
        });
        const updated = await ctx.store.getRun('run_1');
        expect(updated).toMatchObject({
          conversationId: 'conv_2',
          model: 'claude-sonnet-4-5',
          settings: SETTINGS,
          turns: 3,
          usage: { input_tokens: 1200, output_tokens: 300, cache_read_tokens: 5000 },
          costUsd: 0.0421,
          planId: 'pln_1',
          attempt: 2,
          executeMode: 'edits',
          resultCommit: 'c'.repeat(40),
          diffStat: ' 2 files changed, 10 insertions(+)',
          changedFiles: ['src/a.ts', 'README.md'],
          planningBase: {
            commit: 'b'.repeat(40),
            uncommitted: { count: 3, paths: ['a b.txt', 'drafts/', 'src/ü.ts'] },
          },
          status: 'queued',
        });
        await ctx.store.updateRun('run_1', { turns: 4 });
        expect(await ctx.store.getRun('run_1')).toEqual({ ...updated, turns: 4 });
        await ctx.store.updateRun('run_1', { resultCommit: null, diffStat: null });
        expect(await ctx.store.getRun('run_1')).toMatchObject({
          resultCommit: null,
          diffStat: null,
          turns: 4,
        });
        await ctx.store.updateRun('run_1', {});
        expect(await ctx.store.getRun('run_1')).toMatchObject({ turns: 4, costUsd: 0.0421 });
      });

      it("lists a subject's active runs, oldest first", async () => {
        const subject = 'acme/app#7';
        await givenRun(ctx.store, 'run_b', { subject, createdAt: T0 + MINUTE });
        await givenRun(ctx.store, 'run_a', { subject, createdAt: T0 });
        await givenRun(ctx.store, 'run_done', { subject });
        await givenRun(ctx.store, 'run_parked', { subject, createdAt: T0 + 2 * MINUTE });
        await givenRun(ctx.store, 'run_other', { subject: 'acme/app#8' });
        await ctx.store.transitionRun('run_done', ['queued'], 'planned');
        await ctx.store.transitionRun('run_b', ['queued'], 'running');
        await ctx.store.transitionRun('run_parked', ['queued'], 'awaiting_input');
        const active = await ctx.store.activeRunsForSubject(subject);
        expect(active.map((r) => r.id)).toEqual(['run_a', 'run_b', 'run_parked']);
        expect(await ctx.store.activeRunsForSubject('acme/app#9')).toEqual([]);
      });
    });

    describe('claims', () => {
      const LEASE = 30 * SECOND;
      const claim = (replica: string, leaseUntil = T0 + LEASE) => ({ replica, leaseUntil });
      /** Ids of the running runs replica `r` could take over at `now` (null: only unclaimed or lapsed ones). */
      const recoverable = async (r: string | null, now: number, store = ctx.store) =>
        (await store.listRecoverableRuns(r, now, 100)).map((x) => x.id);
      const claimable = async (limit = 100) => (await ctx.store.listClaimableRuns(limit)).map((r) => r.id);
      const question = (id: string, runId: string) => ({
        id,
        runId,
        sessionId: 'ses_1',
        toolUseId: `toolu_${id}`,
        questions: [{ question: 'Which?', header: 'Which', multiSelect: false, options: [{ label: 'a' }] }],
        priorResults: [],
        createdAt: T0,
        expiresAt: T0 + HOUR,
      });
      const approval = (id: string, runId: string) => ({
        id,
        runId,
        sessionId: 'ses_1',
        planId: null,
        toolUseId: `toolu_${id}`,
        tool: 'Bash',
        input: { command: 'npm test' },
        inputSha256: null,
        priorResults: [],
        createdAt: T0,
        expiresAt: T0 + HOUR,
      });

      it('claims a queued run: running, held by the replica until its lease, started now unless it was before', async () => {
        await givenRun(ctx.store, 'run_1');
        const before = (await ctx.store.getRun('run_1'))!;
        const fa = await ctx.store.claimRun('run_1', 'queued', claim('r-a'), T0 + SECOND);
        expect(fa).toEqual({ runId: 'run_1', replica: 'r-a', epoch: expect.any(Number) });
        expect(await ctx.store.getRun('run_1')).toEqual({
          ...before,
          status: 'running',
          startedAt: T0 + SECOND,
        });
        // Held by r-a: r-a renews it, nobody else does; others may take it over only once the lease lapsed.
        expect(await ctx.store.renewRunLeases([{ ...fa!, replica: 'r-b' }], T0 + LEASE)).toEqual([]);
        expect(await ctx.store.renewRunLeases([fa!], T0 + LEASE)).toEqual(['run_1']);
        expect(await recoverable('r-b', T0 + LEASE)).toEqual([]);
        expect(await recoverable(null, T0 + LEASE)).toEqual([]);
        expect(await recoverable('r-b', T0 + LEASE + 1)).toEqual(['run_1']);
        expect(await recoverable(null, T0 + LEASE + 1)).toEqual(['run_1']);

        // A run that started before keeps its first start when claimed again (resumed after a question).
        expect(await ctx.store.transitionRun('run_1', ['running'], 'awaiting_input', { fence: fa! })).toBe(
          true,
        );
        const fb = await ctx.store.claimRun('run_1', 'awaiting_input', claim('r-b'), T0 + MINUTE);
        expect(fb).toEqual({ runId: 'run_1', replica: 'r-b', epoch: fa!.epoch + 1 });
        expect(await ctx.store.getRun('run_1')).toMatchObject({ status: 'running', startedAt: T0 + SECOND });
        expect(await ctx.store.renewRunLeases([fb!], T0 + MINUTE + LEASE)).toEqual(['run_1']);
      });

      it('claims a run only from the status asked for', async () => {
        await givenRun(ctx.store, 'run_1');
        expect(await ctx.store.claimRun('run_1', 'awaiting_input', claim('r-a'), T0)).toBeNull();
        expect(await ctx.store.getRun('run_1')).toMatchObject({ status: 'queued', startedAt: null });
        const fa = await ctx.store.claimRun('run_1', 'queued', claim('r-a'), T0);
        expect(fa).toMatchObject({ runId: 'run_1', replica: 'r-a' });
        // Running already: a second claim, by anyone, is refused and leaves the first one's.
        expect(await ctx.store.claimRun('run_1', 'queued', claim('r-b'), T0)).toBeNull();
        expect(await ctx.store.claimRun('run_1', 'queued', claim('r-a'), T0)).toBeNull();
        expect(await ctx.store.renewRunLeases([fa!], T0 + LEASE)).toEqual(['run_1']);
        await ctx.store.transitionRun('run_1', ['running'], 'completed', { finishedAt: T0 + SECOND });
        expect(await ctx.store.claimRun('run_1', 'queued', claim('r-a'), T0)).toBeNull();
        expect(await ctx.store.getRun('run_1')).toMatchObject({ status: 'completed' });
        expect(await ctx.store.claimRun('run_missing', 'queued', claim('r-a'), T0)).toBeNull();
      });

      it('one run at a time per session: a running or parked run blocks the claims of the others', async () => {
        await givenRun(ctx.store, 'run_1', { createdAt: T0 });
        await givenRun(ctx.store, 'run_2', { createdAt: T0 + 1 });
        await givenRun(ctx.store, 'run_3', { createdAt: T0 + 2 });
        await givenRun(ctx.store, 'run_other', { sessionId: 'ses_2' });
        expect(await ctx.store.claimRun('run_1', 'queued', claim('r-a'), T0)).not.toBeNull();
        // Another replica cannot start a second run of the session; a run of another session, yes.
        expect(await ctx.store.claimRun('run_2', 'queued', claim('r-b'), T0)).toBeNull();
        expect(await ctx.store.claimRun('run_2', 'queued', claim('r-a'), T0)).toBeNull();
        expect(await ctx.store.claimRun('run_other', 'queued', claim('r-b'), T0)).not.toBeNull();

        // Parked, run_1 still holds its session: no other run starts, but run_1 itself resumes.
        expect(await ctx.store.transitionRun('run_1', ['running'], 'awaiting_input')).toBe(true);
        expect(await ctx.store.claimRun('run_2', 'queued', claim('r-b'), T0)).toBeNull();
        expect(await ctx.store.claimRun('run_1', 'awaiting_input', claim('r-b'), T0 + MINUTE)).not.toBeNull();
        expect(await ctx.store.claimRun('run_2', 'queued', claim('r-a'), T0)).toBeNull();

        // Finished, it frees the session; queued runs never held it.
        await ctx.store.transitionRun('run_1', ['running'], 'planned');
        expect(await ctx.store.claimRun('run_3', 'queued', claim('r-b'), T0)).not.toBeNull();
        expect(await ctx.store.claimRun('run_2', 'queued', claim('r-a'), T0)).toBeNull();
        expect((await ctx.store.getRun('run_2'))?.status).toBe('queued');
      });

      it('of two replicas claiming the same run at once, one wins and holds it', async () => {
        await givenRun(ctx.store, 'run_1');
        const other = await ctx.peer();
        const takes = await Promise.all([
          ctx.store.claimRun('run_1', 'queued', claim('r-1'), T0 + 1),
          other.claimRun('run_1', 'queued', claim('r-2'), T0 + 2),
          ctx.store.claimRun('run_1', 'queued', claim('r-3'), T0 + 3),
          other.claimRun('run_1', 'queued', claim('r-4'), T0 + 4),
        ]);
        expect(takes.filter(Boolean)).toHaveLength(1);
        const winner = takes.findIndex((t) => t !== null) + 1;
        const fence = takes[winner - 1]!;
        expect(fence).toEqual({ runId: 'run_1', replica: `r-${winner}`, epoch: expect.any(Number) });
        expect(await ctx.store.getRun('run_1')).toMatchObject({ status: 'running', startedAt: T0 + winner });
        for (let i = 1; i <= 4; i++) {
          const held = await ctx.store.renewRunLeases([{ ...fence, replica: `r-${i}` }], T0 + LEASE);
          expect(held).toEqual(i === winner ? ['run_1'] : []);
        }
      });

      it('of two replicas claiming two runs of one session at once, one starts its run', async () => {
        const sessions = 8;
        for (let s = 0; s < sessions; s++) {
          await givenRun(ctx.store, `run_${s}_a`, { sessionId: `ses_${s}` });
          await givenRun(ctx.store, `run_${s}_b`, { sessionId: `ses_${s}` });
        }
        const other = await ctx.peer();
        const takes = await Promise.all(
          Array.from({ length: sessions }, (_, s) => [
            ctx.store.claimRun(`run_${s}_a`, 'queued', claim('r-a'), T0),
            other.claimRun(`run_${s}_b`, 'queued', claim('r-b'), T0),
          ]).flat(),
        );
        for (let s = 0; s < sessions; s++) {
          expect(takes.slice(2 * s, 2 * s + 2).filter(Boolean)).toHaveLength(1);
          const running = (await ctx.store.listRuns({ sessionId: `ses_${s}`, status: 'running', limit: 10 }))
            .items;
          expect(running).toHaveLength(1);
        }
      });

      it('a claimed run moves with its holder only; every move out of running clears the claim', async () => {
        await givenRun(ctx.store, 'run_1');
        const fa = (await ctx.store.claimRun('run_1', 'queued', claim('r-a'), T0))!;
        expect(
          await ctx.store.transitionRun('run_1', ['running'], 'planned', {
            fence: { ...fa, replica: 'r-b' },
            finishedAt: T0 + 1,
          }),
        ).toBe(false);
        expect(await ctx.store.getRun('run_1')).toMatchObject({ status: 'running', finishedAt: null });
        // A move that stays in running keeps the claim.
        expect(
          await ctx.store.transitionRun('run_1', ['running'], 'running', { fence: fa, activeMs: 10 }),
        ).toBe(true);
        expect(await ctx.store.renewRunLeases([fa], T0 + LEASE)).toEqual(['run_1']);
        expect(await recoverable('r-b', T0 + 1)).toEqual([]);

        // Parked: the claim is gone (r-a renews nothing, and a later start without a claim is anyone's).
        expect(
          await ctx.store.transitionRun('run_1', ['running'], 'awaiting_input', {
            fence: fa,
            activeMs: 5,
          }),
        ).toBe(true);
        expect(await ctx.store.renewRunLeases([fa], T0 + LEASE)).toEqual([]);
        expect(await ctx.store.transitionRun('run_1', ['awaiting_input'], 'running')).toBe(true);
        expect(await recoverable('r-b', T0 + 1)).toEqual(['run_1']);
        // Without a claim, a holder's move is refused; one without a fence applies.
        expect(await ctx.store.transitionRun('run_1', ['running'], 'completed', { fence: fa })).toBe(false);
        expect(await ctx.store.transitionRun('run_1', ['running'], 'completed', { finishedAt: T0 + 2 })).toBe(
          true,
        );
        expect(await ctx.store.getRun('run_1')).toMatchObject({ status: 'completed', activeMs: 15 });

        // A run ended by its holder is no one's any more.
        await givenRun(ctx.store, 'run_2');
        const f2 = (await ctx.store.claimRun('run_2', 'queued', claim('r-a'), T0))!;
        expect(await ctx.store.transitionRun('run_2', ['running'], 'failed', { fence: f2 })).toBe(true);
        await ctx.store.transitionRun('run_2', ['failed'], 'running');
        expect(await ctx.store.renewRunLeases([f2], T0 + LEASE)).toEqual([]);
        expect(await recoverable('r-b', T0 + 1)).toEqual(['run_2']);
      });

      it('renews the leases a replica still holds, and says which', async () => {
        await givenRun(ctx.store, 'run_1', { sessionId: 'ses_1' });
        await givenRun(ctx.store, 'run_2', { sessionId: 'ses_2' });
        await givenRun(ctx.store, 'run_3', { sessionId: 'ses_3' });
        await givenRun(ctx.store, 'run_4', { sessionId: 'ses_4' });
        const f1 = (await ctx.store.claimRun('run_1', 'queued', claim('r-a'), T0))!;
        const f2 = (await ctx.store.claimRun('run_2', 'queued', claim('r-a'), T0))!;
        const f3 = (await ctx.store.claimRun('run_3', 'queued', claim('r-b'), T0))!;
        expect(await ctx.store.renewRunLeases([], T0 + MINUTE)).toEqual([]);
        // r-a's claims, and fences r-a does not hold: run_3 is r-b's, run_4 is queued, run_missing unknown.
        expect(
          await ctx.store.renewRunLeases(
            [
              f1,
              f2,
              { ...f3, replica: 'r-a' },
              { runId: 'run_4', replica: 'r-a', epoch: f1.epoch },
              { runId: 'run_missing', replica: 'r-a', epoch: f1.epoch },
            ],
            T0 + MINUTE,
          ),
        ).toEqual(['run_1', 'run_2']);
        // The leases moved: lapsed at T0 + LEASE as claimed, live now until T0 + MINUTE.
        expect(await recoverable('r-c', T0 + LEASE + 1)).toEqual(['run_3']);
        expect(await recoverable('r-c', T0 + MINUTE + 1)).toEqual(['run_1', 'run_2', 'run_3']);
        // The ids renewed come in the order given.
        expect(await ctx.store.renewRunLeases([f2, f1], T0 + MINUTE)).toEqual(['run_2', 'run_1']);

        // Taken over by another replica after its lease lapsed: the first holder renews it no more.
        const other = await ctx.peer();
        expect(await other.releaseRun('run_1', null, T0 + MINUTE + 1, 'queued', { attempt: 2 })).toBe(true);
        expect(await ctx.store.renewRunLeases([f1, f2], T0 + 2 * MINUTE)).toEqual(['run_2']);
        const fc = await other.claimRun('run_1', 'queued', claim('r-c', T0 + 2 * MINUTE), T0 + MINUTE + 2);
        expect(fc).toEqual({ runId: 'run_1', replica: 'r-c', epoch: f1.epoch + 1 });
        expect(await ctx.store.renewRunLeases([f1], T0 + 3 * MINUTE)).toEqual([]);
        expect(await ctx.store.renewRunLeases([fc!], T0 + 3 * MINUTE)).toEqual(['run_1']);
      });

      it('lists the running runs a replica may take over: unclaimed, lapsed, or its own; oldest first', async () => {
        const ids = [
          'run_live',
          'run_lapsed',
          'run_mine',
          'run_unclaimed',
          'run_edge',
          'run_queued',
          'run_parked',
        ];
        for (const [i, id] of ids.entries()) {
          // Each its own session, created later the earlier it is listed here; run_tie shares run_live's time.
          await givenRun(ctx.store, id, { sessionId: `ses_${id}`, createdAt: T0 + (10 - i) * SECOND });
        }
        await givenRun(ctx.store, 'run_tie', { sessionId: 'ses_tie', createdAt: T0 + 10 * SECOND });
        const now = T0 + MINUTE;
        await ctx.store.claimRun('run_live', 'queued', claim('r-b', now + 1), T0);
        await ctx.store.claimRun('run_lapsed', 'queued', claim('r-b', now - 1), T0);
        await ctx.store.claimRun('run_mine', 'queued', claim('r-a', now + HOUR), T0);
        await ctx.store.transitionRun('run_unclaimed', ['queued'], 'running');
        // A lease that runs out exactly now still holds.
        await ctx.store.claimRun('run_edge', 'queued', claim('r-b', now), T0);
        await ctx.store.claimRun('run_tie', 'queued', claim('r-c', now - 1), T0);
        await ctx.store.claimRun('run_parked', 'queued', claim('r-c', now - 1), T0);
        await ctx.store.transitionRun('run_parked', ['running'], 'awaiting_input');

        const found = await ctx.store.listRecoverableRuns('r-a', now, 100);
        expect(found.map((r) => r.id)).toEqual(['run_unclaimed', 'run_mine', 'run_lapsed', 'run_tie']);
        // Whole runs, as getRun reads them.
        for (const r of found) expect(r).toEqual(await ctx.store.getRun(r.id));
        expect(await recoverable('r-b', now)).toEqual([
          'run_edge',
          'run_unclaimed',
          'run_lapsed',
          'run_live',
          'run_tie',
        ]);
        expect((await ctx.store.listRecoverableRuns('r-a', now, 2)).map((r) => r.id)).toEqual([
          'run_unclaimed',
          'run_mine',
        ]);
        // Without a name of its own, a replica may take over only the unclaimed and lapsed runs.
        expect(await recoverable(null, now)).toEqual(['run_unclaimed', 'run_lapsed', 'run_tie']);
        // Later every lease but the longest has lapsed; another process reads the same.
        const other = await ctx.peer();
        expect(await recoverable('r-c', now + 2, other)).toEqual([
          'run_edge',
          'run_unclaimed',
          'run_lapsed',
          'run_live',
          'run_tie',
        ]);
      });

      it('releases a running run another replica may recover: its lease lapsed, no claim, or claimed by the asker', async () => {
        await givenRun(ctx.store, 'run_1', { sessionId: 'ses_1' });
        await givenRun(ctx.store, 'run_2', { sessionId: 'ses_2' });
        const fa = (await ctx.store.claimRun('run_1', 'queued', claim('r-a', T0 + LEASE), T0))!;
        // Another replica, while the lease lives (up to its last moment): refused.
        expect(await ctx.store.releaseRun('run_1', 'r-b', T0, 'queued', {})).toBe(false);
        expect(await ctx.store.releaseRun('run_1', 'r-b', T0 + LEASE, 'queued', {})).toBe(false);
        expect(await ctx.store.releaseRun('run_1', null, T0 + LEASE, 'queued', {})).toBe(false);
        expect(await ctx.store.getRun('run_1')).toMatchObject({ status: 'running' });
        expect(await ctx.store.renewRunLeases([fa], T0 + LEASE)).toEqual(['run_1']);
        // Lapsed before the moment given: released by another replica, retried, the claim gone.
        expect(
          await ctx.store.releaseRun('run_1', 'r-b', T0 + LEASE + 1, 'queued', {
            attempt: 2,
            error: 'replica r-a stopped renewing',
          }),
        ).toBe(true);
        expect(await ctx.store.getRun('run_1')).toMatchObject({
          status: 'queued',
          attempt: 2,
          error: 'replica r-a stopped renewing',
          finishedAt: null,
        });
        expect(await ctx.store.renewRunLeases([fa], T0 + LEASE)).toEqual([]);
        expect(await ctx.store.releaseRun('run_1', 'r-a', T0 + HOUR, 'queued', {})).toBe(false);

        // Its own holder (a replica restarted, or one stopping) takes it back whatever the lease, ending it.
        await ctx.store.claimRun('run_1', 'queued', claim('r-b', T0 + HOUR), T0 + MINUTE);
        expect(await ctx.store.releaseRun('run_1', 'r-a', T0 + 2 * MINUTE, 'interrupted', {})).toBe(false);
        // Without a name of its own: only once the lease lapsed.
        expect(await ctx.store.releaseRun('run_1', null, T0 + 2 * MINUTE, 'interrupted', {})).toBe(false);
        expect(
          await ctx.store.releaseRun('run_1', 'r-b', T0 + 2 * MINUTE, 'interrupted', {
            finishedAt: T0 + 2 * MINUTE,
            error: 'shutting down',
          }),
        ).toBe(true);
        expect(await ctx.store.getRun('run_1')).toMatchObject({
          status: 'interrupted',
          finishedAt: T0 + 2 * MINUTE,
          error: 'shutting down',
          attempt: 2,
          startedAt: T0,
        });
        await ctx.store.transitionRun('run_1', ['interrupted'], 'running');
        expect(await recoverable('r-c', T0)).toEqual(['run_1']);

        // A running run without a claim (left by a build before claims) is released by anyone; an error given
        // as null clears it.
        await ctx.store.transitionRun('run_2', ['queued'], 'running', { error: 'old' });
        expect(await ctx.store.releaseRun('run_2', null, T0, 'queued', { error: null })).toBe(true);
        expect(await ctx.store.getRun('run_2')).toMatchObject({ status: 'queued', error: null, attempt: 1 });
        // A run that is not running is not released.
        expect(await ctx.store.releaseRun('run_2', 'r-a', T0 + HOUR, 'interrupted', {})).toBe(false);
        expect(await ctx.store.releaseRun('run_missing', 'r-a', T0 + HOUR, 'interrupted', {})).toBe(false);
      });

      it('of two replicas taking over the same lapsed run, one does', async () => {
        await givenRun(ctx.store, 'run_1');
        await ctx.store.claimRun('run_1', 'queued', claim('r-dead', T0), T0);
        const other = await ctx.peer();
        const took = await Promise.all([
          ctx.store.releaseRun('run_1', 'r-a', T0 + 1, 'queued', { attempt: 2 }),
          other.releaseRun('run_1', 'r-b', T0 + 1, 'queued', { attempt: 2 }),
        ]);
        expect(took.filter(Boolean)).toHaveLength(1);
      });

      it('lists the runs a replica could start: queued in an idle session, or parked with nothing pending', async () => {
        const at = (i: number) => ({ createdAt: T0 + i * SECOND });
        // ses_1: a run parked on a question, two queued behind it.
        await givenRun(ctx.store, 'run_q', { ...at(1), sessionId: 'ses_1' });
        await givenRun(ctx.store, 'run_1b', { ...at(2), sessionId: 'ses_1' });
        // ses_2: queued runs only, both startable (one at a time is the claim's to enforce).
        await givenRun(ctx.store, 'run_2b', { ...at(4), sessionId: 'ses_2' });
        await givenRun(ctx.store, 'run_2a', { ...at(3), sessionId: 'ses_2' });
        // ses_3: a running run, one queued behind it.
        await givenRun(ctx.store, 'run_3r', { ...at(5), sessionId: 'ses_3' });
        await givenRun(ctx.store, 'run_3b', { ...at(6), sessionId: 'ses_3' });
        // ses_4: a run parked on a tool approval; ses_5: a run whose question was answered; ses_6 finished runs.
        await givenRun(ctx.store, 'run_ta', { ...at(7), sessionId: 'ses_4' });
        await givenRun(ctx.store, 'run_answered', { ...at(0), sessionId: 'ses_5' });
        await givenRun(ctx.store, 'run_done', { ...at(8), sessionId: 'ses_6' });
        await givenRun(ctx.store, 'run_6b', { ...at(9), sessionId: 'ses_6' });

        await ctx.store.claimRun('run_q', 'queued', claim('r-a'), T0);
        await ctx.store.transitionRun('run_q', ['running'], 'awaiting_input');
        await ctx.store.createQuestion(question('q_1', 'run_q'));
        await ctx.store.claimRun('run_3r', 'queued', claim('r-a'), T0);
        await ctx.store.transitionRun('run_ta', ['queued'], 'awaiting_input');
        await ctx.store.createToolApproval({ ...approval('ta_1', 'run_ta'), sessionId: 'ses_4' });
        await ctx.store.transitionRun('run_answered', ['queued'], 'awaiting_input');
        await ctx.store.createQuestion({ ...question('q_2', 'run_answered'), sessionId: 'ses_5' });
        await ctx.store.answerQuestion('q_2', { Which: 'a' }, 'bob', T0 + MINUTE);
        await ctx.store.transitionRun('run_done', ['queued'], 'completed');

        expect(await claimable()).toEqual(['run_answered', 'run_2a', 'run_2b', 'run_6b']);
        expect(await claimable(2)).toEqual(['run_answered', 'run_2a']);
        for (const r of await ctx.store.listClaimableRuns(100))
          expect(r).toEqual(await ctx.store.getRun(r.id));

        // The question answered: run_q may resume, and still holds its session.
        await ctx.store.answerQuestion('q_1', { Which: 'a' }, 'bob', T0 + MINUTE);
        expect(await claimable()).toEqual(['run_answered', 'run_q', 'run_2a', 'run_2b', 'run_6b']);
        // The approval decided: run_ta too. A resolved request of another run changes nothing for run_q.
        await ctx.store.resolveToolApproval('ta_1', 'allowed', 'bob', null, T0 + MINUTE);
        expect(await claimable()).toContain('run_ta');
        // A second pending request parks it again.
        await ctx.store.createToolApproval({ ...approval('ta_2', 'run_ta'), sessionId: 'ses_4' });
        expect(await claimable()).not.toContain('run_ta');
        // The running run ends: the queued one behind it may start.
        await ctx.store.transitionRun('run_3r', ['running'], 'planned');
        expect(await claimable()).toEqual(['run_answered', 'run_q', 'run_2a', 'run_2b', 'run_3b', 'run_6b']);
        // run_q resumes: the run queued behind it still waits.
        await ctx.store.claimRun('run_q', 'awaiting_input', claim('r-b'), T0 + MINUTE);
        expect(await claimable()).toEqual(['run_answered', 'run_2a', 'run_2b', 'run_3b', 'run_6b']);
        expect(await ctx.store.listClaimableRuns(0)).toEqual([]);
      });

      it('a run waiting on the account (spend limit) is claimed only once its wait ends or an admin resumes it', async () => {
        await givenSession(ctx.store, 'ses_w');
        await givenSession(ctx.store, 'ses_v');
        await ctx.store.createRun(runInput('run_w', 'ses_w'));
        await ctx.store.createRun(runInput('run_v', 'ses_v'));
        await ctx.store.createRun({ ...runInput('run_w2', 'ses_w'), createdAt: T0 + SECOND });
        for (const id of ['run_w', 'run_v']) {
          await ctx.store.claimRun(id, 'queued', claim('r-a'), T0);
          const until = id === 'run_w' ? T0 + HOUR : T0 + 2 * HOUR;
          const to = { on: 'spend_limit', until } as const;
          expect(await ctx.store.transitionRun(id, ['running'], 'awaiting_input', { waitingOn: to })).toBe(
            true,
          );
        }
        expect((await ctx.store.getRun('run_w'))!.waitingOn).toEqual({ on: 'spend_limit', until: T0 + HOUR });
        // The account is held until the latest wait.
        expect(await ctx.store.waitingUntil('spend_limit', T0)).toBe(T0 + 2 * HOUR);
        // Before its wait ends: not claimable, not claimed; it still holds its session (run_w2 waits).
        expect(await ctx.store.listClaimableRuns(100, T0 + HOUR - 1)).toEqual([]);
        expect(await ctx.store.listClaimableRuns(100)).toEqual([]);
        expect(await ctx.store.claimRun('run_w', 'awaiting_input', claim('r-a'), T0 + HOUR - 1)).toBeNull();
        // Once it ends: claimable, and the claim clears the wait.
        expect((await ctx.store.listClaimableRuns(100, T0 + HOUR)).map((r) => r.id)).toEqual(['run_w']);
        expect(await ctx.store.claimRun('run_w', 'awaiting_input', claim('r-a'), T0 + HOUR)).not.toBeNull();
        expect((await ctx.store.getRun('run_w'))!.waitingOn).toBeNull();
        expect(await ctx.store.waitingUntil('spend_limit', T0 + HOUR)).toBe(T0 + 2 * HOUR);
        // An admin resumes: every run waiting on the spend limit is claimable at once; the account is free.
        const resumed = await ctx.store.resumeWaitingRuns('spend_limit');
        expect(resumed.map((r) => [r.id, r.status, r.waitingOn])).toEqual([
          ['run_v', 'awaiting_input', null],
        ]);
        expect(await ctx.store.waitingUntil('spend_limit', T0)).toBeNull();
        expect((await ctx.store.listClaimableRuns(100, T0)).map((r) => r.id)).toContain('run_v');
        expect(await ctx.store.resumeWaitingRuns('spend_limit')).toEqual([]);
        // Any other move ends a wait: canceled while waiting, nothing of it is left.
        await ctx.store.transitionRun('run_w', ['running'], 'awaiting_input', {
          waitingOn: { on: 'spend_limit', until: T0 + 3 * HOUR },
        });
        await ctx.store.transitionRun('run_w', ['awaiting_input'], 'canceled', { finishedAt: T0 + HOUR });
        expect((await ctx.store.getRun('run_w'))!.waitingOn).toBeNull();
        expect(await ctx.store.waitingUntil('spend_limit', T0)).toBeNull();
      });

      describe('fences', () => {
        const toolCall = (runId: string, toolUseId: string) => ({
          runId,
          toolUseId,
          tool: 'Bash',
          inputSha256: `sha-${toolUseId}`,
          startedAt: T0,
        });

        /** A receipt that keeps the runs it was made from and the events it was told were stored. */
        function recorded(at: number, type = 'run_finished') {
          const runs: Run[] = [];
          const stored: RunEvent[] = [];
          const receipt: Receipt = {
            at,
            event: (run) => {
              runs.push(run);
              return {
                type,
                data: {
                  status: run.status,
                  finishedAt: run.finishedAt,
                  error: run.error,
                  attempt: run.attempt,
                },
              };
            },
            stored: (event) => {
              stored.push(event);
            },
          };
          return { receipt, runs, stored };
        }

        /**
         * Everything a write on behalf of run `runId` may leave (its conversation is its own id; its journaled
         * call toolu_1 is read back through startToolCall, which writes nothing for a call journaled before).
         */
        const written = async (runId: string, store: Store = ctx.store) => ({
          run: await store.getRun(runId),
          events: await store.listEvents(runId, 0, 100),
          log: await store.eventLogEnd(),
          conversation: await store.loadConversation(runId),
          frame: await store.loadFrame(runId),
          plans: (await store.listPlans({ limit: 100 })).items,
          plansVersion: await store.plansVersion(),
          questions: await store.listQuestions({ runId, limit: 100 }),
          approvals: await store.listToolApprovals({ runId, limit: 100 }),
          open: await store.listOpenCommands(100),
          call: (await store.startToolCall(toolCall(runId, 'toolu_1'))).call,
        });

        /**
         * Every write that takes a fence and throws FencedError when it no longer holds, each one that would
         * write something new (marked `tag`) on behalf of the fence's run. pln_x is an approved plan (an
         * execute run moves its plan), toolu_1 a call the run journaled.
         */
        const fencedWrites = (f: Fence, tag: string): [string, () => Promise<unknown>][] => [
          ['appendEvent', () => ctx.store.appendEvent(f.runId, 'text', { tag }, T0 + 1, f)],
          [
            'appendMessages',
            () =>
              ctx.store.appendMessages(
                f.runId,
                f.runId,
                [{ role: 'user', content: [{ type: 'text', text: tag }] }],
                T0 + 1,
                f,
              ),
          ],
          ['saveFrame', () => ctx.store.saveFrame(f.runId, f.runId, { system: [tag], tools: [] }, T0 + 1, f)],
          [
            'updateRun',
            () => ctx.store.updateRun(f.runId, { turns: 7, model: tag, planId: `pln_${tag}` }, f),
          ],
          [
            'createPlan',
            () => ctx.store.createPlan(planInput(`pln_${tag}`, { id: f.runId, sessionId: 'ses_1' }), f),
          ],
          [
            'transitionPlan',
            () => ctx.store.transitionPlan('pln_x', ['approved'], 'executing', { failureReason: tag }, f),
          ],
          ['startToolCall', () => ctx.store.startToolCall(toolCall(f.runId, `toolu_${tag}`), f)],
          ['recordToolCallProcess', () => ctx.store.recordToolCallProcess(f.runId, 'toolu_1', 4242, tag, f)],
          [
            'finishToolCall',
            () => ctx.store.finishToolCall(f.runId, 'toolu_1', { content: tag, isError: false }, T0 + 1, f),
          ],
          ['createQuestion', () => ctx.store.createQuestion(question(`q_${tag}`, f.runId), f)],
          ['createToolApproval', () => ctx.store.createToolApproval(approval(`ta_${tag}`, f.runId), f)],
          ['confirmHold', () => ctx.store.confirmHold(f.runId, f)],
        ];

        /** Each fenced write with `f` throws FencedError naming `f`; the moves that take a fence do not apply. */
        async function refusedEverywhere(f: Fence, tag: string): Promise<void> {
          for (const [name, write] of fencedWrites(f, tag)) {
            const err = await write().then(
              () => null,
              (e: unknown) => e,
            );
            expect(err, `${name} with ${tag}`).toBeInstanceOf(FencedError);
            expect((err as FencedError).fence, `${name} with ${tag}`).toEqual(f);
          }
          const ended = { fence: f, finishedAt: T0 + MINUTE, error: tag, activeMs: 5 };
          for (const from of [['running'], ['queued', 'running', 'awaiting_input']] as RunStatus[][]) {
            expect(
              await ctx.store.transitionRun(f.runId, from, 'failed', ended),
              `transitionRun with ${tag}`,
            ).toBe(false);
          }
          expect(await ctx.store.renewRunLeases([f], T0 + DAY), `renewRunLeases with ${tag}`).toEqual([]);
        }

        it('every claim of a run takes the next epoch: claimed again after parking, after a release', async () => {
          await givenRun(ctx.store, 'run_1');
          const first = (await ctx.store.claimRun('run_1', 'queued', claim('r-a'), T0))!;
          expect(first).toEqual({ runId: 'run_1', replica: 'r-a', epoch: expect.any(Number) });
          expect(Number.isInteger(first.epoch)).toBe(true);
          // A claim refused (running already) takes no epoch.
          expect(await ctx.store.claimRun('run_1', 'queued', claim('r-b'), T0)).toBeNull();

          // Parked on a question, then resumed by the same replica.
          expect(
            await ctx.store.transitionRun('run_1', ['running'], 'awaiting_input', { fence: first }),
          ).toBe(true);
          const second = await ctx.store.claimRun('run_1', 'awaiting_input', claim('r-a'), T0 + SECOND);
          expect(second).toEqual({ runId: 'run_1', replica: 'r-a', epoch: first.epoch + 1 });

          // Taken back by its replica after a restart (the name is the same), then claimed again.
          expect(await ctx.store.releaseRun('run_1', 'r-a', T0 + 2 * SECOND, 'queued', {})).toBe(true);
          const third = await ctx.store.claimRun('run_1', 'queued', claim('r-a'), T0 + 3 * SECOND);
          expect(third).toEqual({ runId: 'run_1', replica: 'r-a', epoch: first.epoch + 2 });

          // Released by another replica after the lease lapsed, claimed by that one.
          expect(await ctx.store.releaseRun('run_1', null, T0 + HOUR, 'queued', { attempt: 2 })).toBe(true);
          const fourth = await ctx.store.claimRun('run_1', 'queued', claim('r-b', T0 + 2 * HOUR), T0 + HOUR);
          expect(fourth).toEqual({ runId: 'run_1', replica: 'r-b', epoch: first.epoch + 3 });

          // Handed back to the queue by its holder (the daemon stopping), and claimed again.
          expect(await ctx.store.transitionRun('run_1', ['running'], 'queued', { fence: fourth! })).toBe(
            true,
          );
          const fifth = await ctx.store.claimRun('run_1', 'queued', claim('r-b', T0 + 2 * HOUR), T0 + HOUR);
          expect(fifth).toEqual({ runId: 'run_1', replica: 'r-b', epoch: first.epoch + 4 });
          // Only the newest holds.
          for (const f of [first, second!, third!, fourth!]) {
            expect(await ctx.store.renewRunLeases([f], T0 + DAY)).toEqual([]);
          }
          expect(await ctx.store.renewRunLeases([fifth!], T0 + DAY)).toEqual(['run_1']);
        });

        it('renews, of several fences of one run, only the one that holds', async () => {
          await givenRun(ctx.store, 'run_1', { sessionId: 'ses_1' });
          await givenRun(ctx.store, 'run_2', { sessionId: 'ses_2' });
          const old = (await ctx.store.claimRun('run_1', 'queued', claim('r-a'), T0))!;
          expect(await ctx.store.releaseRun('run_1', 'r-a', T0, 'queued', {})).toBe(true);
          const cur = (await ctx.store.claimRun('run_1', 'queued', claim('r-a'), T0))!;
          const two = (await ctx.store.claimRun('run_2', 'queued', claim('r-a'), T0))!;
          // A process that lost run_1 and one that holds it, renewing at once: the stale fence renews nothing.
          expect(await ctx.store.renewRunLeases([old, two, cur], T0 + LEASE)).toEqual(['run_2', 'run_1']);
          expect(await ctx.store.renewRunLeases([cur, { ...cur, replica: 'r-b' }], T0 + LEASE)).toEqual([
            'run_1',
          ]);
        });

        it("a stale fence (the same replica's older claim, another replica's) writes nothing; the current one's writes apply", async () => {
          await givenPlan(ctx.store, 'pln_x', { status: 'approved' }, { sessionId: 'ses_plans' });
          await givenRun(ctx.store, 'run_1');
          const old = (await ctx.store.claimRun('run_1', 'queued', claim('r-a', T0 + LEASE), T0))!;
          await ctx.store.startToolCall(toolCall('run_1', 'toolu_1'), old);
          // r-a restarted while its first process was paused: the new process takes back the runs claimed
          // under its name and claims run_1 again, under the same name.
          expect(await ctx.store.releaseRun('run_1', 'r-a', T0 + SECOND, 'queued', {})).toBe(true);
          const lease = T0 + SECOND + LEASE;
          const cur = (await ctx.store.claimRun('run_1', 'queued', claim('r-a', lease), T0 + SECOND))!;
          expect(cur).toEqual({ ...old, epoch: old.epoch + 1 });
          const stale: [string, Fence][] = [
            ['old', old],
            ['other', { ...cur, replica: 'r-b' }],
            ['older', { ...old, epoch: old.epoch - 1 }],
            ['newer', { ...cur, epoch: cur.epoch + 1 }],
          ];

          const before = await written('run_1');
          expect(before.run).toMatchObject({ status: 'running', turns: 0, model: null });
          for (const [tag, f] of stale) {
            await refusedEverywhere(f, tag);
            expect(await written('run_1'), `what is left after the writes with ${tag}`).toEqual(before);
          }
          // The lease did not move: it lapses as cur's claim set it.
          expect(await recoverable(null, lease)).toEqual([]);
          expect(await recoverable(null, lease + 1)).toEqual(['run_1']);
          // No call was journaled by the refused writes: the current holder starts each.
          for (const [tag] of stale) {
            expect((await ctx.store.startToolCall(toolCall('run_1', `toolu_${tag}`), cur)).started).toBe(
              true,
            );
          }

          // The current fence's writes apply.
          expect(await ctx.store.appendEvent('run_1', 'text', { tag: 'cur' }, T0 + 2, cur)).toEqual({
            runId: 'run_1',
            seq: 1,
            type: 'text',
            data: { tag: 'cur' },
            at: T0 + 2,
          });
          await ctx.store.appendMessages(
            'run_1',
            'run_1',
            [{ role: 'user', content: [{ type: 'text', text: 'cur' }] }],
            T0 + 2,
            cur,
          );
          expect(await ctx.store.loadConversation('run_1')).toEqual([
            { role: 'user', content: [{ type: 'text', text: 'cur' }], runId: 'run_1' },
          ]);
          await ctx.store.updateRun('run_1', { turns: 3, model: 'cur' }, cur);
          expect(await ctx.store.getRun('run_1')).toMatchObject({
            turns: 3,
            model: 'cur',
            status: 'running',
          });
          const plan = await ctx.store.createPlan(
            planInput('pln_cur', { id: 'run_1', sessionId: 'ses_1' }),
            cur,
          );
          expect(await ctx.store.getPlan('pln_cur')).toEqual(plan);
          expect(await ctx.store.transitionPlan('pln_x', ['approved'], 'executing', {}, cur)).toBe(true);
          expect((await ctx.store.getPlan('pln_x'))?.status).toBe('executing');
          await ctx.store.recordToolCallProcess('run_1', 'toolu_1', 4242, 'boot:1', cur);
          expect((await ctx.store.listOpenCommands(10)).map((c) => [c.toolUseId, c.processGroup])).toEqual([
            ['toolu_1', 4242],
          ]);
          await ctx.store.finishToolCall('run_1', 'toolu_1', { content: 'ok', isError: false }, T0 + 3, cur);
          expect((await ctx.store.startToolCall(toolCall('run_1', 'toolu_1'))).call).toMatchObject({
            finishedAt: T0 + 3,
            result: { content: 'ok', isError: false },
          });
          expect(await ctx.store.createQuestion(question('q_cur', 'run_1'), cur)).toMatchObject({
            id: 'q_cur',
            status: 'pending',
          });
          expect(await ctx.store.createToolApproval(approval('ta_cur', 'run_1'), cur)).toMatchObject({
            id: 'ta_cur',
            status: 'pending',
          });
          await expect(ctx.store.confirmHold('run_1', cur)).resolves.toBeUndefined();
          // Without a fence there is nothing to check.
          await expect(ctx.store.confirmHold('run_1')).resolves.toBeUndefined();
          expect(await ctx.store.renewRunLeases([cur], lease + MINUTE)).toEqual(['run_1']);
          expect(await recoverable(null, lease + 1)).toEqual([]);
          expect(
            await ctx.store.transitionRun('run_1', ['running'], 'awaiting_input', {
              fence: cur,
              activeMs: 5,
            }),
          ).toBe(true);
          expect(await ctx.store.getRun('run_1')).toMatchObject({ status: 'awaiting_input', activeMs: 5 });
        });

        it('the fence of a run no longer running is refused: parked, ended by its holder, canceled by a person', async () => {
          await givenPlan(ctx.store, 'pln_x', { status: 'approved' }, { sessionId: 'ses_plans' });
          const fences: Record<string, Fence> = {};
          for (const [id, sessionId] of [
            ['run_parked', 'ses_1'],
            ['run_done', 'ses_2'],
            ['run_canceled', 'ses_3'],
          ] as const) {
            await givenRun(ctx.store, id, { sessionId });
            fences[id] = (await ctx.store.claimRun(id, 'queued', claim('r-a', T0 + HOUR), T0))!;
            await ctx.store.startToolCall(toolCall(id, 'toolu_1'), fences[id]);
          }
          expect(
            await ctx.store.transitionRun('run_parked', ['running'], 'awaiting_input', {
              fence: fences.run_parked!,
            }),
          ).toBe(true);
          expect(
            await ctx.store.transitionRun('run_done', ['running'], 'completed', {
              fence: fences.run_done!,
              finishedAt: T0 + SECOND,
            }),
          ).toBe(true);
          // Canceled from another replica: the status ends it, without the holder's fence.
          expect(
            await ctx.store.transitionRun(
              'run_canceled',
              ['queued', 'awaiting_input', 'running'],
              'canceled',
              {
                finishedAt: T0 + SECOND,
                error: 'canceled',
              },
            ),
          ).toBe(true);

          for (const [id, f] of Object.entries(fences)) {
            const before = await written(id);
            await refusedEverywhere(f, id);
            expect(await written(id), `what is left of ${id}`).toEqual(before);
          }
          expect(await ctx.store.getRun('run_parked')).toMatchObject({ status: 'awaiting_input' });
          expect(await ctx.store.getRun('run_done')).toMatchObject({ status: 'completed', error: null });
          expect(await ctx.store.getRun('run_canceled')).toMatchObject({
            status: 'canceled',
            error: 'canceled',
          });

          // Resumed, the parked run is held by its new claim only.
          const resumed = (await ctx.store.claimRun(
            'run_parked',
            'awaiting_input',
            claim('r-a'),
            T0 + MINUTE,
          ))!;
          expect(resumed.epoch).toBe(fences.run_parked!.epoch + 1);
          await expect(
            ctx.store.appendEvent('run_parked', 'text', {}, T0 + MINUTE, fences.run_parked),
          ).rejects.toBeInstanceOf(FencedError);
          expect((await ctx.store.appendEvent('run_parked', 'text', {}, T0 + MINUTE, resumed)).seq).toBe(1);
        });

        it("a run's end with a receipt: the event made from the run as it ended, in the same transaction", async () => {
          await givenRun(ctx.store, 'run_1');
          const fa = (await ctx.store.claimRun('run_1', 'queued', claim('r-a'), T0))!;
          await ctx.store.appendEvent('run_1', 'text', { n: 1 }, T0 + 1, fa);
          await ctx.store.appendEvent('run_1', 'text', { n: 2 }, T0 + 2, fa);

          // A move that does not apply (a stale fence, a status not in `from`) writes no receipt.
          const missed = recorded(T0 + MINUTE);
          expect(
            await ctx.store.transitionRun('run_1', ['running'], 'completed', {
              fence: { ...fa, epoch: fa.epoch + 1 },
              finishedAt: T0 + MINUTE,
              receipt: missed.receipt,
            }),
          ).toBe(false);
          expect(
            await ctx.store.transitionRun('run_1', ['queued'], 'canceled', {
              finishedAt: T0 + MINUTE,
              receipt: missed.receipt,
            }),
          ).toBe(false);
          expect(missed.stored).toEqual([]);
          expect((await ctx.store.listEvents('run_1', 0, 100)).map((e) => e.seq)).toEqual([1, 2]);

          const ended = recorded(T0 + MINUTE);
          expect(
            await ctx.store.transitionRun('run_1', ['running'], 'failed', {
              fence: fa,
              finishedAt: T0 + MINUTE,
              error: 'model overloaded',
              activeMs: 100,
              receipt: ended.receipt,
            }),
          ).toBe(true);
          const run = await ctx.store.getRun('run_1');
          expect(run).toMatchObject({ status: 'failed', finishedAt: T0 + MINUTE, error: 'model overloaded' });
          // Made from the run as the move left it, once.
          expect(ended.runs).toEqual([run]);
          const receiptEvent = {
            runId: 'run_1',
            seq: 3,
            type: 'run_finished',
            data: { status: 'failed', finishedAt: T0 + MINUTE, error: 'model overloaded', attempt: 1 },
            at: T0 + MINUTE,
          };
          expect(ended.stored).toEqual([receiptEvent]);
          expect(await ctx.store.listEvents('run_1', 2, 100)).toEqual([receiptEvent]);
          const logged = await ctx.store.eventsAfter(0, ['run_finished'], 10);
          expect(logged.events).toEqual([{ ...receiptEvent, rowid: logged.end }]);

          // Ended: a second end with a receipt does not apply, and writes none.
          const again = recorded(T0 + HOUR);
          expect(
            await ctx.store.transitionRun('run_1', ['running'], 'completed', { receipt: again.receipt }),
          ).toBe(false);
          expect(again.stored).toEqual([]);
          expect(await ctx.store.listEvents('run_1', 3, 100)).toEqual([]);
        });

        it('a receipt whose event cannot be made leaves the run as it was: the move and the event are one', async () => {
          await givenRun(ctx.store, 'run_1');
          const fa = (await ctx.store.claimRun('run_1', 'queued', claim('r-a'), T0))!;
          const before = await ctx.store.getRun('run_1');
          const stored: RunEvent[] = [];
          const broken: Receipt = {
            at: T0 + MINUTE,
            event: () => {
              throw new Error('no receipt');
            },
            stored: (e) => stored.push(e),
          };
          await expect(
            ctx.store.transitionRun('run_1', ['running'], 'completed', {
              fence: fa,
              finishedAt: T0 + MINUTE,
              receipt: broken,
            }),
          ).rejects.toThrow('no receipt');
          expect(await ctx.store.getRun('run_1')).toEqual(before);
          expect(await ctx.store.listEvents('run_1', 0, 100)).toEqual([]);
          expect(stored).toEqual([]);
          // Still held: its holder renews it.
          expect(await ctx.store.renewRunLeases([fa], T0 + LEASE)).toEqual(['run_1']);
        });

        it('a release with a receipt writes it with the run as released, only when the release applies', async () => {
          await givenRun(ctx.store, 'run_1');
          await ctx.store.claimRun('run_1', 'queued', claim('r-a', T0 + LEASE), T0);
          await ctx.store.appendEvent('run_1', 'text', {}, T0 + 1);

          // The lease lives: not released, no receipt.
          const early = recorded(T0 + LEASE);
          expect(
            await ctx.store.releaseRun('run_1', null, T0 + LEASE, 'interrupted', {
              finishedAt: T0 + LEASE,
              receipt: early.receipt,
            }),
          ).toBe(false);
          expect(early.stored).toEqual([]);
          expect(early.runs).toEqual([]);
          expect((await ctx.store.listEvents('run_1', 0, 100)).map((e) => e.seq)).toEqual([1]);

          const late = recorded(T0 + LEASE + 1);
          expect(
            await ctx.store.releaseRun('run_1', null, T0 + LEASE + 1, 'interrupted', {
              finishedAt: T0 + LEASE + 1,
              error: 'already retried once',
              attempt: 2,
              receipt: late.receipt,
            }),
          ).toBe(true);
          const run = await ctx.store.getRun('run_1');
          expect(run).toMatchObject({ status: 'interrupted', finishedAt: T0 + LEASE + 1, attempt: 2 });
          expect(late.runs).toEqual([run]);
          const receiptEvent = {
            runId: 'run_1',
            seq: 2,
            type: 'run_finished',
            data: {
              status: 'interrupted',
              finishedAt: T0 + LEASE + 1,
              error: 'already retried once',
              attempt: 2,
            },
            at: T0 + LEASE + 1,
          };
          expect(late.stored).toEqual([receiptEvent]);
          expect(await ctx.store.listEvents('run_1', 1, 100)).toEqual([receiptEvent]);

          // Released already: no second receipt.
          const twice = recorded(T0 + HOUR);
          expect(
            await ctx.store.releaseRun('run_1', null, T0 + HOUR, 'interrupted', { receipt: twice.receipt }),
          ).toBe(false);
          expect(twice.stored).toEqual([]);
          expect((await ctx.store.listEvents('run_1', 0, 100)).map((e) => e.seq)).toEqual([1, 2]);
        });

        it('a takeover fences the holder it replaced: its writes racing the release are either before it or refused', async () => {
          await givenRun(ctx.store, 'run_1');
          const fa = (await ctx.store.claimRun('run_1', 'queued', claim('r-a', T0 + LEASE), T0))!;
          const other = await ctx.peer();
          expect((await ctx.store.appendEvent('run_1', 'text', { n: 0 }, T0, fa)).seq).toBe(1);

          // The lease lapsed; another process takes the run over while the holder goes on writing.
          const takeover = recorded(T0 + LEASE + 1, 'run_interrupted');
          const append = (i: number) => ctx.store.appendEvent('run_1', 'text', { n: i }, T0 + i, fa);
          const appends = Array.from({ length: 10 }, (_, i) => append(i + 1));
          const released = other.releaseRun('run_1', null, T0 + LEASE + 1, 'queued', {
            attempt: 2,
            receipt: takeover.receipt,
          });
          appends.push(...Array.from({ length: 10 }, (_, i) => append(i + 11)));
          const [done, releasedOk] = await Promise.all([Promise.allSettled(appends), released]);
          expect(releasedOk).toBe(true);
          for (const r of done) {
            if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(FencedError);
          }
          // Every append that was stored came before the takeover's own event.
          const [mark] = takeover.stored;
          expect(mark).toBeDefined();
          const kept = fulfilled(done);
          for (const e of kept) expect(e.seq).toBeLessThan(mark!.seq);
          const events = await ctx.store.listEvents('run_1', 0, 100);
          expect(events.map((e) => e.seq)).toEqual(Array.from({ length: kept.length + 2 }, (_, i) => i + 1));
          expect(events.at(-1)).toEqual(mark);

          // From now on the holder's writes are refused, on either connection.
          await expect(ctx.store.appendEvent('run_1', 'text', {}, T0 + HOUR, fa)).rejects.toBeInstanceOf(
            FencedError,
          );
          await expect(other.appendEvent('run_1', 'text', {}, T0 + HOUR, fa)).rejects.toBeInstanceOf(
            FencedError,
          );
          // The next claim is the only one that holds.
          const fb = (await other.claimRun('run_1', 'queued', claim('r-b', T0 + HOUR), T0 + LEASE + 2))!;
          await expect(ctx.store.confirmHold('run_1', fa)).rejects.toBeInstanceOf(FencedError);
          await expect(ctx.store.confirmHold('run_1', fb)).resolves.toBeUndefined();
          expect((await ctx.store.listEvents('run_1', 0, 100)).length).toBe(kept.length + 2);
        });

        it("fenced writes racing the takeovers of many runs: each is stored before its run's release, or refused", async () => {
          // Many runs, each held and lapsed; for each, the holder's write and another process's release start
          // together: whichever way each race goes, a write that was stored precedes the release's event.
          const n = 8;
          const held: Fence[] = [];
          for (let i = 0; i < n; i++) {
            await givenRun(ctx.store, `run_${i}`, { sessionId: `ses_${i}` });
            held.push((await ctx.store.claimRun(`run_${i}`, 'queued', claim('r-a', T0), T0))!);
          }
          const other = await ctx.peer();
          const marks = held.map(() => recorded(T0 + 1, 'run_interrupted'));
          const results = await Promise.allSettled(
            held.flatMap((f, i) => [
              ctx.store.appendEvent(f.runId, 'text', {}, T0 + 1, f),
              other.releaseRun(f.runId, null, T0 + 1, 'queued', { attempt: 2, receipt: marks[i]!.receipt }),
            ]),
          );
          for (let i = 0; i < n; i++) {
            const [write, release] = [results[2 * i]!, results[2 * i + 1]!];
            expect(release).toEqual({ status: 'fulfilled', value: true });
            const events = await ctx.store.listEvents(`run_${i}`, 0, 10);
            if (write.status === 'fulfilled') {
              expect(events.map((e) => e.type)).toEqual(['text', 'run_interrupted']);
            } else {
              expect(write.reason).toBeInstanceOf(FencedError);
              expect(events.map((e) => e.type)).toEqual(['run_interrupted']);
            }
            expect(events.at(-1)).toEqual(marks[i]!.stored[0]);
          }
        });
      });

      describe('plans of a run', () => {
        it('a second plan pending approval for the same run is refused; once the first is decided, another may be stored', async () => {
          const run = await givenRun(ctx.store, 'run_1');
          const first = await ctx.store.createPlan(planInput('pln_1', run));
          await expect(ctx.store.createPlan(planInput('pln_2', run, { round: 2 }))).rejects.toBeInstanceOf(
            ConflictError,
          );
          expect(await ctx.store.getPlan('pln_2')).toBeNull();
          expect(await ctx.store.getPlan('pln_1')).toEqual(first);
          // Plans of other runs are not held up.
          await givenPlan(ctx.store, 'pln_other');
          // Through a fence too: a conflict, not a lost claim.
          const fa = (await ctx.store.claimRun('run_1', 'queued', claim('r-a'), T0))!;
          await expect(ctx.store.createPlan(planInput('pln_3', run), fa)).rejects.toBeInstanceOf(
            ConflictError,
          );
          expect(await ctx.store.getPlan('pln_3')).toBeNull();
          // A plan that is not pending does not count (only pending plans are held to one per run).
          await ctx.store.createPlan(planInput('pln_old', run, { status: 'superseded' }));

          // The first decided: the index counts only pending plans, so the next round may be proposed.
          expect(await ctx.store.transitionPlan('pln_1', ['pending_approval'], 'rejected')).toBe(true);
          const second = await ctx.store.createPlan(
            planInput('pln_2', run, { round: 2, previousPlanId: 'pln_1' }),
            fa,
          );
          expect(second).toMatchObject({ id: 'pln_2', status: 'pending_approval', runId: 'run_1' });
          await expect(ctx.store.createPlan(planInput('pln_4', run))).rejects.toBeInstanceOf(ConflictError);
          const plans = (await ctx.store.listPlans({ limit: 100 })).items.filter((p) => p.runId === 'run_1');
          expect(plans.map((p) => [p.id, p.status]).sort()).toEqual([
            ['pln_1', 'rejected'],
            ['pln_2', 'pending_approval'],
            ['pln_old', 'superseded'],
          ]);
        });
      });
    });

    describe('conversations', () => {
      beforeEach(async () => {
        await givenRun(ctx.store, 'run_1');
        await givenRun(ctx.store, 'run_2');
      });

      it('appends messages in order, each loaded with the run that wrote it', async () => {
        expect(await ctx.store.loadConversation('conv_1')).toEqual([]);
        await ctx.store.appendMessages(
          'conv_1',
          'run_1',
          [
            { role: 'user', content: [{ type: 'text', text: 'look at the repo' }] },
            {
              role: 'assistant',
              content: [
                { type: 'thinking', thinking: 'hm', signature: 'sig' },
                { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/a' } },
              ],
              stopReason: 'tool_use',
            },
          ],
          T0,
        );
        await ctx.store.appendMessages(
          'conv_1',
          'run_2',
          [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' }] }],
          T0 + 1,
        );
        expect(await ctx.store.loadConversation('conv_1')).toEqual([
          { role: 'user', content: [{ type: 'text', text: 'look at the repo' }], runId: 'run_1' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'hm', signature: 'sig' },
              { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/a' } },
            ],
            runId: 'run_1',
            stopReason: 'tool_use',
          },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' }],
            runId: 'run_2',
          },
        ]);
        expect(await ctx.store.loadConversation('conv_other')).toEqual([]);
      });

      it('merges a user message into the user message before it, so the roles alternate', async () => {
        await ctx.store.appendMessages(
          'conv_1',
          'run_1',
          [
            { role: 'user', content: [{ type: 'text', text: 'a' }] },
            { role: 'assistant', content: [{ type: 'text', text: 'plan' }], stopReason: 'tool_use' },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'receipt' }] },
          ],
          T0,
        );
        await ctx.store.appendMessages(
          'conv_1',
          'run_2',
          [{ role: 'user', content: [{ type: 'text', text: 'please revise' }] }],
          T0 + 1,
        );
        const messages = await ctx.store.loadConversation('conv_1');
        expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
        expect(messages[2]).toEqual({
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't', content: 'receipt' },
            { type: 'text', text: 'please revise' },
          ],
          runId: 'run_2',
        });
      });

      it('continues an assistant turn that paused, but not one that ended', async () => {
        await ctx.store.appendMessages(
          'conv_1',
          'run_1',
          [
            { role: 'user', content: [{ type: 'text', text: 'go' }] },
            { role: 'assistant', content: [{ type: 'text', text: 'part 1' }], stopReason: 'pause_turn' },
            { role: 'assistant', content: [{ type: 'text', text: 'part 2' }], stopReason: 'end_turn' },
          ],
          T0,
        );
        let messages = await ctx.store.loadConversation('conv_1');
        expect(messages).toHaveLength(2);
        expect(messages[1]).toEqual({
          role: 'assistant',
          content: [
            { type: 'text', text: 'part 1' },
            { type: 'text', text: 'part 2' },
          ],
          runId: 'run_1',
          stopReason: 'end_turn',
        });
        await ctx.store.appendMessages(
          'conv_1',
          'run_1',
          [{ role: 'assistant', content: [{ type: 'text', text: 'again' }], stopReason: 'end_turn' }],
          T0 + 1,
        );
        messages = await ctx.store.loadConversation('conv_1');
        expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'assistant']);
      });
    });

    describe('conversation frames', () => {
      const frame = (tag: string): ConversationFrame => ({
        system: [`base of ${tag}`, `memory of ${tag}`],
        tools: [
          { name: 'Read', description: `read, ${tag}`, input_schema: { type: 'object', properties: {} } },
        ],
        memory: {
          files: ['CLAUDE.md'],
          from: { kind: 'commit', commit: 'a'.repeat(40) },
          sha256: 'b'.repeat(64),
          bytes: 42,
          cut: false,
        },
      });

      beforeEach(async () => {
        await givenRun(ctx.store, 'run_1');
        await givenRun(ctx.store, 'run_2');
      });

      it('stores a frame and loads it back as it was; a conversation without one has none', async () => {
        expect(await ctx.store.loadFrame('conv_1')).toBeNull();
        expect(await ctx.store.saveFrame('conv_1', 'run_1', frame('one'), T0)).toEqual(frame('one'));
        expect(await ctx.store.loadFrame('conv_1')).toEqual(frame('one'));
        expect(await ctx.store.loadFrame('conv_other')).toBeNull();
        // A frame without memory stays without it.
        const bare: ConversationFrame = { system: ['base'], tools: [] };
        await ctx.store.saveFrame('conv_2', 'run_2', bare, T0);
        expect(await ctx.store.loadFrame('conv_2')).toEqual(bare);
      });

      it('never replaces a frame: the first one stored stays and is returned to a later save', async () => {
        await ctx.store.saveFrame('conv_1', 'run_1', frame('first'), T0);
        expect(await ctx.store.saveFrame('conv_1', 'run_2', frame('second'), T0 + 1)).toEqual(frame('first'));
        expect(await ctx.store.loadFrame('conv_1')).toEqual(frame('first'));
      });

      it('two starts of one conversation at once both get the same frame', async () => {
        const saved = await Promise.all([
          ctx.store.saveFrame('conv_1', 'run_1', frame('a'), T0),
          ctx.store.saveFrame('conv_1', 'run_2', frame('b'), T0),
        ]);
        const stored = await ctx.store.loadFrame('conv_1');
        expect([frame('a'), frame('b')]).toContainEqual(stored);
        expect(saved).toEqual([stored, stored]);
      });

      it('saves with a fence only while the claim holds the run', async () => {
        const held = { replica: 'r-a', leaseUntil: T0 + HOUR };
        const f = (await ctx.store.claimRun('run_1', 'queued', held, T0))!;
        expect(await ctx.store.saveFrame('run_1', 'run_1', frame('held'), T0, f)).toEqual(frame('held'));
        expect(await ctx.store.releaseRun('run_1', 'r-a', T0 + SECOND, 'queued', {})).toBe(true);
        await expect(
          ctx.store.saveFrame('conv_late', 'run_1', frame('late'), T0 + 2 * SECOND, f),
        ).rejects.toBeInstanceOf(FencedError);
        expect(await ctx.store.loadFrame('conv_late')).toBeNull();
      });
    });

    describe('events', () => {
      beforeEach(async () => {
        for (const id of ['run_1', 'run_2', 'run_3']) await givenRun(ctx.store, id);
      });

      it("numbers each run's events from 1 and lists them after a sequence number", async () => {
        const first = await ctx.store.appendEvent('run_1', 'text', { text: 'hello' }, T0);
        await ctx.store.appendEvent('run_2', 'text', { text: 'other run' }, T0);
        const second = await ctx.store.appendEvent(
          'run_1',
          'tool_use',
          { tool: 'Read', input: { n: [1, 2] } },
          T0 + 1,
        );
        const third = await ctx.store.appendEvent('run_1', 'plan_proposed', { planId: 'pln_1' }, T0 + 2);
        expect(first).toEqual({ runId: 'run_1', seq: 1, type: 'text', data: { text: 'hello' }, at: T0 });
        expect([second.seq, third.seq]).toEqual([2, 3]);
        expect(await ctx.store.listEvents('run_1', 0, 100)).toEqual([first, second, third]);
        expect(await ctx.store.listEvents('run_1', 1, 100)).toEqual([second, third]);
        expect(await ctx.store.listEvents('run_1', 0, 2)).toEqual([first, second]);
        expect(await ctx.store.listEvents('run_1', 3, 100)).toEqual([]);
        expect((await ctx.store.listEvents('run_2', 0, 100)).map((e) => e.seq)).toEqual([1]);
        expect(await ctx.store.listEvents('run_missing', 0, 100)).toEqual([]);
      });

      it('events appended at once from two processes get distinct, gapless numbers', async () => {
        const other = await ctx.peer();
        const appended = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            (i % 2 ? other : ctx.store).appendEvent('run_1', 'text', { i }, T0 + i),
          ),
        );
        expect(appended.map((e) => e.seq).sort((a, b) => a - b)).toEqual(
          Array.from({ length: 20 }, (_, i) => i + 1),
        );
        const listed = await ctx.store.listEvents('run_1', 0, 100);
        expect(listed.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
        // Each event is stored under the number its append returned.
        for (const e of appended) expect(listed[e.seq - 1]).toEqual(e);
      });

      it('the whole log: its end, and events of some types after a position, in log order', async () => {
        expect(await ctx.store.eventLogEnd()).toBe(0);
        expect(await ctx.store.eventsAfter(0, ['plan.pending'], 10)).toEqual({ events: [], end: 0 });
        await ctx.store.appendEvent('run_1', 'text', { n: 1 }, T0);
        await ctx.store.appendEvent('run_2', 'plan.pending', { n: 2 }, T0 + 1);
        await ctx.store.appendEvent('run_1', 'question.pending', { n: 3 }, T0 + 2);
        await ctx.store.appendEvent('run_2', 'text', { n: 4 }, T0 + 3);
        await ctx.store.appendEvent('run_1', 'plan.pending', { n: 5 }, T0 + 4);
        const end = await ctx.store.eventLogEnd();
        const all = await ctx.store.eventsAfter(0, ['text', 'plan.pending', 'question.pending'], 100);
        expect(all.end).toBe(end);
        expect(all.events.map((e) => e.data.n)).toEqual([1, 2, 3, 4, 5]);
        // Positions grow in log order, and the end is the newest event's.
        const rowids = all.events.map((e) => e.rowid);
        expect([...rowids].sort((a, b) => a - b)).toEqual(rowids);
        expect(new Set(rowids).size).toBe(5);
        expect(rowids[4]).toBe(end);
        expect(all.events[1]).toEqual({
          rowid: rowids[1],
          runId: 'run_2',
          seq: 1,
          type: 'plan.pending',
          data: { n: 2 },
          at: T0 + 1,
        });

        const pending = await ctx.store.eventsAfter(0, ['plan.pending', 'question.pending'], 100);
        expect(pending.events.map((e) => e.data.n)).toEqual([2, 3, 5]);
        const after = await ctx.store.eventsAfter(rowids[1]!, ['plan.pending', 'question.pending'], 100);
        expect(after.events.map((e) => e.data.n)).toEqual([3, 5]);
        const limited = await ctx.store.eventsAfter(0, ['plan.pending', 'question.pending'], 2);
        expect(limited.events.map((e) => e.data.n)).toEqual([2, 3]);
        expect(await ctx.store.eventsAfter(0, [], 100)).toEqual({ events: [], end });
        expect(await ctx.store.eventsAfter(end, ['text'], 100)).toEqual({ events: [], end });
        // The end moves with the next event.
        await ctx.store.appendEvent('run_3', 'text', {}, T0 + 5);
        expect(await ctx.store.eventLogEnd()).toBeGreaterThan(end);
      });
    });

    describe('call journal', () => {
      const call = (toolUseId: string, startedAt = T0) => ({
        runId: 'run_1',
        toolUseId,
        tool: 'Bash',
        inputSha256: `sha-${toolUseId}`,
        startedAt,
      });

      beforeEach(async () => {
        await givenRun(ctx.store, 'run_1');
      });

      it('journals a call once; a retried run finds it, finished or not', async () => {
        const first = await ctx.store.startToolCall(call('toolu_1'));
        expect(first).toEqual({
          started: true,
          call: {
            ...call('toolu_1'),
            processGroup: null,
            processStart: null,
            finishedAt: null,
            result: null,
          },
        });
        const again = await ctx.store.startToolCall({
          ...call('toolu_1', T0 + MINUTE),
          inputSha256: 'other',
        });
        expect(again).toEqual({ started: false, call: first.call });

        await ctx.store.finishToolCall('run_1', 'toolu_1', { content: 'ok', isError: false }, T0 + SECOND);
        const done = await ctx.store.startToolCall(call('toolu_1', T0 + 2 * MINUTE));
        expect(done).toEqual({
          started: false,
          call: { ...first.call, finishedAt: T0 + SECOND, result: { content: 'ok', isError: false } },
        });
        // A finished call keeps its first result.
        await ctx.store.finishToolCall('run_1', 'toolu_1', { content: 'late', isError: true }, T0 + MINUTE);
        expect((await ctx.store.startToolCall(call('toolu_1'))).call.result).toEqual({
          content: 'ok',
          isError: false,
        });
      });

      it("records a command's process group while it runs; lists the open ones a dead process left", async () => {
        await ctx.store.startToolCall(call('toolu_b', T0 + 2));
        await ctx.store.startToolCall(call('toolu_a', T0 + 1));
        await ctx.store.startToolCall(call('toolu_c', T0 + 3));
        await ctx.store.startToolCall(call('toolu_noproc', T0));
        await ctx.store.recordToolCallProcess('run_1', 'toolu_b', 4242, 'boot:123');
        await ctx.store.recordToolCallProcess('run_1', 'toolu_a', 4141, null);
        await ctx.store.recordToolCallProcess('run_1', 'toolu_c', 4343, 'boot:125');
        const open = await ctx.store.listOpenCommands(10);
        expect(open.map((c) => [c.toolUseId, c.processGroup, c.processStart])).toEqual([
          ['toolu_a', 4141, null],
          ['toolu_b', 4242, 'boot:123'],
          ['toolu_c', 4343, 'boot:125'],
        ]);
        expect((await ctx.store.listOpenCommands(2)).map((c) => c.toolUseId)).toEqual(['toolu_a', 'toolu_b']);

        // Finishing clears the process; a finished call takes no process any more.
        await ctx.store.finishToolCall('run_1', 'toolu_a', { content: 'exit 1', isError: true }, T0 + MINUTE);
        await ctx.store.recordToolCallProcess('run_1', 'toolu_a', 9999, 'boot:999');
        const finished = (await ctx.store.startToolCall(call('toolu_a'))).call;
        expect(finished).toMatchObject({
          processGroup: null,
          processStart: null,
          finishedAt: T0 + MINUTE,
          result: { content: 'exit 1', isError: true },
        });
        expect((await ctx.store.listOpenCommands(10)).map((c) => c.toolUseId)).toEqual([
          'toolu_b',
          'toolu_c',
        ]);
      });

      it('of two processes journaling the same call at once, one starts it', async () => {
        const other = await ctx.peer();
        const out = await Promise.all([
          ctx.store.startToolCall(call('toolu_1')),
          other.startToolCall(call('toolu_1')),
          ctx.store.startToolCall(call('toolu_1')),
          other.startToolCall(call('toolu_1')),
        ]);
        expect(out.filter((r) => r.started)).toHaveLength(1);
        // The others find the call journaled: they do not run it.
        for (const r of out) expect(r.call).toEqual(out.find((x) => x.started)?.call);
      });
    });
  });
}
