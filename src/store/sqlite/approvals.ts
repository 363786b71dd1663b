import type { Question, QuestionStatus, ToolApproval, ToolApprovalStatus } from '../../domain/types.js';
import type { ApprovalStore } from '../approvals.js';
import type { Fence } from '../leases.js';
import { type QuestionRow, type ToolApprovalRow, toQuestion, toToolApproval } from '../rows.js';
import * as sql from '../sql/approvals.js';
import type { Statement } from '../sql/dialect.js';
import type { SqliteDb } from './db.js';
import { fencedWrite } from './fence.js';

/** A run's requests to a person: questions and tool approvals (their SQL: sql/approvals.ts). */
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
    const { text, values } = sql.insertQuestionStatement(q);
    return toQuestion(fencedWrite(this.db, fence, () => this.db.sql(text).get(...values) as QuestionRow));
  }

  async getQuestion(id: string): Promise<Question | null> {
    return this.questions.one(sql.requestByIdStatement('questions', id));
  }

  async findQuestion(runId: string, toolUseId: string): Promise<Question | null> {
    return this.questions.one(sql.requestByToolUseStatement('questions', runId, toolUseId));
  }

  async listQuestions(f: { status?: QuestionStatus; runId?: string; limit: number }): Promise<Question[]> {
    return this.questions.all(sql.listRequestsStatement('questions', f));
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
    return this.questions.all(sql.expiredRequestsStatement('questions', now, limit));
  }

  // ---- tool approvals

  async createToolApproval(
    a: Omit<ToolApproval, 'status' | 'message' | 'decidedBy' | 'decidedAt'>,
    fence?: Fence,
  ): Promise<ToolApproval> {
    const { text, values } = sql.insertToolApprovalStatement(a);
    return toToolApproval(
      fencedWrite(this.db, fence, () => this.db.sql(text).get(...values) as ToolApprovalRow),
    );
  }

  async getToolApproval(id: string): Promise<ToolApproval | null> {
    return this.toolApprovals.one(sql.requestByIdStatement('tool_approvals', id));
  }

  async findToolApproval(runId: string, toolUseId: string): Promise<ToolApproval | null> {
    return this.toolApprovals.one(sql.requestByToolUseStatement('tool_approvals', runId, toolUseId));
  }

  async listToolApprovals(f: {
    status?: ToolApprovalStatus;
    runId?: string;
    limit: number;
  }): Promise<ToolApproval[]> {
    return this.toolApprovals.all(sql.listRequestsStatement('tool_approvals', f));
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
    return this.toolApprovals.all(sql.expiredRequestsStatement('tool_approvals', now, limit));
  }
}

/** Runs a statement that writes at most one row; whether it wrote one. */
function writesOne(db: SqliteDb, { text, values }: Statement): boolean {
  return db.sql(text).run(...values).changes === 1;
}

/** Reads of one kind of request (questions or tool approvals), mapped to its records. */
class RunRequests<R, T> {
  constructor(
    private readonly db: SqliteDb,
    readonly table: sql.RequestTable,
    private readonly to: (row: R) => T,
  ) {}

  one({ text, values }: Statement): T | null {
    const row = this.db.sql(text).get(...values) as R | undefined;
    return row ? this.to(row) : null;
  }

  all({ text, values }: Statement): T[] {
    return (this.db.sql(text).all(...values) as R[]).map(this.to);
  }
}
