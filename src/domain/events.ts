import type { MemoryUsed } from './frame.js';
import type { AskedQuestion } from './questions.js';
import type {
  DecisionKind,
  DeliveryTarget,
  Effort,
  ExecuteMode,
  PlanStatus,
  RunPhase,
  RunStatus,
  TokenUsage,
} from './types.js';

// What each run event carries. `RunEvents.emit` (src/runs/events.ts) takes a type and its payload from this
// map, consumers read `data` through it, and the API contract (src/http/contract/events.ts) describes each
// payload in JSON (GET /v1/runs/:id/events). Times are ISO-8601 strings, as in the API.

/** A tool call named in an event. */
type ToolRef = { tool: string; tool_use_id: string };

/** Who ran, with what, on which attempt (also the whole payload of run_resumed). */
type RunStart = { phase: RunPhase; model: string; attempt: number };

export interface RunEventMap {
  run_started: RunStart & {
    /** The thinking and effort the model was sent, and where that differs from what was asked. */
    thinking: { type: string; budget_tokens?: number; display?: string } | null;
    effort: Effort | null;
    notes: string[];
    /** The project memory the conversation's system prompt holds (CLAUDE.md ...), when it holds one. */
    memory?: MemoryUsed;
  };
  run_resumed: RunStart;
  /** The daemon stopped while the run ran: it is retried (or not, past its attempts). */
  run_interrupted: { retrying: boolean; attempt: number };
  /** The last event of a run: its stream closes after it. */
  run_finished: {
    status: RunStatus;
    error: string | null;
    turns: number;
    usage: TokenUsage;
    cost_usd: number;
    duration_ms: number;
    active_ms: number;
    plan_id: string | null;
  };
  text_delta: { text: string };
  thinking_delta: { text: string };
  turn_finished: {
    turn: number;
    stop_reason: string;
    /** Only on a refusal. */
    refusal?: { category: string | null; explanation: string | null };
    usage: TokenUsage;
    cost_usd: number;
  };
  model_retry: {
    attempt: number;
    next_attempt_in_ms: number;
    cause: string;
    partial_reply_discarded: boolean;
  };
  /** The account reached its spend limit: the run waits (awaiting_input on spend_limit) until it is resumed. */
  spend_limit_reached: { reason: string; resumes_at: string };
  /** An admin ended the run's wait on the spend limit (`drydock runs resume`). */
  spend_limit_resumed: { by: string };
  /**
   * A spend cap's daily_usd was crossed (docs/spend-caps.md): the run waits (awaiting_input on spend_cap)
   * until the day resets (`resets_at`) or an admin resumes it.
   */
  spend_cap_reached: {
    reason: string;
    scope: 'trigger' | 'session' | 'global';
    id: string | null;
    cap: 'daily_usd' | 'daily_runs';
    limit: number;
    spent: number;
    resets_at: string;
  };
  /** An admin ended the run's wait on a spend cap (`drydock runs resume --spend-cap`). */
  spend_cap_resumed: { by: string };
  tool_use: ToolRef & { input: unknown };
  tool_result: ToolRef & { is_error: boolean; truncated: boolean; chars: number };
  /** A changing call the daemon died in: it is not run again. */
  tool_interrupted: ToolRef;
  /** A call in a reply cut off at max_tokens: not run. */
  tool_call_cut_off: ToolRef;
  policy_violation: ToolRef & { phase: RunPhase; reason?: 'repeated_tool_use_id' };
  question_request: {
    question_id: string;
    tool_use_id: string;
    questions: AskedQuestion[];
    expires_at: string;
  };
  question_resolved: {
    question_id: string;
    reason: 'answered' | 'timeout' | 'canceled';
    answers: Record<string, string | string[]> | null;
    /** Who answered (answered only). */
    by?: string;
  };
  tool_approval_request: ToolRef & {
    tool_approval_id: string;
    input: unknown;
    mode: ExecuteMode;
    reason: string;
    sandbox: 'bwrap' | 'off' | 'unavailable';
    expires_at: string;
    /** An MCP call: the server and the tool (the model's name is `mcp__<server>__<tool>`). */
    mcp?: { server: string; tool: string };
  };
  tool_approval_resolved: {
    tool_approval_id: string;
    decision: 'allowed' | 'denied' | 'timed_out' | 'canceled';
    /** Who decided, and what they said to the model (allowed or denied only). */
    by?: string;
    message?: string | null;
  };
  plan_proposed: {
    plan_id: string;
    sha256: string;
    workspace_commit: string | null;
    round: number;
    previous_plan_id: string | null;
    markdown: string;
    /** Where the plan's text came from: ExitPlanMode's `plan`, or (without one) the turn's text or thinking. */
    plan_source?: 'input' | 'text' | 'thinking';
  };
  plan_decided: {
    plan_id: string;
    decision: DecisionKind;
    identity: string;
    comment: string | null;
    sha256: string;
    plan_status: PlanStatus;
    run_id: string | null;
  };
  /**
   * A plan left pending approval without a decision: its pull request moved on (superseded) or nobody decided
   * before its expiry (expired). Written by the plan service after the change (src/plans/lifecycle.ts).
   */
  plan_closed: { plan_id: string; plan_status: 'superseded' | 'expired' };
  /** The breaker is open (or auto mode off): the execution runs in manual mode. */
  mode_fallback: { from: ExecuteMode; to: ExecuteMode; reason: string };
  execution_recorded: {
    plan_id: string;
    branch: string | null;
    commit: string | null;
    diff_stat: string | null;
    changed_files: string[];
    /** A plain workspace's execution: changes of its copy not carried back into the workspace, and why. */
    not_carried_back?: { path: string; why: string }[];
  };
  delivery_completed: {
    plan_id: string;
    /** Where the result went (PlanDelivery.target); absent on events written before it was kept. */
    target?: DeliveryTarget | null;
    branch: string | null;
    commit: string | null;
    remote: string | null;
    pull_request_url: string | null;
  };
  delivery_failed: { plan_id: string; error: string; attempts: number };
  /** An MCP server of the run did not start: the run fails with it. `stderr_tail`: the end of its stderr. */
  mcp_server_failed: { server: string; error: string; stderr_tail: string };
}

export type RunEventType = keyof RunEventMap;

/**
 * The payload of `event` as its type carries it (the map above), or null for an event of another type.
 * Readers of stored events go through this instead of guessing at `event.data`'s fields.
 */
export function dataOf<K extends RunEventType>(
  event: { type: string; data: object },
  type: K,
): RunEventMap[K] | null {
  return event.type === type ? (event.data as RunEventMap[K]) : null;
}
