import { describe, expect, it } from 'vitest';
import type { WebhookDelivery } from '../../../src/domain/types.js';
import type { Store, TriggerFireInput } from '../../../src/store/store.js';
import {
  givenSession,
  jobInput,
  MINUTE,
  SECOND,
  type StoreFactory,
  T0,
  triggerInput,
  useStore,
  webhookDeliveryInput,
} from './fixtures.js';

// TriggerStore: triggers, a scheduled trigger made whole (createScheduleTrigger), the webhook inbox
// (record, claim, requeue, settle) and firing (one fire per (trigger, delivery), the hourly cap).

const SUBJECT = 'acme/app#12';

const fireInput = (
  triggerId: string,
  deliveryId: string,
  now: number,
  over: { hourlyCap?: number; scopeKey?: string; runId?: string } = {},
): TriggerFireInput => {
  const scopeKey = over.scopeKey ?? SUBJECT;
  return {
    triggerId,
    deliveryId,
    hourlyCap: over.hourlyCap ?? 10,
    now,
    session: {
      name: `pull request ${scopeKey}`,
      workspace: '/srv/clones/acme-app',
      owner: 'github:octocat',
      defaults: { approvals_required: 2 },
      scopeKey,
    },
    run: {
      id: over.runId ?? `run_${deliveryId}`,
      jobId: null,
      slotAt: null,
      source: 'delivery',
      prompt: 'review the pull request',
      requestedBy: 'github:octocat',
      createdAt: now,
      triggerId,
      deliveryId,
      subject: scopeKey,
    },
  };
};

export function triggerContract(factory: StoreFactory): void {
  describe('triggers', () => {
    const ctx = useStore(factory);

    async function givenTrigger(id: string, store: Store = ctx.store): Promise<void> {
      if (!(await store.getTrigger(id))) await store.createTrigger(triggerInput(id));
    }

    /** Records the trigger and the delivery (once each), then fires the trigger for the delivery. */
    async function fire(
      triggerId: string,
      deliveryId: string,
      now: number,
      over: Parameters<typeof fireInput>[3] = {},
      store: Store = ctx.store,
    ) {
      await givenTrigger(triggerId, store);
      if (!(await store.getWebhookDelivery(deliveryId))) {
        await store.recordWebhookDelivery(
          webhookDeliveryInput(deliveryId, { receivedAt: now, outcome: 'queued' }),
          '{}',
        );
      }
      return store.fireTrigger(fireInput(triggerId, deliveryId, now, over));
    }

    describe('definitions', () => {
      it('stores a trigger as given and finds it by id or by its token', async () => {
        const given = triggerInput('trg_1', {
          kind: 'generic',
          events: [],
          filters: { repositories: ['acme/app'], draft: false, labels: ['drydock'] },
          workspace: '/srv/repo',
          options: { model: 'claude-sonnet-4-5', approvals_required: 2, execute_mode: 'edits' },
          hourlyCap: 5,
          tokenId: 'tok_trg1',
          tokenHash: Buffer.from('00ff10', 'hex'),
          enabled: false,
        });
        const t = await ctx.store.createTrigger(given);
        expect(t).toEqual(given);
        expect(Buffer.isBuffer(t.tokenHash)).toBe(true);
        expect(await ctx.store.getTrigger('trg_1')).toEqual(given);
        expect(await ctx.store.findTriggerByToken('tok_trg1')).toEqual(given);
        expect(await ctx.store.findTriggerByToken('tok_missing')).toBeNull();
        expect(await ctx.store.getTrigger('trg_missing')).toBeNull();
      });

      it('holds one trigger per token', async () => {
        await ctx.store.createTrigger(triggerInput('trg_1', { kind: 'generic', tokenId: 'tok_1' }));
        await expect(
          ctx.store.createTrigger(triggerInput('trg_2', { kind: 'generic', tokenId: 'tok_1' })),
        ).rejects.toThrow();
        expect(await ctx.store.getTrigger('trg_2')).toBeNull();
        // Triggers without a token are not limited.
        await ctx.store.createTrigger(triggerInput('trg_3'));
        await ctx.store.createTrigger(triggerInput('trg_4'));
      });

      it('lists triggers by creation, filtered by kind and whether enabled', async () => {
        await ctx.store.createTrigger(triggerInput('trg_b', { createdAt: T0 + 1 }));
        await ctx.store.createTrigger(triggerInput('trg_a', { createdAt: T0 + 1, enabled: false }));
        await ctx.store.createTrigger(triggerInput('trg_c', { createdAt: T0, kind: 'generic' }));
        await ctx.store.createTrigger(triggerInput('trg_d', { createdAt: T0 + 2, kind: 'schedule' }));
        const ids = async (f: Parameters<typeof ctx.store.listTriggers>[0]) =>
          (await ctx.store.listTriggers(f)).map((t) => t.id);
        expect(await ids({})).toEqual(['trg_c', 'trg_a', 'trg_b', 'trg_d']);
        expect(await ids({ kind: 'github' })).toEqual(['trg_a', 'trg_b']);
        expect(await ids({ enabled: false })).toEqual(['trg_a']);
        expect(await ids({ enabled: true })).toEqual(['trg_c', 'trg_b', 'trg_d']);
        expect(await ids({ kind: 'github', enabled: true })).toEqual(['trg_b']);
      });

      it('changes the fields given and keeps the rest', async () => {
        const t = await ctx.store.createTrigger(
          triggerInput('trg_1', { kind: 'generic', tokenId: 'tok_1', tokenHash: Buffer.from('aa', 'hex') }),
        );
        const changed = await ctx.store.updateTrigger('trg_1', {
          name: 'renamed',
          filters: { authors: ['octocat'] },
          hourlyCap: 3,
          enabled: false,
          tokenId: 'tok_2',
          tokenHash: Buffer.from('bb', 'hex'),
          updatedAt: T0 + MINUTE,
        });
        expect(changed).toEqual({
          ...t,
          name: 'renamed',
          filters: { authors: ['octocat'] },
          hourlyCap: 3,
          enabled: false,
          tokenId: 'tok_2',
          tokenHash: Buffer.from('bb', 'hex'),
          updatedAt: T0 + MINUTE,
        });
        expect(await ctx.store.getTrigger('trg_1')).toEqual(changed);
        expect(await ctx.store.findTriggerByToken('tok_1')).toBeNull();
        const cleared = await ctx.store.updateTrigger('trg_1', {
          tokenId: null,
          tokenHash: null,
          workspace: null,
        });
        expect(cleared).toMatchObject({ tokenId: null, tokenHash: null, workspace: null, name: 'renamed' });
        expect(await ctx.store.updateTrigger('trg_missing', { name: 'x' })).toBeNull();
      });

      it("checks a change against the freshest row in the change's transaction; a refusal writes nothing", async () => {
        await ctx.store.createTrigger(triggerInput('trg_1', { options: { execute_mode: 'manual' } }));
        const refusal = new Error('refused');
        await expect(
          ctx.store.updateTrigger('trg_1', { name: 'renamed', options: { execute_mode: 'auto' } }, () => {
            throw refusal;
          }),
        ).rejects.toBe(refusal);
        expect(await ctx.store.getTrigger('trg_1')).toMatchObject({
          name: 'trigger trg_1',
          options: { execute_mode: 'manual' },
        });

        // Two changes at once: each check sees the row as the other left it, never a copy both read first.
        const seen: string[] = [];
        const change = (mode: 'edits' | 'auto') =>
          ctx.store.updateTrigger('trg_1', { options: { execute_mode: mode } }, (current) => {
            seen.push(`${current.options.execute_mode}->${mode}`);
          });
        await Promise.all([change('edits'), change('auto')]);
        expect(seen).toHaveLength(2);
        const [first, second] = seen.map((s) => s.split('->'));
        expect(first![0]).toBe('manual');
        expect(second![0]).toBe(first![1]);
        expect((await ctx.store.getTrigger('trg_1'))?.options).toEqual({ execute_mode: second![1] });
      });

      it('deletes a trigger', async () => {
        await ctx.store.createTrigger(triggerInput('trg_1'));
        expect(await ctx.store.deleteTrigger('trg_1')).toBe(true);
        expect(await ctx.store.deleteTrigger('trg_1')).toBe(false);
        expect(await ctx.store.getTrigger('trg_1')).toBeNull();
      });
    });

    describe('createScheduleTrigger', () => {
      const scheduleInput = (over: { enabled?: boolean; jobId?: string; scopeKey?: string } = {}) => ({
        trigger: triggerInput('trg_s', {
          kind: 'schedule',
          events: [],
          workspace: '/srv/repo',
          enabled: over.enabled ?? true,
          createdAt: T0 + MINUTE,
        }),
        session: {
          id: 'ses_s',
          name: 'nightly review',
          workspace: '/srv/repo',
          workspaceKind: 'plain' as const,
          owner: 'admin',
          defaults: { budget_usd: 1 },
          scopeKey: over.scopeKey ?? 'schedule:trg_s',
        },
        job: jobInput(over.jobId ?? 'job_s', 'ses_s', {
          triggerId: 'trg_s',
          expiresAt: null,
          createdBy: 'admin',
        }),
      });

      it('makes the trigger, its session and its job together', async () => {
        const input = scheduleInput();
        const t = await ctx.store.createScheduleTrigger(input);
        expect(t).toEqual(input.trigger);
        expect(await ctx.store.getSession('ses_s')).toEqual({
          id: 'ses_s',
          name: 'nightly review',
          workspace: '/srv/repo',
          workspaceKind: 'plain',
          owner: 'admin',
          defaults: { budget_usd: 1 },
          status: 'open',
          createdAt: T0 + MINUTE,
          closedAt: null,
          scopeKey: 'schedule:trg_s',
          limits: {},
        });
        expect(await ctx.store.jobOfTrigger('trg_s')).toMatchObject({
          id: 'job_s',
          sessionId: 'ses_s',
          triggerId: 'trg_s',
          status: 'active',
          expiresAt: null,
        });
      });

      it("a disabled schedule's job starts paused", async () => {
        await ctx.store.createScheduleTrigger(scheduleInput({ enabled: false }));
        expect(await ctx.store.getJob('job_s')).toMatchObject({ status: 'paused' });
      });

      it('makes nothing when its job cannot be made', async () => {
        await givenSession(ctx.store, 'ses_1');
        await ctx.store.createJob(jobInput('job_taken', 'ses_1'), 50);
        await expect(
          ctx.store.createScheduleTrigger(scheduleInput({ jobId: 'job_taken' })),
        ).rejects.toThrow();
        expect(await ctx.store.getTrigger('trg_s')).toBeNull();
        expect(await ctx.store.getSession('ses_s')).toBeNull();
        expect(await ctx.store.jobOfTrigger('trg_s')).toBeNull();
        expect(await ctx.store.getJob('job_taken')).toMatchObject({ sessionId: 'ses_1', triggerId: null });
      });

      it('makes nothing when its session cannot be made', async () => {
        const taken = await givenSession(ctx.store, 'ses_s');
        await expect(ctx.store.createScheduleTrigger(scheduleInput())).rejects.toThrow();
        expect(await ctx.store.getTrigger('trg_s')).toBeNull();
        expect(await ctx.store.getJob('job_s')).toBeNull();
        expect(await ctx.store.getSession('ses_s')).toEqual(taken);
      });
    });

    describe('the inbox', () => {
      it('records a delivery once per (source, key): a redelivery is the duplicate of the first', async () => {
        const first = webhookDeliveryInput('dlv_1', { key: 'guid-1' });
        expect(await ctx.store.recordWebhookDelivery(first, '{"n":1}')).toEqual({
          delivery: first,
          duplicate: false,
        });
        const again = await ctx.store.recordWebhookDelivery(
          webhookDeliveryInput('dlv_2', { key: 'guid-1' }),
          '{"n":2}',
        );
        expect(again).toEqual({ delivery: first, duplicate: true });
        expect(await ctx.store.getWebhookDelivery('dlv_2')).toBeNull();
        // The first body stays.
        expect(await ctx.store.claimWebhookDelivery('dlv_1', T0 + MINUTE, T0)).toBe('{"n":1}');
        // The same key from another source is another delivery.
        const fired = webhookDeliveryInput('dlv_3', { key: 'guid-1', source: 'fire', event: 'fire' });
        expect(await ctx.store.recordWebhookDelivery(fired)).toEqual({ delivery: fired, duplicate: false });
        expect(await ctx.store.getWebhookDelivery('dlv_1')).toEqual(first);
      });

      it('records a batch in order, a key repeated inside it a duplicate', async () => {
        const out = await ctx.store.recordWebhookDeliveries([
          { delivery: webhookDeliveryInput('dlv_a', { key: 'a' }), payload: '{"a":1}' },
          { delivery: webhookDeliveryInput('dlv_b', { key: 'b' }), payload: undefined },
          { delivery: webhookDeliveryInput('dlv_a2', { key: 'a' }), payload: '{"a":2}' },
        ]);
        expect(out.map((r) => [r.delivery.id, r.duplicate])).toEqual([
          ['dlv_a', false],
          ['dlv_b', false],
          ['dlv_a', true],
        ]);
        expect(await ctx.store.claimWebhookDelivery('dlv_a', T0 + MINUTE, T0)).toBe('{"a":1}');
        expect(await ctx.store.recordWebhookDeliveries([])).toEqual([]);
      });

      it('records a batch larger than one statement takes, a key repeated across its parts a duplicate', async () => {
        // 150 deliveries: the PostgreSQL store writes them in several statements. Item 100 repeats item 0's key
        // (another statement), item 71 repeats item 70's (the same one).
        const keyOf = (i: number) => (i === 100 ? 'k0' : i === 71 ? 'k70' : `k${i}`);
        const items = Array.from({ length: 150 }, (_, i) => ({
          delivery: webhookDeliveryInput(`dlv_${i}`, { key: keyOf(i) }),
          payload: `{"i":${i}}`,
        }));
        const out = await ctx.store.recordWebhookDeliveries(items);
        expect(out.map((r) => [r.delivery.id, r.duplicate])).toEqual(
          items.map((_, i) =>
            i === 100 ? ['dlv_0', true] : i === 71 ? ['dlv_70', true] : [`dlv_${i}`, false],
          ),
        );
        expect(await ctx.store.getWebhookDelivery('dlv_100')).toBeNull();
        expect(await ctx.store.claimWebhookDelivery('dlv_0', T0 + MINUTE, T0)).toBe('{"i":0}');
        expect(await ctx.store.claimWebhookDelivery('dlv_149', T0 + MINUTE, T0)).toBe('{"i":149}');
        expect(await ctx.store.queuedWebhookDeliveries(200, T0)).toHaveLength(146);
      });

      it('a queued delivery takes a new body, or drops it', async () => {
        await ctx.store.recordWebhookDelivery(webhookDeliveryInput('dlv_1'), '{"v":1}');
        await ctx.store.recordWebhookDelivery(webhookDeliveryInput('dlv_2'), '{"v":1}');
        await ctx.store.updateWebhookDelivery('dlv_1', { payload: '{"v":2}' });
        await ctx.store.updateWebhookDelivery('dlv_2', { payload: null });
        expect(await ctx.store.claimWebhookDelivery('dlv_1', T0 + MINUTE, T0)).toBe('{"v":2}');
        const dropped = await ctx.store.claimWebhookDelivery('dlv_2', T0 + MINUTE, T0);
        expect(dropped).not.toBeNull();
        expect(dropped).not.toBe('{"v":1}');
      });

      it('settles a delivery with the fields given, and keeps the rest', async () => {
        const d = webhookDeliveryInput('dlv_1');
        await ctx.store.recordWebhookDelivery(d, '{}');
        await ctx.store.updateWebhookDelivery('dlv_1', {
          outcome: 'accepted',
          detail: 'fired 1 trigger',
          runIds: ['run_1', 'run_2'],
          triggerId: 'trg_1',
          subject: SUBJECT,
          payload: null,
          processedAt: T0 + SECOND,
        });
        const settled: WebhookDelivery = {
          ...d,
          outcome: 'accepted',
          detail: 'fired 1 trigger',
          runIds: ['run_1', 'run_2'],
          triggerId: 'trg_1',
          subject: SUBJECT,
          processedAt: T0 + SECOND,
        };
        expect(await ctx.store.getWebhookDelivery('dlv_1')).toEqual(settled);
        await ctx.store.updateWebhookDelivery('dlv_1', { detail: null });
        expect(await ctx.store.getWebhookDelivery('dlv_1')).toEqual({ ...settled, detail: null });
        await ctx.store.updateWebhookDelivery('dlv_1', {});
        expect(await ctx.store.getWebhookDelivery('dlv_1')).toEqual({ ...settled, detail: null });
        expect(await ctx.store.getWebhookDelivery('dlv_missing')).toBeNull();
      });

      it('serves queued deliveries in arrival order, leaving out those someone holds', async () => {
        for (const id of ['dlv_3', 'dlv_1', 'dlv_2', 'dlv_4']) {
          await ctx.store.recordWebhookDelivery(webhookDeliveryInput(id), `{"id":"${id}"}`);
        }
        await ctx.store.recordWebhookDelivery(
          webhookDeliveryInput('dlv_done', { outcome: 'filtered', processedAt: T0 }),
        );
        const queued = async (limit: number, now: number) =>
          (await ctx.store.queuedWebhookDeliveries(limit, now)).map((d) => d.id);
        expect(await queued(10, T0)).toEqual(['dlv_3', 'dlv_1', 'dlv_2', 'dlv_4']);
        expect(await queued(2, T0)).toEqual(['dlv_3', 'dlv_1']);
        expect(await ctx.store.claimWebhookDelivery('dlv_1', T0 + MINUTE, T0)).toBe('{"id":"dlv_1"}');
        expect(await queued(10, T0)).toEqual(['dlv_3', 'dlv_2', 'dlv_4']);
        expect(await queued(10, T0 + MINUTE - 1)).toEqual(['dlv_3', 'dlv_2', 'dlv_4']);
        // A claim runs out at its time: the delivery is served again.
        expect(await queued(10, T0 + MINUTE)).toEqual(['dlv_3', 'dlv_1', 'dlv_2', 'dlv_4']);
      });

      it('a claim is taken once while it holds, again once it ran out, never on a settled delivery', async () => {
        await ctx.store.recordWebhookDelivery(webhookDeliveryInput('dlv_1'), '{"n":1}');
        await ctx.store.recordWebhookDelivery(webhookDeliveryInput('dlv_nobody'));
        expect(await ctx.store.claimWebhookDelivery('dlv_1', T0 + MINUTE, T0)).toBe('{"n":1}');
        expect(await ctx.store.claimWebhookDelivery('dlv_1', T0 + 2 * MINUTE, T0 + SECOND)).toBeNull();
        expect(await ctx.store.claimWebhookDelivery('dlv_1', T0 + 2 * MINUTE, T0 + MINUTE)).toBe('{"n":1}');
        await ctx.store.updateWebhookDelivery('dlv_1', {
          outcome: 'accepted',
          processedAt: T0 + MINUTE,
          payload: null,
        });
        expect(await ctx.store.claimWebhookDelivery('dlv_1', T0 + 4 * MINUTE, T0 + 3 * MINUTE)).toBeNull();
        expect(await ctx.store.claimWebhookDelivery('dlv_missing', T0 + MINUTE, T0)).toBeNull();
        // A queued delivery recorded without a body is still claimed (its body is empty).
        expect(await ctx.store.claimWebhookDelivery('dlv_nobody', T0 + MINUTE, T0)).not.toBeNull();
      });

      it('of claims made at once on two processes, one is taken', async () => {
        await ctx.store.recordWebhookDelivery(webhookDeliveryInput('dlv_1'), '{"n":1}');
        const other = await ctx.peer();
        const out = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? other : ctx.store).claimWebhookDelivery('dlv_1', T0 + MINUTE + i, T0),
          ),
        );
        expect(out.filter((p) => p !== null)).toEqual(['{"n":1}']);
      });

      it('knows when the first claim still holding runs out', async () => {
        expect(await ctx.store.nextWebhookClaimLapse(T0)).toBeNull();
        for (const id of ['dlv_1', 'dlv_2', 'dlv_3', 'dlv_4'])
          await ctx.store.recordWebhookDelivery(webhookDeliveryInput(id), '{}');
        await ctx.store.claimWebhookDelivery('dlv_1', T0 + 5 * MINUTE, T0);
        await ctx.store.claimWebhookDelivery('dlv_2', T0 + 3 * MINUTE, T0);
        await ctx.store.claimWebhookDelivery('dlv_3', T0 + MINUTE, T0);
        await ctx.store.updateWebhookDelivery('dlv_3', { outcome: 'accepted', processedAt: T0 });
        expect(await ctx.store.nextWebhookClaimLapse(T0)).toBe(T0 + 3 * MINUTE);
        expect(await ctx.store.nextWebhookClaimLapse(T0 + 3 * MINUTE)).toBe(T0 + 5 * MINUTE);
        expect(await ctx.store.nextWebhookClaimLapse(T0 + 5 * MINUTE)).toBeNull();
      });

      it('queues a failed or unsettled delivery again with a new body, once', async () => {
        await ctx.store.recordWebhookDelivery(webhookDeliveryInput('dlv_failed'), '{"v":1}');
        await ctx.store.claimWebhookDelivery('dlv_failed', T0 + MINUTE, T0);
        await ctx.store.updateWebhookDelivery('dlv_failed', {
          outcome: 'failed',
          detail: 'boom',
          processedAt: T0 + 1,
        });
        await ctx.store.recordWebhookDelivery(webhookDeliveryInput('dlv_unsettled', { outcome: 'accepted' }));
        await ctx.store.recordWebhookDelivery(
          webhookDeliveryInput('dlv_settled', { outcome: 'accepted', processedAt: T0 }),
        );
        await ctx.store.recordWebhookDelivery(
          webhookDeliveryInput('dlv_filtered', { outcome: 'filtered', processedAt: T0 }),
        );
        await ctx.store.recordWebhookDelivery(webhookDeliveryInput('dlv_queued'), '{"v":1}');

        expect(await ctx.store.requeueWebhookDelivery('dlv_failed', '{"v":2}')).toBe(true);
        expect(await ctx.store.getWebhookDelivery('dlv_failed')).toMatchObject({
          outcome: 'queued',
          detail: null,
          processedAt: null,
        });
        // Its earlier claim is gone: it is served and claimed at once.
        expect((await ctx.store.queuedWebhookDeliveries(10, T0)).map((d) => d.id)).toContain('dlv_failed');
        expect(await ctx.store.claimWebhookDelivery('dlv_failed', T0 + MINUTE, T0)).toBe('{"v":2}');
        expect(await ctx.store.requeueWebhookDelivery('dlv_failed', '{"v":3}')).toBe(false);

        expect(await ctx.store.requeueWebhookDelivery('dlv_unsettled', '{"v":2}')).toBe(true);
        expect(await ctx.store.requeueWebhookDelivery('dlv_settled', '{"v":2}')).toBe(false);
        expect(await ctx.store.requeueWebhookDelivery('dlv_filtered', '{"v":2}')).toBe(false);
        expect(await ctx.store.requeueWebhookDelivery('dlv_queued', '{"v":2}')).toBe(false);
        expect(await ctx.store.requeueWebhookDelivery('dlv_missing', '{"v":2}')).toBe(false);
        expect(await ctx.store.getWebhookDelivery('dlv_settled')).toMatchObject({ outcome: 'accepted' });
      });

      it('of two processes requeueing one failed delivery, one does', async () => {
        await ctx.store.recordWebhookDelivery(
          webhookDeliveryInput('dlv_1', { outcome: 'failed', processedAt: T0 }),
        );
        const other = await ctx.peer();
        const out = await Promise.all([
          ctx.store.requeueWebhookDelivery('dlv_1', '{"by":"a"}'),
          other.requeueWebhookDelivery('dlv_1', '{"by":"b"}'),
        ]);
        expect(out.filter(Boolean)).toHaveLength(1);
      });

      it('lists deliveries newest first, by outcome or trigger, a page before a given one', async () => {
        await ctx.store.createTrigger(triggerInput('trg_1'));
        await ctx.store.recordWebhookDelivery(
          webhookDeliveryInput('dlv_1', { outcome: 'accepted', processedAt: T0 }),
        );
        await ctx.store.recordWebhookDelivery(
          webhookDeliveryInput('dlv_2', { outcome: 'filtered', processedAt: T0 }),
        );
        await ctx.store.recordWebhookDelivery(
          webhookDeliveryInput('dlv_3', {
            source: 'fire',
            triggerId: 'trg_1',
            outcome: 'accepted',
            processedAt: T0,
          }),
        );
        await ctx.store.recordWebhookDelivery(webhookDeliveryInput('dlv_4'));
        await ctx.store.recordTriggerFire('trg_1', 'dlv_2', 'filtered', T0);
        const ids = async (
          f: Omit<Parameters<typeof ctx.store.listWebhookDeliveries>[0], 'limit'>,
          limit = 10,
        ) => (await ctx.store.listWebhookDeliveries({ ...f, limit })).map((d) => d.id);
        expect(await ids({})).toEqual(['dlv_4', 'dlv_3', 'dlv_2', 'dlv_1']);
        expect(await ids({}, 2)).toEqual(['dlv_4', 'dlv_3']);
        expect(await ids({ before: 'dlv_3' }, 2)).toEqual(['dlv_2', 'dlv_1']);
        expect(await ids({ before: 'dlv_1' })).toEqual([]);
        expect(await ids({ before: 'dlv_missing' })).toEqual([]);
        expect(await ids({ outcome: 'accepted' })).toEqual(['dlv_3', 'dlv_1']);
        // A trigger's deliveries: those it was fired by, and those it looked at.
        expect(await ids({ triggerId: 'trg_1' })).toEqual(['dlv_3', 'dlv_2']);
        expect(await ids({ triggerId: 'trg_1', outcome: 'filtered' })).toEqual(['dlv_2']);
        const [listed] = await ctx.store.listWebhookDeliveries({ limit: 1 });
        expect(listed).toEqual(webhookDeliveryInput('dlv_4'));
      });
    });

    describe('fireTrigger', () => {
      it('finds or makes the subject session and starts the run, in one step', async () => {
        await ctx.store.createTrigger(triggerInput('trg_1'));
        const out = await fire('trg_1', 'dlv_1', T0);
        expect(out.outcome).toBe('accepted');
        expect(out.run).toMatchObject({
          id: 'run_dlv_1',
          source: 'delivery',
          status: 'queued',
          triggerId: 'trg_1',
          deliveryId: 'dlv_1',
          subject: SUBJECT,
          createdAt: T0,
        });
        expect(await ctx.store.getRun('run_dlv_1')).toEqual(out.run);
        const session = await ctx.store.getSession(out.run!.sessionId);
        expect(session).toMatchObject({
          name: `pull request ${SUBJECT}`,
          workspace: '/srv/clones/acme-app',
          owner: 'github:octocat',
          defaults: { approvals_required: 2 },
          status: 'open',
          scopeKey: SUBJECT,
          createdAt: T0,
        });
        // The next delivery on the same subject runs in the same session.
        const next = await fire('trg_1', 'dlv_2', T0 + MINUTE);
        expect(next.run?.sessionId).toBe(out.run?.sessionId);
        const other = await fire('trg_1', 'dlv_3', T0 + MINUTE, { scopeKey: 'acme/app#13' });
        expect(other.run?.sessionId).not.toBe(out.run?.sessionId);
      });

      it('opens the closed session of a subject again', async () => {
        const first = await fire('trg_1', 'dlv_1', T0);
        await ctx.store.closeSession(first.run!.sessionId, T0 + MINUTE);
        const second = await fire('trg_1', 'dlv_2', T0 + 2 * MINUTE);
        expect(second.run?.sessionId).toBe(first.run?.sessionId);
        expect(await ctx.store.getSession(first.run!.sessionId)).toMatchObject({
          status: 'open',
          closedAt: null,
        });
      });

      it('fires a trigger once per delivery: processing it again answers the first outcome', async () => {
        const first = await fire('trg_1', 'dlv_1', T0);
        const again = await ctx.store.fireTrigger(
          fireInput('trg_1', 'dlv_1', T0 + MINUTE, { runId: 'run_again' }),
        );
        expect(again).toEqual({ outcome: 'accepted', run: first.run });
        expect(await ctx.store.getRun('run_again')).toBeNull();
        // Another trigger may fire for the same delivery.
        const byOther = await fire('trg_2', 'dlv_1', T0, { runId: 'run_trg2' });
        expect(byOther.run?.id).toBe('run_trg2');
      });

      it('caps a trigger at its hourly count of runs, counting accepted fires for about an hour', async () => {
        const cap = { hourlyCap: 2 };
        expect((await fire('trg_1', 'dlv_1', T0, cap)).outcome).toBe('accepted');
        expect((await fire('trg_1', 'dlv_2', T0 + 30 * SECOND, cap)).outcome).toBe('accepted');
        const capped = await fire('trg_1', 'dlv_3', T0 + 59 * MINUTE + 59 * SECOND, cap);
        expect(capped).toEqual({ outcome: 'capped', run: null });
        expect(await ctx.store.getRun('run_dlv_3')).toBeNull();
        // Another trigger has its own count.
        expect((await fire('trg_2', 'dlv_3', T0 + 59 * MINUTE, cap)).outcome).toBe('accepted');
        // Both earlier fires have left the window.
        expect((await fire('trg_1', 'dlv_4', T0 + 62 * MINUTE, cap)).outcome).toBe('accepted');
        // A capped delivery stays capped for that trigger.
        expect(await ctx.store.fireTrigger(fireInput('trg_1', 'dlv_3', T0 + 62 * MINUTE, cap))).toEqual({
          outcome: 'capped',
          run: null,
        });
      });

      it('capped and filtered fires do not count against the cap', async () => {
        const cap = { hourlyCap: 1 };
        await givenTrigger('trg_1');
        await ctx.store.recordWebhookDelivery(webhookDeliveryInput('dlv_f'), '{}');
        await ctx.store.recordTriggerFire('trg_1', 'dlv_f', 'filtered', T0);
        expect((await fire('trg_1', 'dlv_1', T0, cap)).outcome).toBe('accepted');
        expect((await fire('trg_1', 'dlv_2', T0 + 59 * MINUTE, cap)).outcome).toBe('capped');
        expect((await fire('trg_1', 'dlv_3', T0 + 62 * MINUTE, cap)).outcome).toBe('accepted');
      });

      it('fires racing on two processes stay within the cap, and make one session for the subject', async () => {
        await ctx.store.createTrigger(triggerInput('trg_1', { hourlyCap: 3 }));
        const other = await ctx.peer();
        for (let i = 0; i < 10; i++)
          await ctx.store.recordWebhookDelivery(webhookDeliveryInput(`dlv_${i}`), '{}');
        const done = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? other : ctx.store).fireTrigger(fireInput('trg_1', `dlv_${i}`, T0 + i, { hourlyCap: 3 })),
          ),
        );
        expect(done.filter((r) => r.outcome === 'accepted')).toHaveLength(3);
        expect(done.filter((r) => r.outcome === 'capped')).toHaveLength(7);
        const sessions = new Set(done.flatMap((r) => (r.run ? [r.run.sessionId] : [])));
        expect(sessions.size).toBe(1);
        const all = (await ctx.store.listSessions({ limit: 100 })).items;
        expect(all.filter((s) => s.scopeKey === SUBJECT)).toHaveLength(1);
      });

      it('one delivery fired at once on two processes starts one run', async () => {
        await givenTrigger('trg_1');
        await ctx.store.recordWebhookDelivery(webhookDeliveryInput('dlv_1'), '{}');
        const other = await ctx.peer();
        const out = await Promise.all([
          ctx.store.fireTrigger(fireInput('trg_1', 'dlv_1', T0, { runId: 'run_a' })),
          other.fireTrigger(fireInput('trg_1', 'dlv_1', T0, { runId: 'run_b' })),
        ]);
        const runs = [await ctx.store.getRun('run_a'), await ctx.store.getRun('run_b')].filter(
          (r) => r !== null,
        );
        expect(runs).toHaveLength(1);
        // Both answer the one fire.
        for (const r of out) expect(r).toEqual({ outcome: 'accepted', run: runs[0] });
      });

      it("lists a trigger's fires newest first, each with its delivery", async () => {
        await fire('trg_1', 'dlv_1', T0);
        await ctx.store.recordWebhookDelivery(webhookDeliveryInput('dlv_2'), '{}');
        await ctx.store.recordTriggerFire('trg_1', 'dlv_2', 'filtered', T0 + MINUTE);
        await fire('trg_1', 'dlv_3', T0 + 2 * MINUTE, { hourlyCap: 1 });
        await fire('trg_2', 'dlv_4', T0 + 3 * MINUTE);
        const fires = await ctx.store.listTriggerFires('trg_1', 10);
        expect(fires.map((f) => [f.delivery.id, f.outcome, f.runId, f.at])).toEqual([
          ['dlv_3', 'capped', null, T0 + 2 * MINUTE],
          ['dlv_2', 'filtered', null, T0 + MINUTE],
          ['dlv_1', 'accepted', 'run_dlv_1', T0],
        ]);
        expect(fires[2]?.delivery).toEqual(await ctx.store.getWebhookDelivery('dlv_1'));
        expect((await ctx.store.listTriggerFires('trg_1', 1)).map((f) => f.delivery.id)).toEqual(['dlv_3']);
        expect(await ctx.store.listTriggerFires('trg_missing', 10)).toEqual([]);
      });

      it('a filtered mark is written once', async () => {
        await givenTrigger('trg_1');
        await ctx.store.recordWebhookDelivery(webhookDeliveryInput('dlv_1'), '{}');
        await ctx.store.recordTriggerFire('trg_1', 'dlv_1', 'filtered', T0);
        await ctx.store.recordTriggerFire('trg_1', 'dlv_1', 'filtered', T0 + MINUTE);
        const fires = await ctx.store.listTriggerFires('trg_1', 10);
        expect(fires.map((f) => [f.outcome, f.at])).toEqual([['filtered', T0]]);
      });

      it('deleting a trigger forgets its count of fires', async () => {
        await ctx.store.createTrigger(triggerInput('trg_1', { hourlyCap: 1 }));
        expect((await fire('trg_1', 'dlv_1', T0, { hourlyCap: 1 })).outcome).toBe('accepted');
        await ctx.store.deleteTrigger('trg_1');
        await ctx.store.createTrigger(triggerInput('trg_1', { hourlyCap: 1 }));
        expect((await fire('trg_1', 'dlv_2', T0 + MINUTE, { hourlyCap: 1 })).outcome).toBe('accepted');
      });
    });
  });
}
