import type { Question, QuestionStatus, ToolApproval, ToolApprovalStatus } from '../../domain/types.js';
import type { ApprovalStore } from '../approvals.js';
import type { Fence } from '../leases.js';
import { type QuestionRow, type ToolApprovalRow, toQuestion, toToolApproval } from '../rows.js';
import { equalities, json, Params, type PgDb, whereSql } from './db.js';
import { fencedWrite } from './fence.js';

/** The tables of a run's requests to a person, which share their columns for lookups. */
type RequestTable = 'questions' | 'tool_approvals';

/**
 * A run's requests to a person: questions and tool approvals, answered or expiring. Each answer is one
 * UPDATE guarded by `status = 'pending'`: of two answers at once, the second waits for the first's row lock,
 * finds the request no longer pending (READ COMMITTED re-checks the condition on the new row version) and
 * changes nothing.
 */
export class PgApprovals implements ApprovalStore {
  constructor(private readonly db: PgDb) {}

  // ---- questions

  async createQuestion(
    q: Omit<Question, 'status' | 'answers' | 'answeredBy' | 'resolvedAt'>,
    fence?: Fence,
  ): Promise<Question> {
    const row = await fencedWrite(this.db, fence, (db) =>
      db.row<QuestionRow>(
        `INSERT INTO questions (id, run_id, session_id, tool_use_id, questions, status, prior_results, created_at,
         expires_at)
       VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8) RETURNING *`,
        [
          q.id,
          q.runId,
          q.sessionId,
          q.toolUseId,
          json(q.questions),
          json(q.priorResults),
          q.createdAt,
          q.expiresAt,
        ],
      ),
    );
    return toQuestion(row!);
  }

  async getQuestion(id: string): Promise<Question | null> {
    return requestById(this.db, 'questions', toQuestion, id);
  }

  async findQuestion(runId: string, toolUseId: string): Promise<Question | null> {
    return requestByToolUse(this.db, 'questions', toQuestion, runId, toolUseId);
  }

  async listQuestions(f: { status?: QuestionStatus; runId?: string; limit: number }): Promise<Question[]> {
    return listRequests(this.db, 'questions', toQuestion, f);
  }

  async answerQuestion(
    id: string,
    answers: Record<string, string | string[]>,
    by: string,
    now: number,
  ): Promise<boolean> {
    return (
      (await this.db.exec(
        `UPDATE questions SET status = 'answered', answers = $2, answered_by = $3, resolved_at = $4
         WHERE id = $1 AND status = 'pending'`,
        [id, json(answers), by, now],
      )) === 1
    );
  }

  async closeQuestion(id: string, status: 'timed_out' | 'canceled', now: number): Promise<boolean> {
    return (
      (await this.db.exec(
        `UPDATE questions SET status = $2, resolved_at = $3 WHERE id = $1 AND status = 'pending'`,
        [id, status, now],
      )) === 1
    );
  }

  async listExpiredQuestions(now: number, limit: number): Promise<Question[]> {
    return expiredRequests(this.db, 'questions', toQuestion, now, limit);
  }

  // ---- tool approvals

  async createToolApproval(
    a: Omit<ToolApproval, 'status' | 'message' | 'decidedBy' | 'decidedAt'>,
    fence?: Fence,
  ): Promise<ToolApproval> {
    const row = await fencedWrite(this.db, fence, (db) =>
      db.row<ToolApprovalRow>(
        `INSERT INTO tool_approvals (id, run_id, session_id, plan_id, tool_use_id, tool, input, input_sha256, status,
         prior_results, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $10, $11) RETURNING *`,
        [
          a.id,
          a.runId,
          a.sessionId,
          a.planId,
          a.toolUseId,
          a.tool,
          json(a.input),
          a.inputSha256,
          json(a.priorResults),
          a.createdAt,
          a.expiresAt,
        ],
      ),
    );
    return toToolApproval(row!);
  }

  async getToolApproval(id: string): Promise<ToolApproval | null> {
    return requestById(this.db, 'tool_approvals', toToolApproval, id);
  }

  async findToolApproval(runId: string, toolUseId: string): Promise<ToolApproval | null> {
    return requestByToolUse(this.db, 'tool_approvals', toToolApproval, runId, toolUseId);
  }

  async listToolApprovals(f: {
    status?: ToolApprovalStatus;
    runId?: string;
    limit: number;
  }): Promise<ToolApproval[]> {
    return listRequests(this.db, 'tool_approvals', toToolApproval, f);
  }

  async resolveToolApproval(
    id: string,
    status: Exclude<ToolApprovalStatus, 'pending'>,
    by: string | null,
    message: string | null,
    now: number,
  ): Promise<boolean> {
    return (
      (await this.db.exec(
        `UPDATE tool_approvals SET status = $2, decided_by = $3, message = $4, decided_at = $5
         WHERE id = $1 AND status = 'pending'`,
        [id, status, by, message, now],
      )) === 1
    );
  }

  async listExpiredToolApprovals(now: number, limit: number): Promise<ToolApproval[]> {
    return expiredRequests(this.db, 'tool_approvals', toToolApproval, now, limit);
  }
}

// ---- what questions and tool approvals share (module functions: a part's methods all become the store's)

async function requestById<R, T>(
  db: PgDb,
  table: RequestTable,
  to: (row: R) => T,
  id: string,
): Promise<T | null> {
  const row = await db.row<R>(`SELECT * FROM ${table} WHERE id = $1`, [id]);
  return row ? to(row) : null;
}

async function requestByToolUse<R, T>(
  db: PgDb,
  table: RequestTable,
  to: (row: R) => T,
  runId: string,
  toolUseId: string,
): Promise<T | null> {
  const row = await db.row<R>(`SELECT * FROM ${table} WHERE run_id = $1 AND tool_use_id = $2`, [
    runId,
    toolUseId,
  ]);
  return row ? to(row) : null;
}

async function listRequests<R, T>(
  db: PgDb,
  table: RequestTable,
  to: (row: R) => T,
  f: { status?: string; runId?: string; limit: number },
): Promise<T[]> {
  const p = new Params();
  const where = equalities(
    [
      ['status', f.status],
      ['run_id', f.runId],
    ],
    p,
  );
  const rows = await db.rows<R>(
    `SELECT * FROM ${table} ${whereSql(where)} ORDER BY created_at, id LIMIT ${p.add(f.limit)}`,
    p.values,
  );
  return rows.map(to);
}

async function expiredRequests<R, T>(
  db: PgDb,
  table: RequestTable,
  to: (row: R) => T,
  now: number,
  limit: number,
): Promise<T[]> {
  const rows = await db.rows<R>(
    `SELECT * FROM ${table} WHERE status = 'pending' AND expires_at <= $1 ORDER BY expires_at, id LIMIT $2`,
    [now, limit],
  );
  return rows.map(to);
}
