import { beforeEach, describe, expect, it } from 'vitest';
import type { RunSettings, RunStatus } from '../../../src/domain/types.js';
import { InvalidCursorError } from '../../../src/store/store.js';
import {
  allPages,
  FOREIGN_CURSOR,
  givenPlan,
  givenRun,
  givenSession,
  MINUTE,
  runInput,
  SECOND,
  type StoreFactory,
  T0,
  useStore,
} from './fixtures.js';

// RunStore: runs and their status moves, conversations, the event log (per run, and the whole log in
// order for the notifier), the execute phase's call journal, a subject's active runs.

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
