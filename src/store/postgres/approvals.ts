import type { Question, QuestionStatus, ToolApproval, ToolApprovalStatus } from '../../domain/types.js';
import type { ApprovalStore } from '../approvals.js';
import type { Fence } from '../leases.js';
import { type QuestionRow, type ToolApprovalRow, toQuestion, toToolApproval } from '../rows.js';
import * as sql from '../sql/approvals.js';
import type { Statement } from '../sql/dialect.js';
import type { PgDb } from './db.js';
import { fencedWrite } from './fence.js';

/**
 * A run's requests to a person: questions and tool approvals, answered or expiring (their SQL:
 * sql/approvals.ts). Each answer is one UPDATE guarded by `status = 'pending'`: of two answers at once, the
 * second waits for the first's row lock, finds the request no longer pending (READ COMMITTED re-checks the
 * condition on the new row version) and changes nothing.
 */
export class PgApprovals implements ApprovalStore {
  constructor(private readonly db: PgDb) {}

  // ---- questions

  async createQuestion(
    q: Omit<Question, 'status' | 'answers' | 'answeredBy' | 'resolvedAt'>,
    fence?: Fence,
  ): Promise<Question> {
    const { text, values } = sql.insertQuestionStatement(q);
    return toQuestion((await fencedWrite(this.db, fence, (db) => db.row<QuestionRow>(text, values)))!);
  }

  async getQuestion(id: string): Promise<Question | null> {
    return one(this.db, toQuestion, sql.requestByIdStatement('questions', id));
  }

  async findQuestion(runId: string, toolUseId: string): Promise<Question | null> {
    return one(this.db, toQuestion, sql.requestByToolUseStatement('questions', runId, toolUseId));
  }

  async listQuestions(f: { status?: QuestionStatus; runId?: string; limit: number }): Promise<Question[]> {
    return all(this.db, toQuestion, sql.listRequestsStatement('questions', f));
  }

  async answerQuestion(
    id: string,
    answers: Record<string, string | string[]>,
    by: string,
    now: number,
  ): Promise<boolean> {
    return writesOne(this.db, sql.answerQuestionStatement(id, answers, by, now));
  }

  async closeQuestion(id: string, status: 'timed_out' | 'canceled', now: number): Promise<boolean> {
    return writesOne(this.db, sql.closeQuestionStatement(id, status, now));
  }

  async listExpiredQuestions(now: number, limit: number): Promise<Question[]> {
    return all(this.db, toQuestion, sql.expiredRequestsStatement('questions', now, limit));
  }

  // ---- tool approvals

  async createToolApproval(
    a: Omit<ToolApproval, 'status' | 'message' | 'decidedBy' | 'decidedAt'>,
    fence?: Fence,
  ): Promise<ToolApproval> {
    const { text, values } = sql.insertToolApprovalStatement(a);
    return toToolApproval(
      (await fencedWrite(this.db, fence, (db) => db.row<ToolApprovalRow>(text, values)))!,
    );
  }

  async getToolApproval(id: string): Promise<ToolApproval | null> {
    return one(this.db, toToolApproval, sql.requestByIdStatement('tool_approvals', id));
  }

  async findToolApproval(runId: string, toolUseId: string): Promise<ToolApproval | null> {
    return one(this.db, toToolApproval, sql.requestByToolUseStatement('tool_approvals', runId, toolUseId));
  }

  async listToolApprovals(f: {
    status?: ToolApprovalStatus;
    runId?: string;
    limit: number;
  }): Promise<ToolApproval[]> {
    return all(this.db, toToolApproval, sql.listRequestsStatement('tool_approvals', f));
  }

  async resolveToolApproval(
    id: string,
    status: Exclude<ToolApprovalStatus, 'pending'>,
    by: string | null,
    message: string | null,
    now: number,
  ): Promise<boolean> {
    return writesOne(this.db, sql.resolveToolApprovalStatement(id, status, by, message, now));
  }

  async listExpiredToolApprovals(now: number, limit: number): Promise<ToolApproval[]> {
    return all(this.db, toToolApproval, sql.expiredRequestsStatement('tool_approvals', now, limit));
  }
}

// ---- running a request's statement (module functions: a part's methods all become the store's)

async function one<R, T>(db: PgDb, to: (row: R) => T, { text, values }: Statement): Promise<T | null> {
  const row = await db.row<R>(text, values);
  return row ? to(row) : null;
}

async function all<R, T>(db: PgDb, to: (row: R) => T, { text, values }: Statement): Promise<T[]> {
  return (await db.rows<R>(text, values)).map(to);
}

async function writesOne(db: PgDb, { text, values }: Statement): Promise<boolean> {
  return (await db.exec(text, values)) === 1;
}
