// Domain records as the rest of drydock sees them. Times are epoch milliseconds; the HTTP layer turns them
// into ISO-8601 strings. Nothing here knows which database holds them.

export const ROLES = ['admin', 'operator', 'approver', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export interface ApiToken {
  id: string;
  name: string;
  identity: string;
  role: Role;
  secretHash: Buffer;
  createdAt: number;
  revokedAt: number | null;
}

export const EXECUTE_MODES = ['manual', 'edits', 'auto'] as const;
export type ExecuteMode = (typeof EXECUTE_MODES)[number];

/** Per-session defaults; a job may override any of them. */
export interface RunDefaults {
  model?: string | undefined;
  thinking?: { enabled: boolean; budget_tokens?: number | undefined } | undefined;
  budget_usd?: number | undefined;
  max_turns?: number | undefined;
  approvals_required?: number | undefined;
  allow_self_approval?: boolean | undefined;
  execute_mode?: ExecuteMode | undefined;
}

export type SessionStatus = 'open' | 'closed';

export interface Session {
  id: string;
  name: string;
  workspace: string;
  owner: string;
  defaults: RunDefaults;
  status: SessionStatus;
  createdAt: number;
  closedAt: number | null;
}

export type JobStatus = 'active' | 'paused' | 'missed';

export interface CronJob {
  id: string;
  sessionId: string;
  cron: string;
  effectiveCron: string;
  timezone: string;
  prompt: string;
  recurring: boolean;
  approximate: boolean;
  options: RunDefaults;
  status: JobStatus;
  createdBy: string;
  createdAt: number;
  expiresAt: number | null;
  nextNominalAt: number | null;
  nextDueAt: number | null;
  nextFinal: boolean;
  /** A slot that came due while the session was busy; it fires when the session is idle. */
  pendingSlotAt: number | null;
  pendingFinal: boolean;
  /** Slots folded into the pending one so far. */
  pendingCoalesced: number;
  lastSlotAt: number | null;
  fireCount: number;
}

export type RunSource = 'schedule' | 'manual' | 'delivery';
export type RunPhase = 'plan' | 'execute';
export const ACTIVE_RUN_STATUSES = ['queued', 'running', 'awaiting_input'] as const;
export type RunStatus =
  | (typeof ACTIVE_RUN_STATUSES)[number]
  | 'planned'
  | 'completed'
  | 'failed'
  | 'canceled'
  | 'budget_exceeded'
  | 'interrupted';

export interface Run {
  id: string;
  sessionId: string;
  jobId: string | null;
  slotAt: number | null;
  source: RunSource;
  phase: RunPhase;
  status: RunStatus;
  prompt: string;
  requestedBy: string;
  coalescedSlots: number;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  error: string | null;
}

export type SlotOutcome = 'fired' | 'coalesced' | 'missed';

/** What became of one slot, or of a range of slots (missed ranges are stored as one row). */
export interface SlotRecord {
  jobId: string;
  slotAt: number;
  lastSlotAt: number;
  slots: number;
  outcome: SlotOutcome;
  runId: string | null;
  recordedAt: number;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
