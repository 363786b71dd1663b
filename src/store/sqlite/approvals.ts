import type { Question, QuestionStatus, ToolApproval, ToolApprovalStatus } from '../../domain/types.js';
import type { ApprovalStore } from '../approvals.js';
import type { Fence } from '../leases.js';
import { type QuestionRow, type ToolApprovalRow, toQuestion, toToolApproval } from '../rows.js';
import { equalities, whereSql } from '../sql/query.js';
import type { SqliteDb } from './db.js';
import { fencedWrite } from './fence.js';

/** A run's requests to a person: questions and tool approvals. */
export class SqliteApprovals implements ApprovalStore {
  private readonly questions: RunRequests<QuestionRow, Question>;
  private readonly toolApprovals: RunRequests<ToolApprovalRow, ToolApproval>;

  constructor(private readonly db: SqliteDb) {
    this.questions = new RunRequests(db, 'questions', toQuestion);
    this.toolApprovals = new RunRequests(db, 'tool_approvals', toToolApproval);
  }

  // ---- questions

  async createQuestion(
    q: Omit<Question, 'status' | 'answers' | 'answeredBy' | 'resolvedAt'>,
    fence?: Fence,
  ): Promise<Question> {
    fencedWrite(this.db, fence, () =>
      this.db
        .sql(
          `INSERT INTO questions (id, run_id, session_id, tool_use_id, questions, status, prior_results, created_at,
         expires_at)
       VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
        )
        .run(
          q.id,
          q.runId,
          q.sessionId,
          q.toolUseId,
          JSON.stringify(q.questions),
          JSON.stringify(q.priorResults),
          q.createdAt,
          q.expiresAt,
        ),
    );
    return (await this.getQuestion(q.id))!;
  }

  async getQuestion(id: string): Promise<Question | null> {
    return this.questions.byId(id);
  }

  async findQuestion(runId: string, toolUseId: string): Promise<Question | null> {
    return this.questions.byToolUse(runId, toolUseId);
  }

  async listQuestions(f: { status?: QuestionStatus; runId?: string; limit: number }): Promise<Question[]> {
    return this.questions.list(f);
  }

  async answerQuestion(
    id: string,
    answers: Record<string, string | string[]>,
    by: string,
    now: number,
  ): Promise<boolean> {
    return (
      this.db
        .sql(
          `UPDATE questions SET status = 'answered', answers = ?, answered_by = ?, resolved_at = ?
         WHERE id = ? AND status = 'pending'`,
        )
        .run(JSON.stringify(answers), by, now, id).changes === 1
    );
  }

  async closeQuestion(id: string, status: 'timed_out' | 'canceled', now: number): Promise<boolean> {
    return (
      this.db
        .sql(`UPDATE questions SET status = ?, resolved_at = ? WHERE id = ? AND status = 'pending'`)
        .run(status, now, id).changes === 1
    );
  }

  async listExpiredQuestions(now: number, limit: number): Promise<Question[]> {
    return this.questions.expired(now, limit);
  }

  // ---- tool approvals

  async createToolApproval(
    a: Omit<ToolApproval, 'status' | 'message' | 'decidedBy' | 'decidedAt'>,
    fence?: Fence,
  ): Promise<ToolApproval> {
    fencedWrite(this.db, fence, () =>
      this.db
        .sql(
          `INSERT INTO tool_approvals (id, run_id, session_id, plan_id, tool_use_id, tool, input, input_sha256, status,
         prior_results, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
        )
        .run(
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
        ),
    );
    return (await this.getToolApproval(a.id))!;
  }

  async getToolApproval(id: string): Promise<ToolApproval | null> {
    return this.toolApprovals.byId(id);
  }

  async findToolApproval(runId: string, toolUseId: string): Promise<ToolApproval | null> {
    return this.toolApprovals.byToolUse(runId, toolUseId);
  }

  async listToolApprovals(f: {
    status?: ToolApprovalStatus;
    runId?: string;
    limit: number;
  }): Promise<ToolApproval[]> {
    return this.toolApprovals.list(f);
  }

  async resolveToolApproval(
    id: string,
    status: Exclude<ToolApprovalStatus, 'pending'>,
    by: string | null,
    message: string | null,
    now: number,
  ): Promise<boolean> {
    return (
      this.db
        .sql(
          `UPDATE tool_approvals SET status = ?, decided_by = ?, message = ?, decided_at = ?
         WHERE id = ? AND status = 'pending'`,
        )
        .run(status, by, message, now, id).changes === 1
    );
  }

  async listExpiredToolApprovals(now: number, limit: number): Promise<ToolApproval[]> {
    return this.toolApprovals.expired(now, limit);
  }
}

/**
 * What questions and tool approvals share: both are a run's requests to a person, in tables with the same
 * lookup columns (id, run_id, tool_use_id, status, created_at, expires_at), answered or expiring.
 */
class RunRequests<R, T> {
  constructor(
    private readonly db: SqliteDb,
    private readonly table: 'questions' | 'tool_approvals',
    private readonly to: (row: R) => T,
  ) {}

  byId(id: string): T | null {
    const row = this.db.sql(`SELECT * FROM ${this.table} WHERE id = ?`).get(id) as R | undefined;
    return row ? this.to(row) : null;
  }

  byToolUse(runId: string, toolUseId: string): T | null {
    const row = this.db
      .sql(`SELECT * FROM ${this.table} WHERE run_id = ? AND tool_use_id = ?`)
      .get(runId, toolUseId) as R | undefined;
    return row ? this.to(row) : null;
  }

  list(f: { status?: string; runId?: string; limit: number }): T[] {
    const { where, values: args } = equalities([
      ['status', f.status],
      ['run_id', f.runId],
    ]);
    const rows = this.db
      .sql(`SELECT * FROM ${this.table} ${whereSql(where)} ORDER BY created_at, id LIMIT ?`)
      .all(...args, f.limit) as R[];
    return rows.map(this.to);
  }

  expired(now: number, limit: number): T[] {
    const rows = this.db
      .sql(
        `SELECT * FROM ${this.table} WHERE status = 'pending' AND expires_at <= ? ORDER BY expires_at LIMIT ?`,
      )
      .all(now, limit) as R[];
    return rows.map(this.to);
  }
}
