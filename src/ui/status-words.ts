import type {
  PlanDeliveryStatus,
  PlanStatus,
  QuestionStatus,
  RunStatus,
  ToolApprovalStatus,
} from '../domain/types.js';
import { html, type SafeHtml } from './html.js';

// The words the pages print for a status, in one place. The stored value (`pending_approval`,
// `awaiting_input`…) stays on the element, as data-status and as its title, for whoever needs the exact one.

const PLAN: Record<PlanStatus, string> = {
  pending_approval: 'waiting for approval',
  approved: 'approved',
  executing: 'executing',
  executed: 'executed',
  execution_failed: 'execution failed',
  rejected: 'rejected',
  revision_requested: 'changes requested',
  expired: 'expired',
  superseded: 'superseded',
};

const RUN: Record<RunStatus, string> = {
  queued: 'queued',
  running: 'running',
  awaiting_input: 'waiting for a person',
  planned: 'plan proposed',
  completed: 'completed',
  failed: 'failed',
  canceled: 'canceled',
  budget_exceeded: 'over its budget',
  interrupted: 'interrupted',
  refused: 'refused by the model',
};

const QUESTION: Record<QuestionStatus, string> = {
  pending: 'waiting for an answer',
  answered: 'answered',
  timed_out: 'timed out',
  canceled: 'canceled',
};

const TOOL_APPROVAL: Record<ToolApprovalStatus, string> = {
  pending: 'waiting for a decision',
  allowed: 'allowed',
  denied: 'denied',
  timed_out: 'timed out',
  canceled: 'canceled',
};

const DELIVERY: Record<PlanDeliveryStatus, string> = {
  off: 'off',
  pending: 'waiting for its first attempt',
  retrying: 'retrying',
  delivered: 'delivered',
  failed: 'failed',
};

export const STATUS_WORDS = {
  plan: PLAN,
  run: RUN,
  question: QUESTION,
  tool_approval: TOOL_APPROVAL,
  delivery: DELIVERY,
} as const;

export type StatusKind = keyof typeof STATUS_WORDS;

/** The words for a status; a value the map does not know (a newer daemon's) is shown with its underscores as spaces. */
export function statusWords(kind: StatusKind, status: string): string {
  const words = STATUS_WORDS[kind] as Record<string, string>;
  return Object.hasOwn(words, status) ? words[status]! : status.replace(/_/g, ' ');
}

/** The words in a span that keeps the stored value (data-status, and the title shown on hover). */
export function statusTag(kind: StatusKind, status: string, id?: string): SafeHtml {
  return html`<span class="status"${id ? html` id="${id}"` : ''} data-status="${status}" title="${status}">${statusWords(kind, status)}</span>`;
}
