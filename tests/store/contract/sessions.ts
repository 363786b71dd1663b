import { describe, expect, it } from 'vitest';
import { ConflictError, InvalidCursorError } from '../../../src/store/store.js';
import {
  allPages,
  DAY,
  FOREIGN_CURSOR,
  givenRun,
  givenSession,
  jobInput,
  MINUTE,
  type StoreFactory,
  sessionInput,
  T0,
  useStore,
} from './fixtures.js';

// SessionStore: createSession, getSession, listSessions, closeSession.

export function sessionContract(factory: StoreFactory): void {
  describe('sessions', () => {
    const ctx = useStore(factory);

    it('stores a session open, with its defaults as given, and reads it back', async () => {
      const defaults = {
        model: 'claude-sonnet-4-5',
        thinking: { budget_tokens: 4096 },
        budget_usd: 2.5,
        approvals_required: 2,
        execute_mode: 'edits' as const,
        network: false,
      };
      const created = await ctx.store.createSession({
        ...sessionInput('ses_a', { defaults, owner: 'bob' }),
        workspaceKind: 'git',
        limits: { daily_usd: 3, daily_runs: 4 },
      });
      expect(created).toEqual({
        id: 'ses_a',
        name: 'session ses_a',
        workspace: '/srv/repo',
        workspaceKind: 'git',
        owner: 'bob',
        defaults,
        status: 'open',
        createdAt: T0,
        closedAt: null,
        scopeKey: null,
        limits: { daily_usd: 3, daily_runs: 4 },
      });
      expect(await ctx.store.getSession('ses_a')).toEqual(created);
      expect(await ctx.store.getSession('ses_missing')).toBeNull();
    });

    it('refuses a second session with the same id', async () => {
      await givenSession(ctx.store, 'ses_a');
      await expect(ctx.store.createSession(sessionInput('ses_a'))).rejects.toThrow();
      expect((await ctx.store.listSessions({ limit: 10 })).items).toHaveLength(1);
    });

    it('lists sessions oldest first, ties broken by id, a page at a time', async () => {
      // Created out of order; two share a creation time.
      await givenSession(ctx.store, 'ses_c', { createdAt: T0 + 2 * MINUTE });
      await givenSession(ctx.store, 'ses_b', { createdAt: T0 + MINUTE });
      await givenSession(ctx.store, 'ses_a2', { createdAt: T0 + MINUTE });
      await givenSession(ctx.store, 'ses_z', { createdAt: T0 });
      await givenSession(ctx.store, 'ses_d', { createdAt: T0 + 3 * MINUTE });
      const pages = await allPages((cursor) => ctx.store.listSessions({ limit: 2, cursor }));
      expect(pages.map((p) => p.map((s) => s.id))).toEqual([
        ['ses_z', 'ses_a2'],
        ['ses_b', 'ses_c'],
        ['ses_d'],
      ]);
      const whole = await ctx.store.listSessions({ limit: 5 });
      expect(whole.items).toHaveLength(5);
      expect(whole.nextCursor).toBeNull();
    });

    it('filters the listing by status', async () => {
      await givenSession(ctx.store, 'ses_a');
      await givenSession(ctx.store, 'ses_b', { createdAt: T0 + 1 });
      await ctx.store.closeSession('ses_a', T0 + MINUTE);
      const open = await ctx.store.listSessions({ status: 'open', limit: 10 });
      const closed = await ctx.store.listSessions({ status: 'closed', limit: 10 });
      expect(open.items.map((s) => s.id)).toEqual(['ses_b']);
      expect(closed.items.map((s) => s.id)).toEqual(['ses_a']);
    });

    it('refuses a cursor it did not issue', async () => {
      await givenSession(ctx.store, 'ses_a');
      const refused = ctx.store.listSessions({ limit: 10, cursor: FOREIGN_CURSOR });
      await expect(refused).rejects.toBeInstanceOf(InvalidCursorError);
    });

    it('closes a session and deletes its jobs in one step; other sessions keep theirs', async () => {
      await givenSession(ctx.store, 'ses_a');
      await givenSession(ctx.store, 'ses_b');
      await ctx.store.createJob(jobInput('job_a1', 'ses_a'), 50);
      await ctx.store.createJob(jobInput('job_a2', 'ses_a'), 50);
      await ctx.store.createJob(jobInput('job_b1', 'ses_b'), 50);
      const run = await givenRun(ctx.store, 'run_a', { sessionId: 'ses_a', jobId: 'job_a1' });

      const closed = await ctx.store.closeSession('ses_a', T0 + DAY);
      expect(closed?.deletedJobs).toBe(2);
      expect(closed?.session).toMatchObject({ id: 'ses_a', status: 'closed', closedAt: T0 + DAY });
      expect(await ctx.store.getSession('ses_a')).toEqual(closed?.session);
      expect(await ctx.store.listJobs('ses_a')).toEqual([]);
      expect(await ctx.store.getJob('job_a1')).toBeNull();
      expect((await ctx.store.listJobs('ses_b')).map((j) => j.id)).toEqual(['job_b1']);
      expect(await ctx.store.countJobs()).toBe(1);
      // History stays.
      expect(await ctx.store.getRun(run.id)).toEqual(run);
    });

    it('closing again keeps the first closing time and deletes nothing more; an unknown session is null', async () => {
      await givenSession(ctx.store, 'ses_a');
      await ctx.store.closeSession('ses_a', T0 + MINUTE);
      const again = await ctx.store.closeSession('ses_a', T0 + 2 * MINUTE);
      expect(again).toEqual({
        session: expect.objectContaining({ status: 'closed', closedAt: T0 + MINUTE }),
        deletedJobs: 0,
      });
      expect(await ctx.store.closeSession('ses_missing', T0)).toBeNull();
    });

    it('a closed session takes no new job', async () => {
      await givenSession(ctx.store, 'ses_a');
      await ctx.store.closeSession('ses_a', T0);
      await expect(ctx.store.createJob(jobInput('job_1', 'ses_a'), 50)).rejects.toBeInstanceOf(ConflictError);
      expect(await ctx.store.getJob('job_1')).toBeNull();
    });
  });
}
