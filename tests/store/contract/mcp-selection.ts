import { describe, expect, it } from 'vitest';
import {
  givenRun,
  givenSession,
  jobInput,
  type StoreFactory,
  sessionInput,
  T0,
  triggerInput,
  useStore,
} from './fixtures.js';

// The MCP servers a session, a job and a trigger choose (`mcp` of their run options), the run that carries
// them, and an MCP call's approval and journal entry: stored and read back as given, on every backend.

export function mcpSelectionContract(factory: StoreFactory): void {
  describe('MCP selection', () => {
    const ctx = useStore(factory);

    it('keeps the servers of a session, a job, a trigger and a run in their order, and [] as none', async () => {
      const session = await ctx.store.createSession(
        sessionInput('ses_m', { defaults: { mcp: ['tracker', 'db'], execute_mode: 'edits' } }),
      );
      expect(session.defaults).toEqual({ mcp: ['tracker', 'db'], execute_mode: 'edits' });
      expect((await ctx.store.getSession('ses_m'))?.defaults.mcp).toEqual(['tracker', 'db']);

      const job = await ctx.store.createJob(jobInput('job_m', 'ses_m', { options: { mcp: [] } }), 50);
      expect(job.options).toEqual({ mcp: [] });
      expect((await ctx.store.getJob('job_m'))?.options.mcp).toEqual([]);

      await ctx.store.createTrigger(triggerInput('trg_m', { options: { mcp: ['db'] } }));
      expect((await ctx.store.getTrigger('trg_m'))?.options.mcp).toEqual(['db']);

      const run = await givenRun(ctx.store, 'run_m', { sessionId: 'ses_m', overrides: { mcp: ['db'] } });
      expect(run.overrides).toEqual({ mcp: ['db'] });
      expect((await ctx.store.getRun('run_m'))?.overrides.mcp).toEqual(['db']);
    });

    it("keeps an MCP call's approval (its input bound) and its journal entry by the model's tool name", async () => {
      await givenSession(ctx.store, 'ses_1');
      await givenRun(ctx.store, 'run_1');
      const tool = 'mcp__tracker__create_issue';
      const input = { title: 'Flaky test', labels: ['ci'] };
      const approval = await ctx.store.createToolApproval({
        id: 'tap_m',
        runId: 'run_1',
        sessionId: 'ses_1',
        planId: null,
        toolUseId: 'toolu_m',
        tool,
        input,
        inputSha256: 'sha-m',
        priorResults: [],
        createdAt: T0,
        expiresAt: T0 + 60_000,
      });
      expect(approval).toMatchObject({ tool, input, inputSha256: 'sha-m', status: 'pending' });
      expect(await ctx.store.findToolApproval('run_1', 'toolu_m')).toEqual(approval);

      const first = await ctx.store.startToolCall({
        runId: 'run_1',
        toolUseId: 'toolu_m',
        tool,
        inputSha256: 'sha-m',
        startedAt: T0,
      });
      expect(first.started).toBe(true);
      await ctx.store.finishToolCall(
        'run_1',
        'toolu_m',
        { content: 'issue #7 created', isError: false },
        T0 + 1,
      );
      const again = await ctx.store.startToolCall({
        runId: 'run_1',
        toolUseId: 'toolu_m',
        tool,
        inputSha256: 'sha-m',
        startedAt: T0 + 2,
      });
      expect(again.started).toBe(false);
      expect(again.call).toMatchObject({ tool, result: { content: 'issue #7 created', isError: false } });
    });
  });
}
