import { beforeEach, describe, expect, it } from 'vitest';
import type { Question, ToolApproval } from '../../../src/domain/types.js';
import { givenRun, HOUR, MINUTE, type StoreFactory, T0, useStore } from './fixtures.js';

// ApprovalStore: a run's requests to a person, parked until resolved or expired: questions and tool
// approvals. Each is resolved once; the first resolution wins.

type NewQuestion = Omit<Question, 'status' | 'answers' | 'answeredBy' | 'resolvedAt'>;
type NewToolApproval = Omit<ToolApproval, 'status' | 'message' | 'decidedBy' | 'decidedAt'>;

const questionInput = (id: string, over: Partial<NewQuestion> = {}): NewQuestion => ({
  id,
  runId: 'run_1',
  sessionId: 'ses_1',
  toolUseId: `toolu_${id}`,
  questions: [
    {
      question: 'Which database?',
      header: 'Database',
      multiSelect: false,
      options: [{ label: 'SQLite', description: 'embedded' }, { label: 'PostgreSQL' }],
    },
  ],
  priorResults: [{ type: 'tool_result', tool_use_id: 'toolu_0', content: 'read ok' }],
  createdAt: T0,
  expiresAt: T0 + HOUR,
  ...over,
});

const approvalInput = (id: string, over: Partial<NewToolApproval> = {}): NewToolApproval => ({
  id,
  runId: 'run_1',
  sessionId: 'ses_1',
  planId: 'pln_1',
  toolUseId: `toolu_${id}`,
  tool: 'Bash',
  input: { command: 'npm test', timeout: 120000 },
  inputSha256: `sha-${id}`,
  priorResults: [],
  createdAt: T0,
  expiresAt: T0 + HOUR,
  ...over,
});

export function approvalContract(factory: StoreFactory): void {
  describe('approvals', () => {
    const ctx = useStore(factory);
    beforeEach(async () => {
      await givenRun(ctx.store, 'run_1');
      await givenRun(ctx.store, 'run_2');
    });

    describe('questions', () => {
      it('parks a question pending and finds it by id or by (run, tool use)', async () => {
        const given = questionInput('q_1');
        const q = await ctx.store.createQuestion(given);
        expect(q).toEqual({ ...given, status: 'pending', answers: null, answeredBy: null, resolvedAt: null });
        expect(await ctx.store.getQuestion('q_1')).toEqual(q);
        expect(await ctx.store.findQuestion('run_1', 'toolu_q_1')).toEqual(q);
        expect(await ctx.store.findQuestion('run_2', 'toolu_q_1')).toBeNull();
        expect(await ctx.store.getQuestion('q_missing')).toBeNull();
      });

      it('holds one question per (run, tool use)', async () => {
        await ctx.store.createQuestion(questionInput('q_1'));
        await expect(
          ctx.store.createQuestion(questionInput('q_2', { toolUseId: 'toolu_q_1' })),
        ).rejects.toThrow();
        expect(await ctx.store.getQuestion('q_2')).toBeNull();
        await ctx.store.createQuestion(questionInput('q_3', { runId: 'run_2', toolUseId: 'toolu_q_1' }));
      });

      it('is answered once: the first answer wins and later ones are refused', async () => {
        await ctx.store.createQuestion(questionInput('q_1'));
        const answers = { 'Which database?': 'PostgreSQL', Extras: ['a', 'b'] };
        expect(await ctx.store.answerQuestion('q_1', answers, 'bob', T0 + MINUTE)).toBe(true);
        expect(
          await ctx.store.answerQuestion('q_1', { 'Which database?': 'SQLite' }, 'carol', T0 + 2 * MINUTE),
        ).toBe(false);
        expect(await ctx.store.closeQuestion('q_1', 'timed_out', T0 + HOUR)).toBe(false);
        expect(await ctx.store.getQuestion('q_1')).toMatchObject({
          status: 'answered',
          answers,
          answeredBy: 'bob',
          resolvedAt: T0 + MINUTE,
        });
        expect(await ctx.store.answerQuestion('q_missing', answers, 'bob', T0)).toBe(false);
      });

      it('times out or is canceled only while pending', async () => {
        await ctx.store.createQuestion(questionInput('q_1'));
        await ctx.store.createQuestion(questionInput('q_2'));
        expect(await ctx.store.closeQuestion('q_1', 'timed_out', T0 + HOUR)).toBe(true);
        expect(await ctx.store.closeQuestion('q_2', 'canceled', T0 + MINUTE)).toBe(true);
        expect(await ctx.store.closeQuestion('q_2', 'timed_out', T0 + HOUR)).toBe(false);
        expect(await ctx.store.answerQuestion('q_1', { x: 'y' }, 'bob', T0 + HOUR)).toBe(false);
        expect(await ctx.store.getQuestion('q_1')).toMatchObject({
          status: 'timed_out',
          resolvedAt: T0 + HOUR,
          answers: null,
          answeredBy: null,
        });
        expect(await ctx.store.getQuestion('q_2')).toMatchObject({
          status: 'canceled',
          resolvedAt: T0 + MINUTE,
        });
      });

      it('of answers given at once on two processes, exactly one is taken', async () => {
        await ctx.store.createQuestion(questionInput('q_1'));
        const other = await ctx.peer();
        const out = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? other : ctx.store).answerQuestion('q_1', { q: `answer ${i}` }, `person${i}`, T0 + i),
          ),
        );
        expect(out.filter(Boolean)).toHaveLength(1);
        const winner = out.indexOf(true);
        expect(await ctx.store.getQuestion('q_1')).toMatchObject({
          answers: { q: `answer ${winner}` },
          answeredBy: `person${winner}`,
          resolvedAt: T0 + winner,
        });
      });

      it('lists questions by creation, filtered by status and run, up to a limit', async () => {
        await ctx.store.createQuestion(questionInput('q_b', { createdAt: T0 + MINUTE }));
        await ctx.store.createQuestion(questionInput('q_a', { createdAt: T0 + MINUTE }));
        await ctx.store.createQuestion(questionInput('q_c', { createdAt: T0 }));
        await ctx.store.createQuestion(questionInput('q_d', { runId: 'run_2', createdAt: T0 + 2 * MINUTE }));
        await ctx.store.answerQuestion('q_a', { q: 'a' }, 'bob', T0 + HOUR);
        const ids = async (f: { status?: Question['status']; runId?: string; limit?: number }) =>
          (await ctx.store.listQuestions({ limit: 10, ...f })).map((q) => q.id);
        expect(await ids({})).toEqual(['q_c', 'q_a', 'q_b', 'q_d']);
        expect(await ids({ limit: 2 })).toEqual(['q_c', 'q_a']);
        expect(await ids({ status: 'pending' })).toEqual(['q_c', 'q_b', 'q_d']);
        expect(await ids({ runId: 'run_2' })).toEqual(['q_d']);
        expect(await ids({ status: 'answered', runId: 'run_1' })).toEqual(['q_a']);
        expect(await ids({ status: 'timed_out' })).toEqual([]);
      });

      it('lists pending questions expired at a time, soonest expiry first', async () => {
        await ctx.store.createQuestion(questionInput('q_late', { expiresAt: T0 + 2 * HOUR }));
        await ctx.store.createQuestion(questionInput('q_early', { expiresAt: T0 + HOUR }));
        await ctx.store.createQuestion(questionInput('q_mid', { expiresAt: T0 + HOUR + MINUTE }));
        await ctx.store.createQuestion(questionInput('q_answered', { expiresAt: T0 }));
        await ctx.store.answerQuestion('q_answered', { q: 'a' }, 'bob', T0);
        const expired = async (now: number, limit = 10) =>
          (await ctx.store.listExpiredQuestions(now, limit)).map((q) => q.id);
        expect(await expired(T0 + HOUR - 1)).toEqual([]);
        // Expired at exactly its expiry.
        expect(await expired(T0 + HOUR)).toEqual(['q_early']);
        expect(await expired(T0 + 3 * HOUR)).toEqual(['q_early', 'q_mid', 'q_late']);
        expect(await expired(T0 + 3 * HOUR, 2)).toEqual(['q_early', 'q_mid']);
      });
    });

    describe('tool approvals', () => {
      it('parks a tool call pending, bound to its input, and finds it by id or by (run, tool use)', async () => {
        const given = approvalInput('ta_1');
        const a = await ctx.store.createToolApproval(given);
        expect(a).toEqual({ ...given, status: 'pending', message: null, decidedBy: null, decidedAt: null });
        expect(await ctx.store.getToolApproval('ta_1')).toEqual(a);
        expect(await ctx.store.findToolApproval('run_1', 'toolu_ta_1')).toEqual(a);
        expect(await ctx.store.findToolApproval('run_1', 'toolu_other')).toBeNull();
        expect(await ctx.store.getToolApproval('ta_missing')).toBeNull();
        const unbound = await ctx.store.createToolApproval(
          approvalInput('ta_2', { planId: null, inputSha256: null }),
        );
        expect(unbound).toMatchObject({ planId: null, inputSha256: null });
      });

      it('holds one approval per (run, tool use)', async () => {
        await ctx.store.createToolApproval(approvalInput('ta_1'));
        await expect(
          ctx.store.createToolApproval(approvalInput('ta_2', { toolUseId: 'toolu_ta_1' })),
        ).rejects.toThrow();
        expect(await ctx.store.getToolApproval('ta_2')).toBeNull();
      });

      it('is resolved once, by a person or by time, with its message', async () => {
        for (const id of ['ta_allow', 'ta_deny', 'ta_time', 'ta_cancel']) {
          await ctx.store.createToolApproval(approvalInput(id));
        }
        expect(await ctx.store.resolveToolApproval('ta_allow', 'allowed', 'bob', null, T0 + 1)).toBe(true);
        expect(
          await ctx.store.resolveToolApproval('ta_deny', 'denied', 'carol', 'use the test script', T0 + 2),
        ).toBe(true);
        expect(await ctx.store.resolveToolApproval('ta_time', 'timed_out', null, null, T0 + HOUR)).toBe(true);
        expect(
          await ctx.store.resolveToolApproval('ta_cancel', 'canceled', null, 'run canceled', T0 + 3),
        ).toBe(true);
        expect(await ctx.store.resolveToolApproval('ta_allow', 'denied', 'carol', 'no', T0 + 4)).toBe(false);
        expect(await ctx.store.resolveToolApproval('ta_missing', 'allowed', 'bob', null, T0)).toBe(false);
        expect(await ctx.store.getToolApproval('ta_allow')).toMatchObject({
          status: 'allowed',
          decidedBy: 'bob',
          message: null,
          decidedAt: T0 + 1,
        });
        expect(await ctx.store.getToolApproval('ta_deny')).toMatchObject({
          status: 'denied',
          decidedBy: 'carol',
          message: 'use the test script',
          decidedAt: T0 + 2,
        });
        expect(await ctx.store.getToolApproval('ta_time')).toMatchObject({
          status: 'timed_out',
          decidedBy: null,
        });
        expect(await ctx.store.getToolApproval('ta_cancel')).toMatchObject({
          status: 'canceled',
          message: 'run canceled',
        });
      });

      it('of decisions given at once on two processes, exactly one is taken', async () => {
        await ctx.store.createToolApproval(approvalInput('ta_1'));
        const other = await ctx.peer();
        const out = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? other : ctx.store).resolveToolApproval(
              'ta_1',
              i % 3 ? 'allowed' : 'denied',
              `person${i}`,
              null,
              T0 + i,
            ),
          ),
        );
        expect(out.filter(Boolean)).toHaveLength(1);
        const winner = out.indexOf(true);
        expect(await ctx.store.getToolApproval('ta_1')).toMatchObject({
          status: winner % 3 ? 'allowed' : 'denied',
          decidedBy: `person${winner}`,
        });
      });

      it('lists approvals by creation, filtered by status and run, and the pending ones expired at a time', async () => {
        await ctx.store.createToolApproval(
          approvalInput('ta_b', { createdAt: T0 + 1, expiresAt: T0 + 2 * HOUR }),
        );
        await ctx.store.createToolApproval(approvalInput('ta_a', { createdAt: T0, expiresAt: T0 + HOUR }));
        await ctx.store.createToolApproval(
          approvalInput('ta_c', { runId: 'run_2', createdAt: T0 + 2, expiresAt: T0 + HOUR + 1 }),
        );
        await ctx.store.createToolApproval(approvalInput('ta_done', { createdAt: T0 + 3, expiresAt: T0 }));
        await ctx.store.resolveToolApproval('ta_done', 'allowed', 'bob', null, T0);
        const ids = async (f: { status?: ToolApproval['status']; runId?: string; limit?: number }) =>
          (await ctx.store.listToolApprovals({ limit: 10, ...f })).map((a) => a.id);
        expect(await ids({})).toEqual(['ta_a', 'ta_b', 'ta_c', 'ta_done']);
        expect(await ids({ limit: 1 })).toEqual(['ta_a']);
        expect(await ids({ status: 'pending' })).toEqual(['ta_a', 'ta_b', 'ta_c']);
        expect(await ids({ runId: 'run_2' })).toEqual(['ta_c']);
        expect(await ids({ status: 'allowed' })).toEqual(['ta_done']);

        const expired = async (now: number, limit = 10) =>
          (await ctx.store.listExpiredToolApprovals(now, limit)).map((a) => a.id);
        expect(await expired(T0 + HOUR - 1)).toEqual([]);
        expect(await expired(T0 + HOUR)).toEqual(['ta_a']);
        expect(await expired(T0 + 3 * HOUR)).toEqual(['ta_a', 'ta_c', 'ta_b']);
        expect(await expired(T0 + 3 * HOUR, 2)).toEqual(['ta_a', 'ta_c']);
      });
    });
  });
}
