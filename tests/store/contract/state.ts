import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ApiToken, UiSession } from '../../../src/domain/types.js';
import {
  DAY,
  givenPlan,
  givenRun,
  givenSession,
  HOUR,
  jobInput,
  type StoreFactory,
  T0,
  useStore,
  webhookDeliveryInput,
} from './fixtures.js';

// StateStore: API tokens, /ui sessions, the key-value state, the totals for /metrics, the schema version.

const tokenInput = (id: string, over: Partial<ApiToken> = {}): ApiToken => ({
  id,
  name: `token ${id}`,
  identity: 'alice',
  role: 'operator',
  secretHash: createHash('sha256').update(`secret of ${id}`).digest(),
  createdAt: T0,
  revokedAt: null,
  ...over,
});

const hashOf = (cookie: string): Buffer => createHash('sha256').update(cookie).digest();

const uiSessionInput = (
  cookie: string,
  tokenId: string,
  expiresAt: number,
): Omit<UiSession, 'revokedAt'> => ({
  idHash: hashOf(cookie),
  tokenId,
  identity: 'alice',
  createdAt: T0,
  expiresAt,
});

export function stateContract(factory: StoreFactory): void {
  describe('state', () => {
    const ctx = useStore(factory);

    describe('tokens', () => {
      it('stores a token with its secret hash and finds it by id', async () => {
        const t = tokenInput('tok_1', { role: 'admin' });
        await ctx.store.createToken(t);
        const found = await ctx.store.findToken('tok_1');
        expect(found).toEqual(t);
        expect(Buffer.isBuffer(found?.secretHash)).toBe(true);
        expect(await ctx.store.findToken('tok_missing')).toBeNull();
        await expect(ctx.store.createToken(tokenInput('tok_1'))).rejects.toThrow();
      });

      it('counts active tokens, by role too, and knows the roles an identity holds', async () => {
        await ctx.store.createToken(tokenInput('tok_1', { identity: 'alice', role: 'approver' }));
        await ctx.store.createToken(tokenInput('tok_2', { identity: 'alice', role: 'operator' }));
        await ctx.store.createToken(tokenInput('tok_3', { identity: 'alice', role: 'approver' }));
        await ctx.store.createToken(tokenInput('tok_4', { identity: 'bob', role: 'admin' }));
        await ctx.store.createToken(
          tokenInput('tok_5', { identity: 'carol', role: 'viewer', revokedAt: T0 }),
        );
        expect(await ctx.store.countActiveTokens()).toBe(4);
        expect(await ctx.store.countActiveTokens('approver')).toBe(2);
        expect(await ctx.store.countActiveTokens('viewer')).toBe(0);
        expect((await ctx.store.rolesOf('alice')).sort()).toEqual(['approver', 'operator']);
        expect(await ctx.store.rolesOf('carol')).toEqual([]);
        expect(await ctx.store.rolesOf('nobody')).toEqual([]);
      });

      it('revokes a token once, and with it every /ui session signed in with it', async () => {
        await ctx.store.createToken(tokenInput('tok_1', { role: 'approver' }));
        await ctx.store.createToken(tokenInput('tok_2', { role: 'operator' }));
        await ctx.store.createUiSession(uiSessionInput('cookie-1', 'tok_1', T0 + HOUR));
        await ctx.store.createUiSession(uiSessionInput('cookie-2', 'tok_1', T0 + HOUR));
        await ctx.store.createUiSession(uiSessionInput('cookie-3', 'tok_2', T0 + HOUR));
        expect(await ctx.store.revokeToken('tok_1', T0 + 1)).toBe(true);
        expect(await ctx.store.revokeToken('tok_1', T0 + 2)).toBe(false);
        expect(await ctx.store.revokeToken('tok_missing', T0 + 2)).toBe(false);
        expect(await ctx.store.findToken('tok_1')).toMatchObject({ revokedAt: T0 + 1 });
        expect(await ctx.store.rolesOf('alice')).toEqual(['operator']);
        expect(await ctx.store.countActiveTokens()).toBe(1);
        expect(await ctx.store.findUiSession(hashOf('cookie-1'), T0 + 2)).toBeNull();
        expect(await ctx.store.findUiSession(hashOf('cookie-2'), T0 + 2)).toBeNull();
        expect(await ctx.store.findUiSession(hashOf('cookie-3'), T0 + 2)).not.toBeNull();
      });
    });

    describe('/ui sessions', () => {
      it('finds a session by its id hash while it is neither revoked nor expired', async () => {
        await ctx.store.createToken(tokenInput('tok_1'));
        const s = uiSessionInput('cookie-1', 'tok_1', T0 + HOUR);
        await ctx.store.createUiSession(s);
        const found = await ctx.store.findUiSession(hashOf('cookie-1'), T0 + HOUR - 1);
        expect(found).toEqual({ ...s, revokedAt: null });
        expect(Buffer.isBuffer(found?.idHash)).toBe(true);
        // Expired at exactly its expiry.
        expect(await ctx.store.findUiSession(hashOf('cookie-1'), T0 + HOUR)).toBeNull();
        expect(await ctx.store.findUiSession(hashOf('cookie-other'), T0)).toBeNull();
      });

      it('revokes one session once', async () => {
        await ctx.store.createToken(tokenInput('tok_1'));
        await ctx.store.createUiSession(uiSessionInput('cookie-1', 'tok_1', T0 + HOUR));
        await ctx.store.createUiSession(uiSessionInput('cookie-2', 'tok_1', T0 + HOUR));
        expect(await ctx.store.revokeUiSession(hashOf('cookie-1'), T0 + 1)).toBe(true);
        expect(await ctx.store.revokeUiSession(hashOf('cookie-1'), T0 + 2)).toBe(false);
        expect(await ctx.store.revokeUiSession(hashOf('cookie-missing'), T0 + 2)).toBe(false);
        expect(await ctx.store.findUiSession(hashOf('cookie-1'), T0 + 2)).toBeNull();
        expect(await ctx.store.findUiSession(hashOf('cookie-2'), T0 + 2)).not.toBeNull();
      });

      it('revokes every live session of a token, and says how many', async () => {
        await ctx.store.createToken(tokenInput('tok_1'));
        await ctx.store.createToken(tokenInput('tok_2'));
        await ctx.store.createUiSession(uiSessionInput('cookie-1', 'tok_1', T0 + HOUR));
        await ctx.store.createUiSession(uiSessionInput('cookie-2', 'tok_1', T0 + HOUR));
        await ctx.store.createUiSession(uiSessionInput('cookie-3', 'tok_1', T0 + HOUR));
        await ctx.store.createUiSession(uiSessionInput('cookie-4', 'tok_2', T0 + HOUR));
        await ctx.store.revokeUiSession(hashOf('cookie-3'), T0);
        expect(await ctx.store.revokeTokenUiSessions('tok_1', T0 + 1)).toBe(2);
        expect(await ctx.store.revokeTokenUiSessions('tok_1', T0 + 2)).toBe(0);
        expect(await ctx.store.findUiSession(hashOf('cookie-1'), T0 + 2)).toBeNull();
        expect(await ctx.store.findUiSession(hashOf('cookie-4'), T0 + 2)).not.toBeNull();
        // The token itself stays.
        expect(await ctx.store.findToken('tok_1')).toMatchObject({ revokedAt: null });
      });

      it('prunes expired sessions, soonest expiry first, up to a limit; revoked ones stay until they expire', async () => {
        await ctx.store.createToken(tokenInput('tok_1'));
        await ctx.store.createUiSession(uiSessionInput('cookie-1', 'tok_1', T0 + HOUR));
        await ctx.store.createUiSession(uiSessionInput('cookie-2', 'tok_1', T0 + 2 * HOUR));
        await ctx.store.createUiSession(uiSessionInput('cookie-3', 'tok_1', T0 + 3 * HOUR));
        await ctx.store.createUiSession(uiSessionInput('cookie-4', 'tok_1', T0 + 10 * HOUR));
        await ctx.store.revokeUiSession(hashOf('cookie-4'), T0);
        expect(await ctx.store.pruneUiSessions(T0 + HOUR - 1, 10)).toBe(0);
        expect(await ctx.store.pruneUiSessions(T0 + 3 * HOUR, 2)).toBe(2);
        // The two that expired first are gone: not even found at a time they were valid.
        expect(await ctx.store.findUiSession(hashOf('cookie-1'), T0)).toBeNull();
        expect(await ctx.store.findUiSession(hashOf('cookie-2'), T0)).toBeNull();
        expect(await ctx.store.findUiSession(hashOf('cookie-3'), T0)).not.toBeNull();
        expect(await ctx.store.pruneUiSessions(T0 + 3 * HOUR, 10)).toBe(1);
        expect(await ctx.store.pruneUiSessions(T0 + 3 * HOUR, 10)).toBe(0);
        expect(await ctx.store.pruneUiSessions(T0 + 10 * HOUR, 10)).toBe(1);
      });
    });

    describe('key-value state', () => {
      it('reads what was set last, per key', async () => {
        expect(await ctx.store.getState('scheduler.started')).toBeNull();
        await ctx.store.setState('scheduler.started', '1');
        await ctx.store.setState('other', 'x');
        await ctx.store.setState('scheduler.started', '2');
        expect(await ctx.store.getState('scheduler.started')).toBe('2');
        expect(await ctx.store.getState('other')).toBe('x');
        await ctx.store.setState('other', '');
        expect(await ctx.store.getState('other')).toBe('');
      });
    });

    describe('schema and totals', () => {
      it('is migrated to the newest schema this build knows', async () => {
        const v = await ctx.store.schemaVersion();
        expect(v.latest).toBeGreaterThan(0);
        expect(v.current).toBe(v.latest);
      });

      it('totals nothing when empty', async () => {
        expect(await ctx.store.stats()).toEqual({
          runsByStatus: {},
          runsByPhase: {},
          plansByStatus: {},
          deliveriesByOutcome: {},
          slotsByOutcome: {},
          pendingQuestions: 0,
          pendingToolApprovals: 0,
          activeJobs: 0,
          tokens: { input: 0, output: 0, cache_write_5m: 0, cache_write_1h: 0, cache_read: 0 },
          costUsd: 0,
        });
      });

      it('totals runs, plans, deliveries, slots, pending requests, active jobs, tokens and cost', async () => {
        await givenSession(ctx.store, 'ses_1');
        await ctx.store.createJob(jobInput('job_1', 'ses_1'), 50);
        await ctx.store.createJob(jobInput('job_2', 'ses_1'), 50);
        await ctx.store.updateJobSchedule('job_2', 'paused', null);
        await ctx.store.advanceJobs(['job_1'], T0 + 10 * DAY, () => ({
          coalesce: [T0 + 5 * DAY],
          missed: { firstAt: T0 + DAY, lastAt: T0 + 4 * DAY, slots: 4 },
          fire: { slotAt: T0 + 6 * DAY, runId: 'run_slot', dueAt: null },
          pending: null,
          next: null,
          remove: false,
        }));
        await givenRun(ctx.store, 'run_x');
        await ctx.store.transitionRun('run_x', ['queued'], 'running');
        await ctx.store.updateRun('run_x', {
          usage: {
            input_tokens: 100,
            output_tokens: 50,
            cache_write_5m_tokens: 10,
            cache_write_1h_tokens: 5,
            cache_read_tokens: 1000,
          },
          costUsd: 0.5,
        });
        await givenRun(ctx.store, 'run_e', { phase: 'execute' });
        await ctx.store.transitionRun('run_e', ['queued'], 'completed');
        await ctx.store.updateRun('run_e', { usage: { input_tokens: 1, output_tokens: 2 }, costUsd: 0.25 });
        await givenPlan(ctx.store, 'pln_1');
        await givenPlan(ctx.store, 'pln_2', { status: 'approved' });
        const q = {
          runId: 'run_x',
          sessionId: 'ses_1',
          questions: [],
          priorResults: [],
          createdAt: T0,
          expiresAt: T0 + HOUR,
        };
        await ctx.store.createQuestion({ ...q, id: 'q_1', toolUseId: 'toolu_q1' });
        await ctx.store.createQuestion({ ...q, id: 'q_2', toolUseId: 'toolu_q2' });
        await ctx.store.answerQuestion('q_2', { a: 'b' }, 'bob', T0);
        await ctx.store.createToolApproval({
          id: 'ta_1',
          runId: 'run_e',
          sessionId: 'ses_1',
          planId: null,
          toolUseId: 'toolu_ta1',
          tool: 'Bash',
          input: {},
          inputSha256: null,
          priorResults: [],
          createdAt: T0,
          expiresAt: T0 + HOUR,
        });
        await ctx.store.recordWebhookDelivery(webhookDeliveryInput('dlv_1'), '{}');
        await ctx.store.recordWebhookDelivery(
          webhookDeliveryInput('dlv_2', { outcome: 'accepted', processedAt: T0 }),
        );
        await ctx.store.recordWebhookDelivery(
          webhookDeliveryInput('dlv_3', { outcome: 'accepted', processedAt: T0 }),
        );

        expect(await ctx.store.stats()).toEqual({
          runsByStatus: { queued: 3, running: 1, completed: 1 },
          runsByPhase: { plan: 4, execute: 1 },
          plansByStatus: { pending_approval: 1, approved: 1 },
          deliveriesByOutcome: { queued: 1, accepted: 2 },
          slotsByOutcome: { missed: 4, coalesced: 1, fired: 1 },
          pendingQuestions: 1,
          pendingToolApprovals: 1,
          activeJobs: 1,
          tokens: { input: 101, output: 52, cache_write_5m: 10, cache_write_1h: 5, cache_read: 1000 },
          costUsd: 0.75,
        });
      });
    });
  });
}
