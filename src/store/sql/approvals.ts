import type { Question, ToolApproval, ToolApprovalStatus } from '../../domain/types.js';
import type { Statement } from './dialect.js';
import { equalities, whereSql } from './query.js';

// The SQL of a run's requests to a person (questions and tool approvals) that both backends run as written
// here (`?` placeholders, see dialect.ts). Each answer is one UPDATE guarded by `status = 'pending'`: of two
// answers at once the second finds the request no longer pending and changes nothing.

/** The tables of a run's requests to a person, which share their lookup columns. */
export type RequestTable = 'questions' | 'tool_approvals';

export function requestByIdStatement(table: RequestTable, id: string): Statement {
  return { text: `SELECT * FROM ${table} WHERE id = ?`, values: [id] };
}

export function requestByToolUseStatement(table: RequestTable, runId: string, toolUseId: string): Statement {
  return { text: `SELECT * FROM ${table} WHERE run_id = ? AND tool_use_id = ?`, values: [runId, toolUseId] };
}

export function listRequestsStatement(
  table: RequestTable,
  f: { status?: string; runId?: string; limit: number },
): Statement {
  const { where, values } = equalities([
    ['status', f.status],
    ['run_id', f.runId],
  ]);
  return {
    text: `SELECT * FROM ${table} ${whereSql(where)} ORDER BY created_at, id LIMIT ?`,
    values: [...values, f.limit],
  };
}

/** Pending requests past their expiry at `now`, the earliest first. */
export function expiredRequestsStatement(table: RequestTable, now: number, limit: number): Statement {
  return {
    text: `SELECT * FROM ${table} WHERE status = 'pending' AND expires_at <= ? ORDER BY expires_at, id LIMIT ?`,
    values: [now, limit],
  };
}

/** Stores a pending question; returns its row. */
export function insertQuestionStatement(
  q: Omit<Question, 'status' | 'answers' | 'answeredBy' | 'resolvedAt'>,
): Statement {
  return {
    text: `INSERT INTO questions (id, run_id, session_id, tool_use_id, questions, status, prior_results, created_at,
         expires_at)
       VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?) RETURNING *`,
    values: [
      q.id,
      q.runId,
      q.sessionId,
      q.toolUseId,
      JSON.stringify(q.questions),
      JSON.stringify(q.priorResults),
      q.createdAt,
      q.expiresAt,
    ],
  };
}

/** pending -> answered; writes one row when the question was still pending. */
export function answerQuestionStatement(
  id: string,
  answers: Record<string, string | string[]>,
  by: string,
  now: number,
): Statement {
  return {
    text: `UPDATE questions SET status = 'answered', answers = ?, answered_by = ?, resolved_at = ?
           WHERE id = ? AND status = 'pending'`,
    values: [JSON.stringify(answers), by, now, id],
  };
}

/** pending -> timed_out | canceled; writes one row when the question was still pending. */
export function closeQuestionStatement(id: string, status: 'timed_out' | 'canceled', now: number): Statement {
  return {
    text: `UPDATE questions SET status = ?, resolved_at = ? WHERE id = ? AND status = 'pending'`,
    values: [status, now, id],
  };
}

/** Stores a pending tool approval; returns its row. */
export function insertToolApprovalStatement(
  a: Omit<ToolApproval, 'status' | 'message' | 'decidedBy' | 'decidedAt'>,
): Statement {
  return {
    text: `INSERT INTO tool_approvals (id, run_id, session_id, plan_id, tool_use_id, tool, input, input_sha256, status,
         prior_results, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?) RETURNING *`,
    values: [
      a.id,
      a.runId,
      a.sessionId,
      a.planId,
      a.toolUseId,
      a.tool,
      JSON.stringify(a.input),
      a.inputSha256,
      JSON.stringify(a.priorResults),
      a.createdAt,
      a.expiresAt,
    ],
  };
}

/** pending -> allowed | denied | timed_out | canceled; writes one row when it was still pending. */
export function resolveToolApprovalStatement(
  id: string,
  status: Exclude<ToolApprovalStatus, 'pending'>,
  by: string | null,
  message: string | null,
  now: number,
): Statement {
  return {
    text: `UPDATE tool_approvals SET status = ?, decided_by = ?, message = ?, decided_at = ?
           WHERE id = ? AND status = 'pending'`,
    values: [status, by, message, now, id],
  };
}
