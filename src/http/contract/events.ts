import { z } from 'zod';
import type { RunEventMap, RunEventType } from '../../domain/events.js';
import { SPEND_CAPS, SPEND_SCOPES } from '../../domain/spend.js';
import { DELIVERY_TARGETS, EFFORTS, EXECUTE_MODES, PLAN_STATUSES, RUN_STATUSES } from '../../domain/types.js';
import { time, usage } from './common.js';
import { DECISION_KINDS } from './plans.js';
import { askedQuestionSchema } from './questions.js';

// GET /v1/runs/:id/events: each Server-Sent Event's data is {seq, type, at, ...payload}, the payload as
// RunEventMap (src/domain/events.ts) names it. The schemas below are held to that map by the compiler.

const toolRef = { tool: z.string(), tool_use_id: z.string() };
const phase = z.enum(['plan', 'execute']);
const runStart = { phase, model: z.string(), attempt: z.number() };

/** Each event type's payload. */
export const RUN_EVENT_PAYLOADS = {
  run_started: z.strictObject({
    ...runStart,
    thinking: z
      .strictObject({
        type: z.string(),
        budget_tokens: z.number().optional(),
        display: z.string().optional(),
      })
      .nullable(),
    effort: z.enum(EFFORTS).nullable(),
    notes: z.array(z.string()),
    memory: z
      .strictObject({
        files: z.array(z.string()),
        from: z.union([
          z.strictObject({ kind: z.literal('workspace') }),
          z.strictObject({ kind: z.literal('commit'), commit: z.string() }),
        ]),
        sha256: z.string(),
        bytes: z.number(),
        cut: z.boolean(),
      })
      .optional(),
  }),
  run_resumed: z.strictObject(runStart),
  run_interrupted: z.strictObject({ retrying: z.boolean(), attempt: z.number() }),
  run_finished: z.strictObject({
    status: z.enum(RUN_STATUSES),
    error: z.string().nullable(),
    turns: z.number(),
    usage,
    cost_usd: z.number(),
    duration_ms: z.number(),
    active_ms: z.number(),
    plan_id: z.string().nullable(),
  }),
  text_delta: z.strictObject({ text: z.string() }),
  thinking_delta: z.strictObject({ text: z.string() }),
  turn_finished: z.strictObject({
    turn: z.number(),
    stop_reason: z.string(),
    refusal: z
      .strictObject({ category: z.string().nullable(), explanation: z.string().nullable() })
      .optional(),
    usage,
    cost_usd: z.number(),
  }),
  model_retry: z.strictObject({
    attempt: z.number(),
    next_attempt_in_ms: z.number(),
    cause: z.string(),
    partial_reply_discarded: z.boolean(),
  }),
  spend_limit_reached: z.strictObject({ reason: z.string(), resumes_at: z.string() }),
  spend_limit_resumed: z.strictObject({ by: z.string() }),
  spend_cap_reached: z.strictObject({
    reason: z.string(),
    scope: z.enum(SPEND_SCOPES),
    id: z.string().nullable(),
    cap: z.enum(SPEND_CAPS),
    limit: z.number(),
    spent: z.number(),
    resets_at: z.string(),
  }),
  spend_cap_resumed: z.strictObject({ by: z.string() }),
  tool_use: z.strictObject({ ...toolRef, input: z.unknown() }),
  tool_result: z.strictObject({
    ...toolRef,
    is_error: z.boolean(),
    truncated: z.boolean(),
    chars: z.number(),
  }),
  tool_interrupted: z.strictObject(toolRef),
  tool_call_cut_off: z.strictObject(toolRef),
  policy_violation: z.strictObject({
    ...toolRef,
    phase,
    reason: z.literal('repeated_tool_use_id').optional(),
  }),
  question_request: z.strictObject({
    question_id: z.string(),
    tool_use_id: z.string(),
    questions: z.array(askedQuestionSchema),
    expires_at: time,
  }),
  question_resolved: z.strictObject({
    question_id: z.string(),
    reason: z.enum(['answered', 'timeout', 'canceled']),
    answers: z.record(z.string(), z.union([z.string(), z.array(z.string())])).nullable(),
    by: z.string().optional(),
  }),
  tool_approval_request: z.strictObject({
    ...toolRef,
    tool_approval_id: z.string(),
    input: z.unknown(),
    mode: z.enum(EXECUTE_MODES),
    reason: z.string(),
    sandbox: z.enum(['bwrap', 'off', 'unavailable']),
    expires_at: time,
    mcp: z.strictObject({ server: z.string(), tool: z.string() }).optional(),
  }),
  tool_approval_resolved: z.strictObject({
    tool_approval_id: z.string(),
    decision: z.enum(['allowed', 'denied', 'timed_out', 'canceled']),
    by: z.string().optional(),
    message: z.string().nullable().optional(),
  }),
  plan_proposed: z.strictObject({
    plan_id: z.string(),
    sha256: z.string(),
    workspace_commit: z.string().nullable(),
    round: z.number(),
    previous_plan_id: z.string().nullable(),
    markdown: z.string(),
    plan_source: z.enum(['input', 'text', 'thinking']).optional(),
  }),
  plan_decided: z.strictObject({
    plan_id: z.string(),
    decision: z.enum(DECISION_KINDS),
    identity: z.string(),
    comment: z.string().nullable(),
    sha256: z.string(),
    plan_status: z.enum(PLAN_STATUSES),
    run_id: z.string().nullable(),
  }),
  plan_closed: z.strictObject({
    plan_id: z.string(),
    plan_status: z.enum(['superseded', 'expired']),
  }),
  mode_fallback: z.strictObject({
    from: z.enum(EXECUTE_MODES),
    to: z.enum(EXECUTE_MODES),
    reason: z.string(),
  }),
  execution_recorded: z.strictObject({
    plan_id: z.string(),
    branch: z.string().nullable(),
    commit: z.string().nullable(),
    diff_stat: z.string().nullable(),
    changed_files: z.array(z.string()),
    /** A plain workspace's execution: changes of its copy not carried back into the workspace, and why. */
    not_carried_back: z.array(z.strictObject({ path: z.string(), why: z.string() })).optional(),
  }),
  delivery_completed: z.strictObject({
    plan_id: z.string(),
    target: z.enum(DELIVERY_TARGETS).nullable().optional(),
    branch: z.string().nullable(),
    commit: z.string().nullable(),
    remote: z.string().nullable(),
    pull_request_url: z.string().nullable(),
  }),
  delivery_failed: z.strictObject({ plan_id: z.string(), error: z.string(), attempts: z.number() }),
  mcp_server_failed: z.strictObject({ server: z.string(), error: z.string(), stderr_tail: z.string() }),
} satisfies { [K in RunEventType]: z.ZodType<RunEventMap[K]> };

// Both ways: every payload the map allows is one the schema accepts, and the other way round (above).
type Accepts<K extends RunEventType> =
  RunEventMap[K] extends z.input<(typeof RUN_EVENT_PAYLOADS)[K]> ? true : false;
type AllTrue<T extends { [K in RunEventType]: true }> = T;
/** A compile-time check (no value): fails to compile when a payload the map allows is one its schema refuses. */
export type MapMatchesSchemas = AllTrue<{ [K in RunEventType]: Accepts<K> }>;

const envelope = { seq: z.number(), at: time };

/** One event as the stream's `data:` carries it. */
export const runEventSchema = z.discriminatedUnion(
  'type',
  Object.entries(RUN_EVENT_PAYLOADS).map(([type, payload]) =>
    payload.extend({ ...envelope, type: z.literal(type) }),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]],
);

/** An event as a client reads it: its number, type, time and payload fields side by side. */
export type RunEventJson = {
  [K in RunEventType]: { seq: number; type: K; at: string } & RunEventMap[K];
}[RunEventType];
