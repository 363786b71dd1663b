import { normalizedDomains } from '../domain/network.js';
import type {
  ApiToken,
  CronJob,
  Decision,
  DeliveryTarget,
  Notification,
  NotificationStatus,
  Plan,
  PlanDelivery,
  PlanDeliveryStatus,
  Question,
  Run,
  RunEvent,
  Session,
  SlotRecord,
  ToolApproval,
  ToolCall,
  Trigger,
  UiSession,
  WebhookDelivery,
} from '../domain/types.js';
import type { RecentSlot } from './jobs.js';
import type { PlanDeliveryPatch } from './outbox.js';

// Row shapes as both stores read them, and their mapping to domain records. The shapes are SQLite's (times
// as millisecond numbers, JSON as text, booleans as 1/0); the PostgreSQL pool's type parsers return its rows
// in the same shapes (src/store/postgres/db.ts), so one mapping serves both.

export interface TokenRow {
  id: string;
  name: string;
  identity: string;
  role: ApiToken['role'];
  secret_hash: Buffer;
  created_at: number;
  revoked_at: number | null;
}

export interface UiSessionRow {
  id_hash: Buffer;
  token_id: string;
  identity: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

export interface SessionRow {
  id: string;
  name: string;
  workspace: string;
  owner: string;
  defaults: string;
  workspace_kind: Session['workspaceKind'];
  status: Session['status'];
  created_at: number;
  closed_at: number | null;
  scope_key: string | null;
  limits: string;
}

export interface JobRow {
  id: string;
  session_id: string;
  name: string | null;
  cron: string;
  effective_cron: string;
  timezone: string;
  prompt: string;
  recurring: number;
  approximate: number;
  options: string;
  status: CronJob['status'];
  created_by: string;
  created_at: number;
  expires_at: number | null;
  next_nominal_at: number | null;
  next_due_at: number | null;
  next_final: number;
  pending_slot_at: number | null;
  pending_count: number;
  pending_final: number;
  last_slot_at: number | null;
  fire_count: number;
  trigger_id: string | null;
  renewals: number;
  renewed_at: number | null;
  renewed_by: string | null;
  overlap: CronJob['overlap'];
  jitter_max_seconds: number | null;
  /** JSON array of ms. */
  buffered_slots: string;
}

export interface RunRow {
  id: string;
  session_id: string;
  job_id: string | null;
  slot_at: number | null;
  source: Run['source'];
  phase: Run['phase'];
  status: Run['status'];
  prompt: string;
  requested_by: string;
  coalesced_slots: number;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  active_ms: number;
  error: string | null;
  conversation_id: string | null;
  model: string | null;
  overrides: string;
  settings: string;
  turns: number;
  usage: string;
  cost_usd: number;
  plan_id: string | null;
  attempt: number;
  revises_plan_id: string | null;
  executes_plan_id: string | null;
  execute_mode: Run['executeMode'];
  result_commit: string | null;
  diff_stat: string | null;
  changed_files: string | null;
  trigger_id: string | null;
  delivery_id: string | null;
  subject: string | null;
  checkout: string | null;
  /** JSON (Run.planningBase); absent on a database from before it. */
  planning_base?: string | null;
  waiting_on: 'spend_limit' | 'spend_cap' | null;
  waiting_until: number | null;
  /** The replica executing a running run, and until when (ms) it holds it: the store's own, not in Run. */
  claimed_by: string | null;
  lease_until: number | null;
}

export interface EventRow {
  run_id: string;
  seq: number;
  type: string;
  data: string;
  at: number;
}

export interface QuestionRow {
  id: string;
  run_id: string;
  session_id: string;
  tool_use_id: string;
  questions: string;
  status: Question['status'];
  answers: string | null;
  answered_by: string | null;
  prior_results: string;
  created_at: number;
  expires_at: number;
  resolved_at: number | null;
}

export interface PlanRow extends PlanDeliveryRow {
  id: string;
  run_id: string;
  session_id: string;
  conversation_id: string;
  tool_use_id: string;
  markdown: string;
  sha256: string;
  workspace_commit: string | null;
  status: Plan['status'];
  round: number;
  previous_plan_id: string | null;
  requested_by: string;
  created_at: number;
  job_id: string | null;
  trigger_id: string | null;
  source: Plan['source'];
  expires_at: number;
  approvals_required: number;
  allow_self_approval: number;
  execute_mode: Plan['executeMode'];
  network: number;
  /** JSON array of host names; null on a plan made before schema 15 (see toPlan). */
  network_domains: string | null;
  owner: string;
  decided_at: number | null;
  failure_reason: string | null;
  subject: string | null;
  /** JSON of a PlanFootprint; null on a plan made before schema 25 or whose reads could not be bounded. */
  footprint?: string | null;
  /** JSON (Plan.uncommitted). */
  uncommitted?: string | null;
  execution_base?: string | null;
  approvals: number;
}

export interface TriggerRow {
  id: string;
  name: string;
  kind: Trigger['kind'];
  events: string;
  filters: string;
  prompt: string;
  workspace: string | null;
  options: string;
  hourly_cap: number;
  limits: string;
  token_id: string | null;
  token_hash: Buffer | null;
  enabled: number;
  created_by: string;
  created_at: number;
  updated_at: number;
}

export interface WebhookDeliveryRow {
  id: string;
  source: WebhookDelivery['source'];
  key: string;
  event: string;
  trigger_id: string | null;
  outcome: WebhookDelivery['outcome'];
  detail: string | null;
  subject: string | null;
  run_ids: string;
  received_at: number;
  processed_at: number | null;
}

export interface DecisionRow {
  id: string;
  plan_id: string;
  kind: Decision['kind'];
  identity: string;
  comment: string | null;
  sha256: string;
  created_at: number;
}

export interface ToolApprovalRow {
  id: string;
  run_id: string;
  session_id: string;
  plan_id: string | null;
  tool_use_id: string;
  tool: string;
  input: string;
  input_sha256: string | null;
  status: ToolApproval['status'];
  message: string | null;
  decided_by: string | null;
  prior_results: string;
  created_at: number;
  expires_at: number;
  decided_at: number | null;
}

export interface ToolCallRow {
  run_id: string;
  tool_use_id: string;
  tool: string;
  input_sha256: string;
  started_at: number;
  process_group: number | null;
  process_start: string | null;
  finished_at: number | null;
  result: string | null;
}

export interface SlotRow {
  job_id: string;
  slot_at: number;
  last_slot_at: number;
  slots: number;
  outcome: SlotRecord['outcome'];
  run_id: string | null;
  recorded_at: number;
}

export const toToken = (r: TokenRow): ApiToken => ({
  id: r.id,
  name: r.name,
  identity: r.identity,
  role: r.role,
  secretHash: r.secret_hash,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

export const toUiSession = (r: UiSessionRow): UiSession => ({
  idHash: r.id_hash,
  tokenId: r.token_id,
  identity: r.identity,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
});

export const toSession = (r: SessionRow): Session => ({
  id: r.id,
  name: r.name,
  workspace: r.workspace,
  workspaceKind: r.workspace_kind ?? null,
  owner: r.owner,
  defaults: JSON.parse(r.defaults),
  status: r.status,
  createdAt: r.created_at,
  closedAt: r.closed_at,
  scopeKey: r.scope_key,
  limits: JSON.parse(r.limits),
});

export const toJob = (r: JobRow): CronJob => ({
  id: r.id,
  sessionId: r.session_id,
  name: r.name ?? null,
  cron: r.cron,
  effectiveCron: r.effective_cron,
  timezone: r.timezone,
  prompt: r.prompt,
  recurring: r.recurring === 1,
  approximate: r.approximate === 1,
  options: JSON.parse(r.options),
  status: r.status,
  createdBy: r.created_by,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  nextNominalAt: r.next_nominal_at,
  nextDueAt: r.next_due_at,
  nextFinal: r.next_final === 1,
  pendingSlotAt: r.pending_slot_at,
  pendingFinal: r.pending_final === 1,
  pendingCoalesced: r.pending_count,
  lastSlotAt: r.last_slot_at,
  fireCount: r.fire_count,
  triggerId: r.trigger_id,
  renewals: r.renewals,
  renewedAt: r.renewed_at,
  renewedBy: r.renewed_by,
  overlap: r.overlap,
  jitterMaxSeconds: r.jitter_max_seconds,
  bufferedSlots: JSON.parse(r.buffered_slots),
});

export const toRun = (r: RunRow): Run => ({
  id: r.id,
  sessionId: r.session_id,
  jobId: r.job_id,
  slotAt: r.slot_at,
  source: r.source,
  phase: r.phase,
  status: r.status,
  prompt: r.prompt,
  requestedBy: r.requested_by,
  coalescedSlots: r.coalesced_slots,
  createdAt: r.created_at,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  activeMs: r.active_ms,
  error: r.error,
  conversationId: r.conversation_id,
  model: r.model,
  overrides: JSON.parse(r.overrides),
  settings: JSON.parse(r.settings),
  turns: r.turns,
  usage: JSON.parse(r.usage),
  costUsd: r.cost_usd,
  planId: r.plan_id,
  attempt: r.attempt,
  revisesPlanId: r.revises_plan_id,
  executesPlanId: r.executes_plan_id,
  executeMode: r.execute_mode,
  resultCommit: r.result_commit,
  diffStat: r.diff_stat,
  changedFiles: r.changed_files === null ? null : JSON.parse(r.changed_files),
  triggerId: r.trigger_id,
  deliveryId: r.delivery_id,
  subject: r.subject,
  checkout: r.checkout === null ? null : JSON.parse(r.checkout),
  waitingOn: r.waiting_on === null ? null : { on: r.waiting_on, until: r.waiting_until ?? 0 },
  planningBase: r.planning_base ? JSON.parse(r.planning_base) : null,
});

export const toEvent = (r: EventRow): RunEvent => ({
  runId: r.run_id,
  seq: r.seq,
  type: r.type,
  data: JSON.parse(r.data),
  at: r.at,
});

export const toQuestion = (r: QuestionRow): Question => ({
  id: r.id,
  runId: r.run_id,
  sessionId: r.session_id,
  toolUseId: r.tool_use_id,
  questions: JSON.parse(r.questions),
  status: r.status,
  answers: r.answers === null ? null : JSON.parse(r.answers),
  answeredBy: r.answered_by,
  priorResults: JSON.parse(r.prior_results),
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  resolvedAt: r.resolved_at,
});

/**
 * A plan row as a Plan. `legacyNetwork` is what a plan made before lists (network_domains NULL) with the network
 * allowed reads as: the configured execute.network_default_domains, never the host's network any more.
 */
export const toPlan = (r: PlanRow, legacyNetwork: readonly string[]): Plan => ({
  id: r.id,
  runId: r.run_id,
  sessionId: r.session_id,
  conversationId: r.conversation_id,
  toolUseId: r.tool_use_id,
  markdown: r.markdown,
  sha256: r.sha256,
  workspaceCommit: r.workspace_commit,
  status: r.status,
  round: r.round,
  previousPlanId: r.previous_plan_id,
  requestedBy: r.requested_by,
  createdAt: r.created_at,
  jobId: r.job_id,
  triggerId: r.trigger_id,
  source: r.source,
  expiresAt: r.expires_at,
  approvalsRequired: r.approvals_required,
  allowSelfApproval: r.allow_self_approval === 1,
  executeMode: r.execute_mode,
  network:
    r.network_domains !== null
      ? JSON.parse(r.network_domains)
      : r.network === 1
        ? normalizedDomains(legacyNetwork)
        : [],
  owner: r.owner,
  decidedAt: r.decided_at,
  failureReason: r.failure_reason,
  subject: r.subject,
  footprint: r.footprint ? JSON.parse(r.footprint) : null,
  executionBase: r.execution_base ?? null,
  uncommitted: r.uncommitted ? JSON.parse(r.uncommitted) : null,
  approvals: r.approvals ?? 0,
  delivery: toPlanDelivery(r),
});

export const toTrigger = (r: TriggerRow): Trigger => ({
  id: r.id,
  name: r.name,
  kind: r.kind,
  events: JSON.parse(r.events),
  filters: JSON.parse(r.filters),
  prompt: r.prompt,
  workspace: r.workspace,
  options: JSON.parse(r.options),
  hourlyCap: r.hourly_cap,
  limits: JSON.parse(r.limits),
  tokenId: r.token_id,
  tokenHash: r.token_hash,
  enabled: r.enabled === 1,
  createdBy: r.created_by,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export const toWebhookDelivery = (r: WebhookDeliveryRow): WebhookDelivery => ({
  id: r.id,
  source: r.source,
  key: r.key,
  event: r.event,
  triggerId: r.trigger_id,
  outcome: r.outcome,
  detail: r.detail,
  subject: r.subject,
  runIds: JSON.parse(r.run_ids),
  receivedAt: r.received_at,
  processedAt: r.processed_at,
});

export const toDecision = (r: DecisionRow): Decision => ({
  id: r.id,
  planId: r.plan_id,
  kind: r.kind,
  identity: r.identity,
  comment: r.comment,
  sha256: r.sha256,
  createdAt: r.created_at,
});

export const toToolApproval = (r: ToolApprovalRow): ToolApproval => ({
  id: r.id,
  runId: r.run_id,
  sessionId: r.session_id,
  planId: r.plan_id,
  toolUseId: r.tool_use_id,
  tool: r.tool,
  input: JSON.parse(r.input),
  inputSha256: r.input_sha256,
  status: r.status,
  message: r.message,
  decidedBy: r.decided_by,
  priorResults: JSON.parse(r.prior_results),
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  decidedAt: r.decided_at,
});

export const toToolCall = (r: ToolCallRow): ToolCall => ({
  runId: r.run_id,
  toolUseId: r.tool_use_id,
  tool: r.tool,
  inputSha256: r.input_sha256,
  startedAt: r.started_at,
  processGroup: r.process_group,
  processStart: r.process_start,
  finishedAt: r.finished_at,
  result: r.result === null ? null : JSON.parse(r.result),
});

/** Groups slot rows that carry their run's plan (recentSlots) by job, in the order read. */
export function recentSlotsByJob(rows: (SlotRow & { plan_id: string | null })[]): Map<string, RecentSlot[]> {
  const byJob = new Map<string, RecentSlot[]>();
  for (const r of rows) {
    const list = byJob.get(r.job_id) ?? [];
    list.push({ ...toSlot(r), planId: r.plan_id });
    byJob.set(r.job_id, list);
  }
  return byJob;
}

export const toSlot = (r: SlotRow): SlotRecord => ({
  jobId: r.job_id,
  slotAt: r.slot_at,
  lastSlotAt: r.last_slot_at,
  slots: r.slots,
  outcome: r.outcome,
  runId: r.run_id,
  recordedAt: r.recorded_at,
});

/** The delivery columns of a plan row (migration 000012; the target, 000022). */
export interface PlanDeliveryRow {
  delivery_status: PlanDeliveryStatus | null;
  delivery_target: DeliveryTarget | null;
  delivery_branch: string | null;
  delivery_remote: string | null;
  delivery_commit: string | null;
  delivery_pushed_at: number | null;
  delivery_pr_url: string | null;
  delivery_pr_number: number | null;
  delivery_comment_url: string | null;
  delivery_attempts: number;
  delivery_last_error: string | null;
  delivery_next_at: number | null;
  delivery_claimed_until: number | null;
  delivery_settled_at: number | null;
}

/** null until the delivery worker looked at the executed plan. */
export const toPlanDelivery = (r: PlanDeliveryRow): PlanDelivery | null =>
  r.delivery_status == null
    ? null
    : {
        status: r.delivery_status,
        target: r.delivery_target ?? null,
        branch: r.delivery_branch,
        remote: r.delivery_remote,
        commit: r.delivery_commit,
        pushedAt: r.delivery_pushed_at,
        pullRequestUrl: r.delivery_pr_url,
        pullRequestNumber: r.delivery_pr_number,
        commentUrl: r.delivery_comment_url,
        attempts: r.delivery_attempts ?? 0,
        lastError: r.delivery_last_error,
        nextAttemptAt: r.delivery_next_at,
        claimedUntil: r.delivery_claimed_until,
        settledAt: r.delivery_settled_at,
      };

export interface NotificationRow {
  id: string;
  event_rowid: number | null;
  webhook: string;
  webhook_url: string;
  event: string;
  run_id: string | null;
  plan_id: string | null;
  data: string;
  body: string;
  status: NotificationStatus;
  attempts: number;
  last_error: string | null;
  next_attempt_at: number | null;
  created_at: number;
  delivered_at: number | null;
}

/** Claimed notifications in the order of the log they announce; those of no run event after, oldest first. */
export const notificationOrder = (a: Notification, b: Notification): number =>
  (a.eventRowid ?? Number.MAX_SAFE_INTEGER) - (b.eventRowid ?? Number.MAX_SAFE_INTEGER) ||
  a.createdAt - b.createdAt;

export const toNotification = (r: NotificationRow): Notification => ({
  id: r.id,
  eventRowid: r.event_rowid,
  webhook: r.webhook,
  webhookUrl: r.webhook_url,
  event: r.event,
  runId: r.run_id,
  planId: r.plan_id,
  data: JSON.parse(r.data),
  body: r.body,
  status: r.status,
  attempts: r.attempts,
  lastError: r.last_error,
  nextAttemptAt: r.next_attempt_at,
  createdAt: r.created_at,
  deliveredAt: r.delivered_at,
});

/** A plan delivery patch's field -> its column of `plans`. */
export const PLAN_DELIVERY_COLUMNS: Record<keyof PlanDeliveryPatch, string> = {
  status: 'delivery_status',
  target: 'delivery_target',
  branch: 'delivery_branch',
  remote: 'delivery_remote',
  commit: 'delivery_commit',
  pushedAt: 'delivery_pushed_at',
  pullRequestUrl: 'delivery_pr_url',
  pullRequestNumber: 'delivery_pr_number',
  commentUrl: 'delivery_comment_url',
  attempts: 'delivery_attempts',
  lastError: 'delivery_last_error',
  nextAttemptAt: 'delivery_next_at',
  claimedUntil: 'delivery_claimed_until',
  settledAt: 'delivery_settled_at',
};

/** A delivery's columns, not its stored payload (read only by the inbox); prefixed `d.` for joins. */
export const DELIVERY_COLUMNS =
  'id, source, key, event, trigger_id, outcome, detail, subject, run_ids, received_at, processed_at';
export const D_DELIVERY_COLUMNS = DELIVERY_COLUMNS.replace(/(\w+)/g, 'd.$1');

/** A delivery joined with one trigger's fire of it. */
export type TriggerFireRow = WebhookDeliveryRow & {
  fire_outcome: 'accepted' | 'filtered' | 'capped';
  fire_run_id: string | null;
  fire_at: number;
};

export const toTriggerFire = (r: TriggerFireRow) => ({
  delivery: toWebhookDelivery(r),
  outcome: r.fire_outcome,
  runId: r.fire_run_id,
  at: r.fire_at,
});
