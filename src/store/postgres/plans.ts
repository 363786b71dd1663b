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
import { addCursor, equalities, Params, type PgDb, type Queries, whereSql } from './db.js';
import { fencedWrite } from './fence.js';
import { insertRun } from './runs.js';

/** Each plan row comes with how many distinct people approved it so far. */
export const APPROVALS = `(SELECT COUNT(*) FROM decisions d WHERE d.plan_id = plans.id AND d.kind = 'approve') AS approvals`;

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
    const insert = (q: Queries) =>
      q.row<PlanRow>(
        `INSERT INTO plans (id, run_id, session_id, conversation_id, tool_use_id, markdown, sha256, workspace_commit,
         status, round, previous_plan_id, requested_by, created_at, job_id, trigger_id, source, expires_at,
         approvals_required, allow_self_approval, execute_mode, network, network_domains, owner, subject)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
         $23, $24)
       RETURNING *, 0 AS approvals`,
        [
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
          p.allowSelfApproval,
          p.executeMode,
          p.network.length > 0,
          JSON.stringify(p.network),
          p.owner,
          p.subject,
        ],
      );
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
    const row = await this.db.row<PlanRow>(
      `SELECT plans.*, ${APPROVALS} FROM plans WHERE run_id = $1 AND tool_use_id = $2`,
      [runId, toolUseId],
    );
    return row ? toPlan(row, this.legacyNetwork) : null;
  }

  async listPlans(f: PlanFilter): Promise<Page<Plan>> {
    // Listing the expired ones at activeAt: those written so, and pending ones past their expiry the sweep
    // has not reached yet (the expiry rule, isPlanOverdue in src/domain/plan-status.ts).
    const expiredAt = f.status === 'expired' ? f.activeAt : undefined;
    const p = new Params();
    const where = equalities(
      [
        ['status', expiredAt === undefined ? f.status : undefined],
        ['session_id', f.sessionId],
        ['job_id', f.jobId],
        ['trigger_id', f.triggerId],
        ['requested_by', f.requestedBy],
      ],
      p,
    );
    if (f.createdBefore !== undefined) where.push(`created_at < ${p.add(f.createdBefore)}`);
    if (f.activeAt !== undefined && f.status === 'pending_approval') {
      // The expiry rule (isPlanOverdue, src/domain/plan-status.ts), negated: still pending at activeAt.
      where.push(`expires_at > ${p.add(f.activeAt)}`);
    }
    if (expiredAt !== undefined) {
      where.push(
        `(status = 'expired' OR (status = 'pending_approval' AND expires_at <= ${p.add(expiredAt)}))`,
      );
    }
    addCursor(f.cursor, where, p, 'asc');
    const columns = f.summary ? 'plans.*, substr(markdown, 1, 300) AS markdown' : 'plans.*';
    const rows = await this.db.rows<PlanRow>(
      `SELECT ${columns}, ${APPROVALS} FROM plans ${whereSql(where)}
       ORDER BY created_at ASC, id ASC LIMIT ${p.add(f.limit + 1)}`,
      p.values,
    );
    return page(
      rows.map((r) => toPlan(r, this.legacyNetwork)),
      f.limit,
    );
  }

  async plansVersion(): Promise<number> {
    // Moved at the commit of any transaction that wrote a plan or a decision (the schema's deferred trigger).
    return (await this.db.value<number>(`SELECT value FROM change_counters WHERE name = 'plans'`)) ?? 0;
  }

  async listDecisions(planId: string): Promise<Decision[]> {
    return decisionsOf(this.db, planId);
  }

  async listPlanRuns(plan: Plan): Promise<Run[]> {
    const rows = await this.db.rows<RunRow>(
      'SELECT * FROM runs WHERE id = $1 OR executes_plan_id = $2 OR revises_plan_id = $2 ORDER BY created_at, id',
      [plan.runId, plan.id],
    );
    return rows.map(toRun);
  }

  async decidePlan(
    planId: string,
    decide: (plan: Plan, decisions: Decision[]) => DecisionEffect,
  ): Promise<{ plan: Plan; decision: Decision; run: Run | null }> {
    return this.db.tx(async (q) => {
      // LOUD: lock first, read after. The plan's row is locked by a statement of its own; the plan, its
      // approvals and decisions are read by the statements after it, each with a snapshot taken once the lock
      // is held (READ COMMITTED), so they include every decision committed before this one. Read in the
      // locking statement itself, the approvals count would come from the snapshot taken before waiting.
      const locked = await q.value<string>('SELECT id FROM plans WHERE id = $1 FOR NO KEY UPDATE', [planId]);
      if (locked === undefined) throw new NotFoundError(`plan ${planId} not found`);
      const row = (await planRow(q, planId))!;
      const effect = decide(toPlan(row, this.legacyNetwork), await decisionsOf(q, planId));
      const d = effect.decision;
      await q.exec(
        `INSERT INTO decisions (id, plan_id, kind, identity, comment, sha256, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [d.id, d.planId, d.kind, d.identity, d.comment, d.sha256, d.createdAt],
      );
      if (effect.planStatus) {
        await q.exec('UPDATE plans SET status = $2, decided_at = $3 WHERE id = $1', [
          planId,
          effect.planStatus,
          d.createdAt,
        ]);
      }
      const run = effect.run ? await insertRun(q, effect.run, 0) : null;
      const plan = toPlan((await planRow(q, planId))!, this.legacyNetwork);
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
    return fencedWrite(
      this.db,
      fence,
      async (q) =>
        (await q.exec(
          `UPDATE plans SET status = $3, failure_reason = CASE WHEN $4::boolean THEN $5 ELSE failure_reason END
           WHERE id = $1 AND status = ANY($2::text[])`,
          [id, from, to, fields.failureReason !== undefined, fields.failureReason ?? null],
        )) === 1,
    );
  }

  async expirePlans(now: number): Promise<number> {
    // The expiry rule (isPlanOverdue, src/domain/plan-status.ts) in SQL: pending, expires_at <= now.
    return this.db.exec(
      `UPDATE plans SET status = 'expired', decided_at = $1 WHERE status = 'pending_approval' AND expires_at <= $1`,
      [now],
    );
  }

  async recentExecutions(since: number, limit: number): Promise<RunStatus[]> {
    const rows = await this.db.rows<{ status: RunStatus }>(
      `SELECT status FROM runs WHERE phase = 'execute' AND finished_at IS NOT NULL AND finished_at >= $1
       AND (error IS NULL OR error NOT LIKE '${TREE_REFUSED}:%')
       ORDER BY finished_at DESC LIMIT $2`,
      [since, limit],
    );
    return rows.map((r) => r.status);
  }

  // ---- plans of a subject (a pull request)

  async supersedePlans(subject: string, exceptDelivery: string | undefined, now: number): Promise<string[]> {
    // A plan being decided meanwhile holds its row: this UPDATE waits for the decision, then leaves the
    // plan alone if it is no longer pending.
    const rows = await this.db.rows<{ id: string }>(
      `UPDATE plans SET status = 'superseded', decided_at = $1
       WHERE subject = $2 AND status = 'pending_approval'
         AND run_id NOT IN (SELECT id FROM runs WHERE delivery_id = $3 AND subject = $2) RETURNING id`,
      [now, subject, exceptDelivery ?? null],
    );
    return rows.map((r) => r.id);
  }

  async pendingPlanForSubject(subject: string): Promise<Plan | null> {
    const row = await this.db.row<PlanRow>(
      `SELECT plans.*, ${APPROVALS} FROM plans WHERE subject = $1 AND status = 'pending_approval'
       ORDER BY created_at DESC, id DESC LIMIT 1`,
      [subject],
    );
    return row ? toPlan(row, this.legacyNetwork) : null;
  }
}

/** A plan's row with its approvals; also inside decidePlan's transaction. */
export async function planRow(q: Queries, id: string): Promise<PlanRow | undefined> {
  return q.row<PlanRow>(`SELECT plans.*, ${APPROVALS} FROM plans WHERE id = $1`, [id]);
}

async function decisionsOf(q: Queries, planId: string): Promise<Decision[]> {
  const rows = await q.rows<DecisionRow>(
    'SELECT * FROM decisions WHERE plan_id = $1 ORDER BY created_at, id',
    [planId],
  );
  return rows.map(toDecision);
}
