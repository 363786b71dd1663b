import type { Decision, Plan, PlanStatus } from '../../domain/types.js';
import { TREE_REFUSED } from '../../domain/types.js';
import type { PlanFilter } from '../plans.js';
import { type Dialect, flag, marks, type Statement } from './dialect.js';
import { addCursor, equalities, whereSql } from './query.js';

// The SQL of plans and their decisions that both backends run as it is written here (`?` placeholders, see
// dialect.ts). Locks and the recognition of a unique violation stay with each backend.

/** Each plan row comes with how many distinct people approved it so far. */
export const APPROVALS = `(SELECT COUNT(*) FROM decisions d WHERE d.plan_id = plans.id AND d.kind = 'approve') AS approvals`;

/** A plan's row with its approvals. Values: plan id. */
export const SELECT_PLAN = `SELECT plans.*, ${APPROVALS} FROM plans WHERE id = ?`;

/** The plan a run proposed with one tool call. Values: run id, tool use id. */
export const SELECT_PLAN_OF_CALL = `SELECT plans.*, ${APPROVALS} FROM plans WHERE run_id = ? AND tool_use_id = ?`;

/** A plan's decisions, oldest first. Values: plan id. */
export const SELECT_DECISIONS = 'SELECT * FROM decisions WHERE plan_id = ? ORDER BY created_at, id';

/** Moved at the commit of any transaction that wrote a plan or a decision (the schema's deferred trigger). */
export const PLANS_VERSION = `SELECT value FROM change_counters WHERE name = 'plans'`;

/** Stores a proposed plan; returns its row (no approvals yet). */
export function insertPlanStatement(p: Plan): Statement {
  return {
    text: `INSERT INTO plans (id, run_id, session_id, conversation_id, tool_use_id, markdown, sha256, workspace_commit,
         status, round, previous_plan_id, requested_by, created_at, job_id, trigger_id, source, expires_at,
         approvals_required, allow_self_approval, execute_mode, network, network_domains, owner, subject, footprint,
         uncommitted)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       RETURNING *, 0 AS approvals`,
    values: [
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
      flag(p.allowSelfApproval),
      p.executeMode,
      flag(p.network.length > 0),
      JSON.stringify(p.network),
      p.owner,
      p.subject,
      p.footprint ? JSON.stringify(p.footprint) : null,
      p.uncommitted ? JSON.stringify(p.uncommitted) : null,
    ],
  };
}

/** The queue: oldest first (or newest, `order`), keyset-paginated, one row more than the page to tell whether another follows. */
export function listPlansStatement(d: Dialect, f: PlanFilter): Statement {
  // Listing the expired ones at activeAt: those written so, and pending ones past their expiry the sweep
  // has not reached yet (the expiry rule, isPlanOverdue in src/domain/plan-status.ts).
  const expiredAt = f.status === 'expired' ? f.activeAt : undefined;
  const { where, values } = equalities([
    ['status', expiredAt === undefined ? f.status : undefined],
    ['session_id', f.sessionId],
    ['job_id', f.jobId],
    ['trigger_id', f.triggerId],
    ['requested_by', f.requestedBy],
  ]);
  if (f.createdBefore !== undefined) {
    where.push('created_at < ?');
    values.push(f.createdBefore);
  }
  if (f.activeAt !== undefined && f.status === 'pending_approval') {
    // The expiry rule (isPlanOverdue, src/domain/plan-status.ts), negated: still pending at activeAt. On
    // SQLite the unary + keeps the planner on plans_queue (status, created_at, id), which serves the order:
    // an index on expires_at would have it read every pending plan and sort them.
    where.push(d.name === 'sqlite' ? '+expires_at > ?' : 'expires_at > ?');
    values.push(f.activeAt);
  }
  if (expiredAt !== undefined) {
    where.push(`(status = 'expired' OR (status = 'pending_approval' AND expires_at <= ?))`);
    values.push(expiredAt);
  }
  const dir = f.order === 'newest' ? 'desc' : 'asc';
  addCursor(f.cursor, where, values, dir);
  const columns = f.summary ? 'plans.*, substr(markdown, 1, 300) AS markdown' : 'plans.*';
  const by = dir === 'desc' ? 'DESC' : 'ASC';
  return {
    text: `SELECT ${columns}, ${APPROVALS} FROM plans ${whereSql(where)} ORDER BY created_at ${by}, id ${by} LIMIT ?`,
    values: [...values, f.limit + 1],
  };
}

/** The runs of a plan: the one that proposed it, its revision round, its execution. Oldest first. */
export function planRunsStatement(plan: Plan): Statement {
  return {
    text: 'SELECT * FROM runs WHERE id = ? OR executes_plan_id = ? OR revises_plan_id = ? ORDER BY created_at, id',
    values: [plan.runId, plan.id, plan.id],
  };
}

export function insertDecisionStatement(d: Decision): Statement {
  return {
    text: `INSERT INTO decisions (id, plan_id, kind, identity, comment, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    values: [d.id, d.planId, d.kind, d.identity, d.comment, d.sha256, d.createdAt],
  };
}

/** A decision's new status for its plan, and for an approval on a moved head, the head it executes from. */
export function decidedStatement(
  planId: string,
  status: PlanStatus,
  at: number,
  executionBase: string | undefined,
): Statement {
  return {
    text: 'UPDATE plans SET status = ?, decided_at = ?, execution_base = COALESCE(?, execution_base) WHERE id = ?',
    values: [status, at, executionBase ?? null, planId],
  };
}

/** Moves a plan from one of `from` to `to`; writes one row when it applied. */
export function transitionPlanStatement(
  id: string,
  from: readonly PlanStatus[],
  to: PlanStatus,
  fields: { failureReason?: string | null },
): Statement {
  return {
    text: `UPDATE plans SET status = ?, failure_reason = CASE WHEN ? THEN ? ELSE failure_reason END
           WHERE id = ? AND status IN (${marks(from)})`,
    values: [to, flag(fields.failureReason !== undefined), fields.failureReason ?? null, id, ...from],
  };
}

/** The expiry rule (isPlanOverdue, src/domain/plan-status.ts) in SQL: pending, expires_at <= now; their ids. */
export function expirePlansStatement(now: number): Statement {
  return {
    text: `UPDATE plans SET status = 'expired', decided_at = ? WHERE status = 'pending_approval' AND expires_at <= ?
       RETURNING id`,
    values: [now, now],
  };
}

/** Statuses of the newest ended execute runs since `since`, the tree's refusals aside. */
export function recentExecutionsStatement(since: number, limit: number): Statement {
  return {
    text: `SELECT status FROM runs WHERE phase = 'execute' AND finished_at IS NOT NULL AND finished_at >= ?
       AND (error IS NULL OR error NOT LIKE '${TREE_REFUSED}:%')
       ORDER BY finished_at DESC LIMIT ?`,
    values: [since, limit],
  };
}

/** Pending plans of a subject become superseded, but those of runs `exceptDelivery` started; their ids. */
export function supersedePlansStatement(
  subject: string,
  exceptDelivery: string | undefined,
  now: number,
): Statement {
  return {
    text: `UPDATE plans SET status = 'superseded', decided_at = ?
       WHERE subject = ? AND status = 'pending_approval'
         AND run_id NOT IN (SELECT id FROM runs WHERE delivery_id = ? AND subject = ?) RETURNING id`,
    values: [now, subject, exceptDelivery ?? null, subject],
  };
}

/** The newest plan of a subject still pending approval. Values: subject. */
export const PENDING_PLAN_OF_SUBJECT = `SELECT plans.*, ${APPROVALS} FROM plans WHERE subject = ? AND status = 'pending_approval'
  ORDER BY created_at DESC, id DESC LIMIT 1`;
