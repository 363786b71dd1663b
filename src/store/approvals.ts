import type { Question, QuestionStatus, ToolApproval, ToolApprovalStatus } from '../domain/types.js';
import type { Fence } from './leases.js';

/** A run's requests to a person: questions and tool approvals. */
export interface ApprovalStore {
  // ---- questions
  createQuestion(
    q: Omit<Question, 'status' | 'answers' | 'answeredBy' | 'resolvedAt'>,
    fence?: Fence,
  ): Promise<Question>;
  getQuestion(id: string): Promise<Question | null>;
  findQuestion(runId: string, toolUseId: string): Promise<Question | null>;
  listQuestions(filter: { status?: QuestionStatus; runId?: string; limit: number }): Promise<Question[]>;
  /** pending -> answered; false when the question is not pending any more (someone else won). */
  answerQuestion(
    id: string,
    answers: Record<string, string | string[]>,
    by: string,
    now: number,
  ): Promise<boolean>;
  /** pending -> timed_out | canceled; false when not pending. */
  closeQuestion(id: string, status: 'timed_out' | 'canceled', now: number): Promise<boolean>;
  listExpiredQuestions(now: number, limit: number): Promise<Question[]>;

  // ---- tool approvals
  createToolApproval(
    a: Omit<ToolApproval, 'status' | 'message' | 'decidedBy' | 'decidedAt'>,
    fence?: Fence,
  ): Promise<ToolApproval>;
  getToolApproval(id: string): Promise<ToolApproval | null>;
  findToolApproval(runId: string, toolUseId: string): Promise<ToolApproval | null>;
  listToolApprovals(filter: {
    status?: ToolApprovalStatus;
    runId?: string;
    limit: number;
  }): Promise<ToolApproval[]>;
  /** pending -> allowed | denied | timed_out | canceled; false when no longer pending. */
  resolveToolApproval(
    id: string,
    status: Exclude<ToolApprovalStatus, 'pending'>,
    by: string | null,
    message: string | null,
    now: number,
  ): Promise<boolean>;
  listExpiredToolApprovals(now: number, limit: number): Promise<ToolApproval[]>;
}
