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
import type { Fence, Receipt, Renewed, RunClaim, TransitionFields } from '../leases.js';
import * as leases from '../leases.js';
import { page } from '../paging.js';
import { type EventRow, type RunRow, type ToolCallRow, toEvent, toRun, toToolCall } from '../rows.js';
import type { NewToolCall, RunFilter, RunStore } from '../runs.js';
import { POSTGRES } from '../sql/dialect.js';
import type { LastMessage, MessageRow } from '../sql/runs.js';
import * as runSql from '../sql/runs.js';
import { LOCK, type PgDb, type Queries } from './db.js';
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
    const { text, values } = runSql.listRunsStatement(f);
    return page((await this.db.rows<RunRow>(text, values)).map(toRun), f.limit);
  }

  async transitionRun(
    id: string,
    from: readonly RunStatus[],
    to: RunStatus,
    fields: TransitionFields & { receipt?: Receipt } = {},
  ): Promise<boolean> {
    // One UPDATE (leases.ts): a concurrent transition of the same run waits for this one, then finds its
    // status no longer in `from` (or its claim gone) and changes nothing.
    const { text, values } = leases.transitionStatement(id, from, to, fields);
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
    const { lock, claim: update } = leases.claimStatements(POSTGRES, id, from, claim, now);
    return this.db.tx(async (q) => {
      if (lock) await q.value(lock.text, lock.values);
      return leases.claimedFence(id, claim, await q.value<number>(update.text, update.values));
    });
  }

  async renewRunLeases(held: readonly Fence[], leaseUntil: number): Promise<string[]> {
    const renewed: Renewed[] = [];
    for (const { text, values } of leases.renewStatements(POSTGRES, held, leaseUntil))
      renewed.push(...(await this.db.rows<Renewed>(text, values)));
    return leases.renewedRunIds(held, renewed);
  }

  async listRecoverableRuns(own: string | null, now: number, limit: number): Promise<Run[]> {
    const { text, values } = leases.recoverableStatement(own, now, limit);
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
    const { text, values } = leases.releaseStatement(id, own, now, to, fields);
    return this.withReceipt(fields.receipt, (q) => q.row<RunRow>(text, values));
  }

  async listClaimableRuns(limit: number, now: number | null = null): Promise<Run[]> {
    // Each half is sorted and limited on its own, then the two are merged. Checked with EXPLAIN over 20,000
    // finished runs: both halves read only their status from runs_by_status; a session's busy runs come from
    // runs_active_by_session, pending requests from the pending-only indexes (questions_pending, ...).
    const rows = await this.db.rows<RunRow>(
      `SELECT * FROM (
         (SELECT * FROM runs r WHERE r.status = 'queued'
            AND NOT ${leases.sessionBusy('r')}
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
    const update = runSql.updateRunStatement(id, patch);
    if (update) await fencedWrite(this.db, fence, (q) => q.exec(update.text, update.values));
  }

  async confirmHold(runId: string, fence?: Fence): Promise<void> {
    leases.checkFenceOf(runId, fence);
    await checkFence(this.db, fence);
  }

  async activeRunsForSubject(subject: string): Promise<Run[]> {
    const rows = await this.db.rows<RunRow>(
      `SELECT * FROM runs WHERE subject = $1 AND status IN (${leases.ACTIVE_STATUSES}) ORDER BY created_at, id`,
      [subject],
    );
    return rows.map(toRun);
  }

  // ---- conversations and events

  async loadConversation(conversationId: string): Promise<ConversationMessage[]> {
    return (await this.db.rows<MessageRow>(runSql.SELECT_CONVERSATION, [conversationId])).map(
      runSql.toMessage,
    );
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
      let last = await q.row<LastMessage>(runSql.SELECT_LAST_MESSAGE, [conversationId]);
      for (const m of messages) {
        const next = runSql.appendMessageStatement(conversationId, runId, last, m, now);
        await q.exec(next.statement.text, next.statement.values);
        last = next.last;
      }
    });
  }

  async loadFrame(conversationId: string): Promise<ConversationFrame | null> {
    const text = await this.db.value<string>(runSql.SELECT_FRAME, [conversationId]);
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
      await q.exec(runSql.INSERT_FRAME, [conversationId, JSON.stringify(frame), runId, now]);
      return q.value<string>(runSql.SELECT_FRAME, [conversationId]);
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
    return (await this.db.rows<EventRow>(runSql.SELECT_EVENTS, [runId, afterSeq, limit])).map(toEvent);
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
    const start = runSql.startToolCallStatement(c);
    const inserted = await fencedWrite(this.db, fence, (q) => q.row<ToolCallRow>(start.text, start.values));
    if (inserted) return { call: toToolCall(inserted), started: true };
    const row = await this.db.row<ToolCallRow>(runSql.SELECT_TOOL_CALL, [c.runId, c.toolUseId]);
    return { call: toToolCall(row!), started: false };
  }

  async recordToolCallProcess(
    runId: string,
    toolUseId: string,
    group: number,
    start: string | null,
    fence?: Fence,
  ): Promise<void> {
    const { text, values } = runSql.toolCallProcessStatement(runId, toolUseId, group, start);
    await fencedWrite(this.db, fence, (q) => q.exec(text, values));
  }

  async finishToolCall(
    runId: string,
    toolUseId: string,
    result: { content: string; isError: boolean },
    now: number,
    fence?: Fence,
  ): Promise<void> {
    const { text, values } = runSql.finishToolCallStatement(runId, toolUseId, result, now);
    await fencedWrite(this.db, fence, (q) => q.exec(text, values));
  }

  async listOpenCommands(limit: number): Promise<ToolCall[]> {
    return (await this.db.rows<ToolCallRow>(runSql.SELECT_OPEN_COMMANDS, [limit])).map(toToolCall);
  }
}

/**
 * Inserts a queued run; also inside the transactions that create a run with something else (a fired slot,
 * a decision, a trigger's fire). The unique indexes have the last word: one run per (job, slot), one execute
 * run per plan.
 */
export async function insertRun(q: Queries, r: NewRun, coalescedSlots: number): Promise<Run> {
  const { text, values } = runSql.insertRunStatement(r, coalescedSlots);
  return toRun((await q.row<RunRow>(text, values))!);
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
export async function insertEvent(
  q: Queries,
  runId: string,
  type: string,
  data: Record<string, unknown>,
  at: number,
): Promise<RunEvent> {
  await q.value('SELECT pg_advisory_xact_lock($1::int, 0)', [LOCK.eventLog]);
  const seq = await q.value<number>(runSql.INSERT_EVENT, runSql.insertEventValues(runId, type, data, at));
  return { runId, seq: seq!, type, data, at };
}
