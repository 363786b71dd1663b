import type { SpendLimits } from './spend.js';
// Domain records as the rest of drydock sees them. Times are epoch milliseconds; the HTTP layer turns them
// into ISO-8601 strings. Nothing here knows which database holds them.

import type { PlanFootprint } from './footprint.js';

// ---- models: what a person may ask of a model (the per-model rules are the catalogue, src/models/catalogue.ts)

export type ThinkingType = 'adaptive' | 'between_tools' | 'enabled' | 'disabled';
export const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
export type Effort = (typeof EFFORTS)[number];

/** What a person asks for; translated per model by `shapeThinking`. */
export type ThinkingOption = 'off' | 'adaptive' | { budget_tokens: number };

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

/** A signed-in approver page (/ui). The cookie holds a random id; the store keeps only its sha256. */
export interface UiSession {
  idHash: Buffer;
  tokenId: string;
  /** The token's identity at sign-in: the session ends if the token's changes. */
  identity: string;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
}

export const EXECUTE_MODES = ['manual', 'edits', 'auto'] as const;
export type ExecuteMode = (typeof EXECUTE_MODES)[number];

/** Per-session defaults; a job may override any of them. */
export interface RunDefaults {
  model?: string | undefined;
  /** off | adaptive | {budget_tokens}, translated per model (models/catalogue.ts). */
  thinking?: ThinkingOption | undefined;
  effort?: Effort | undefined;
  budget_usd?: number | undefined;
  max_turns?: number | undefined;
  approvals_required?: number | undefined;
  allow_self_approval?: boolean | undefined;
  execute_mode?: ExecuteMode | undefined;
  /**
   * The host names the execute phase's commands may reach, through drydock's egress proxy (domain/network.ts):
   * a list, false (default: none) or true (deprecated: the configured default list).
   */
  network?: boolean | string[] | undefined;
  /** Whether an executed plan's branch is pushed and a pull request opened (default: delivery.enabled). */
  deliver?: boolean | undefined;
  /**
   * The MCP servers (names under `mcp.servers` in the configuration) whose tools the runs get; a job's or
   * trigger's list replaces its session's, [] for none (default: none). See domain/mcp-selection.ts.
   */
  mcp?: string[] | undefined;
}

export type SessionStatus = 'open' | 'closed';

/**
 * What a session's workspace is, fixed when the session is made: a git repository (executions run in a
 * worktree of it) or a plain directory (executions run on a copy; a `.git` appearing there is never read).
 */
export type WorkspaceKind = 'git' | 'plain';

export interface Session {
  id: string;
  name: string;
  workspace: string;
  /** null: made before kinds were recorded; judged as before (a git repository or not, now). */
  workspaceKind: WorkspaceKind | null;
  owner: string;
  defaults: RunDefaults;
  status: SessionStatus;
  createdAt: number;
  closedAt: number | null;
  /** Set for sessions a trigger made for one subject (a pull request, or the trigger itself). */
  scopeKey: string | null;
  /** The session's own spend caps (docs/spend-caps.md); {} for none. */
  limits: SpendLimits;
}

export type JobStatus = 'active' | 'paused' | 'missed';

/**
 * What a job does with a slot that comes due while its session is busy (docs/scheduling.md, Overlap policies):
 * `skip` drops it (recorded `skipped`); `buffer_one` (the default) holds the newest, a newer one replacing it
 * (`coalesced`); `buffer_all` holds every one (`buffered`), fired oldest first, one per idle session;
 * `cancel_other` cancels the session's run of this job (`canceled`) and fires; `allow_all` fires anyway, its
 * run queued behind the session's current one.
 */
export const OVERLAP_POLICIES = ['skip', 'buffer_one', 'buffer_all', 'cancel_other', 'allow_all'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];
export const DEFAULT_OVERLAP: OverlapPolicy = 'buffer_one';

export interface CronJob {
  id: string;
  sessionId: string;
  /** Unique within its session when set (checked at creation); how `drydock apply` finds the job again. */
  name: string | null;
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
  /** The scheduled trigger this job fires for (it never expires, and is changed through the trigger). */
  triggerId: string | null;
  /** What a slot due while the session is busy becomes. */
  overlap: OverlapPolicy;
  /** The longest jitter delay of this job in seconds, replacing the configured cap (0: none); null: the cap. */
  jitterMaxSeconds: number | null;
  /** `buffer_all`: the slots waiting behind the pending one, oldest first. */
  bufferedSlots: number[];
  /** Renewals: each gave the job another expiry period from its time. */
  renewals: number;
  renewedAt: number | null;
  renewedBy: string | null;
}

export const RUN_SOURCES = ['schedule', 'manual', 'delivery'] as const;
export type RunSource = (typeof RUN_SOURCES)[number];
/**
 * Where a run (and its plan) came from, as the API, the CLI and the pages show it: `webhook` for a webhook
 * delivery or a trigger's fire. The store keeps the older word `delivery` for it (a CHECK constraint in both
 * schemas); the API said `delivery` too before.
 */
export const SHOWN_RUN_SOURCES = ['schedule', 'manual', 'webhook'] as const;
export type ShownRunSource = (typeof SHOWN_RUN_SOURCES)[number];
export const shownRunSource = (s: RunSource): ShownRunSource => (s === 'delivery' ? 'webhook' : s);
export type RunPhase = 'plan' | 'execute';
export const ACTIVE_RUN_STATUSES = ['queued', 'running', 'awaiting_input'] as const;
/** Statuses a run ends in. `refused`: the model declined (stop reason `refusal`). */
export const FINISHED_RUN_STATUSES = [
  'planned',
  'completed',
  'failed',
  'canceled',
  'budget_exceeded',
  'interrupted',
  'refused',
] as const;
export const RUN_STATUSES = [...ACTIVE_RUN_STATUSES, ...FINISHED_RUN_STATUSES] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const isFinishedRunStatus = (s: string): boolean =>
  (FINISHED_RUN_STATUSES as readonly string[]).includes(s);
/** Ends a run is meant to reach: its plan proposed, or its execution done. */
export const SUCCEEDED_RUN_STATUSES = ['planned', 'completed'] as const satisfies readonly RunStatus[];
export const isSucceededRunStatus = (s: string): boolean =>
  (SUCCEEDED_RUN_STATUSES as readonly string[]).includes(s);
/**
 * How the error of an execution refused for what its own tree holds begins (a nested repository or a
 * `.gitmodules` that makes git fail, objects git's fsck refuses): the tree's author made it fail, so the
 * circuit breaker, which protects other sessions from executions that fail on their own, does not count it.
 */
export const TREE_REFUSED = 'tree refused';
/** Ends that are failures: neither what was meant nor canceled by a person (the breaker counts these). */
export const isFailedRunStatus = (s: string): boolean =>
  isFinishedRunStatus(s) && !isSucceededRunStatus(s) && s !== 'canceled';

/**
 * What a run `awaiting_input` waits on besides a person's answer: `spend_limit`, the account reached its spend
 * limit (docs/models.md); `spend_cap`, its trigger's, session's or the global daily_usd was crossed
 * (docs/spend-caps.md), `until` the day resets. It is claimed again once an admin resumes it or `until` passes.
 */
export const RUN_WAITS = ['spend_limit', 'spend_cap'] as const;
export interface RunWait {
  on: (typeof RUN_WAITS)[number];
  until: number;
}

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
  /** The first start (a resume or a retry keeps it). */
  startedAt: number | null;
  finishedAt: number | null;
  /** Time spent executing, summed over the run's starts; the rest of its life it waited. */
  activeMs: number;
  error: string | null;
  conversationId: string | null;
  model: string | null;
  /** Run options of the job or trigger that started it (they outlive a deleted job). */
  overrides: RunDefaults;
  settings: RunSettings | Record<string, never>;
  turns: number;
  usage: TokenUsage;
  costUsd: number;
  planId: string | null;
  attempt: number;
  /** A plan-phase run of a revision round: the plan it revises. */
  revisesPlanId: string | null;
  /** An execute run: the approved plan it carries out (at most one per plan). */
  executesPlanId: string | null;
  executeMode: ExecuteMode | null;
  resultCommit: string | null;
  diffStat: string | null;
  changedFiles: string[] | null;
  triggerId: string | null;
  deliveryId: string | null;
  /** What the run is about, e.g. `owner/repo#12`: a new push to that pull request supersedes its plans. */
  subject: string | null;
  /**
   * A run a GitHub event started works in a worktree of the repository's clone, prepared when the run starts:
   * at a pull request's head, or at the commit the event names (`CommitCheckout`).
   */
  checkout: RunCheckout | null;
  /** Set while the run (awaiting_input) waits on the account (a spend limit), not on a question. */
  waitingOn: RunWait | null;
  /**
   * A plan-phase run in a git workspace (no `checkout`): the commit it plans on, in a clean checkout of its
   * own, and what the workspace had uncommitted when that checkout was made. Set when the run first opens;
   * absent: null (a plain directory, a repository without a commit, a run from before it was kept).
   */
  planningBase?: PlanningBase | null;
}

/** The commit a git workspace's plan run reads (a detached checkout of it), fixed when the run first opens. */
export interface PlanningBase {
  commit: string;
  /** What the workspace had that the commit has not, when the checkout was made: the plan never saw it. */
  uncommitted: UncommittedChanges;
}

/**
 * A workspace's uncommitted changes: tracked files modified or staged, and untracked files that are not
 * ignored (an untracked directory counts once, as `dir/`). Paths are relative to the session's workspace.
 */
export interface UncommittedChanges {
  /** How many paths differ. */
  count: number;
  /** The first of them (at most MAX_UNCOMMITTED_LISTED), sorted. */
  paths: string[];
}

/** How many uncommitted paths a plan lists by name. */
export const MAX_UNCOMMITTED_LISTED = 20;

/** Where a run a GitHub event started plans: a pull request's head, or another commit of the repository. */
export type RunCheckout = PullRequestCheckout | CommitCheckout;

/** A pull request's head (runs recorded before commit checkouts existed have no `kind`). */
export interface PullRequestCheckout {
  kind?: 'pull_request';
  repository: string;
  clone: string;
  headSha: string;
  headRef: string;
  baseRef: string;
  /** Absent on runs recorded before it was kept. */
  baseSha?: string | null;
  /**
   * owner/repo the pull request's head branch lives in (`pull_request.head.repo.full_name`): `repository` for
   * a branch of the same repository, another for a fork, null when the payload names none (a deleted fork).
   * Absent on runs recorded before it was kept; a delivery treats absent and null as a fork.
   */
  headRepository?: string | null;
  number: number;
}

/**
 * A commit of the repository that is no pull request's head, which an event other than a pull request names:
 * an issue's default branch, a release's tag, a pushed branch, a failed check's head, a deployment, a merge.
 */
export interface CommitCheckout {
  kind: 'commit';
  repository: string;
  clone: string;
  /** The commit to plan on; null: the one `ref` points at on the clone's remote when the run starts. */
  sha: string | null;
  /** `refs/heads/<branch>` or `refs/tags/<tag>`: how the commit is fetched when the clone lacks it. */
  ref: string | null;
  /**
   * Whether the project memory (CLAUDE.md) is read from the planned commit: true for the team's own branches
   * and tags (every commit event drydock plans on today); false reads none.
   */
  memory: boolean;
}

/** What a run was carried out with, resolved from job, session and config when it starts. */
export interface RunSettings {
  model: string;
  maxTokens: number;
  maxTurns: number;
  budgetUsd: number;
  /** What was asked for (job, session, configuration)... */
  thinking: ThinkingOption;
  effort: Effort | null;
  /** ...and what the model was sent, with why it differs. */
  request: {
    thinking: { type: string; budget_tokens?: number; display?: string } | null;
    effort: Effort | null;
    notes: string[];
  };
}

/** Tokens by kind, summed over a run's turns. */
export interface TokenUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_write_5m_tokens?: number;
  cache_write_1h_tokens?: number;
  cache_read_tokens?: number;
}

export interface RunEvent {
  runId: string;
  seq: number;
  type: string;
  data: Record<string, unknown>;
  at: number;
}

export interface ConversationMessage {
  role: 'user' | 'assistant';
  /** Content blocks exactly as exchanged with the model (thinking blocks included, unmodified). */
  content: unknown[];
  /** The run that wrote (or last added to) this message; set when loaded. */
  runId?: string;
  /** An assistant message: the stop reason of the reply (a `pause_turn` is continued in the same message). */
  stopReason?: string;
}

export type QuestionStatus = 'pending' | 'answered' | 'timed_out' | 'canceled';

export interface Question {
  id: string;
  runId: string;
  sessionId: string;
  toolUseId: string;
  questions: unknown;
  status: QuestionStatus;
  answers: Record<string, string | string[]> | null;
  answeredBy: string | null;
  /** Tool results of the same assistant turn computed before the run parked on this question. */
  priorResults: unknown[];
  createdAt: number;
  expiresAt: number;
  resolvedAt: number | null;
}

export const PLAN_STATUSES = [
  'pending_approval',
  'approved',
  'executing',
  'executed',
  'execution_failed',
  'rejected',
  'revision_requested',
  'expired',
  'superseded',
] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];

export interface Plan {
  id: string;
  runId: string;
  sessionId: string;
  conversationId: string;
  toolUseId: string;
  markdown: string;
  sha256: string;
  workspaceCommit: string | null;
  status: PlanStatus;
  round: number;
  previousPlanId: string | null;
  requestedBy: string;
  createdAt: number;
  jobId: string | null;
  triggerId: string | null;
  source: RunSource;
  expiresAt: number;
  approvalsRequired: number;
  allowSelfApproval: boolean;
  executeMode: ExecuteMode;
  /**
   * The host names the execution's commands may reach through the egress proxy, resolved when the plan was
   * made (normalized: lower case, sorted); [] for none. A plan recorded before lists with the network
   * allowed reads as the configured default list (store/rows.ts).
   */
  network: string[];
  /** The session owner: like the requester, not allowed to approve unless self-approval is allowed. */
  owner: string;
  decidedAt: number | null;
  failureReason: string | null;
  subject: string | null;
  /**
   * What the plan phase read, searched and named (domain/footprint.ts); null when it could not be bounded or
   * the plan is older than footprints (then any move of the workspace makes it stale). Absent: null.
   */
  footprint?: PlanFootprint | null;
  /**
   * The workspace head an approval found moved on without touching the footprint: the execution starts from
   * it instead of `workspaceCommit` (`executionBase`, domain/footprint.ts). Set by the approval; absent: null.
   */
  executionBase?: string | null;
  /**
   * What the git workspace had uncommitted when the plan phase began (its run's `planningBase`): the plan was
   * made from `workspaceCommit` without it. Null: nothing, or no commit to compare with. Absent: null.
   */
  uncommitted?: UncommittedChanges | null;
  /** Distinct approvals so far (read from the decisions; ignored when a plan is created). */
  approvals?: number;
  /** Delivery of the executed result (null until an executed plan was looked at; ignored when created). */
  delivery?: PlanDelivery | null;
}

export type DecisionKind = 'approve' | 'reject' | 'revise';

export interface Decision {
  id: string;
  planId: string;
  kind: DecisionKind;
  identity: string;
  comment: string | null;
  /** The plan text the person saw. */
  sha256: string;
  createdAt: number;
}

export type ToolApprovalStatus = 'pending' | 'allowed' | 'denied' | 'timed_out' | 'canceled';

export interface ToolApproval {
  id: string;
  runId: string;
  sessionId: string;
  planId: string | null;
  toolUseId: string;
  tool: string;
  input: unknown;
  /** sha256 of the input as allowed (canonical JSON); null on approvals stored before inputs were bound. */
  inputSha256: string | null;
  status: ToolApprovalStatus;
  message: string | null;
  decidedBy: string | null;
  priorResults: unknown[];
  createdAt: number;
  expiresAt: number;
  decidedAt: number | null;
}

/** One Write, Edit or Bash call of an execute run, journaled so that it runs at most once. */
export interface ToolCall {
  runId: string;
  toolUseId: string;
  tool: string;
  inputSha256: string;
  startedAt: number;
  /** The process group of a command while it runs, and its leader's identity (see `processIdentity`). */
  processGroup: number | null;
  processStart: string | null;
  finishedAt: number | null;
  result: { content: string; isError: boolean } | null;
}

/**
 * What became of a slot: fired (one run), coalesced into a later fire, missed while the daemon was down,
 * capped by a spend cap, skipped or buffered by the job's overlap policy, or canceled (superseded).
 */
export const SLOT_OUTCOMES = [
  'fired',
  'coalesced',
  'missed',
  'capped',
  'skipped',
  'buffered',
  'canceled',
] as const;
export type SlotOutcome = (typeof SLOT_OUTCOMES)[number];

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

export interface TriggerFilters {
  repositories?: string[] | undefined;
  base_branches?: string[] | undefined;
  labels?: string[] | undefined;
  authors?: string[] | undefined;
  /** false: skip draft pull requests; true: only drafts; absent: both. */
  draft?: boolean | undefined;
  /** pull_request: true, only merged pull requests (of `pull_request.closed`); false: only unmerged ones. */
  merged?: boolean | undefined;
  /** push, check_suite, workflow_run, deployment_status: the branch the event is about (exact names). */
  branches?: string[] | undefined;
  /** deployment_status: the deployment's environment (case-insensitive, as GitHub compares them). */
  environments?: string[] | undefined;
  /** check_suite, workflow_run: the conclusions that fire (default ["failure"]). */
  conclusions?: string[] | undefined;
  /** deployment_status: the states that fire (default ["success", "failure", "error"]). */
  states?: string[] | undefined;
}

export const TRIGGER_KINDS = ['github', 'generic', 'schedule'] as const;
export type TriggerKind = (typeof TRIGGER_KINDS)[number];

export interface Trigger {
  id: string;
  name: string;
  kind: TriggerKind;
  events: string[];
  filters: TriggerFilters;
  prompt: string;
  workspace: string | null;
  options: RunDefaults;
  hourlyCap: number;
  /** The trigger's spend caps, counted over every run it started that day (docs/spend-caps.md); {} for none. */
  limits: SpendLimits;
  tokenId: string | null;
  tokenHash: Buffer | null;
  enabled: boolean;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
}

/** `queued`: recorded and answered, waiting for the trigger worker; `failed`: its processing raised. */
export const WEBHOOK_OUTCOMES = [
  'queued',
  'accepted',
  'duplicate',
  'filtered',
  'capped',
  'rejected',
  'ignored',
  'failed',
] as const;
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

export interface WebhookDelivery {
  id: string;
  source: 'github' | 'fire';
  key: string;
  event: string;
  triggerId: string | null;
  outcome: WebhookOutcome;
  detail: string | null;
  subject: string | null;
  runIds: string[];
  receivedAt: number;
  /** When the worker settled it (null while queued). */
  processedAt: number | null;
}

/**
 * off: not asked for (or nothing to push); pending: due at nextAttemptAt; retrying: an attempt failed, the
 * next is due at nextAttemptAt; delivered; failed: every attempt failed.
 */
export const PLAN_DELIVERY_STATUSES = ['off', 'pending', 'retrying', 'delivered', 'failed'] as const;
export type PlanDeliveryStatus = (typeof PLAN_DELIVERY_STATUSES)[number];

/**
 * Where a delivery took the execution's commit (src/delivery/pr-target.ts): `base`, a branch drydock/<plan> and
 * a pull request into the base (for a pull request's run, only drydock's commit, replayed onto the base);
 * `head`, the commit pushed onto the pull request's own branch; `stacked`, a pull request into that branch;
 * `patch`, a comment with the change as a patch (a fork's change that does not apply to the base alone).
 */
export const DELIVERY_TARGETS = ['base', 'head', 'stacked', 'patch'] as const;
export type DeliveryTarget = (typeof DELIVERY_TARGETS)[number];

/** Where an executed plan's result went: each step is recorded as it completes (src/delivery/). */
export interface PlanDelivery {
  status: PlanDeliveryStatus;
  /** Where it went; null until a step that decides it (the push, or the patch's comment) is done. */
  target: DeliveryTarget | null;
  /** The remote branch the commit went to: drydock/<plan id>, or the pull request's own branch (`head`). */
  branch: string | null;
  /** The remote's name and URL, credentials removed. */
  remote: string | null;
  /** The commit delivered: the execution's, or (a pull request's `base`) its change replayed onto the base. */
  commit: string | null;
  pushedAt: number | null;
  pullRequestUrl: string | null;
  pullRequestNumber: number | null;
  /** The comment on the pull request the run came from. */
  commentUrl: string | null;
  attempts: number;
  /** Scrubbed of tokens and URL credentials. */
  lastError: string | null;
  nextAttemptAt: number | null;
  /** A worker attempting it holds it until then. */
  claimedUntil: number | null;
  /** When it became delivered or failed. */
  settledAt: number | null;
}

// ---- outbound notifications (src/notify/) -----------------------------------------------------------

export const NOTIFICATION_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

/** One event announced to one webhook: an outbox row, sent until delivered or out of attempts. */
export interface Notification {
  /** The idempotency id (X-Drydock-Delivery): the same on every attempt. */
  id: string;
  /** The run event it announces (its place in the log); null: not a run's event (limit.reached). */
  eventRowid: number | null;
  /** The receiver's key (a hash of its URL). */
  webhook: string;
  /** The receiver's URL as it may be shown: no userinfo, query or path below its first segment. */
  webhookUrl: string;
  event: string;
  /** null: not about a run (limit.reached). */
  runId: string | null;
  planId: string | null;
  data: Record<string, unknown>;
  /** The exact body sent on every attempt. */
  body: string;
  status: NotificationStatus;
  attempts: number;
  lastError: string | null;
  /** Pending: when it is due; while an attempt runs, when that attempt's hold runs out. */
  nextAttemptAt: number | null;
  createdAt: number;
  deliveredAt: number | null;
}

export type NewNotification = Omit<Notification, 'status' | 'attempts' | 'lastError' | 'deliveredAt'>;

/** What became of one attempt. */
export type NotificationOutcome =
  | { status: 'delivered'; at: number }
  | { status: 'pending'; nextAttemptAt: number; error: string }
  | { status: 'failed'; error: string };

/** A run event with its place in the whole log (SQLite's rowid: it only grows, run_events is never pruned). */
export interface LoggedEvent extends RunEvent {
  rowid: number;
}
