import type { NewRun } from '../../domain/new-run.js';
import type { ConversationMessage } from '../../domain/types.js';
import type { NewToolCall, RunFilter, RunStore } from '../runs.js';
import type { Statement } from './dialect.js';
import { addCursor, equalities, whereSql } from './query.js';

// The SQL of runs, their conversations, event logs and call journal that both backends run as it is written
// here (`?` placeholders, see dialect.ts). The claims and leases are in leases.ts.

/**
 * Inserts a queued run. The unique indexes have the last word: one run per (job, slot), one execute run per
 * plan. Every run is created this way: by createRun, and inside the transactions of the scheduler
 * (advanceJobs, runJobNow), of decisions (decidePlan) and of trigger fires (fireTrigger).
 */
export function insertRunStatement(r: NewRun, coalescedSlots: number): Statement {
  return {
    text: `INSERT INTO runs (id, session_id, job_id, slot_at, source, phase, status, prompt, requested_by,
         coalesced_slots, created_at, overrides, conversation_id, revises_plan_id, executes_plan_id, trigger_id,
         delivery_id, subject, checkout)
       VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       RETURNING *`,
    values: [
      r.id,
      r.sessionId,
      r.jobId,
      r.slotAt,
      r.source,
      r.phase ?? 'plan',
      r.prompt,
      r.requestedBy,
      coalescedSlots,
      r.createdAt,
      JSON.stringify(r.overrides ?? {}),
      r.conversationId ?? r.id,
      r.revisesPlanId ?? null,
      r.executesPlanId ?? null,
      r.triggerId ?? null,
      r.deliveryId ?? null,
      r.subject ?? null,
      r.checkout ? JSON.stringify(r.checkout) : null,
    ],
  };
}

/** A page of runs, newest first (one row more than the page, to tell whether another follows). */
export function listRunsStatement(f: RunFilter): Statement {
  const { where, values } = equalities([
    ['session_id', f.sessionId],
    ['job_id', f.jobId],
    ['status', f.status],
  ]);
  addCursor(f.cursor, where, values, 'desc');
  return {
    text: `SELECT * FROM runs ${whereSql(where)} ORDER BY created_at DESC, id DESC LIMIT ?`,
    values: [...values, f.limit + 1],
  };
}

/** JSON text of a value for a JSON column (null stays null). */
function json(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** The columns updateRun writes, by patch field, and how the value is stored. */
const RUN_PATCH: {
  [K in keyof RunPatch]-?: [column: string, store?: (v: NonNullable<RunPatch[K]> | null) => unknown];
} = {
  conversationId: ['conversation_id'],
  model: ['model'],
  settings: ['settings', json],
  turns: ['turns'],
  usage: ['usage', json],
  costUsd: ['cost_usd'],
  planId: ['plan_id'],
  attempt: ['attempt'],
  executeMode: ['execute_mode'],
  resultCommit: ['result_commit'],
  diffStat: ['diff_stat'],
  changedFiles: ['changed_files', json],
  planningBase: ['planning_base', json],
};

type RunPatch = Parameters<RunStore['updateRun']>[1];

/** Writes the fields of `patch` that are set; null when none is. */
export function updateRunStatement(id: string, patch: RunPatch): Statement | null {
  const keys = (Object.keys(RUN_PATCH) as (keyof RunPatch)[]).filter((k) => patch[k] !== undefined);
  if (!keys.length) return null;
  const sets = keys.map((k) => `${RUN_PATCH[k][0]} = ?`);
  const values = keys.map((k) => {
    const store = RUN_PATCH[k][1] as ((v: unknown) => unknown) | undefined;
    return store ? store(patch[k]) : patch[k];
  });
  return { text: `UPDATE runs SET ${sets.join(', ')} WHERE id = ?`, values: [...values, id] };
}

// ---- conversations

export const SELECT_CONVERSATION =
  'SELECT role, content, run_id, stop_reason FROM conversation_messages WHERE conversation_id = ? ORDER BY seq';

export interface MessageRow {
  role: ConversationMessage['role'];
  content: string;
  run_id: string;
  stop_reason: string | null;
}

export function toMessage(r: MessageRow): ConversationMessage {
  return {
    role: r.role,
    content: JSON.parse(r.content),
    runId: r.run_id,
    ...(r.stop_reason !== null ? { stopReason: r.stop_reason } : {}),
  };
}

/** The last message of a conversation, as appendMessages reads it. Values: conversation id. */
export const SELECT_LAST_MESSAGE = `SELECT seq, role, content, stop_reason FROM conversation_messages
  WHERE conversation_id = ? ORDER BY seq DESC LIMIT 1`;

export interface LastMessage {
  seq: number;
  role: string;
  content: string;
  stop_reason: string | null;
}

/**
 * What appending `m` after `last` writes: consecutive user messages become one, and so does an assistant turn
 * continued after `pause_turn` (the conversation always alternates); anything else is a new message numbered
 * after the last. Returns the statement and the conversation's last message after it.
 */
export function appendMessageStatement(
  conversationId: string,
  runId: string,
  last: LastMessage | undefined,
  m: ConversationMessage,
  now: number,
): { statement: Statement; last: LastMessage } {
  const stopReason = m.stopReason ?? null;
  const continues = last && last.role === m.role && (m.role === 'user' || last.stop_reason === 'pause_turn');
  if (last && continues) {
    const content = JSON.stringify([...JSON.parse(last.content), ...m.content]);
    return {
      statement: {
        text: `UPDATE conversation_messages SET content = ?, run_id = ?, stop_reason = ?
               WHERE conversation_id = ? AND seq = ?`,
        values: [content, runId, stopReason, conversationId, last.seq],
      },
      last: { ...last, content, stop_reason: stopReason },
    };
  }
  const seq = (last?.seq ?? 0) + 1;
  const content = JSON.stringify(m.content);
  return {
    statement: {
      text: `INSERT INTO conversation_messages (conversation_id, seq, role, content, run_id, created_at, stop_reason)
             VALUES (?, ?, ?, ?, ?, ?, ?)`,
      values: [conversationId, seq, m.role, content, runId, now, stopReason],
    },
    last: { seq, role: m.role, content, stop_reason: stopReason },
  };
}

/** A conversation's frame is never replaced: the first writer wins. Values: id, frame, run id, now. */
export const INSERT_FRAME = `INSERT INTO conversation_frames (conversation_id, frame, run_id, created_at)
  VALUES (?, ?, ?, ?) ON CONFLICT (conversation_id) DO NOTHING`;

export const SELECT_FRAME = 'SELECT frame FROM conversation_frames WHERE conversation_id = ?';

// ---- the event log

/** Appends one event to a run's log, numbered after its last; returns its seq. Values: see insertEventValues. */
export const INSERT_EVENT = `INSERT INTO run_events (run_id, seq, type, data, at)
  VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM run_events WHERE run_id = ?), ?, ?, ?)
  RETURNING seq`;

export function insertEventValues(runId: string, type: string, data: Record<string, unknown>, at: number) {
  return [runId, runId, type, JSON.stringify(data), at];
}

export const SELECT_EVENTS =
  'SELECT run_id, seq, type, data, at FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?';

// ---- the execute phase's call journal

/** Journals a call unless it was journaled before (then returns nothing). */
export function startToolCallStatement(c: NewToolCall): Statement {
  return {
    text: `INSERT INTO tool_calls (run_id, tool_use_id, tool, input_sha256, started_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (run_id, tool_use_id) DO NOTHING RETURNING *`,
    values: [c.runId, c.toolUseId, c.tool, c.inputSha256, c.startedAt],
  };
}

export const SELECT_TOOL_CALL = 'SELECT * FROM tool_calls WHERE run_id = ? AND tool_use_id = ?';

export function toolCallProcessStatement(
  runId: string,
  toolUseId: string,
  group: number,
  start: string | null,
): Statement {
  return {
    text: `UPDATE tool_calls SET process_group = ?, process_start = ?
           WHERE run_id = ? AND tool_use_id = ? AND finished_at IS NULL`,
    values: [group, start, runId, toolUseId],
  };
}

export function finishToolCallStatement(
  runId: string,
  toolUseId: string,
  result: { content: string; isError: boolean },
  now: number,
): Statement {
  return {
    text: `UPDATE tool_calls SET finished_at = ?, result = ?, process_group = NULL, process_start = NULL
           WHERE run_id = ? AND tool_use_id = ? AND finished_at IS NULL`,
    values: [now, JSON.stringify(result), runId, toolUseId],
  };
}

/** Commands journaled as running with a recorded process group. Values: limit. */
export const SELECT_OPEN_COMMANDS = `SELECT * FROM tool_calls WHERE finished_at IS NULL AND process_group IS NOT NULL
  ORDER BY started_at LIMIT ?`;
