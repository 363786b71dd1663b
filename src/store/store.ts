import { DomainError } from '../domain/errors.js';
import type { ConversationFrame } from '../domain/frame.js';
import type {
  ApiToken,
  ConversationMessage,
  CronJob,
  Decision,
  Delivery,
  DeliveryOutcome,
  ExecuteMode,
  JobStatus,
  LoggedEvent,
  NewNotification,
  Notification,
  NotificationOutcome,
  NotificationStatus,
  Page,
  Plan,
  PlanDelivery,
  PlanDeliveryStatus,
  PlanStatus,
  Question,
  QuestionStatus,
  Run,
  RunCheckout,
  RunDefaults,
  RunEvent,
  RunPhase,
  RunSettings,
  RunSource,
  RunStatus,
  RunWait,
  Session,
  SlotRecord,
  TokenUsage,
  ToolApproval,
  ToolApprovalStatus,
  ToolCall,
  Trigger,
  UiSession,
  WorkspaceKind,
} from '../domain/types.js';
import type { ReactionCursorStore } from './cursors.js';

/**
 * Everything the scheduler decided about one job at one moment, applied by the store in one transaction.
 * The scheduler computes it from a fresh copy of the job read inside that transaction (see `advanceJobs`).
 */
export interface SlotTransition {
  /** Slots superseded by a newer one (idle-only coalescing); recorded now, linked to the run that fires. */
  coalesce: number[];
  /** Slots that passed while the daemon was down, outside the catch-up window. */
  missed: { firstAt: number; lastAt: number; slots: number } | null;
  /** Fire this slot now: one run keyed by (job, slot). `dueAt` is its jittered due time when it fires on
   *  time (null when it waited for an idle session), for lateness figures. */
  fire: { slotAt: number; runId: string; dueAt: number | null } | null;
  /** The slot that waits for the session to become idle (null: nothing waits). */
  pending: { slotAt: number; final: boolean; coalesced: number } | null;
  /** The next slot to act on (null: none is left). */
  next: { nominalAt: number; dueAt: number; final: boolean } | null;
  /** Set when a one-shot was missed while the daemon was down: it waits for a person. */
  status?: JobStatus;
  /** Delete the job after applying (a one-shot fired, or a recurring job's final fire). */
  remove: boolean;
}

/** Called inside the store's transaction with the freshest job row; must be pure and synchronous. */
export type DecideFn = (job: CronJob, sessionBusy: boolean) => SlotTransition | null;

export interface AdvanceResult {
  jobId: string;
  /** The run created for a fired slot, if any. */
  run: Run | null;
  transition: SlotTransition;
}

export interface NewSession {
  id: string;
  name: string;
  workspace: string;
  /** What the workspace is, judged once when the session is made (Session.workspaceKind); null: unknown. */
  workspaceKind?: WorkspaceKind | null;
  owner: string;
  defaults: Session['defaults'];
  createdAt: number;
}

export type NewJob = Omit<
  CronJob,
  | 'status'
  | 'pendingSlotAt'
  | 'pendingFinal'
  | 'pendingCoalesced'
  | 'lastSlotAt'
  | 'fireCount'
  | 'triggerId'
  | 'renewals'
  | 'renewedAt'
  | 'renewedBy'
> & { triggerId?: string | null };

export interface NewRun {
  id: string;
  sessionId: string;
  jobId: string | null;
  slotAt: number | null;
  source: RunSource;
  prompt: string;
  requestedBy: string;
  createdAt: number;
  overrides?: RunDefaults;
  /** Continue this conversation (a revision round, the execute phase); default: a new one. */
  conversationId?: string;
  phase?: RunPhase;
  revisesPlanId?: string;
  executesPlanId?: string;
  triggerId?: string;
  deliveryId?: string;
  subject?: string;
  checkout?: RunCheckout;
}

export type NewToolCall = Pick<ToolCall, 'runId' | 'toolUseId' | 'tool' | 'inputSha256' | 'startedAt'>;

export interface DeliveryPatch {
  outcome?: DeliveryOutcome;
  detail?: string | null;
  runIds?: string[];
  triggerId?: string | null;
  subject?: string | null;
  /** null drops the stored body (a settled delivery keeps none). */
  payload?: string | null;
  claimedUntil?: number | null;
  processedAt?: number | null;
}

/** A trigger firing: the session it runs in (found or made by scope key) and the run. */
export interface TriggerFireInput {
  triggerId: string;
  deliveryId: string;
  hourlyCap: number;
  now: number;
  session: Omit<NewSession, 'id' | 'createdAt'> & { scopeKey: string };
  run: Omit<NewRun, 'sessionId'>;
}

/** What a decision does, computed inside the store's transaction from the plan's freshest state. */
export interface DecisionEffect {
  decision: Decision;
  /** The plan's new status, if it changes. */
  planStatus?: PlanStatus;
  /** A run to create with the decision: the execute run after approval, or the revision round. */
  run?: NewRun;
}

export interface PlanFilter {
  status?: PlanStatus | undefined;
  /**
   * With status pending_approval: only plans still decidable at this time (not past their expiry); with
   * status expired: also pending plans past their expiry at this time, before the sweep writes them so.
   */
  activeAt?: number | undefined;
  /** Rows for a listing: the markdown is cut to its first 300 characters. */
  summary?: boolean | undefined;
  sessionId?: string | undefined;
  jobId?: string | undefined;
  triggerId?: string | undefined;
  /** Only plans this identity requested. */
  requestedBy?: string | undefined;
  /** Only plans proposed before this time (the queue's "older than N days"). */
  createdBefore?: number | undefined;
  limit: number;
  cursor?: string | undefined;
}

export interface RunFilter {
  sessionId?: string | undefined;
  jobId?: string | undefined;
  status?: RunStatus | undefined;
  limit: number;
  cursor?: string | undefined;
}

export interface SessionFilter {
  status?: Session['status'] | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** Sessions: opened, listed, closed (closing deletes their jobs in the same transaction). */
export interface SessionStore {
  createSession(session: NewSession): Promise<Session>;
  getSession(id: string): Promise<Session | null>;
  listSessions(filter: SessionFilter): Promise<Page<Session>>;
  /** Marks the session closed and deletes its jobs, atomically. Null when unknown. */
  closeSession(id: string, now: number): Promise<{ session: Session; deletedJobs: number } | null>;
}

/** Cron jobs and their slots; a fired slot's run is created in the transaction that advances the job. */
export interface JobStore {
  /** Inserts the job unless its session already has `maxPerSession` jobs (JobLimitError) or is closed. */
  createJob(job: NewJob, maxPerSession: number): Promise<CronJob>;
  /**
   * Another expiry period for a recurring job: `expiresAt` from now; its next (and pending) slot is final
   * again only if it falls at or after the new expiry. Null when the job is gone.
   */
  renewJob(id: string, expiresAt: number, by: string, now: number): Promise<CronJob | null>;
  /** The job a scheduled trigger fires through. */
  jobOfTrigger(triggerId: string): Promise<CronJob | null>;
  /**
   * A scheduled trigger's job takes its trigger's new definition (expression, zone, prompt, options) and the
   * next slot planned for it; its history (slots, fire count) stays.
   */
  redefineJob(job: NewJob, status: JobStatus): Promise<CronJob | null>;
  getJob(id: string): Promise<CronJob | null>;
  listJobs(sessionId: string): Promise<CronJob[]>;
  countJobs(): Promise<number>;
  deleteJob(id: string): Promise<boolean>;
  /** Pause, resume (with a freshly computed next slot) or otherwise reschedule a job. */
  updateJobSchedule(
    id: string,
    status: JobStatus,
    next: { nominalAt: number; dueAt: number; final: boolean } | null,
  ): Promise<CronJob | null>;

  // ---- the scheduler pass
  /** Ids of active jobs whose due time is at or before `now`, earliest first. */
  listDueJobIds(now: number, limit: number): Promise<string[]>;
  /** Ids of jobs holding a pending slot whose session has no active run, oldest pending slot first. */
  listReadyPendingJobIds(limit: number): Promise<string[]>;
  /** Earliest due time of any active job, or null. */
  earliestDueAt(): Promise<number | null>;
  /**
   * For each job id: in one transaction, re-read the job and whether its session is busy, call `decide`,
   * and apply the transition. Jobs that vanished or for which `decide` returns null are skipped.
   */
  advanceJobs(jobIds: string[], now: number, decide: DecideFn): Promise<AdvanceResult[]>;
  /** A person runs a job now (POST /v1/jobs/:id/run). A missed one-shot fires its slot and is deleted. */
  runJobNow(jobId: string, run: NewRun): Promise<Run | null>;
  listSlots(jobId: string): Promise<SlotRecord[]>;
}

/** Runs, their conversations, event logs and the execute phase's call journal. */
export interface RunStore {
  createRun(run: NewRun): Promise<Run>;
  getRun(id: string): Promise<Run | null>;
  listRuns(filter: RunFilter): Promise<Page<Run>>;
  /** Moves a run from one of `from` to `to`; false when its status was not in `from` (someone else won). */
  transitionRun(
    id: string,
    from: readonly RunStatus[],
    to: RunStatus,
    fields?: {
      /** Kept only if the run has none yet: started_at is the first start. */
      startedAt?: number;
      finishedAt?: number;
      error?: string | null;
      attempt?: number;
      /** Added to the run's active time. */
      activeMs?: number;
      /** Applies only while this claim still holds the run (the queue's own end of a run it executes). */
      fence?: Fence;
      /** An event of the move (run_finished when it ends the run), appended in the same transaction. */
      receipt?: Receipt;
      /** To awaiting_input: what the run waits on besides a person. Every other move clears the wait. */
      waitingOn?: RunWait;
    },
  ): Promise<boolean>;

  // ---- claims: which replica executes a running run, until when (src/runs/queue.ts, README "Running several
  // replicas"). Every transition out of running clears the claim; parked runs belong to no replica.
  /**
   * Starts a run on `claim.replica`: from `from` to running with the claim and its lease, started_at set if
   * it has none, and a new claim epoch (one more than the run's last). The fence of the claim, or null when
   * the run's status is not `from`, or when another run of its session is running or awaiting input: one run
   * at a time per session, across every replica.
   */
  claimRun(
    id: string,
    from: 'queued' | 'awaiting_input',
    claim: RunClaim,
    now: number,
  ): Promise<Fence | null>;
  /** Moves the lease of each claim in `held` that still holds (see Fence); the run ids it moved. */
  renewRunLeases(held: readonly Fence[], leaseUntil: number): Promise<string[]>;
  /**
   * Running runs that may be taken over at `now`: those without a claim, those whose lease ran out before
   * `now`, and, when `own` is given, those claimed by that replica name (it restarted: the runs it held
   * before are its to take back); oldest first, at most `limit`.
   */
  listRecoverableRuns(own: string | null, now: number, limit: number): Promise<Run[]>;
  /**
   * Takes back a running run that may be recovered at `now` (the rule of `listRecoverableRuns`: no claim, a
   * lease that ran out before `now`, or claimed by `own`) and moves it to `to` (queued to be retried,
   * interrupted to give up), clearing the claim. False when the run is no longer so (another replica took it
   * first, or its holder renewed the lease).
   */
  releaseRun(
    id: string,
    own: string | null,
    now: number,
    to: 'queued' | 'interrupted',
    fields: { attempt?: number; finishedAt?: number; error?: string | null; receipt?: Receipt },
  ): Promise<boolean>;
  /**
   * Runs some replica could start now, oldest first, at most `limit`: queued runs of sessions with no run
   * running or awaiting input, and runs awaiting input with no question or tool approval still pending and no
   * wait on the account (RunWait) that lasts past `now` (null: no run that waits on the account).
   */
  listClaimableRuns(limit: number, now?: number | null): Promise<Run[]>;
  /**
   * Ends the wait on `on` of every run awaiting input on it (an admin resumed them): each is claimable again.
   * The runs it moved, oldest first.
   */
  resumeWaitingRuns(on: RunWait['on']): Promise<Run[]>;
  /** The latest end of a wait on `on` that lasts past `now`, or null when no run waits on it. */
  waitingUntil(on: RunWait['on'], now: number): Promise<number | null>;
  /** Records what a run is carried out with, and its progress after each turn. */
  updateRun(
    id: string,
    patch: {
      conversationId?: string;
      model?: string;
      settings?: RunSettings;
      turns?: number;
      usage?: TokenUsage;
      costUsd?: number;
      planId?: string;
      attempt?: number;
      executeMode?: ExecuteMode;
      resultCommit?: string | null;
      diffStat?: string | null;
      changedFiles?: string[];
    },
    fence?: Fence,
  ): Promise<void>;

  // ---- conversations and events
  /** The conversation of a run phase, oldest message first. */
  loadConversation(conversationId: string): Promise<ConversationMessage[]>;
  /**
   * Appends messages after the existing ones. A user message that follows a user message is merged into
   * it (a revision's feedback after the plan receipt), so the conversation always alternates.
   */
  appendMessages(
    conversationId: string,
    runId: string,
    messages: ConversationMessage[],
    now: number,
    fence?: Fence,
  ): Promise<void>;

  /** The frame a conversation was started with (src/domain/frame.ts); null when it has none stored. */
  loadFrame(conversationId: string): Promise<ConversationFrame | null>;
  /**
   * Stores the frame of a conversation as it starts, on behalf of `runId`. A conversation's frame is never
   * replaced: when one is stored already, that one stays and is returned (the first writer wins).
   */
  saveFrame(
    conversationId: string,
    runId: string,
    frame: ConversationFrame,
    now: number,
    fence?: Fence,
  ): Promise<ConversationFrame>;

  /** Appends one event to a run's log, numbering it after the last. */
  appendEvent(
    runId: string,
    type: string,
    data: Record<string, unknown>,
    at: number,
    fence?: Fence,
  ): Promise<RunEvent>;
  listEvents(runId: string, afterSeq: number, limit: number): Promise<RunEvent[]>;

  // ---- the execute phase's call journal
  /**
   * Journals a Write, Edit or Bash call before it runs. `started` is false when the call was journaled
   * before (the run was retried): `call` then says whether it finished, and with what result.
   */
  startToolCall(c: NewToolCall, fence?: Fence): Promise<{ call: ToolCall; started: boolean }>;
  /** The process group a command runs in, and its leader's identity (see `processIdentity`). */
  recordToolCallProcess(
    runId: string,
    toolUseId: string,
    group: number,
    start: string | null,
    fence?: Fence,
  ): Promise<void>;
  finishToolCall(
    runId: string,
    toolUseId: string,
    result: { content: string; isError: boolean },
    now: number,
    fence?: Fence,
  ): Promise<void>;
  /** Commands journaled as running with a recorded process group (left by a process that died). */
  listOpenCommands(limit: number): Promise<ToolCall[]>;

  /**
   * Throws FencedError unless `fence` still holds run `runId` (before a step outside the database that only
   * the run's holder may take: moving its branch, copying files back); without a fence, nothing to check.
   */
  confirmHold(runId: string, fence?: Fence): Promise<void>;

  /** Active runs of a subject (queued, running, awaiting input). */
  activeRunsForSubject(subject: string): Promise<Run[]>;

  // ---- the event log as the notifier reads it (src/notify/)
  /** The rowid of the newest event in the log (0 when empty). */
  eventLogEnd(): Promise<number>;
  /**
   * Events of `types` after rowid `after`, in log order, at most `limit`; and the log's end, read at the
   * same moment (every event up to it is either returned or not of those types, when fewer than `limit`).
   */
  eventsAfter(
    after: number,
    types: readonly string[],
    limit: number,
  ): Promise<{ events: LoggedEvent[]; end: number }>;
}

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

/** Plans and their decisions; a decision creates the run it starts in the same transaction. */
export interface PlanStore {
  /** Stores a proposed plan; a second pending plan of one run is refused (ConflictError) by a unique index. */
  createPlan(plan: Plan, fence?: Fence): Promise<Plan>;
  getPlan(id: string): Promise<Plan | null>;
  findPlan(runId: string, toolUseId: string): Promise<Plan | null>;
  /** The queue: oldest first, keyset-paginated. */
  listPlans(filter: PlanFilter): Promise<Page<Plan>>;
  /** Moves whenever any plan or decision is written, by any process on this database. */
  plansVersion(): Promise<number>;
  listDecisions(planId: string): Promise<Decision[]>;
  /** The runs of a plan: the one that proposed it, its revision round, its execution. Oldest first. */
  listPlanRuns(plan: Plan): Promise<Run[]>;
  /**
   * Records a decision atomically: re-reads the plan and its approvals inside one transaction, calls
   * `decide` (pure, may throw to refuse), then writes the decision, the plan's new status and the run it
   * starts. Concurrent decisions serialize here; a second execute run for one plan is refused by a
   * unique index.
   */
  decidePlan(
    planId: string,
    decide: (plan: Plan, decisions: Decision[]) => DecisionEffect,
  ): Promise<{ plan: Plan; decision: Decision; run: Run | null }>;
  /** Moves a plan between statuses; false when it was not in one of `from`. */
  transitionPlan(
    id: string,
    from: readonly PlanStatus[],
    to: PlanStatus,
    fields?: { failureReason?: string | null },
    fence?: Fence,
  ): Promise<boolean>;
  /** Pending plans past their expiry at `now` (isPlanOverdue, src/domain/plan-status.ts) become expired; how many. */
  expirePlans(now: number): Promise<number>;
  /**
   * Statuses of the newest execute runs that ended since `since` (for the circuit breaker); runs whose error
   * begins with TREE_REFUSED (src/domain/types.ts) are not among them.
   */
  recentExecutions(since: number, limit: number): Promise<RunStatus[]>;

  // ---- plans of a subject (a pull request)
  /**
   * Pending plans of a subject become superseded (decided at `now`), but those of runs `exceptDelivery`
   * started; their ids.
   */
  supersedePlans(subject: string, exceptDelivery: string | undefined, now: number): Promise<string[]>;
  /** The newest plan of a subject still pending approval. */
  pendingPlanForSubject(subject: string): Promise<Plan | null>;
}

/**
 * Triggers, the webhook delivery inbox and trigger fires. A fire finds or makes its session and creates its
 * run in the same transaction; so does a scheduled trigger with its session and job.
 */
export interface TriggerStore {
  createTrigger(t: Trigger): Promise<Trigger>;
  /**
   * A scheduled trigger, its session (scope `schedule:<trigger id>`) and its job, in one transaction.
   */
  createScheduleTrigger(input: {
    trigger: Trigger;
    session: Omit<NewSession, 'createdAt'> & { scopeKey: string };
    job: NewJob;
  }): Promise<Trigger>;
  getTrigger(id: string): Promise<Trigger | null>;
  findTriggerByToken(tokenId: string): Promise<Trigger | null>;
  listTriggers(filter: { kind?: Trigger['kind']; enabled?: boolean }): Promise<Trigger[]>;
  /**
   * Merges `patch` into the trigger, atomically with `check`: called with the freshest row before anything is
   * written, it refuses the change by throwing (nothing is written then). Null when the trigger is unknown.
   */
  updateTrigger(
    id: string,
    patch: Partial<Omit<Trigger, 'id' | 'kind' | 'createdAt' | 'createdBy'>>,
    check?: (current: Trigger) => void,
  ): Promise<Trigger | null>;
  deleteTrigger(id: string): Promise<boolean>;

  // ---- the webhook delivery inbox
  /**
   * Records a delivery unless one with the same (source, key) exists: then returns that one. `payload` (the
   * verified raw body) is kept until the delivery is settled.
   */
  recordDelivery(d: Delivery, payload?: string): Promise<{ delivery: Delivery; duplicate: boolean }>;
  /** recordDelivery for several deliveries in one transaction (group commit), results in order. */
  recordDeliveries(
    items: { delivery: Delivery; payload?: string | undefined }[],
  ): Promise<{ delivery: Delivery; duplicate: boolean }[]>;
  updateDelivery(id: string, patch: DeliveryPatch): Promise<void>;
  getDelivery(id: string): Promise<Delivery | null>;
  /** The inbox: the oldest `queued` deliveries no one holds a claim on at `now`, in arrival order. */
  queuedDeliveries(limit: number, now: number): Promise<Delivery[]>;
  /**
   * Claims a queued delivery until `until` unless someone else's claim still holds. Returns its stored body
   * when it did, null when it did not (claimed by another, or no longer queued).
   */
  claimDelivery(id: string, until: number, now: number): Promise<string | null>;
  /**
   * Queues a delivery again with a redelivered body, if it failed (or an older version left it unsettled);
   * whether it did (false: someone else requeued or settled it first).
   */
  requeueDelivery(id: string, payload: string): Promise<boolean>;
  /** When the first claim on a queued delivery that still holds at `now` runs out (null: none). */
  nextClaimExpiry(now: number): Promise<number | null>;
  /** What one trigger made of its recent deliveries: its own outcome and run, newest first. */
  listTriggerFires(
    triggerId: string,
    limit: number,
  ): Promise<
    { delivery: Delivery; outcome: 'accepted' | 'filtered' | 'capped'; runId: string | null; at: number }[]
  >;
  /** Newest first; `before` (a delivery id) continues a page. */
  listDeliveries(filter: {
    triggerId?: string | undefined;
    outcome?: DeliveryOutcome | undefined;
    limit: number;
    before?: string | undefined;
  }): Promise<Delivery[]>;
  /**
   * In one transaction: unless the trigger already started `hourlyCap` runs in the last hour (then the
   * fire is recorded as capped), find or make the subject's session and create the run. Fires are counted
   * in whole minutes, so a fire counts against the cap for 60 to 61 minutes.
   */
  fireTrigger(input: TriggerFireInput): Promise<{ outcome: 'accepted' | 'capped'; run: Run | null }>;
  /** Records that a trigger looked at a delivery and let it pass (filters). */
  recordTriggerFire(triggerId: string, deliveryId: string, outcome: 'filtered', now: number): Promise<void>;
}

/** Work done after the fact: delivering executed plans, and the notification outbox. */
export interface DeliveryStore {
  // ---- delivering executed plans (src/delivery/)
  /** Executed plans the delivery worker has not looked at yet (delivery null), oldest first. */
  listUndecidedPlanDeliveries(limit: number): Promise<Plan[]>;
  /** Plans whose delivery is pending or retrying, due at `now` and held by no worker; earliest first. */
  duePlanDeliveries(now: number, limit: number): Promise<string[]>;
  /** When the next pending or retrying delivery is due (or its holder's claim lapses); null: none. */
  nextPlanDeliveryAt(): Promise<number | null>;
  /**
   * Holds a due delivery for one attempt until `until`, counting the attempt, in one transaction. The plan, or
   * null when it is not due or another worker holds it.
   */
  claimPlanDelivery(planId: string, now: number, until: number): Promise<Plan | null>;
  /** Writes delivery fields if the delivery's status is one of `from` (null: not looked at yet); whether it did. */
  updatePlanDelivery(
    planId: string,
    from: readonly (PlanDeliveryStatus | null)[],
    patch: PlanDeliveryPatch,
  ): Promise<boolean>;

  // ---- the notification outbox (src/notify/)
  /** The rowid of the last event the notifier has looked at; null before notifications ever started. */
  notificationCursor(): Promise<number | null>;
  /**
   * In one transaction: writes the rows (one whose (event, webhook) exists already is skipped) and moves the
   * cursor forward to `cursor` (never back). Returns how many rows were new.
   */
  enqueueNotifications(rows: NewNotification[], cursor: number): Promise<number>;
  /** Claims pending rows due at `now` (oldest first): one more attempt each, held until `holdUntil`. */
  claimNotifications(now: number, holdUntil: number, limit: number): Promise<Notification[]>;
  /** Records an attempt's outcome on a row still pending. */
  settleNotification(id: string, outcome: NotificationOutcome): Promise<void>;
  /** When the earliest pending row is due (null: none pends). */
  nextNotificationDue(): Promise<number | null>;
  /** Newest first, keyset-paginated. */
  listNotifications(filter: {
    status?: NotificationStatus | undefined;
    event?: string | undefined;
    limit: number;
    cursor?: string | undefined;
  }): Promise<Page<Notification>>;
  countNotifications(): Promise<Record<NotificationStatus, number>>;
}

/** API tokens, /ui sessions, key-value state, totals for /metrics and the database itself. */
export interface StateStore {
  // ---- API tokens
  createToken(token: ApiToken): Promise<void>;
  findToken(id: string): Promise<ApiToken | null>;
  /** The roles of an identity's active tokens (an identity may hold several). */
  rolesOf(identity: string): Promise<ApiToken['role'][]>;
  countActiveTokens(role?: ApiToken['role']): Promise<number>;
  /**
   * Revokes a token and, in the same transaction, every /ui session signed in with it. False when the
   * token is unknown or was already revoked.
   */
  revokeToken(id: string, now: number): Promise<boolean>;

  // ---- /ui sessions
  createUiSession(session: Omit<UiSession, 'revokedAt'>): Promise<void>;
  /** The session stored under this id hash, unless it is revoked or expired at `now`. */
  findUiSession(idHash: Buffer, now: number): Promise<UiSession | null>;
  /** Revokes one session; false when it is unknown or already revoked. */
  revokeUiSession(idHash: Buffer, now: number): Promise<boolean>;
  /** Revokes every live session of a token; how many. */
  revokeTokenUiSessions(tokenId: string, now: number): Promise<number>;
  /** Deletes up to `limit` sessions expired at `now` (revoked ones stay until they expire); how many. */
  pruneUiSessions(now: number, limit: number): Promise<number>;

  // ---- key-value state, totals, the database itself
  getState(key: string): Promise<string | null>;
  setState(key: string, value: string): Promise<void>;
  /** Totals for /metrics: counts by status and outcome, tokens and cost over all runs. */
  stats(): Promise<StoreStats>;
  /** Current schema version and the newest one this build knows. */
  schemaVersion(): Promise<{ current: number; latest: number }>;
  close(): Promise<void>;
}

/**
 * All persistence goes through this interface. It is async so that a networked database can implement it;
 * no driver type appears in it. It is made of one part per aggregate (above): a backend implements each part
 * on its own, and `composeStore` (compose.ts) puts the parts together into one Store.
 */
export interface Store
  extends SessionStore,
    JobStore,
    RunStore,
    ApprovalStore,
    PlanStore,
    TriggerStore,
    DeliveryStore,
    StateStore,
    WakeStore,
    ReactionCursorStore {}

/** Which replica executes a run, and until when it holds it unless it renews the lease (ms). */
export interface RunClaim {
  replica: string;
  leaseUntil: number;
}

/**
 * A writer's proof that it still executes a run: the claim `claimRun` gave it. The epoch grows at every
 * claim of the run, so a process that lost the run (its lease lapsed and another took it over, or a restart
 * of the same replica took it back) holds an epoch no longer current, even under the same replica name.
 *
 * Every write made on behalf of a claimed run (its events, messages, call journal, questions, approvals, plan,
 * status) may carry its fence: the store then applies it only if, in the same transaction, the run is still
 * running with that claim; else it writes nothing and throws FencedError. The fence is the writer's claim on
 * its own run: it is checked whichever rows the write touches.
 */
export interface Fence {
  runId: string;
  replica: string;
  epoch: number;
}

/** A fenced write found that its writer no longer holds the run: nothing was written. */
export class FencedError extends Error {
  override name = 'FencedError';
  constructor(readonly fence: Fence) {
    super(`replica ${fence.replica} no longer holds run ${fence.runId} (claim ${fence.epoch})`);
  }
}

/**
 * An event written in the transaction that moves a run, when the move applies: run_finished when it ends the
 * run (a reader who sees the run ended finds its receipt in the log), run_interrupted when it goes back to the
 * queue (no event of its next holder comes before it).
 */
export interface Receipt {
  /** When it is written (ms). */
  at: number;
  /** The event, made from the run as the transaction left it. */
  event(run: Run): { type: string; data: Record<string, unknown> };
  /** Called with the stored event once the transaction committed. */
  stored(event: RunEvent): void;
}

/**
 * What other processes on the same database changed, as hints to look again (never the data itself):
 * `runs` a run was queued, parked, released or ended, or a question or tool approval was answered; `events`
 * an event was appended (payload: the run id); `inbox` a webhook delivery was queued; `outbox` a plan
 * delivery or notification was queued.
 */
export type WakeChannel = 'runs' | 'events' | 'inbox' | 'outbox';

export interface WakeStore {
  /**
   * Calls `listener` when a process (this one or another) committed a change of that kind: PostgreSQL
   * LISTEN/NOTIFY; the SQLite store (one process) never calls it. Polling stays the fallback: a wake may be
   * lost while the listening connection is being made again. Returns the unsubscribe.
   */
  onWake(channel: WakeChannel, listener: (payload: string) => void): () => void;
}

/** Delivery fields to write; undefined leaves a field as it is, null clears it. */
export type PlanDeliveryPatch = Partial<PlanDelivery>;

export class NotFoundError extends DomainError<'not_found'> {
  constructor(message: string) {
    super('not_found', message);
  }
}

export class ConflictError extends DomainError<'conflict'> {
  constructor(message: string) {
    super('conflict', message);
  }
}

export class JobLimitError extends ConflictError {
  constructor(readonly limit: number) {
    super(`session already has ${limit} jobs, the most a session may hold`);
  }
}

/**
 * The database cannot be reached (refused, gone mid-statement, shutting down): nothing was decided, or, for
 * a transaction cut before its COMMIT was answered, the outcome is unknown. The API answers 503 with
 * Retry-After; loops try again later.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
  constructor(override readonly cause: unknown) {
    super(`the database cannot be reached: ${(cause as Error)?.message ?? String(cause)}`);
  }
}

export class SchemaTooNewError extends Error {
  constructor(
    readonly current: number,
    readonly latest: number,
  ) {
    super(
      `the database schema is at version ${current}, newer than this build of drydock knows (${latest}). ` +
        'Upgrade drydock to a release that includes migration ' +
        `${String(current).padStart(6, '0')}, or restore a backup taken before the upgrade.`,
    );
  }
}

export class InvalidCursorError extends DomainError<'bad_cursor'> {
  constructor() {
    super('bad_cursor', 'cursor is not one this server issued');
  }
}

export interface StoreStats {
  runsByStatus: Record<string, number>;
  runsByPhase: Record<string, number>;
  plansByStatus: Record<string, number>;
  deliveriesByOutcome: Record<string, number>;
  slotsByOutcome: Record<string, number>;
  pendingQuestions: number;
  pendingToolApprovals: number;
  activeJobs: number;
  tokens: {
    input: number;
    output: number;
    cache_write_5m: number;
    cache_write_1h: number;
    cache_read: number;
  };
  costUsd: number;
}
