import { describe, expect, it, vi } from 'vitest';
import {
  type Decision,
  type DecisionKind,
  type Plan,
  type RunEvent,
  TREE_REFUSED,
} from '../../../src/domain/types.js';
import {
  ConflictError,
  type DecisionEffect,
  type DecisionReceipt,
  InvalidCursorError,
  type NewRun,
  NotFoundError,
} from '../../../src/store/store.js';
import {
  allPages,
  DAY,
  FOREIGN_CURSOR,
  fulfilled,
  givenPlan,
  givenRun,
  HOUR,
  MINUTE,
  planInput,
  type StoreFactory,
  T0,
  useStore,
} from './fixtures.js';

// PlanStore: plans, the queue, decisions (decidePlan: the pure rule is called inside the store's
// transaction with the freshest plan and its decisions), status moves, expiry, supersession.

const decisionOf = (plan: Plan, id: string, kind: DecisionKind, identity: string, at: number): Decision => ({
  id,
  planId: plan.id,
  kind,
  identity,
  comment: kind === 'approve' ? null : `${kind} because`,
  sha256: plan.sha256,
  createdAt: at,
});

const executeRun = (plan: Plan, id: string, by: string, at: number): NewRun => ({
  id,
  sessionId: plan.sessionId,
  jobId: plan.jobId,
  slotAt: null,
  source: plan.source,
  prompt: 'carry out the approved plan',
  requestedBy: by,
  createdAt: at,
  phase: 'execute',
  executesPlanId: plan.id,
});

/** The quorum rule: refuses a decided plan; the approval that completes the quorum starts the execution. */
const approve =
  (id: string, identity: string, at: number) =>
  (plan: Plan, decisions: Decision[]): DecisionEffect => {
    if (plan.status !== 'pending_approval') throw new ConflictError(`plan ${plan.id} is ${plan.status}`);
    const decision = decisionOf(plan, id, 'approve', identity, at);
    const approvers = new Set(decisions.filter((d) => d.kind === 'approve').map((d) => d.identity));
    approvers.add(identity);
    if (approvers.size < plan.approvalsRequired) return { decision };
    return { decision, planStatus: 'approved', run: executeRun(plan, `run_exec_${id}`, identity, at) };
  };

export function planContract(factory: StoreFactory): void {
  describe('plans', () => {
    const ctx = useStore(factory);

    describe('creation and reads', () => {
      it('stores a plan as proposed, no approvals and no delivery yet', async () => {
        const run = await givenRun(ctx.store, 'run_1');
        const given = planInput('pln_1', run, {
          workspaceCommit: 'd'.repeat(40),
          round: 2,
          previousPlanId: 'pln_0',
          jobId: 'job_1',
          triggerId: 'trg_1',
          source: 'schedule',
          approvalsRequired: 2,
          allowSelfApproval: true,
          executeMode: 'auto',
          network: ['*.github.com', 'registry.npmjs.org'],
          subject: 'acme/app#3',
          footprint: {
            files: ['README.md', 'src/a b.ts'],
            dirs: ['.', 'src/lib'],
            globs: [{ dir: 'docs', pattern: '**/*.md' }],
          },
          uncommitted: { count: 25, paths: ['notes.txt', 'src/a b.ts'] },
        });
        const plan = await ctx.store.createPlan(given);
        expect(plan).toEqual({ ...given, executionBase: null, approvals: 0, delivery: null });
        expect(await ctx.store.getPlan('pln_1')).toEqual(plan);
        expect(await ctx.store.findPlan('run_1', 'toolu_pln_1')).toEqual(plan);
        expect(await ctx.store.findPlan('run_1', 'toolu_other')).toBeNull();
        expect(await ctx.store.getPlan('pln_missing')).toBeNull();
      });

      it('a plan without a footprint reads as null; an approval records the head it executes from', async () => {
        const run = await givenRun(ctx.store, 'run_1');
        const plan = await ctx.store.createPlan(planInput('pln_1', run, { workspaceCommit: 'd'.repeat(40) }));
        expect(plan).toMatchObject({ footprint: null, executionBase: null, uncommitted: null });
        const head = 'e'.repeat(40);
        const approved = await ctx.store.decidePlan('pln_1', (p, decisions) => ({
          ...approve('dec_1', 'alice', T0 + MINUTE)(p, decisions),
          executionBase: head,
        }));
        expect(approved.plan).toMatchObject({
          status: 'approved',
          executionBase: head,
          workspaceCommit: 'd'.repeat(40),
        });
        expect(await ctx.store.getPlan('pln_1')).toMatchObject({ executionBase: head });
      });

      it('holds one plan per (run, tool use)', async () => {
        const run = await givenRun(ctx.store, 'run_1');
        await ctx.store.createPlan(planInput('pln_1', run));
        await expect(
          ctx.store.createPlan(planInput('pln_2', run, { toolUseId: 'toolu_pln_1' })),
        ).rejects.toThrow();
        expect(await ctx.store.getPlan('pln_2')).toBeNull();
      });

      it('lists the queue oldest first, ties broken by id, a page at a time', async () => {
        await givenPlan(ctx.store, 'pln_c', { createdAt: T0 + 2 * MINUTE });
        await givenPlan(ctx.store, 'pln_b', { createdAt: T0 + MINUTE });
        await givenPlan(ctx.store, 'pln_a', { createdAt: T0 + MINUTE });
        await givenPlan(ctx.store, 'pln_z', { createdAt: T0 });
        await givenPlan(ctx.store, 'pln_d', { createdAt: T0 + 3 * MINUTE });
        const pages = await allPages((cursor) => ctx.store.listPlans({ limit: 2, cursor }));
        expect(pages.map((p) => p.map((x) => x.id))).toEqual([
          ['pln_z', 'pln_a'],
          ['pln_b', 'pln_c'],
          ['pln_d'],
        ]);
        await expect(ctx.store.listPlans({ limit: 2, cursor: FOREIGN_CURSOR })).rejects.toBeInstanceOf(
          InvalidCursorError,
        );
      });

      it('filters the queue by status, session, job, trigger, requester and age', async () => {
        await givenPlan(ctx.store, 'pln_1', { sessionId: 'ses_a', jobId: 'job_1', requestedBy: 'bob' });
        await givenPlan(ctx.store, 'pln_2', { sessionId: 'ses_b', triggerId: 'trg_1', createdAt: T0 + HOUR });
        await givenPlan(ctx.store, 'pln_3', {
          sessionId: 'ses_a',
          status: 'rejected',
          createdAt: T0 + 2 * HOUR,
        });
        const ids = async (f: Omit<Parameters<typeof ctx.store.listPlans>[0], 'limit'>) =>
          (await ctx.store.listPlans({ ...f, limit: 10 })).items.map((p) => p.id);
        expect(await ids({ status: 'pending_approval' })).toEqual(['pln_1', 'pln_2']);
        expect(await ids({ status: 'rejected' })).toEqual(['pln_3']);
        expect(await ids({ sessionId: 'ses_a' })).toEqual(['pln_1', 'pln_3']);
        expect(await ids({ jobId: 'job_1' })).toEqual(['pln_1']);
        expect(await ids({ triggerId: 'trg_1' })).toEqual(['pln_2']);
        expect(await ids({ requestedBy: 'bob' })).toEqual(['pln_1']);
        expect(await ids({ createdBefore: T0 + HOUR })).toEqual(['pln_1']);
        expect(await ids({ sessionId: 'ses_a', status: 'pending_approval' })).toEqual(['pln_1']);
      });

      it('tells pending plans still decidable at a time from those past their expiry', async () => {
        await givenPlan(ctx.store, 'pln_live', { expiresAt: T0 + DAY });
        await givenPlan(ctx.store, 'pln_due', { expiresAt: T0 + HOUR, createdAt: T0 + 1 });
        await givenPlan(ctx.store, 'pln_written', { status: 'expired', createdAt: T0 + 2 });
        await givenPlan(ctx.store, 'pln_done', { status: 'approved', expiresAt: T0, createdAt: T0 + 3 });
        const ids = async (f: Omit<Parameters<typeof ctx.store.listPlans>[0], 'limit'>) =>
          (await ctx.store.listPlans({ ...f, limit: 10 })).items.map((p) => p.id);
        expect(await ids({ status: 'pending_approval', activeAt: T0 + HOUR - 1 })).toEqual([
          'pln_live',
          'pln_due',
        ]);
        // Expired from its expiry on, inclusive.
        expect(await ids({ status: 'pending_approval', activeAt: T0 + HOUR })).toEqual(['pln_live']);
        expect(await ids({ status: 'expired', activeAt: T0 + HOUR })).toEqual(['pln_due', 'pln_written']);
        expect(await ids({ status: 'expired', activeAt: T0 + HOUR - 1 })).toEqual(['pln_written']);
        expect(await ids({ status: 'expired' })).toEqual(['pln_written']);
      });

      it('a summary listing cuts the markdown to its first 300 characters', async () => {
        const markdown = `# Long\n\n${'abcdefghij'.repeat(50)}`;
        await givenPlan(ctx.store, 'pln_1', { markdown });
        const [summary] = (await ctx.store.listPlans({ limit: 10, summary: true })).items;
        const [full] = (await ctx.store.listPlans({ limit: 10 })).items;
        expect(summary?.markdown).toBe(markdown.slice(0, 300));
        expect(full?.markdown).toBe(markdown);
        expect(summary?.sha256).toBe(full?.sha256);
      });

      it('reads every plan with its count of approvals, in lists too', async () => {
        const plan = await givenPlan(ctx.store, 'pln_1', { approvalsRequired: 3 });
        await ctx.store.decidePlan(plan.id, approve('dec_1', 'bob', T0 + 1));
        await ctx.store.decidePlan(plan.id, approve('dec_2', 'carol', T0 + 2));
        expect((await ctx.store.getPlan(plan.id))?.approvals).toBe(2);
        expect((await ctx.store.findPlan(plan.runId, plan.toolUseId))?.approvals).toBe(2);
        expect((await ctx.store.listPlans({ limit: 1 })).items[0]?.approvals).toBe(2);
      });

      it('lists the runs of a plan: its proposal, its revision round, its execution, oldest first', async () => {
        const plan = await givenPlan(ctx.store, 'pln_1');
        await givenRun(ctx.store, 'run_exec', {
          phase: 'execute',
          executesPlanId: plan.id,
          createdAt: T0 + 2,
        });
        await givenRun(ctx.store, 'run_revise', { revisesPlanId: plan.id, createdAt: T0 + 1 });
        await givenRun(ctx.store, 'run_unrelated', { createdAt: T0 + 1 });
        const runs = await ctx.store.listPlanRuns(plan);
        expect(runs.map((r) => r.id)).toEqual(['run_pln_1', 'run_revise', 'run_exec']);
      });
    });

    describe('plansVersion', () => {
      it('moves whenever a plan or decision is written, also by another process; reads leave it', async () => {
        const other = await ctx.peer();
        const seen: number[] = [await ctx.store.plansVersion()];
        // Another process's write is seen once it is heard of: at once on SQLite, on PostgreSQL when the
        // listener hears its notification (src/store/postgres/versions.ts), hence the wait.
        const moved = async () => {
          const v = await vi.waitFor(async () => {
            const v = await ctx.store.plansVersion();
            expect(seen).not.toContain(v);
            return v;
          });
          seen.push(v);
        };
        const plan = await givenPlan(other, 'pln_1');
        await moved();
        await ctx.store.listPlans({ limit: 10 });
        await ctx.store.getPlan(plan.id);
        expect(await ctx.store.plansVersion()).toBe(seen.at(-1));
        await other.decidePlan(plan.id, () => ({
          decision: decisionOf(plan, 'dec_1', 'approve', 'bob', T0),
        }));
        await moved();
        await other.transitionPlan(plan.id, ['pending_approval'], 'approved');
        await moved();
        await givenPlan(other, 'pln_2', { expiresAt: T0 });
        await moved();
        await other.expirePlans(T0);
        await moved();
        await givenPlan(other, 'pln_3', { subject: 'acme/app#1' });
        await moved();
        await other.supersedePlans('acme/app#1', undefined, T0);
        await moved();
      });
    });

    describe('decidePlan', () => {
      it('writes the decision, the new status with its time, and the run it starts, atomically', async () => {
        const plan = await givenPlan(ctx.store, 'pln_1');
        const out = await ctx.store.decidePlan(plan.id, approve('dec_1', 'bob', T0 + MINUTE));
        expect(out.decision).toEqual(decisionOf(plan, 'dec_1', 'approve', 'bob', T0 + MINUTE));
        expect(out.plan).toEqual({ ...plan, status: 'approved', decidedAt: T0 + MINUTE, approvals: 1 });
        expect(out.run).toMatchObject({
          id: 'run_exec_dec_1',
          phase: 'execute',
          status: 'queued',
          executesPlanId: plan.id,
          sessionId: plan.sessionId,
          requestedBy: 'bob',
        });
        expect(await ctx.store.getPlan(plan.id)).toEqual(out.plan);
        expect(await ctx.store.getRun('run_exec_dec_1')).toEqual(out.run);
        expect(await ctx.store.listDecisions(plan.id)).toEqual([out.decision]);
      });

      it('a rejection and a revision: their status, and the revision round a revision starts', async () => {
        const a = await givenPlan(ctx.store, 'pln_a');
        const b = await givenPlan(ctx.store, 'pln_b');
        const rejected = await ctx.store.decidePlan(a.id, (plan) => ({
          decision: decisionOf(plan, 'dec_r', 'reject', 'bob', T0 + 1),
          planStatus: 'rejected',
        }));
        expect(rejected.run).toBeNull();
        expect(rejected.plan).toMatchObject({ status: 'rejected', decidedAt: T0 + 1, approvals: 0 });
        const revised = await ctx.store.decidePlan(b.id, (plan) => ({
          decision: decisionOf(plan, 'dec_v', 'revise', 'bob', T0 + 2),
          planStatus: 'revision_requested',
          run: {
            id: 'run_round2',
            sessionId: plan.sessionId,
            jobId: null,
            slotAt: null,
            source: 'manual',
            prompt: 'revise',
            requestedBy: 'bob',
            createdAt: T0 + 2,
            conversationId: plan.conversationId,
            revisesPlanId: plan.id,
          },
        }));
        expect(revised.plan.status).toBe('revision_requested');
        expect(revised.run).toMatchObject({
          phase: 'plan',
          revisesPlanId: b.id,
          conversationId: b.conversationId,
        });
        expect((await ctx.store.listPlanRuns(b)).map((r) => r.id)).toEqual(['run_pln_b', 'run_round2']);
        expect(await ctx.store.listDecisions(b.id)).toEqual([
          decisionOf(b, 'dec_v', 'revise', 'bob', T0 + 2),
        ]);
      });

      it('calls the rule with the freshest plan and its decisions, oldest first', async () => {
        const plan = await givenPlan(ctx.store, 'pln_1', { approvalsRequired: 3 });
        await ctx.store.decidePlan(plan.id, approve('dec_2', 'carol', T0 + 2));
        await ctx.store.decidePlan(plan.id, approve('dec_1', 'bob', T0 + 1));
        let seen: [Plan, Decision[]] | null = null;
        await ctx.store.decidePlan(plan.id, (p, ds) => {
          seen = [p, ds];
          return approve('dec_3', 'dave', T0 + 3)(p, ds);
        });
        const [p, ds] = seen!;
        expect(p).toMatchObject({ id: plan.id, status: 'pending_approval', approvals: 2 });
        expect(ds.map((d) => d.id)).toEqual(['dec_1', 'dec_2']);
        expect((await ctx.store.listDecisions(plan.id)).map((d) => d.id)).toEqual([
          'dec_1',
          'dec_2',
          'dec_3',
        ]);
        expect(await ctx.store.getPlan(plan.id)).toMatchObject({ status: 'approved', approvals: 3 });
      });

      it('counts toward a quorum: the plan waits until enough people approved', async () => {
        const plan = await givenPlan(ctx.store, 'pln_1', { approvalsRequired: 2 });
        const first = await ctx.store.decidePlan(plan.id, approve('dec_1', 'bob', T0 + 1));
        expect(first.run).toBeNull();
        expect(first.plan).toMatchObject({ status: 'pending_approval', approvals: 1, decidedAt: null });
        const second = await ctx.store.decidePlan(plan.id, approve('dec_2', 'carol', T0 + 2));
        expect(second.plan).toMatchObject({ status: 'approved', approvals: 2, decidedAt: T0 + 2 });
        expect(second.run?.executesPlanId).toBe(plan.id);
      });

      it("writes its receipt's event on the log of the plan's run in the same transaction; a refusal none", async () => {
        const plan = await givenPlan(ctx.store, 'pln_1');
        const heard: RunEvent[] = [];
        const receipt = (type: string): DecisionReceipt => ({
          at: T0 + MINUTE,
          event: (d) => ({
            type,
            data: { plan_id: d.plan.id, status: d.plan.status, run_id: d.run?.id ?? null },
          }),
          stored: (e) => heard.push(e),
        });
        const refusal = new ConflictError('not today');
        await expect(
          ctx.store.decidePlan(
            plan.id,
            () => {
              throw refusal;
            },
            receipt('refused'),
          ),
        ).rejects.toBe(refusal);
        expect(await ctx.store.listEvents(plan.runId, 0, 10)).toEqual([]);
        expect(heard).toEqual([]);

        await ctx.store.appendEvent(plan.runId, 'before', {}, T0);
        const out = await ctx.store.decidePlan(
          plan.id,
          approve('dec_1', 'bob', T0 + MINUTE),
          receipt('decided'),
        );
        const event = {
          runId: plan.runId,
          seq: 2,
          type: 'decided',
          data: { plan_id: plan.id, status: 'approved', run_id: out.run?.id },
          at: T0 + MINUTE,
        };
        expect(heard).toEqual([event]);
        expect(await ctx.store.listEvents(plan.runId, 1, 10)).toEqual([event]);
        expect(await ctx.store.listEvents(out.run!.id, 0, 10)).toEqual([]);
      });

      it('a rule that refuses writes nothing, and its error reaches the caller', async () => {
        const plan = await givenPlan(ctx.store, 'pln_1');
        const refusal = new ConflictError('not today');
        await expect(
          ctx.store.decidePlan(plan.id, () => {
            throw refusal;
          }),
        ).rejects.toBe(refusal);
        expect(await ctx.store.listDecisions(plan.id)).toEqual([]);
        expect(await ctx.store.getPlan(plan.id)).toEqual(plan);
        await expect(ctx.store.decidePlan('pln_missing', approve('dec_x', 'bob', T0))).rejects.toBeInstanceOf(
          NotFoundError,
        );
      });

      it('of 50 approvals given at once on two processes, the quorum completes once: one execute run', async () => {
        const plan = await givenPlan(ctx.store, 'pln_1', { approvalsRequired: 2 });
        const other = await ctx.peer();
        const out = await Promise.allSettled(
          Array.from({ length: 50 }, (_, i) =>
            (i % 2 ? other : ctx.store).decidePlan(plan.id, approve(`dec_${i}`, `approver${i}`, T0 + i)),
          ),
        );
        const taken = fulfilled(out);
        expect(taken).toHaveLength(2);
        expect(taken.filter((r) => r.run !== null)).toHaveLength(1);
        expect(await ctx.store.getPlan(plan.id)).toMatchObject({ status: 'approved', approvals: 2 });
        expect(await ctx.store.listDecisions(plan.id)).toHaveLength(2);
        const executions = (await ctx.store.listPlanRuns(plan)).filter((r) => r.phase === 'execute');
        expect(executions).toHaveLength(1);
        // Every refusal is the rule's own, not a failure of the store.
        for (const r of out) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(ConflictError);
      });

      it('a second execute run for one plan is refused, and its decision is not kept', async () => {
        const plan = await givenPlan(ctx.store, 'pln_1');
        // A rule that forgets to look at the status: the store still holds one execution per plan.
        const careless = (id: string, who: string) => (p: Plan) => ({
          decision: decisionOf(p, id, 'approve', who, T0),
          planStatus: 'approved' as const,
          run: executeRun(p, `run_${id}`, who, T0),
        });
        await ctx.store.decidePlan(plan.id, careless('dec_1', 'bob'));
        await expect(ctx.store.decidePlan(plan.id, careless('dec_2', 'carol'))).rejects.toThrow();
        expect((await ctx.store.listDecisions(plan.id)).map((d) => d.id)).toEqual(['dec_1']);
        expect(await ctx.store.getRun('run_dec_2')).toBeNull();
        expect(await ctx.store.getPlan(plan.id)).toMatchObject({ approvals: 1 });
      });

      it('holds one approval per person per plan', async () => {
        const plan = await givenPlan(ctx.store, 'pln_1', { approvalsRequired: 3 });
        const blind = (id: string) => (p: Plan) => ({ decision: decisionOf(p, id, 'approve', 'bob', T0) });
        await ctx.store.decidePlan(plan.id, blind('dec_1'));
        await expect(ctx.store.decidePlan(plan.id, blind('dec_2'))).rejects.toThrow();
        expect(await ctx.store.getPlan(plan.id)).toMatchObject({ approvals: 1 });
        // Other kinds of decision by the same person are not limited.
        await ctx.store.decidePlan(plan.id, (p) => ({
          decision: decisionOf(p, 'dec_3', 'revise', 'bob', T0 + 1),
        }));
        expect(await ctx.store.listDecisions(plan.id)).toHaveLength(2);
      });
    });

    describe('status moves', () => {
      it('moves a plan only from an expected status, with a failure reason when given', async () => {
        const plan = await givenPlan(ctx.store, 'pln_1', { status: 'approved' });
        expect(await ctx.store.transitionPlan(plan.id, ['pending_approval'], 'rejected')).toBe(false);
        expect(await ctx.store.transitionPlan(plan.id, ['approved'], 'executing')).toBe(true);
        expect(await ctx.store.transitionPlan(plan.id, ['approved'], 'executing')).toBe(false);
        expect(await ctx.store.transitionPlan(plan.id, ['approved', 'executing'], 'executing')).toBe(true);
        expect(
          await ctx.store.transitionPlan(plan.id, ['executing'], 'execution_failed', {
            failureReason: 'tests fail',
          }),
        ).toBe(true);
        expect(await ctx.store.getPlan(plan.id)).toMatchObject({
          status: 'execution_failed',
          failureReason: 'tests fail',
        });
        expect(await ctx.store.transitionPlan('pln_missing', ['approved'], 'executing')).toBe(false);
      });

      it('a failure reason is kept unless given, and cleared with null', async () => {
        const plan = await givenPlan(ctx.store, 'pln_1', { status: 'executing' });
        await ctx.store.transitionPlan(plan.id, ['executing'], 'executing', { failureReason: 'first try' });
        await ctx.store.transitionPlan(plan.id, ['executing'], 'executing');
        expect((await ctx.store.getPlan(plan.id))?.failureReason).toBe('first try');
        await ctx.store.transitionPlan(plan.id, ['executing'], 'executed', { failureReason: null });
        expect(await ctx.store.getPlan(plan.id)).toMatchObject({ status: 'executed', failureReason: null });
      });

      it('of two processes starting one execution, one wins', async () => {
        const plan = await givenPlan(ctx.store, 'pln_1', { status: 'approved' });
        const other = await ctx.peer();
        const out = await Promise.all([
          ctx.store.transitionPlan(plan.id, ['approved'], 'executing'),
          other.transitionPlan(plan.id, ['approved'], 'executing'),
          ctx.store.transitionPlan(plan.id, ['approved'], 'executing'),
          other.transitionPlan(plan.id, ['approved'], 'executing'),
        ]);
        expect(out.filter(Boolean)).toHaveLength(1);
      });

      it('expires pending plans from their expiry on, and only those', async () => {
        await givenPlan(ctx.store, 'pln_past', { expiresAt: T0 + HOUR - 1 });
        await givenPlan(ctx.store, 'pln_exact', { expiresAt: T0 + HOUR });
        await givenPlan(ctx.store, 'pln_future', { expiresAt: T0 + HOUR + 1 });
        await givenPlan(ctx.store, 'pln_approved', { status: 'approved', expiresAt: T0 });
        expect((await ctx.store.expirePlans(T0 + HOUR)).sort()).toEqual(['pln_exact', 'pln_past']);
        expect(await ctx.store.getPlan('pln_past')).toMatchObject({
          status: 'expired',
          decidedAt: T0 + HOUR,
        });
        expect(await ctx.store.getPlan('pln_exact')).toMatchObject({
          status: 'expired',
          decidedAt: T0 + HOUR,
        });
        expect(await ctx.store.getPlan('pln_future')).toMatchObject({
          status: 'pending_approval',
          decidedAt: null,
        });
        expect(await ctx.store.getPlan('pln_approved')).toMatchObject({ status: 'approved' });
        expect(await ctx.store.expirePlans(T0 + HOUR)).toEqual([]);
      });

      it("supersedes a subject's pending plans, except those a given delivery started", async () => {
        const subject = 'acme/app#5';
        await givenPlan(ctx.store, 'pln_old', { subject }, { deliveryId: 'dlv_1', subject });
        await givenPlan(ctx.store, 'pln_new', { subject }, { deliveryId: 'dlv_2', subject });
        await givenPlan(ctx.store, 'pln_manual', { subject }, { subject });
        await givenPlan(
          ctx.store,
          'pln_decided',
          { subject, status: 'approved' },
          { deliveryId: 'dlv_1', subject },
        );
        await givenPlan(ctx.store, 'pln_elsewhere', { subject: 'acme/app#6' }, { subject: 'acme/app#6' });
        const ids = await ctx.store.supersedePlans(subject, 'dlv_2', T0 + HOUR);
        expect([...ids].sort()).toEqual(['pln_manual', 'pln_old']);
        expect(await ctx.store.getPlan('pln_old')).toMatchObject({
          status: 'superseded',
          decidedAt: T0 + HOUR,
        });
        expect(await ctx.store.getPlan('pln_new')).toMatchObject({ status: 'pending_approval' });
        expect(await ctx.store.getPlan('pln_decided')).toMatchObject({ status: 'approved' });
        expect(await ctx.store.getPlan('pln_elsewhere')).toMatchObject({ status: 'pending_approval' });
        expect(await ctx.store.supersedePlans(subject, undefined, T0 + 2 * HOUR)).toEqual(['pln_new']);
        expect(await ctx.store.supersedePlans(subject, undefined, T0 + 3 * HOUR)).toEqual([]);
      });

      it("finds a subject's newest plan still pending", async () => {
        const subject = 'acme/app#5';
        expect(await ctx.store.pendingPlanForSubject(subject)).toBeNull();
        await givenPlan(ctx.store, 'pln_1', { subject, createdAt: T0 });
        await givenPlan(ctx.store, 'pln_2', { subject, createdAt: T0 + MINUTE });
        await givenPlan(ctx.store, 'pln_3', { subject, createdAt: T0 + 2 * MINUTE, status: 'rejected' });
        await givenPlan(ctx.store, 'pln_4', { subject: 'acme/app#6', createdAt: T0 + 3 * MINUTE });
        expect((await ctx.store.pendingPlanForSubject(subject))?.id).toBe('pln_2');
      });

      it('lists the outcomes of recent executions, newest end first', async () => {
        const ended = async (
          id: string,
          status: 'completed' | 'failed' | 'canceled',
          at: number,
          phase: 'execute' | 'plan' = 'execute',
        ) => {
          await givenRun(ctx.store, id, { phase });
          await ctx.store.transitionRun(id, ['queued'], status, { finishedAt: at });
        };
        await ended('run_old', 'failed', T0 - 1);
        await ended('run_a', 'completed', T0 + 1);
        await ended('run_c', 'canceled', T0 + 3);
        await ended('run_b', 'failed', T0 + 2);
        await ended('run_plan', 'failed', T0 + 4, 'plan');
        await givenRun(ctx.store, 'run_running', { phase: 'execute' });
        await ctx.store.transitionRun('run_running', ['queued'], 'running', { startedAt: T0 });
        expect(await ctx.store.recentExecutions(T0, 10)).toEqual(['canceled', 'failed', 'completed']);
        expect(await ctx.store.recentExecutions(T0, 2)).toEqual(['canceled', 'failed']);
        expect(await ctx.store.recentExecutions(T0 + 3, 10)).toEqual(['canceled']);
      });

      it("leaves out executions refused for what their own tree holds (the breaker protects others' runs)", async () => {
        const failed = async (id: string, error: string, at: number) => {
          await givenRun(ctx.store, id, { phase: 'execute' });
          await ctx.store.transitionRun(id, ['queued'], 'failed', { finishedAt: at, error });
        };
        await failed(
          'run_hostile',
          `${TREE_REFUSED}: git add over the execution's tree failed: fatal: x`,
          T0 + 1,
        );
        await failed(
          'run_hostile2',
          `${TREE_REFUSED}: the objects the execution made were refused: y`,
          T0 + 2,
        );
        await failed('run_broken', 'recording the result failed: disk full', T0 + 3);
        await failed('run_named', 'a tree refused by nobody: not the prefix', T0 + 4);
        expect(await ctx.store.recentExecutions(T0, 10)).toEqual(['failed', 'failed']);
      });
    });
  });
}
