import type { ConversationFrame } from '../../domain/frame.js';
import type { NewRun } from '../../domain/new-run.js';
import type {
  ConversationMessage,
  LoggedEvent,
  Page,
  Run,
  RunEvent,
  RunStatus,
  RunWait,
  ToolCall,
} from '../../domain/types.js';
import {
  ACTIVE_STATUSES,
  checkFenceOf,
  claimedFence,
  claimStatements,
  type Fence,
  type Receipt,
  type Renewed,
  type RunClaim,
  recoverableStatement,
  releaseStatement,
  renewedRunIds,
  renewStatements,
  sessionBusy,
  type TransitionFields,
  transitionStatement,
} from '../leases.js';
import { page } from '../paging.js';
import { type EventRow, type RunRow, type ToolCallRow, toEvent, toRun, toToolCall } from '../rows.js';
import type { NewToolCall, RunFilter, RunStore } from '../runs.js';
import { SQLITE } from '../sql/dialect.js';
import { addCursor, equalities, type SqliteDb, whereSql } from './db.js';
import { checkFence, fencedWrite } from './fence.js';

export class SqliteRuns implements RunStore {
  constructor(private readonly db: SqliteDb) {}

  async createRun(r: NewRun): Promise<Run> {
    return insertRun(this.db, r, 0);
  }

  async getRun(id: string): Promise<Run | null> {
    const row = this.db.sql('SELECT * FROM runs WHERE id = ?').get(id) as RunRow | undefined;
    return row ? toRun(row) : null;
  }

  async listRuns(f: RunFilter): Promise<Page<Run>> {
    const { where, args } = equalities([
      ['session_id', f.sessionId],
      ['job_id', f.jobId],
      ['status', f.status],
    ]);
    addCursor(f.cursor, where, args, 'desc');
    const rows = this.db
      .sql(`SELECT * FROM runs ${whereSql(where)} ORDER BY created_at DESC, id DESC LIMIT ${f.limit + 1}`)
      .all(...args) as RunRow[];
    return page(rows.map(toRun), f.limit);
  }

  async transitionRun(
    id: string,
    from: readonly RunStatus[],
    to: RunStatus,
    fields: TransitionFields & { receipt?: Receipt } = {},
  ): Promise<boolean> {
    const { text, values } = transitionStatement(id, from, to, fields);
    return this.withReceipt(fields.receipt, () => this.db.sql(text).get(...values) as RunRow | undefined);
  }

  /** `move` in one transaction with the receipt it earns (when it moved the run and one is asked for). */
  private withReceipt(receipt: Receipt | undefined, move: () => RunRow | undefined): boolean {
    if (!receipt) return move() !== undefined;
    let stored: RunEvent | null = null;
    const moved = this.db.write(() => {
      const row = move();
      if (!row) return false;
      const run = toRun(row);
      const { type, data } = receipt.event(run);
      stored = insertEvent(this.db, run.id, type, data, receipt.at);
      return true;
    });
    if (stored) receipt.stored(stored);
    return moved;
  }

  // ---- claims (the statements and their rules: leases.ts)

  async claimRun(
    id: string,
    from: 'queued' | 'awaiting_input',
    claim: RunClaim,
    now: number,
  ): Promise<Fence | null> {
    const { claim: update } = claimStatements(SQLITE, id, from, claim, now);
    return claimedFence(id, claim, this.db.pluck(update.text).get(...update.values) as number | undefined);
  }

  async renewRunLeases(held: readonly Fence[], leaseUntil: number): Promise<string[]> {
    const statements = renewStatements(SQLITE, held, leaseUntil);
    if (!statements.length) return [];
    const renewed = this.db.write(() =>
      statements.flatMap(({ text, values }) => this.db.sql(text).all(...values) as Renewed[]),
    );
    return renewedRunIds(held, renewed);
  }

  async listRecoverableRuns(own: string | null, now: number, limit: number): Promise<Run[]> {
    const { text, values } = recoverableStatement(own, now, limit);
    return (this.db.sql(text).all(...values) as RunRow[]).map(toRun);
  }

  async releaseRun(
    id: string,
    own: string | null,
    now: number,
    to: 'queued' | 'interrupted',
    fields: { attempt?: number; finishedAt?: number; error?: string | null; receipt?: Receipt },
  ): Promise<boolean> {
    const { text, values } = releaseStatement(id, own, now, to, fields);
    return this.withReceipt(fields.receipt, () => this.db.sql(text).get(...values) as RunRow | undefined);
  }

  async listClaimableRuns(limit: number, now: number | null = null): Promise<Run[]> {
    // Both halves walk runs_by_status (status, created_at); a session's busy runs are found through
    // runs_active_by_session (sessionBusy repeats its condition, see leases.ts), a run's pending requests
    // through the (run_id, tool_use_id) unique indexes. Checked with EXPLAIN QUERY PLAN.
    const rows = this.db
      .sql(
        `SELECT * FROM (
           SELECT * FROM runs r WHERE r.status = 'queued'
             AND NOT ${sessionBusy('r')}
           UNION ALL
           SELECT * FROM runs r WHERE r.status = 'awaiting_input'
             AND NOT EXISTS (SELECT 1 FROM questions q WHERE q.run_id = r.id AND q.status = 'pending')
             AND NOT EXISTS (SELECT 1 FROM tool_approvals a WHERE a.run_id = r.id AND a.status = 'pending')
             AND (r.waiting_on IS NULL OR r.waiting_until <= ?)
         ) ORDER BY created_at, id LIMIT ?`,
      )
      .all(now, limit) as RunRow[];
    return rows.map(toRun);
  }

  async resumeWaitingRuns(on: RunWait['on']): Promise<Run[]> {
    const rows = this.db
      .sql(
        `UPDATE runs SET waiting_on = NULL, waiting_until = NULL
         WHERE status = 'awaiting_input' AND waiting_on = ? RETURNING *`,
      )
      .all(on) as RunRow[];
    return rows.map(toRun).sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  }

  async waitingUntil(on: RunWait['on'], now: number): Promise<number | null> {
    const until = this.db
      .pluck(
        `SELECT MAX(waiting_until) FROM runs
         WHERE status = 'awaiting_input' AND waiting_on = ? AND waiting_until > ?`,
      )
      .get(on, now) as number | null | undefined;
    return until ?? null;
  }

  async updateRun(id: string, patch: Parameters<RunStore['updateRun']>[1], fence?: Fence): Promise<void> {
    const sets: string[] = [];
    const args: unknown[] = [];
    const put = (col: string, value: unknown) => {
      sets.push(`${col} = ?`);
      args.push(value);
    };
    if (patch.conversationId !== undefined) put('conversation_id', patch.conversationId);
    if (patch.model !== undefined) put('model', patch.model);
    if (patch.settings !== undefined) put('settings', JSON.stringify(patch.settings));
    if (patch.turns !== undefined) put('turns', patch.turns);
    if (patch.usage !== undefined) put('usage', JSON.stringify(patch.usage));
    if (patch.costUsd !== undefined) put('cost_usd', patch.costUsd);
    if (patch.planId !== undefined) put('plan_id', patch.planId);
    if (patch.attempt !== undefined) put('attempt', patch.attempt);
    if (patch.executeMode !== undefined) put('execute_mode', patch.executeMode);
    if (patch.resultCommit !== undefined) put('result_commit', patch.resultCommit);
    if (patch.diffStat !== undefined) put('diff_stat', patch.diffStat);
    if (patch.changedFiles !== undefined) put('changed_files', JSON.stringify(patch.changedFiles));
    if (!sets.length) return;
    fencedWrite(this.db, fence, () =>
      this.db.sql(`UPDATE runs SET ${sets.join(', ')} WHERE id = ?`).run(...args, id),
    );
  }

  // ---- conversations and events

  async loadConversation(conversationId: string): Promise<ConversationMessage[]> {
    const rows = this.db
      .sql(
        'SELECT role, content, run_id, stop_reason FROM conversation_messages WHERE conversation_id = ? ORDER BY seq',
      )
      .all(conversationId) as {
      role: ConversationMessage['role'];
      content: string;
      run_id: string;
      stop_reason: string | null;
    }[];
    return rows.map((r) => ({
      role: r.role,
      content: JSON.parse(r.content),
      runId: r.run_id,
      ...(r.stop_reason !== null ? { stopReason: r.stop_reason } : {}),
    }));
  }

  async appendMessages(
    conversationId: string,
    runId: string,
    messages: ConversationMessage[],
    now: number,
    fence?: Fence,
  ): Promise<void> {
    const insert = this.db.sql(
      `INSERT INTO conversation_messages (conversation_id, seq, role, content, run_id, created_at, stop_reason)
       VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM conversation_messages WHERE conversation_id = ?), ?, ?, ?, ?, ?)`,
    );
    const last = this.db.sql(
      'SELECT seq, role, content, stop_reason FROM conversation_messages WHERE conversation_id = ? ORDER BY seq DESC LIMIT 1',
    );
    const merge = this.db.sql(
      'UPDATE conversation_messages SET content = ?, run_id = ?, stop_reason = ? WHERE conversation_id = ? AND seq = ?',
    );
    this.db.write(() => {
      checkFence(this.db, fence);
      for (const m of messages) {
        const prev = last.get(conversationId) as
          | { seq: number; role: string; content: string; stop_reason: string | null }
          | undefined;
        // Consecutive user messages become one; so does an assistant turn continued after `pause_turn`.
        const continues =
          prev && prev.role === m.role && (m.role === 'user' || prev.stop_reason === 'pause_turn');
        if (prev && continues) {
          merge.run(
            JSON.stringify([...JSON.parse(prev.content), ...m.content]),
            runId,
            m.stopReason ?? null,
            conversationId,
            prev.seq,
          );
        } else {
          insert.run(
            conversationId,
            conversationId,
            m.role,
            JSON.stringify(m.content),
            runId,
            now,
            m.stopReason ?? null,
          );
        }
      }
    });
  }

  async loadFrame(conversationId: string): Promise<ConversationFrame | null> {
    const text = this.db
      .pluck('SELECT frame FROM conversation_frames WHERE conversation_id = ?')
      .get(conversationId) as string | undefined;
    return text === undefined ? null : (JSON.parse(text) as ConversationFrame);
  }

  async saveFrame(
    conversationId: string,
    runId: string,
    frame: ConversationFrame,
    now: number,
    fence?: Fence,
  ): Promise<ConversationFrame> {
    const text = fencedWrite(this.db, fence, () => {
      this.db
        .sql(
          `INSERT INTO conversation_frames (conversation_id, frame, run_id, created_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (conversation_id) DO NOTHING`,
        )
        .run(conversationId, JSON.stringify(frame), runId, now);
      return this.db
        .pluck('SELECT frame FROM conversation_frames WHERE conversation_id = ?')
        .get(conversationId) as string;
    });
    return JSON.parse(text) as ConversationFrame;
  }

  async appendEvent(
    runId: string,
    type: string,
    data: Record<string, unknown>,
    at: number,
    fence?: Fence,
  ): Promise<RunEvent> {
    return fencedWrite(this.db, fence, () => insertEvent(this.db, runId, type, data, at));
  }

  async listEvents(runId: string, afterSeq: number, limit: number): Promise<RunEvent[]> {
    const rows = this.db
      .sql('SELECT * FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?')
      .all(runId, afterSeq, limit) as EventRow[];
    return rows.map(toEvent);
  }

  // ---- the execute phase's call journal

  async startToolCall(c: NewToolCall, fence?: Fence): Promise<{ call: ToolCall; started: boolean }> {
    return this.db.write(() => {
      checkFence(this.db, fence);
      const inserted = this.db
        .sql(
          `INSERT INTO tool_calls (run_id, tool_use_id, tool, input_sha256, started_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (run_id, tool_use_id) DO NOTHING`,
        )
        .run(c.runId, c.toolUseId, c.tool, c.inputSha256, c.startedAt).changes;
      const row = this.db
        .sql('SELECT * FROM tool_calls WHERE run_id = ? AND tool_use_id = ?')
        .get(c.runId, c.toolUseId) as ToolCallRow;
      return { call: toToolCall(row), started: inserted === 1 };
    });
  }

  async recordToolCallProcess(
    runId: string,
    toolUseId: string,
    group: number,
    start: string | null,
    fence?: Fence,
  ): Promise<void> {
    fencedWrite(this.db, fence, () =>
      this.db
        .sql(
          `UPDATE tool_calls SET process_group = ?, process_start = ?
           WHERE run_id = ? AND tool_use_id = ? AND finished_at IS NULL`,
        )
        .run(group, start, runId, toolUseId),
    );
  }

  async finishToolCall(
    runId: string,
    toolUseId: string,
    result: { content: string; isError: boolean },
    now: number,
    fence?: Fence,
  ): Promise<void> {
    fencedWrite(this.db, fence, () =>
      this.db
        .sql(
          `UPDATE tool_calls SET finished_at = ?, result = ?, process_group = NULL, process_start = NULL
           WHERE run_id = ? AND tool_use_id = ? AND finished_at IS NULL`,
        )
        .run(now, JSON.stringify(result), runId, toolUseId),
    );
  }

  async listOpenCommands(limit: number): Promise<ToolCall[]> {
    const rows = this.db
      .sql(
        `SELECT * FROM tool_calls WHERE finished_at IS NULL AND process_group IS NOT NULL ORDER BY started_at LIMIT ?`,
      )
      .all(limit) as ToolCallRow[];
    return rows.map(toToolCall);
  }

  async confirmHold(runId: string, fence?: Fence): Promise<void> {
    checkFenceOf(runId, fence);
    checkFence(this.db, fence);
  }

  async activeRunsForSubject(subject: string): Promise<Run[]> {
    const rows = this.db
      .sql(`SELECT * FROM runs WHERE subject = ? AND status IN (${ACTIVE_STATUSES}) ORDER BY created_at`)
      .all(subject) as RunRow[];
    return rows.map(toRun);
  }

  // ---- the event log as the notifier reads it

  async eventLogEnd(): Promise<number> {
    return logEnd(this.db);
  }

  async eventsAfter(
    after: number,
    types: readonly string[],
    limit: number,
  ): Promise<{ events: LoggedEvent[]; end: number }> {
    // One read transaction: the end and the events come from the same snapshot, so nothing up to `end` can
    // be missed. Writers serialize on the file and rowids grow in commit order, so no event at or below
    // `end` can appear later.
    return this.db.read(() => {
      const end = logEnd(this.db);
      if (types.length === 0 || limit <= 0) return { events: [], end };
      const rows = this.db
        .sql(
          `SELECT rowid, run_id, seq, type, data, at FROM run_events
         WHERE rowid > ? AND rowid <= ? AND type IN (${types.map(() => '?').join(', ')})
         ORDER BY rowid LIMIT ?`,
        )
        .all(after, end, ...types, limit) as {
        rowid: number;
        run_id: string;
        seq: number;
        type: string;
        data: string;
        at: number;
      }[];
      const events = rows.map((r) => ({
        rowid: r.rowid,
        runId: r.run_id,
        seq: r.seq,
        type: r.type,
        data: JSON.parse(r.data) as Record<string, unknown>,
        at: r.at,
      }));
      return { events, end };
    });
  }
}

/**
 * Every run is created here: by createRun, and inside the transactions of the scheduler (advanceJobs,
 * runJobNow), of decisions (decidePlan) and of trigger fires (fireTrigger).
 */
export function insertRun(db: SqliteDb, r: NewRun, coalescedSlots: number): Run {
  db.sql(
    `INSERT INTO runs (id, session_id, job_id, slot_at, source, phase, status, prompt, requested_by,
         coalesced_slots, created_at, overrides, conversation_id, revises_plan_id, executes_plan_id, trigger_id,
         delivery_id, subject, checkout)
       VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
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
  );
  return toRun(db.sql('SELECT * FROM runs WHERE id = ?').get(r.id) as RunRow);
}

/** The rowid of the newest event in the log (0 when empty). */
function logEnd(db: SqliteDb): number {
  return (db.pluck('SELECT COALESCE(MAX(rowid), 0) FROM run_events').get() as number) ?? 0;
}

/** Appends one event to a run's log, numbered after its last. */
function insertEvent(
  db: SqliteDb,
  runId: string,
  type: string,
  data: Record<string, unknown>,
  at: number,
): RunEvent {
  const row = db
    .sql(
      `INSERT INTO run_events (run_id, seq, type, data, at)
       VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM run_events WHERE run_id = ?), ?, ?, ?)
       RETURNING seq`,
    )
    .get(runId, runId, type, JSON.stringify(data), at) as { seq: number };
  return { runId, seq: row.seq, type, data, at };
}
