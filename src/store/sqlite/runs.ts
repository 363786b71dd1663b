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
import { SQLITE } from '../sql/dialect.js';
import type { LastMessage, MessageRow } from '../sql/runs.js';
import * as runSql from '../sql/runs.js';
import type { SqliteDb } from './db.js';
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
    const { text, values } = runSql.listRunsStatement(f);
    return page((this.db.sql(text).all(...values) as RunRow[]).map(toRun), f.limit);
  }

  async transitionRun(
    id: string,
    from: readonly RunStatus[],
    to: RunStatus,
    fields: TransitionFields & { receipt?: Receipt } = {},
  ): Promise<boolean> {
    const { text, values } = leases.transitionStatement(id, from, to, fields);
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
    const { claim: update } = leases.claimStatements(SQLITE, id, from, claim, now);
    return leases.claimedFence(
      id,
      claim,
      this.db.pluck(update.text).get(...update.values) as number | undefined,
    );
  }

  async renewRunLeases(held: readonly Fence[], leaseUntil: number): Promise<string[]> {
    const statements = leases.renewStatements(SQLITE, held, leaseUntil);
    if (!statements.length) return [];
    const renewed = this.db.write(() =>
      statements.flatMap(({ text, values }) => this.db.sql(text).all(...values) as Renewed[]),
    );
    return leases.renewedRunIds(held, renewed);
  }

  async listRecoverableRuns(own: string | null, now: number, limit: number): Promise<Run[]> {
    const { text, values } = leases.recoverableStatement(own, now, limit);
    return (this.db.sql(text).all(...values) as RunRow[]).map(toRun);
  }

  async releaseRun(
    id: string,
    own: string | null,
    now: number,
    to: 'queued' | 'interrupted',
    fields: { attempt?: number; finishedAt?: number; error?: string | null; receipt?: Receipt },
  ): Promise<boolean> {
    const { text, values } = leases.releaseStatement(id, own, now, to, fields);
    return this.withReceipt(fields.receipt, () => this.db.sql(text).get(...values) as RunRow | undefined);
  }

  async listClaimableRuns(limit: number, now: number | null = null): Promise<Run[]> {
    // Both halves walk runs_by_status (status, created_at); a session's busy runs are found through
    // runs_active_by_session (leases.sessionBusy repeats its condition, see leases.ts), a run's pending requests
    // through the (run_id, tool_use_id) unique indexes. Checked with EXPLAIN QUERY PLAN.
    const rows = this.db
      .sql(
        `SELECT * FROM (
           SELECT * FROM runs r WHERE r.status = 'queued'
             AND NOT ${leases.sessionBusy('r')}
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
    const update = runSql.updateRunStatement(id, patch);
    if (update) fencedWrite(this.db, fence, () => this.db.sql(update.text).run(...update.values));
  }

  // ---- conversations and events

  async loadConversation(conversationId: string): Promise<ConversationMessage[]> {
    return (this.db.sql(runSql.SELECT_CONVERSATION).all(conversationId) as MessageRow[]).map(
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
    this.db.write(() => {
      checkFence(this.db, fence);
      let last = this.db.sql(runSql.SELECT_LAST_MESSAGE).get(conversationId) as LastMessage | undefined;
      for (const m of messages) {
        const next = runSql.appendMessageStatement(conversationId, runId, last, m, now);
        this.db.sql(next.statement.text).run(...next.statement.values);
        last = next.last;
      }
    });
  }

  async loadFrame(conversationId: string): Promise<ConversationFrame | null> {
    const text = this.db.pluck(runSql.SELECT_FRAME).get(conversationId) as string | undefined;
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
      this.db.sql(runSql.INSERT_FRAME).run(conversationId, JSON.stringify(frame), runId, now);
      return this.db.pluck(runSql.SELECT_FRAME).get(conversationId) as string;
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
    return (this.db.sql(runSql.SELECT_EVENTS).all(runId, afterSeq, limit) as EventRow[]).map(toEvent);
  }

  // ---- the execute phase's call journal

  async startToolCall(c: NewToolCall, fence?: Fence): Promise<{ call: ToolCall; started: boolean }> {
    const start = runSql.startToolCallStatement(c);
    return this.db.write(() => {
      checkFence(this.db, fence);
      const inserted = this.db.sql(start.text).get(...start.values) as ToolCallRow | undefined;
      if (inserted) return { call: toToolCall(inserted), started: true };
      const row = this.db.sql(runSql.SELECT_TOOL_CALL).get(c.runId, c.toolUseId) as ToolCallRow;
      return { call: toToolCall(row), started: false };
    });
  }

  async recordToolCallProcess(
    runId: string,
    toolUseId: string,
    group: number,
    start: string | null,
    fence?: Fence,
  ): Promise<void> {
    const { text, values } = runSql.toolCallProcessStatement(runId, toolUseId, group, start);
    fencedWrite(this.db, fence, () => this.db.sql(text).run(...values));
  }

  async finishToolCall(
    runId: string,
    toolUseId: string,
    result: { content: string; isError: boolean },
    now: number,
    fence?: Fence,
  ): Promise<void> {
    const { text, values } = runSql.finishToolCallStatement(runId, toolUseId, result, now);
    fencedWrite(this.db, fence, () => this.db.sql(text).run(...values));
  }

  async listOpenCommands(limit: number): Promise<ToolCall[]> {
    return (this.db.sql(runSql.SELECT_OPEN_COMMANDS).all(limit) as ToolCallRow[]).map(toToolCall);
  }

  async confirmHold(runId: string, fence?: Fence): Promise<void> {
    leases.checkFenceOf(runId, fence);
    checkFence(this.db, fence);
  }

  async activeRunsForSubject(subject: string): Promise<Run[]> {
    const rows = this.db
      .sql(
        `SELECT * FROM runs WHERE subject = ? AND status IN (${leases.ACTIVE_STATUSES}) ORDER BY created_at`,
      )
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
  const { text, values } = runSql.insertRunStatement(r, coalescedSlots);
  return toRun(db.sql(text).get(...values) as RunRow);
}

/** The rowid of the newest event in the log (0 when empty). */
function logEnd(db: SqliteDb): number {
  return (db.pluck('SELECT COALESCE(MAX(rowid), 0) FROM run_events').get() as number) ?? 0;
}

/** Appends one event to a run's log, numbered after its last; also inside the transaction of a decision. */
export function insertEvent(
  db: SqliteDb,
  runId: string,
  type: string,
  data: Record<string, unknown>,
  at: number,
): RunEvent {
  const seq = db.pluck(runSql.INSERT_EVENT).get(...runSql.insertEventValues(runId, type, data, at)) as number;
  return { runId, seq, type, data, at };
}
