import type { ConversationFrame } from '../domain/frame.js';
import type { NewRun } from '../domain/new-run.js';
import type {
  ConversationMessage,
  ExecuteMode,
  LoggedEvent,
  Page,
  PlanningBase,
  Run,
  RunEvent,
  RunSettings,
  RunStatus,
  RunWait,
  TokenUsage,
  ToolCall,
} from '../domain/types.js';
import type { Fence, Receipt, RunClaim, TransitionFields } from './leases.js';

export type NewToolCall = Pick<ToolCall, 'runId' | 'toolUseId' | 'tool' | 'inputSha256' | 'startedAt'>;

export interface RunFilter {
  sessionId?: string | undefined;
  jobId?: string | undefined;
  status?: RunStatus | undefined;
  limit: number;
  cursor?: string | undefined;
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
    fields?: TransitionFields & {
      /** An event of the move (run_finished when it ends the run), appended in the same transaction. */
      receipt?: Receipt;
    },
  ): Promise<boolean>;

  // ---- claims: which replica executes a running run, until when (src/runs/queue.ts, docs/replicas.md).
  // Every transition out of running clears the claim; parked runs belong to no replica.
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
      /** Run.planningBase: written once, when a plan run in a git workspace first opens. */
      planningBase?: PlanningBase;
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
