import { DEFAULT_NETWORK_DOMAINS } from '../../domain/network.js';
import type { DecisionEffect } from '../../domain/plan-decision.js';
import type { Decision, Page, Plan, PlanStatus, Run, RunEvent, RunStatus } from '../../domain/types.js';
import type { Fence } from '../leases.js';
import { page } from '../paging.js';
import type { DecidedPlan, DecisionReceipt, PlanFilter, PlanStore } from '../plans.js';
import { type DecisionRow, type PlanRow, type RunRow, toDecision, toPlan, toRun } from '../rows.js';
import { SQLITE } from '../sql/dialect.js';
import * as planSql from '../sql/plans.js';
import { ConflictError, NotFoundError } from '../store.js';
import type { SqliteDb } from './db.js';
import { fencedWrite } from './fence.js';
import { insertEvent, insertRun } from './runs.js';

/** Plans and their decisions. A decision's run is written by the transaction that records the decision. */
export class SqlitePlans implements PlanStore {
  constructor(
    private readonly db: SqliteDb,
    /** What a plan made before network lists, with the network allowed, reads as (rows.ts, toPlan). */
    private readonly legacyNetwork: readonly string[] = DEFAULT_NETWORK_DOMAINS,
  ) {}

  async createPlan(p: Plan, fence?: Fence): Promise<Plan> {
    const { text, values } = planSql.insertPlanStatement(p);
    let row: PlanRow | undefined;
    try {
      row = fencedWrite(this.db, fence, () => this.db.sql(text).get(...values) as PlanRow);
    } catch (err) {
      // The last word on "one pending plan per run" (plans_one_pending_per_run).
      if ((err as Error).message === 'UNIQUE constraint failed: plans.run_id') {
        throw new ConflictError(`run ${p.runId} already has a plan pending approval`);
      }
      throw err;
    }
    return toPlan(row, this.legacyNetwork);
  }

  async getPlan(id: string): Promise<Plan | null> {
    const row = planRow(this.db, id);
    return row ? toPlan(row, this.legacyNetwork) : null;
  }

  async findPlan(runId: string, toolUseId: string): Promise<Plan | null> {
    const row = this.db.sql(planSql.SELECT_PLAN_OF_CALL).get(runId, toolUseId) as PlanRow | undefined;
    return row ? toPlan(row, this.legacyNetwork) : null;
  }

  async listPlans(f: PlanFilter): Promise<Page<Plan>> {
    const { text, values } = planSql.listPlansStatement(SQLITE, f);
    const rows = this.db.sql(text).all(...values) as PlanRow[];
    return page(
      rows.map((r) => toPlan(r, this.legacyNetwork)),
      f.limit,
    );
  }

  async plansVersion(): Promise<number> {
    return this.db.pluck(planSql.PLANS_VERSION).get() as number;
  }

  async listDecisions(planId: string): Promise<Decision[]> {
    return decisionsOf(this.db, planId);
  }

  async listPlanRuns(plan: Plan): Promise<Run[]> {
    const { text, values } = planSql.planRunsStatement(plan);
    return (this.db.sql(text).all(...values) as RunRow[]).map(toRun);
  }

  async decidePlan(
    planId: string,
    decide: (plan: Plan, decisions: Decision[]) => DecisionEffect,
    receipt?: DecisionReceipt,
  ): Promise<DecidedPlan> {
    let stored: RunEvent | null = null;
    const decided = this.db.write(() => {
      const row = planRow(this.db, planId);
      if (!row) throw new NotFoundError(`plan ${planId} not found`);
      const effect = decide(toPlan(row, this.legacyNetwork), decisionsOf(this.db, planId));
      const d = effect.decision;
      const decision = planSql.insertDecisionStatement(d);
      this.db.sql(decision.text).run(...decision.values);
      if (effect.planStatus) {
        const decided = planSql.decidedStatement(
          planId,
          effect.planStatus,
          d.createdAt,
          effect.executionBase,
        );
        this.db.sql(decided.text).run(...decided.values);
      }
      const run = effect.run ? insertRun(this.db, effect.run, 0) : null;
      const plan = toPlan(planRow(this.db, planId)!, this.legacyNetwork);
      const out = { plan, decision: d, run };
      if (receipt) {
        const { type, data } = receipt.event(out);
        stored = insertEvent(this.db, plan.runId, type, data, receipt.at);
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
    return fencedWrite(this.db, fence, () => this.db.sql(text).run(...values).changes === 1);
  }

  async expirePlans(now: number): Promise<string[]> {
    const { text, values } = planSql.expirePlansStatement(now);
    return this.db.pluck(text).all(...values) as string[];
  }

  async recentExecutions(since: number, limit: number): Promise<RunStatus[]> {
    const { text, values } = planSql.recentExecutionsStatement(since, limit);
    return this.db.pluck(text).all(...values) as RunStatus[];
  }

  // ---- plans of a subject (a pull request)

  async supersedePlans(subject: string, exceptDelivery: string | undefined, now: number): Promise<string[]> {
    const { text, values } = planSql.supersedePlansStatement(subject, exceptDelivery, now);
    return this.db.pluck(text).all(...values) as string[];
  }

  async pendingPlanForSubject(subject: string): Promise<Plan | null> {
    const row = this.db.sql(planSql.PENDING_PLAN_OF_SUBJECT).get(subject) as PlanRow | undefined;
    return row ? toPlan(row, this.legacyNetwork) : null;
  }
}

/** A plan's row with its approvals; also read inside the transactions of decisions and delivery claims. */
export function planRow(db: SqliteDb, id: string): PlanRow | undefined {
  return db.sql(planSql.SELECT_PLAN).get(id) as PlanRow | undefined;
}

/** A plan's decisions, oldest first; also read inside decidePlan's transaction. */
function decisionsOf(db: SqliteDb, planId: string): Decision[] {
  return (db.sql(planSql.SELECT_DECISIONS).all(planId) as DecisionRow[]).map(toDecision);
}
