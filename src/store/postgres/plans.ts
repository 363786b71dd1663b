import { DEFAULT_NETWORK_DOMAINS } from '../../domain/network.js';
import type { DecisionEffect } from '../../domain/plan-decision.js';
import type { Decision, Page, Plan, PlanStatus, Run, RunEvent, RunStatus } from '../../domain/types.js';
import type { Fence } from '../leases.js';
import { page } from '../paging.js';
import type { DecidedPlan, DecisionReceipt, PlanFilter, PlanStore } from '../plans.js';
import { type DecisionRow, type PlanRow, type RunRow, toDecision, toPlan, toRun } from '../rows.js';
import { POSTGRES } from '../sql/dialect.js';
import * as planSql from '../sql/plans.js';
import { insertRunStatement } from '../sql/runs.js';
import { ConflictError, NotFoundError } from '../store.js';
import type { PgDb, Queries } from './db.js';
import { fencedWrite } from './fence.js';
import { insertEvent } from './runs.js';
import type { PlansVersion } from './versions.js';

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
    /** The version kept between reads (versions.ts); without it, each call reads it. */
    private readonly version?: PlansVersion,
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
    return this.version ? this.version.get() : readPlansVersion(this.db);
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
      // approvals and decisions are read by the statement after it, with a snapshot taken once the lock is
      // held (READ COMMITTED), so they include every decision committed before this one. Read in the
      // locking statement itself, the approvals count would come from the snapshot taken before waiting.
      const locked = await q.value<string>('SELECT id FROM plans WHERE id = $1 FOR NO KEY UPDATE', [planId]);
      if (locked === undefined) throw new NotFoundError(`plan ${planId} not found`);
      const { decisions, ...row } = (await q.row<PlanRow & { decisions: string }>(PLAN_WITH_DECISIONS, [
        planId,
      ]))!;
      const effect = decide(toPlan(row, this.legacyNetwork), parseDecisions(decisions));
      // The decision, the plan's new status and the run it starts: one statement.
      const { text, values } = decisionWrites(effect);
      const runRow = await q.row<RunRow>(text, values);
      const d = effect.decision;
      const after: PlanRow = {
        ...row,
        approvals: row.approvals + (d.kind === 'approve' ? 1 : 0),
        ...(effect.planStatus
          ? {
              status: effect.planStatus,
              decided_at: d.createdAt,
              execution_base: effect.executionBase ?? row.execution_base ?? null,
            }
          : {}),
      };
      const run = effect.run ? toRun(runRow!) : null;
      const out = { plan: toPlan(after, this.legacyNetwork), decision: d, run };
      // Last: its lock on the event log is held only from here to the commit.
      if (receipt) {
        const { type, data } = receipt.event(out);
        stored = await insertEvent(q, out.plan.runId, type, data, receipt.at);
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

/**
 * The plans version as stored: the sum of the change counter's shards (migration 000019), one of which each
 * transaction that writes a plan or a decision moves at its commit.
 */
const PLANS_VERSION = `SELECT COALESCE(SUM(value), 0) FROM change_counters
  WHERE name = 'plans' OR name LIKE 'plans:%'`;

export async function readPlansVersion(q: Queries): Promise<number> {
  return (await q.value<number>(PLANS_VERSION)) ?? 0;
}

/** A plan's row with its approvals and its decisions, oldest first, as a JSON array of decision rows. */
const PLAN_WITH_DECISIONS = `SELECT plans.*, ${planSql.APPROVALS},
  (SELECT COALESCE(json_agg(d ORDER BY d.created_at, d.id), '[]') FROM decisions d WHERE d.plan_id = plans.id)
    AS decisions
  FROM plans WHERE id = ?`;

function parseDecisions(json: string): Decision[] {
  return (JSON.parse(json) as DecisionRow[]).map(toDecision);
}

/**
 * What a decision writes, as one statement: the decision, the plan's new status if it has one, and the run
 * it starts if it starts one (whose row the statement returns). Data-modifying WITH queries each run once,
 * whether or not the statement reads them, and all in the statement's one snapshot: none of the three reads
 * what another writes (the run's reference to the plan is to a row that exists already).
 */
function decisionWrites(effect: DecisionEffect): { text: string; values: unknown[] } {
  const parts = [planSql.insertDecisionStatement(effect.decision)];
  const d = effect.decision;
  if (effect.planStatus)
    parts.push(planSql.decidedStatement(d.planId, effect.planStatus, d.createdAt, effect.executionBase));
  if (effect.run) parts.push(insertRunStatement(effect.run, 0));
  const last = parts.pop()!;
  const text = parts.length
    ? `WITH ${parts.map((p, i) => `w${i} AS (${p.text})`).join(', ')} ${last.text}`
    : last.text;
  return { text, values: [...parts.flatMap((p) => p.values), ...last.values] };
}

/** A plan's row with its approvals; also inside decidePlan's transaction. */
export async function planRow(q: Queries, id: string): Promise<PlanRow | undefined> {
  return q.row<PlanRow>(planSql.SELECT_PLAN, [id]);
}

async function decisionsOf(q: Queries, planId: string): Promise<Decision[]> {
  return (await q.rows<DecisionRow>(planSql.SELECT_DECISIONS, [planId])).map(toDecision);
}
