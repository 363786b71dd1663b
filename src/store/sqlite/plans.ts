import { DEFAULT_NETWORK_DOMAINS } from '../../domain/network.js';
import type { DecisionEffect } from '../../domain/plan-decision.js';
import {
  type Decision,
  type Page,
  type Plan,
  type PlanStatus,
  type Run,
  type RunStatus,
  TREE_REFUSED,
} from '../../domain/types.js';
import type { Fence } from '../leases.js';
import { page } from '../paging.js';
import type { PlanFilter, PlanStore } from '../plans.js';
import { type DecisionRow, type PlanRow, type RunRow, toDecision, toPlan, toRun } from '../rows.js';
import { ConflictError, NotFoundError } from '../store.js';
import { addCursor, equalities, type SqliteDb, whereSql } from './db.js';
import { fencedWrite } from './fence.js';
import { insertRun } from './runs.js';

/** Each plan row comes with how many distinct people approved it so far. */
export const APPROVALS = `(SELECT COUNT(*) FROM decisions d WHERE d.plan_id = plans.id AND d.kind = 'approve') AS approvals`;

/** Plans and their decisions. A decision's run is written by the transaction that records the decision. */
export class SqlitePlans implements PlanStore {
  constructor(
    private readonly db: SqliteDb,
    /** What a plan made before network lists, with the network allowed, reads as (rows.ts, toPlan). */
    private readonly legacyNetwork: readonly string[] = DEFAULT_NETWORK_DOMAINS,
  ) {}

  async createPlan(p: Plan, fence?: Fence): Promise<Plan> {
    const insert = () =>
      this.db
        .sql(
          `INSERT INTO plans (id, run_id, session_id, conversation_id, tool_use_id, markdown, sha256, workspace_commit,
         status, round, previous_plan_id, requested_by, created_at, job_id, trigger_id, source, expires_at,
         approvals_required, allow_self_approval, execute_mode, network, network_domains, owner, subject)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          p.id,
          p.runId,
          p.sessionId,
          p.conversationId,
          p.toolUseId,
          p.markdown,
          p.sha256,
          p.workspaceCommit,
          p.status,
          p.round,
          p.previousPlanId,
          p.requestedBy,
          p.createdAt,
          p.jobId,
          p.triggerId,
          p.source,
          p.expiresAt,
          p.approvalsRequired,
          p.allowSelfApproval ? 1 : 0,
          p.executeMode,
          p.network.length > 0 ? 1 : 0,
          JSON.stringify(p.network),
          p.owner,
          p.subject,
        );
    try {
      fencedWrite(this.db, fence, insert);
    } catch (err) {
      // The last word on "one pending plan per run" (plans_one_pending_per_run).
      if ((err as Error).message === 'UNIQUE constraint failed: plans.run_id') {
        throw new ConflictError(`run ${p.runId} already has a plan pending approval`);
      }
      throw err;
    }
    return (await this.getPlan(p.id))!;
  }

  async getPlan(id: string): Promise<Plan | null> {
    const row = planRow(this.db, id);
    return row ? toPlan(row, this.legacyNetwork) : null;
  }

  async findPlan(runId: string, toolUseId: string): Promise<Plan | null> {
    const row = this.db
      .sql(`SELECT plans.*, ${APPROVALS} FROM plans WHERE run_id = ? AND tool_use_id = ?`)
      .get(runId, toolUseId) as PlanRow | undefined;
    return row ? toPlan(row, this.legacyNetwork) : null;
  }

  async listPlans(f: PlanFilter): Promise<Page<Plan>> {
    // Listing the expired ones at activeAt: those written so, and pending ones past their expiry the sweep
    // has not reached yet (the expiry rule, isPlanOverdue in src/domain/plan-status.ts).
    const expiredAt = f.status === 'expired' ? f.activeAt : undefined;
    const { where, args } = equalities([
      ['status', expiredAt === undefined ? f.status : undefined],
      ['session_id', f.sessionId],
      ['job_id', f.jobId],
      ['trigger_id', f.triggerId],
      ['requested_by', f.requestedBy],
    ]);
    if (f.createdBefore !== undefined) {
      where.push('created_at < ?');
      args.push(f.createdBefore);
    }
    if (f.activeAt !== undefined && f.status === 'pending_approval') {
      // The expiry rule (isPlanOverdue, src/domain/plan-status.ts), negated: still pending at activeAt.
      // The unary + keeps the planner on plans_queue (status, created_at, id), which serves the order: an
      // index on expires_at would have it read every pending plan and sort them.
      where.push('+expires_at > ?');
      args.push(f.activeAt);
    }
    if (expiredAt !== undefined) {
      where.push(`(status = 'expired' OR (status = 'pending_approval' AND expires_at <= ?))`);
      args.push(expiredAt);
    }
    addCursor(f.cursor, where, args, 'asc');
    const columns = f.summary ? 'plans.*, substr(markdown, 1, 300) AS markdown' : 'plans.*';
    const rows = this.db
      .sql(
        `SELECT ${columns}, ${APPROVALS} FROM plans ${whereSql(where)} ORDER BY created_at ASC, id ASC LIMIT ${f.limit + 1}`,
      )
      .all(...args) as PlanRow[];
    return page(
      rows.map((r) => toPlan(r, this.legacyNetwork)),
      f.limit,
    );
  }

  async plansVersion(): Promise<number> {
    return this.db.pluck(`SELECT value FROM change_counters WHERE name = 'plans'`).get() as number;
  }

  async listDecisions(planId: string): Promise<Decision[]> {
    return decisionsOf(this.db, planId);
  }

  async listPlanRuns(plan: Plan): Promise<Run[]> {
    const rows = this.db
      .sql(
        'SELECT * FROM runs WHERE id = ? OR executes_plan_id = ? OR revises_plan_id = ? ORDER BY created_at, id',
      )
      .all(plan.runId, plan.id, plan.id) as RunRow[];
    return rows.map(toRun);
  }

  async decidePlan(
    planId: string,
    decide: (plan: Plan, decisions: Decision[]) => DecisionEffect,
  ): Promise<{ plan: Plan; decision: Decision; run: Run | null }> {
    return this.db.write(() => {
      const row = planRow(this.db, planId);
      if (!row) throw new NotFoundError(`plan ${planId} not found`);
      const effect = decide(toPlan(row, this.legacyNetwork), decisionsOf(this.db, planId));
      const d = effect.decision;
      this.db
        .sql(
          `INSERT INTO decisions (id, plan_id, kind, identity, comment, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(d.id, d.planId, d.kind, d.identity, d.comment, d.sha256, d.createdAt);
      if (effect.planStatus) {
        this.db
          .sql('UPDATE plans SET status = ?, decided_at = ? WHERE id = ?')
          .run(effect.planStatus, d.createdAt, planId);
      }
      const run = effect.run ? insertRun(this.db, effect.run, 0) : null;
      const plan = toPlan(planRow(this.db, planId)!, this.legacyNetwork);
      return { plan, decision: d, run };
    });
  }

  async transitionPlan(
    id: string,
    from: readonly PlanStatus[],
    to: PlanStatus,
    fields: { failureReason?: string | null } = {},
    fence?: Fence,
  ): Promise<boolean> {
    const marks = from.map(() => '?').join(', ');
    return fencedWrite(
      this.db,
      fence,
      () =>
        this.db
          .sql(
            `UPDATE plans SET status = ?, failure_reason = CASE WHEN ? THEN ? ELSE failure_reason END
             WHERE id = ? AND status IN (${marks})`,
          )
          .run(to, fields.failureReason !== undefined ? 1 : 0, fields.failureReason ?? null, id, ...from)
          .changes === 1,
    );
  }

  async expirePlans(now: number): Promise<number> {
    // The expiry rule (isPlanOverdue, src/domain/plan-status.ts) in SQL: pending, expires_at <= now.
    return this.db
      .sql(
        `UPDATE plans SET status = 'expired', decided_at = ? WHERE status = 'pending_approval' AND expires_at <= ?`,
      )
      .run(now, now).changes;
  }

  async recentExecutions(since: number, limit: number): Promise<RunStatus[]> {
    return this.db
      .pluck(
        `SELECT status FROM runs WHERE phase = 'execute' AND finished_at IS NOT NULL AND finished_at >= ?
       AND (error IS NULL OR error NOT LIKE '${TREE_REFUSED}:%')
       ORDER BY finished_at DESC LIMIT ?`,
      )
      .all(since, limit) as RunStatus[];
  }

  // ---- plans of a subject (a pull request)

  async supersedePlans(subject: string, exceptDelivery: string | undefined, now: number): Promise<string[]> {
    return this.db
      .pluck(
        `UPDATE plans SET status = 'superseded', decided_at = ?
       WHERE subject = ? AND status = 'pending_approval'
         AND run_id NOT IN (SELECT id FROM runs WHERE delivery_id = ? AND subject = ?) RETURNING id`,
      )
      .all(now, subject, exceptDelivery ?? null, subject) as string[];
  }

  async pendingPlanForSubject(subject: string): Promise<Plan | null> {
    const row = this.db
      .sql(
        `SELECT plans.*, ${APPROVALS} FROM plans WHERE subject = ? AND status = 'pending_approval' ORDER BY created_at DESC LIMIT 1`,
      )
      .get(subject) as PlanRow | undefined;
    return row ? toPlan(row, this.legacyNetwork) : null;
  }
}

/** A plan's row with its approvals; also read inside the transactions of decisions and delivery claims. */
export function planRow(db: SqliteDb, id: string): PlanRow | undefined {
  return db.sql(`SELECT plans.*, ${APPROVALS} FROM plans WHERE id = ?`).get(id) as PlanRow | undefined;
}

/** A plan's decisions, oldest first; also read inside decidePlan's transaction. */
function decisionsOf(db: SqliteDb, planId: string): Decision[] {
  const rows = db
    .sql('SELECT * FROM decisions WHERE plan_id = ? ORDER BY created_at, id')
    .all(planId) as DecisionRow[];
  return rows.map(toDecision);
}
