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
import { POSTGRES } from '../sql/dialect.js';
import { addCursor, equalities, json, LOCK, Params, type PgDb, type Queries, whereSql } from './db.js';
import { checkFence, fencedWrite } from './fence.js';

/** Runs, their conversations, event logs and the execute phase's call journal. */
export class PgRuns implements RunStore {
  constructor(private readonly db: PgDb) {}

  async createRun(r: NewRun): Promise<Run> {
    return insertRun(this.db, r, 0);
  }

  async getRun(id: string): Promise<Run | null> {
    const row = await this.db.row<RunRow>('SELECT * FROM runs WHERE id = $1', [id]);
    return row ? toRun(row) : null;
  }

  async listRuns(f: RunFilter): Promise<Page<Run>> {
    const p = new Params();
    const where = equalities(
      [
        ['session_id', f.sessionId],
        ['job_id', f.jobId],
        ['status', f.status],
      ],
      p,
    );
    addCursor(f.cursor, where, p, 'desc');
    const rows = await this.db.rows<RunRow>(
      `SELECT * FROM runs ${whereSql(where)} ORDER BY created_at DESC, id DESC LIMIT ${p.add(f.limit + 1)}`,
      p.values,
    );
    return page(rows.map(toRun), f.limit);
  }

  async transitionRun(
    id: string,
    from: readonly RunStatus[],
    to: RunStatus,
    fields: TransitionFields & { receipt?: Receipt } = {},
  ): Promise<boolean> {
    // One UPDATE (leases.ts): a concurrent transition of the same run waits for this one, then finds its
    // status no longer in `from` (or its claim gone) and changes nothing.
    const { text, values } = transitionStatement(id, from, to, fields);
    return this.withReceipt(fields.receipt, (q) => q.row<RunRow>(text, values));
  }

  /**
   * `move` (one UPDATE … RETURNING the run, or nothing when it did not apply) and, when it applied and a
   * receipt is asked for, the receipt appended in the same transaction; whether it applied.
   */
  private async withReceipt(
    receipt: Receipt | undefined,
    move: (q: Queries) => Promise<RunRow | undefined>,
  ): Promise<boolean> {
    if (!receipt) return (await move(this.db)) !== undefined;
    const stored = await this.db.tx(async (q) => {
      const row = await move(q);
      if (!row) return null;
      const run = toRun(row);
      const { type, data } = receipt.event(run);
      return insertEvent(q, run.id, type, data, receipt.at);
    });
    if (stored) receipt.stored(stored);
    return stored !== null;
  }

  // ---- claims (the statements and their rules: leases.ts)

  async claimRun(
    id: string,
    from: 'queued' | 'awaiting_input',
    claim: RunClaim,
    now: number,
  ): Promise<Fence | null> {
    const { lock, claim: update } = claimStatements(POSTGRES, id, from, claim, now);
    return this.db.tx(async (q) => {
      if (lock) await q.value(lock.text, lock.values);
      return claimedFence(id, claim, await q.value<number>(update.text, update.values));
    });
  }

  async renewRunLeases(held: readonly Fence[], leaseUntil: number): Promise<string[]> {
    const renewed: Renewed[] = [];
    for (const { text, values } of renewStatements(POSTGRES, held, leaseUntil))
      renewed.push(...(await this.db.rows<Renewed>(text, values)));
    return renewedRunIds(held, renewed);
  }

  async listRecoverableRuns(own: string | null, now: number, limit: number): Promise<Run[]> {
    const { text, values } = recoverableStatement(own, now, limit);
    return (await this.db.rows<RunRow>(text, values)).map(toRun);
  }

  async releaseRun(
    id: string,
    own: string | null,
    now: number,
    to: 'queued' | 'interrupted',
    fields: { attempt?: number; finishedAt?: number; error?: string | null; receipt?: Receipt },
  ): Promise<boolean> {
    // The UPDATE locks the row: of two replicas releasing at once, the second finds it no longer running.
    const { text, values } = releaseStatement(id, own, now, to, fields);
    return this.withReceipt(fields.receipt, (q) => q.row<RunRow>(text, values));
  }

  async listClaimableRuns(limit: number, now: number | null = null): Promise<Run[]> {
    // Each half is sorted and limited on its own, then the two are merged. Checked with EXPLAIN over 20,000
    // finished runs: both halves read only their status from runs_by_status; a session's busy runs come from
    // runs_active_by_session, pending requests from the pending-only indexes (questions_pending, ...).
    const rows = await this.db.rows<RunRow>(
      `SELECT * FROM (
         (SELECT * FROM runs r WHERE r.status = 'queued'
            AND NOT ${sessionBusy('r')}
          ORDER BY r.created_at, r.id LIMIT $1)
         UNION ALL
         (SELECT * FROM runs r WHERE r.status = 'awaiting_input'
            AND NOT EXISTS (SELECT 1 FROM questions q WHERE q.run_id = r.id AND q.status = 'pending')
            AND NOT EXISTS (SELECT 1 FROM tool_approvals a WHERE a.run_id = r.id AND a.status = 'pending')
            AND (r.waiting_on IS NULL OR r.waiting_until <= $2)
          ORDER BY r.created_at, r.id LIMIT $1)
       ) c ORDER BY created_at, id LIMIT $1`,
      [limit, now],
    );
    return rows.map(toRun);
  }

  async resumeWaitingRuns(on: RunWait['on']): Promise<Run[]> {
    const rows = await this.db.rows<RunRow>(
      `UPDATE runs SET waiting_on = NULL, waiting_until = NULL
       WHERE status = 'awaiting_input' AND waiting_on = $1 RETURNING *`,
      [on],
    );
    return rows.map(toRun).sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  }

  async waitingUntil(on: RunWait['on'], now: number): Promise<number | null> {
    const until = await this.db.value<number | null>(
      `SELECT MAX(waiting_until) FROM runs
       WHERE status = 'awaiting_input' AND waiting_on = $1 AND waiting_until > $2`,
      [on, now],
    );
    return until ?? null;
  }

  async updateRun(id: string, patch: Parameters<RunStore['updateRun']>[1], fence?: Fence): Promise<void> {
    const p = new Params();
    const sets: string[] = [];
    const put = (col: string, value: unknown) => sets.push(`${col} = ${p.add(value)}`);
    if (patch.conversationId !== undefined) put('conversation_id', patch.conversationId);
    if (patch.model !== undefined) put('model', patch.model);
    if (patch.settings !== undefined) put('settings', json(patch.settings));
    if (patch.turns !== undefined) put('turns', patch.turns);
    if (patch.usage !== undefined) put('usage', json(patch.usage));
    if (patch.costUsd !== undefined) put('cost_usd', patch.costUsd);
    if (patch.planId !== undefined) put('plan_id', patch.planId);
    if (patch.attempt !== undefined) put('attempt', patch.attempt);
    if (patch.executeMode !== undefined) put('execute_mode', patch.executeMode);
    if (patch.resultCommit !== undefined) put('result_commit', patch.resultCommit);
    if (patch.diffStat !== undefined) put('diff_stat', patch.diffStat);
    if (patch.changedFiles !== undefined) put('changed_files', json(patch.changedFiles));
    if (!sets.length) return;
    const sql = `UPDATE runs SET ${sets.join(', ')} WHERE id = ${p.add(id)}`;
    await fencedWrite(this.db, fence, (q) => q.exec(sql, p.values));
  }

  async confirmHold(runId: string, fence?: Fence): Promise<void> {
    checkFenceOf(runId, fence);
    await checkFence(this.db, fence);
  }

  async activeRunsForSubject(subject: string): Promise<Run[]> {
    const rows = await this.db.rows<RunRow>(
      `SELECT * FROM runs WHERE subject = $1 AND status IN (${ACTIVE_STATUSES}) ORDER BY created_at, id`,
      [subject],
    );
    return rows.map(toRun);
  }

  // ---- conversations and events

  async loadConversation(conversationId: string): Promise<ConversationMessage[]> {
    const rows = await this.db.rows<{
      role: ConversationMessage['role'];
      content: string;
      run_id: string;
      stop_reason: string | null;
    }>(
      'SELECT role, content, run_id, stop_reason FROM conversation_messages WHERE conversation_id = $1 ORDER BY seq',
      [conversationId],
    );
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
    if (!messages.length) return;
    await this.db.tx(async (q) => {
      await checkFence(q, fence);
      // Appends to one conversation take turns (an advisory lock on its id, held to the end of the
      // transaction): each reads the last message another append left, and numbers after it.
      await q.value('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [
        LOCK.conversation,
        conversationId,
      ]);
      let last = await q.row<{ seq: number; role: string; content: string; stop_reason: string | null }>(
        `SELECT seq, role, content, stop_reason FROM conversation_messages WHERE conversation_id = $1
         ORDER BY seq DESC LIMIT 1`,
        [conversationId],
      );
      for (const m of messages) {
        // Consecutive user messages become one; so does an assistant turn continued after `pause_turn`.
        const continues =
          last && last.role === m.role && (m.role === 'user' || last.stop_reason === 'pause_turn');
        if (last && continues) {
          const content = JSON.stringify([...JSON.parse(last.content), ...m.content]);
          await q.exec(
            `UPDATE conversation_messages SET content = $3, run_id = $4, stop_reason = $5
             WHERE conversation_id = $1 AND seq = $2`,
            [conversationId, last.seq, content, runId, m.stopReason ?? null],
          );
          last = { ...last, content, stop_reason: m.stopReason ?? null };
        } else {
          const seq = (last?.seq ?? 0) + 1;
          const content = JSON.stringify(m.content);
          await q.exec(
            `INSERT INTO conversation_messages (conversation_id, seq, role, content, run_id, created_at, stop_reason)
             VALUES ($1, $2, $3, $4, $5, $6, $7)`,
            [conversationId, seq, m.role, content, runId, now, m.stopReason ?? null],
          );
          last = { seq, role: m.role, content, stop_reason: m.stopReason ?? null };
        }
      }
    });
  }

  async loadFrame(conversationId: string): Promise<ConversationFrame | null> {
    const text = await this.db.value<string>(
      'SELECT frame FROM conversation_frames WHERE conversation_id = $1',
      [conversationId],
    );
    return text === undefined ? null : (JSON.parse(text) as ConversationFrame);
  }

  async saveFrame(
    conversationId: string,
    runId: string,
    frame: ConversationFrame,
    now: number,
    fence?: Fence,
  ): Promise<ConversationFrame> {
    // Inserted or not (another start won), the stored frame is read back in the same transaction.
    const text = await this.db.tx(async (q) => {
      await checkFence(q, fence);
      await q.exec(
        `INSERT INTO conversation_frames (conversation_id, frame, run_id, created_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (conversation_id) DO NOTHING`,
        [conversationId, JSON.stringify(frame), runId, now],
      );
      return q.value<string>('SELECT frame FROM conversation_frames WHERE conversation_id = $1', [
        conversationId,
      ]);
    });
    return JSON.parse(text!) as ConversationFrame;
  }

  async appendEvent(
    runId: string,
    type: string,
    data: Record<string, unknown>,
    at: number,
    fence?: Fence,
  ): Promise<RunEvent> {
    return this.db.tx(async (q) => {
      // The fence first: its row lock comes before the log's lock, in every transaction that takes both
      // (a run's end with its receipt updates the run, then appends).
      await checkFence(q, fence);
      return insertEvent(q, runId, type, data, at);
    });
  }

  async listEvents(runId: string, afterSeq: number, limit: number): Promise<RunEvent[]> {
    const rows = await this.db.rows<EventRow>(
      'SELECT run_id, seq, type, data, at FROM run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
      [runId, afterSeq, limit],
    );
    return rows.map(toEvent);
  }

  // ---- the event log as the notifier reads it (src/notify/)

  async eventLogEnd(): Promise<number> {
    return (await this.db.value<number>('SELECT COALESCE(MAX(id), 0) FROM run_events')) ?? 0;
  }

  async eventsAfter(
    after: number,
    types: readonly string[],
    limit: number,
  ): Promise<{ events: LoggedEvent[]; end: number }> {
    // One statement, so the end and the events come from the same snapshot: every event up to `end` is
    // either returned or not of those types (appends are serialized, see appendEvent).
    const rows = await this.db.rows<
      { log_end: number } & { [K in keyof EventRow]: EventRow[K] | null } & { id: number | null }
    >(
      `WITH log AS (SELECT COALESCE(MAX(id), 0) AS log_end FROM run_events)
       SELECT log.log_end, e.id, e.run_id, e.seq, e.type, e.data, e.at
       FROM log LEFT JOIN LATERAL (
         SELECT id, run_id, seq, type, data, at FROM run_events
         WHERE id > $1 AND id <= log.log_end AND type = ANY($2::text[])
         ORDER BY id LIMIT $3
       ) e ON true
       ORDER BY e.id`,
      [after, types, Math.max(0, limit)],
    );
    const end = rows[0]?.log_end ?? 0;
    const events = rows
      .filter((r) => r.id !== null)
      .map((r) => ({
        rowid: r.id!,
        runId: r.run_id!,
        seq: r.seq!,
        type: r.type!,
        data: JSON.parse(r.data!) as Record<string, unknown>,
        at: r.at!,
      }));
    return { events, end };
  }

  // ---- the execute phase's call journal

  async startToolCall(c: NewToolCall, fence?: Fence): Promise<{ call: ToolCall; started: boolean }> {
    // A concurrent insert of the same call makes this one wait for it, then do nothing: the select after it
    // (a new statement, a new snapshot) reads the row that won.
    const inserted = await fencedWrite(this.db, fence, (q) =>
      q.row<ToolCallRow>(
        `INSERT INTO tool_calls (run_id, tool_use_id, tool, input_sha256, started_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (run_id, tool_use_id) DO NOTHING RETURNING *`,
        [c.runId, c.toolUseId, c.tool, c.inputSha256, c.startedAt],
      ),
    );
    if (inserted) return { call: toToolCall(inserted), started: true };
    const row = await this.db.row<ToolCallRow>(
      'SELECT * FROM tool_calls WHERE run_id = $1 AND tool_use_id = $2',
      [c.runId, c.toolUseId],
    );
    return { call: toToolCall(row!), started: false };
  }

  async recordToolCallProcess(
    runId: string,
    toolUseId: string,
    group: number,
    start: string | null,
    fence?: Fence,
  ): Promise<void> {
    await fencedWrite(this.db, fence, (q) =>
      q.exec(
        `UPDATE tool_calls SET process_group = $3, process_start = $4
         WHERE run_id = $1 AND tool_use_id = $2 AND finished_at IS NULL`,
        [runId, toolUseId, group, start],
      ),
    );
  }

  async finishToolCall(
    runId: string,
    toolUseId: string,
    result: { content: string; isError: boolean },
    now: number,
    fence?: Fence,
  ): Promise<void> {
    await fencedWrite(this.db, fence, (q) =>
      q.exec(
        `UPDATE tool_calls SET finished_at = $3, result = $4, process_group = NULL, process_start = NULL
         WHERE run_id = $1 AND tool_use_id = $2 AND finished_at IS NULL`,
        [runId, toolUseId, now, JSON.stringify(result)],
      ),
    );
  }

  async listOpenCommands(limit: number): Promise<ToolCall[]> {
    const rows = await this.db.rows<ToolCallRow>(
      `SELECT * FROM tool_calls WHERE finished_at IS NULL AND process_group IS NOT NULL ORDER BY started_at LIMIT $1`,
      [limit],
    );
    return rows.map(toToolCall);
  }
}

/**
 * Inserts a queued run; also inside the transactions that create a run with something else (a fired slot,
 * a decision, a trigger's fire). The unique indexes have the last word: one run per (job, slot), one execute
 * run per plan.
 */
export async function insertRun(q: Queries, r: NewRun, coalescedSlots: number): Promise<Run> {
  const row = await q.row<RunRow>(
    `INSERT INTO runs (id, session_id, job_id, slot_at, source, phase, status, prompt, requested_by,
         coalesced_slots, created_at, overrides, conversation_id, revises_plan_id, executes_plan_id, trigger_id,
         delivery_id, subject, checkout)
     VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
     RETURNING *`,
    [
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
  );
  return toRun(row!);
}

/**
 * Appends one event to a run's log, numbered after its last; inside a transaction.
 *
 * LOUD: appends to the event log take turns, across every process on the database. The lock is taken before
 * the row gets its id (the identity's next value) and released only after the transaction has committed
 * (advisory locks are released at the end of the transaction, after the commit), so ids become visible in
 * increasing order: eventsAfter's reader, having seen id N, never sees an id below N appear later, and the
 * notifier's cursor never steps over an event. The run's seq is numbered under the same lock.
 */
async function insertEvent(
  q: Queries,
  runId: string,
  type: string,
  data: Record<string, unknown>,
  at: number,
): Promise<RunEvent> {
  await q.value('SELECT pg_advisory_xact_lock($1::int, 0)', [LOCK.eventLog]);
  const seq = await q.value<number>(
    `INSERT INTO run_events (run_id, seq, type, data, at)
     VALUES ($1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM run_events WHERE run_id = $1), $2, $3, $4)
     RETURNING seq`,
    [runId, type, JSON.stringify(data), at],
  );
  return { runId, seq: seq!, type, data, at };
}
