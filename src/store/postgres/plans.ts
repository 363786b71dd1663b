import { DEFAULT_NETWORK_DOMAINS } from '../../domain/network.js';
import type { DecisionEffect } from '../../domain/plan-decision.js';
import type { Decision, Page, Plan, PlanStatus, Run, RunEvent, RunStatus } from '../../domain/types.js';
import type { Fence } from '../leases.js';
import { page } from '../paging.js';
import type { DecidedPlan, DecisionReceipt, PlanFilter, PlanStore } from '../plans.js';
import { type DecisionRow, type PlanRow, type RunRow, toDecision, toPlan, toRun } from '../rows.js';
import { POSTGRES } from '../sql/dialect.js';
import * as planSql from '../sql/plans.js';
import { ConflictError, NotFoundError } from '../store.js';
import type { PgDb, Queries } from './db.js';
import { fencedWrite } from './fence.js';
import { insertEvent, insertRun } from './runs.js';

/**
 * Plans, their decisions and runs. A decision is applied in one transaction that holds the plan's row, so
 * concurrent decisions on one plan take turns; the unique index on runs (executes_plan_id) has the last word
 * on its execution.
 */
export class PgPlans implements PlanStore {
  constructor(
    private readonly db: PgDb,
    /** What a plan made before network lists, with the network allowed, reads as (rows.ts, toPlan). */
    private readonly legacyNetwork: readonly string[] = DEFAULT_NETWORK_DOMAINS,
  ) {}

  async createPlan(p: Plan, fence?: Fence): Promise<Plan> {
    const { text, values } = planSql.insertPlanStatement(p);
    const insert = (q: Queries) => q.row<PlanRow>(text, values);
    try {
      return toPlan((await fencedWrite(this.db, fence, insert))!, this.legacyNetwork);
    } catch (err) {
      // The last word on "one pending plan per run".
      if ((err as { constraint?: string }).constraint === 'plans_one_pending_per_run') {
        throw new ConflictError(`run ${p.runId} already has a plan pending approval`);
      }
      throw err;
    }
  }

  async getPlan(id: string): Promise<Plan | null> {
    const row = await planRow(this.db, id);
    return row ? toPlan(row, this.legacyNetwork) : null;
  }

  async findPlan(runId: string, toolUseId: string): Promise<Plan | null> {
    const row = await this.db.row<PlanRow>(planSql.SELECT_PLAN_OF_CALL, [runId, toolUseId]);
    return row ? toPlan(row, this.legacyNetwork) : null;
  }

  async listPlans(f: PlanFilter): Promise<Page<Plan>> {
    const { text, values } = planSql.listPlansStatement(POSTGRES, f);
    const rows = await this.db.rows<PlanRow>(text, values);
    return page(
      rows.map((r) => toPlan(r, this.legacyNetwork)),
      f.limit,
    );
  }

  async plansVersion(): Promise<number> {
    return (await this.db.value<number>(planSql.PLANS_VERSION)) ?? 0;
  }

  async listDecisions(planId: string): Promise<Decision[]> {
    return decisionsOf(this.db, planId);
  }

  async listPlanRuns(plan: Plan): Promise<Run[]> {
    const { text, values } = planSql.planRunsStatement(plan);
    return (await this.db.rows<RunRow>(text, values)).map(toRun);
  }

  async decidePlan(
    planId: string,
    decide: (plan: Plan, decisions: Decision[]) => DecisionEffect,
    receipt?: DecisionReceipt,
  ): Promise<DecidedPlan> {
    let stored: RunEvent | null = null;
    const decided = await this.db.tx(async (q) => {
      // LOUD: lock first, read after. The plan's row is locked by a statement of its own; the plan, its
      // approvals and decisions are read by the statements after it, each with a snapshot taken once the lock
      // is held (READ COMMITTED), so they include every decision committed before this one. Read in the
      // locking statement itself, the approvals count would come from the snapshot taken before waiting.
      const locked = await q.value<string>('SELECT id FROM plans WHERE id = $1 FOR NO KEY UPDATE', [planId]);
      if (locked === undefined) throw new NotFoundError(`plan ${planId} not found`);
      const row = (await planRow(q, planId))!;
      const effect = decide(toPlan(row, this.legacyNetwork), await decisionsOf(q, planId));
      const d = effect.decision;
      const decision = planSql.insertDecisionStatement(d);
      await q.exec(decision.text, decision.values);
      if (effect.planStatus) {
        const decided = planSql.decidedStatement(
          planId,
          effect.planStatus,
          d.createdAt,
          effect.executionBase,
        );
        await q.exec(decided.text, decided.values);
      }
      const run = effect.run ? await insertRun(q, effect.run, 0) : null;
      const plan = toPlan((await planRow(q, planId))!, this.legacyNetwork);
      const out = { plan, decision: d, run };
      // Last: its lock on the event log is held only from here to the commit.
      if (receipt) {
        const { type, data } = receipt.event(out);
        stored = await insertEvent(q, plan.runId, type, data, receipt.at);
      }
      return out;
    });
    if (stored) receipt?.stored(stored);
    return decided;
  }

  async transitionPlan(
    id: string,
    from: readonly PlanStatus[],
    to: PlanStatus,
    fields: { failureReason?: string | null } = {},
    fence?: Fence,
  ): Promise<boolean> {
    const { text, values } = planSql.transitionPlanStatement(id, from, to, fields);
    return fencedWrite(this.db, fence, async (q) => (await q.exec(text, values)) === 1);
  }

  async expirePlans(now: number): Promise<string[]> {
    const { text, values } = planSql.expirePlansStatement(now);
    return (await this.db.rows<{ id: string }>(text, values)).map((r) => r.id);
  }

  async recentExecutions(since: number, limit: number): Promise<RunStatus[]> {
    const { text, values } = planSql.recentExecutionsStatement(since, limit);
    return (await this.db.rows<{ status: RunStatus }>(text, values)).map((r) => r.status);
  }

  // ---- plans of a subject (a pull request)

  async supersedePlans(subject: string, exceptDelivery: string | undefined, now: number): Promise<string[]> {
    // A plan being decided meanwhile holds its row: this UPDATE waits for the decision, then leaves the
    // plan alone if it is no longer pending.
    const { text, values } = planSql.supersedePlansStatement(subject, exceptDelivery, now);
    return (await this.db.rows<{ id: string }>(text, values)).map((r) => r.id);
  }

  async pendingPlanForSubject(subject: string): Promise<Plan | null> {
    const row = await this.db.row<PlanRow>(planSql.PENDING_PLAN_OF_SUBJECT, [subject]);
    return row ? toPlan(row, this.legacyNetwork) : null;
  }
}

/** A plan's row with its approvals; also inside decidePlan's transaction. */
export async function planRow(q: Queries, id: string): Promise<PlanRow | undefined> {
  return q.row<PlanRow>(planSql.SELECT_PLAN, [id]);
}

async function decisionsOf(q: Queries, planId: string): Promise<Decision[]> {
  return (await q.rows<DecisionRow>(planSql.SELECT_DECISIONS, [planId])).map(toDecision);
}
