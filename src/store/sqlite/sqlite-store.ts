import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import {
  ACTIVE_RUN_STATUSES,
  type ApiToken,
  type ConversationMessage,
  type CronJob,
  type Decision,
  type Delivery,
  type DeliveryOutcome,
  type JobStatus,
  type LoggedEvent,
  type NewNotification,
  type Notification,
  type NotificationOutcome,
  type NotificationStatus,
  type Page,
  type Plan,
  type PlanDeliveryStatus,
  type PlanStatus,
  type Question,
  type QuestionStatus,
  type Run,
  type RunEvent,
  type RunStatus,
  type Session,
  type SlotRecord,
  type ToolApproval,
  type ToolApprovalStatus,
  type ToolCall,
  type Trigger,
  type UiSession,
} from '../../domain/types.js';
import {
  type AdvanceResult,
  ConflictError,
  type DecideFn,
  type DecisionEffect,
  type DeliveryPatch,
  InvalidCursorError,
  JobLimitError,
  type NewJob,
  type NewRun,
  type NewSession,
  type NewToolCall,
  NotFoundError,
  type PlanDeliveryPatch,
  type PlanFilter,
  type RunFilter,
  type SessionFilter,
  type SlotTransition,
  type Store,
  type StoreStats,
  type TriggerFireInput,
} from '../store.js';
import { PlanDeliverySql } from './delivery.js';
import { currentVersion, loadMigrations, type Migration, migrate } from './migrate.js';
import { SqliteOutbox } from './outbox.js';
import {
  type DecisionRow,
  type DeliveryRow,
  decodeCursor,
  type EventRow,
  encodeCursor,
  type JobRow,
  type PlanRow,
  type RunRow,
  type SessionRow,
  type SlotRow,
  type TokenRow,
  type ToolCallRow,
  type TriggerRow,
  toDecision,
  toDelivery,
  toEvent,
  toJob,
  toPlan,
  toQuestion,
  toRun,
  toSession,
  toSlot,
  toToken,
  toToolApproval,
  toToolCall,
  toTrigger,
  toUiSession,
  type UiSessionRow,
} from './rows.js';
import { Statements } from './statements.js';

/** Each plan row comes with how many distinct people approved it so far. */
const APPROVALS = `(SELECT COUNT(*) FROM decisions d WHERE d.plan_id = plans.id AND d.kind = 'approve') AS approvals`;
/** A delivery's columns, not its stored payload (read only by the inbox). */
const DELIVERY_COLUMNS =
  'id, source, key, event, trigger_id, outcome, detail, subject, run_ids, received_at, processed_at';
const D_DELIVERY_COLUMNS = DELIVERY_COLUMNS.replace(/(\w+)/g, 'd.$1');
const ACTIVE = ACTIVE_RUN_STATUSES.map((s) => `'${s}'`).join(', ');

export interface SqliteStoreOptions {
  /** Path of the database file; ':memory:' is not allowed (tests use real files). */
  file: string;
  /** Apply pending migrations on open (default true). `drydock migrate` opens with false, then migrates. */
  migrate?: boolean;
  now?: () => number;
  migrations?: Migration[];
}

/**
 * The embedded store: one SQLite file in WAL mode. better-sqlite3 is synchronous; the async interface
 * is kept so a networked store can stand in. Write transactions are IMMEDIATE so that two processes on
 * one file serialize instead of failing on lock upgrades.
 */
/** The tables of a run's requests to a person, which share their columns for lookups. */
type RequestTable = 'questions' | 'tool_approvals';

export class SqliteStore implements Store {
  readonly db: Database.Database;
  private readonly migrations: Migration[];
  private readonly statements: Statements;

  constructor(opts: SqliteStoreOptions) {
    mkdirSync(dirname(opts.file), { recursive: true });
    this.db = new Database(opts.file);
    this.statements = new Statements(this.db);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('foreign_keys = ON');
    this.migrations = opts.migrations ?? loadMigrations();
    if (opts.migrate !== false) this.migrateNow((opts.now ?? Date.now)());
  }

  private sql(text: string): Database.Statement {
    return this.statements.get(text);
  }

  migrateNow(now: number): number[] {
    return migrate(this.db, this.migrations, now);
  }

  async schemaVersion(): Promise<{ current: number; latest: number }> {
    return { current: currentVersion(this.db), latest: this.migrations.length };
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  // ---- tokens

  async createToken(t: ApiToken): Promise<void> {
    this.sql(
      `INSERT INTO api_tokens (id, name, identity, role, secret_hash, created_at, revoked_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ).run(t.id, t.name, t.identity, t.role, t.secretHash, t.createdAt, t.revokedAt);
  }

  async findToken(id: string): Promise<ApiToken | null> {
    const row = this.sql('SELECT * FROM api_tokens WHERE id = ?').get(id) as TokenRow | undefined;
    return row ? toToken(row) : null;
  }

  async rolesOf(identity: string): Promise<ApiToken['role'][]> {
    return this.sql('SELECT DISTINCT role FROM api_tokens WHERE identity = ? AND revoked_at IS NULL')
      .pluck()
      .all(identity) as ApiToken['role'][];
  }

  async countActiveTokens(role?: ApiToken['role']): Promise<number> {
    const row = (
      role
        ? this.sql('SELECT COUNT(*) AS n FROM api_tokens WHERE revoked_at IS NULL AND role = ?').get(role)
        : this.sql('SELECT COUNT(*) AS n FROM api_tokens WHERE revoked_at IS NULL').get()
    ) as { n: number };
    return row.n;
  }

  async revokeToken(id: string, now: number): Promise<boolean> {
    return this.db
      .transaction(() => {
        const revoked =
          this.sql('UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now, id)
            .changes > 0;
        this.revokeSessionsOf(id, now);
        return revoked;
      })
      .immediate();
  }

  // ---- /ui sessions

  async createUiSession(s: Omit<UiSession, 'revokedAt'>): Promise<void> {
    this.sql(
      `INSERT INTO ui_sessions (id_hash, token_id, identity, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?)`,
    ).run(s.idHash, s.tokenId, s.identity, s.createdAt, s.expiresAt);
  }

  async findUiSession(idHash: Buffer, now: number): Promise<UiSession | null> {
    const row = this.sql(
      'SELECT * FROM ui_sessions WHERE id_hash = ? AND revoked_at IS NULL AND expires_at > ?',
    ).get(idHash, now) as UiSessionRow | undefined;
    return row ? toUiSession(row) : null;
  }

  async revokeUiSession(idHash: Buffer, now: number): Promise<boolean> {
    return (
      this.sql('UPDATE ui_sessions SET revoked_at = ? WHERE id_hash = ? AND revoked_at IS NULL').run(
        now,
        idHash,
      ).changes > 0
    );
  }

  async revokeTokenUiSessions(tokenId: string, now: number): Promise<number> {
    return this.revokeSessionsOf(tokenId, now);
  }

  async pruneUiSessions(now: number, limit: number): Promise<number> {
    return this.sql(
      `DELETE FROM ui_sessions WHERE id_hash IN
         (SELECT id_hash FROM ui_sessions WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`,
    ).run(now, limit).changes;
  }

  /** Also runs inside revokeToken's transaction. */
  private revokeSessionsOf(tokenId: string, now: number): number {
    return this.sql('UPDATE ui_sessions SET revoked_at = ? WHERE token_id = ? AND revoked_at IS NULL').run(
      now,
      tokenId,
    ).changes;
  }

  // ---- sessions

  async createSession(s: NewSession): Promise<Session> {
    this.sql(
      `INSERT INTO sessions (id, name, workspace, owner, defaults, status, created_at)
         VALUES (?, ?, ?, ?, ?, 'open', ?)`,
    ).run(s.id, s.name, s.workspace, s.owner, JSON.stringify(s.defaults), s.createdAt);
    return (await this.getSession(s.id))!;
  }

  async getSession(id: string): Promise<Session | null> {
    const row = this.sql('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow | undefined;
    return row ? toSession(row) : null;
  }

  async listSessions(f: SessionFilter): Promise<Page<Session>> {
    const { where, args } = equalities([['status', f.status]]);
    addCursor(f.cursor, where, args, 'asc');
    const rows = this.sql(
      `SELECT * FROM sessions ${whereSql(where)} ORDER BY created_at ASC, id ASC LIMIT ${f.limit + 1}`,
    ).all(...args) as SessionRow[];
    return page(rows.map(toSession), f.limit);
  }

  async closeSession(id: string, now: number): Promise<{ session: Session; deletedJobs: number } | null> {
    return this.db
      .transaction(() => {
        const row = this.sql('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow | undefined;
        if (!row) return null;
        if (row.status === 'open') {
          this.sql(`UPDATE sessions SET status = 'closed', closed_at = ? WHERE id = ?`).run(now, id);
        }
        const deleted = this.sql('DELETE FROM cron_jobs WHERE session_id = ?').run(id).changes;
        const session = toSession(this.sql('SELECT * FROM sessions WHERE id = ?').get(id) as SessionRow);
        return { session, deletedJobs: deleted };
      })
      .immediate();
  }

  // ---- jobs

  async createJob(j: NewJob, maxPerSession: number): Promise<CronJob> {
    this.db
      .transaction(() => {
        const session = this.sql('SELECT status FROM sessions WHERE id = ?').get(j.sessionId) as
          | { status: string }
          | undefined;
        if (!session) throw new NotFoundError(`session ${j.sessionId} not found`);
        if (session.status !== 'open') throw new ConflictError(`session ${j.sessionId} is closed`);
        const { n } = this.sql('SELECT COUNT(*) AS n FROM cron_jobs WHERE session_id = ?').get(
          j.sessionId,
        ) as {
          n: number;
        };
        if (n >= maxPerSession) throw new JobLimitError(maxPerSession);
        this.insertJob(j, 'active');
      })
      .immediate();
    return (await this.getJob(j.id))!;
  }

  private insertJob(j: NewJob, status: JobStatus): void {
    this.sql(
      `INSERT INTO cron_jobs (id, session_id, cron, effective_cron, timezone, prompt, recurring, approximate,
           options, status, created_by, created_at, expires_at, next_nominal_at, next_due_at, next_final, trigger_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      j.id,
      j.sessionId,
      j.cron,
      j.effectiveCron,
      j.timezone,
      j.prompt,
      j.recurring ? 1 : 0,
      j.approximate ? 1 : 0,
      JSON.stringify(j.options),
      status,
      j.createdBy,
      j.createdAt,
      j.expiresAt,
      j.nextNominalAt,
      j.nextDueAt,
      j.nextFinal ? 1 : 0,
      j.triggerId ?? null,
    );
  }

  async renewJob(id: string, expiresAt: number, by: string, now: number): Promise<CronJob | null> {
    this.sql(
      `UPDATE cron_jobs SET expires_at = ?,
           next_final = CASE WHEN next_nominal_at IS NOT NULL AND next_nominal_at >= ? THEN 1 ELSE 0 END,
           pending_final = CASE WHEN pending_slot_at IS NOT NULL AND pending_slot_at >= ? THEN 1 ELSE 0 END,
           renewals = renewals + 1, renewed_at = ?, renewed_by = ?
         WHERE id = ? AND recurring = 1`,
    ).run(expiresAt, expiresAt, expiresAt, now, by, id);
    return this.getJob(id);
  }

  async jobOfTrigger(triggerId: string): Promise<CronJob | null> {
    const row = this.sql('SELECT * FROM cron_jobs WHERE trigger_id = ?').get(triggerId) as JobRow | undefined;
    return row ? toJob(row) : null;
  }

  async redefineJob(j: NewJob, status: JobStatus): Promise<CronJob | null> {
    this.sql(
      `UPDATE cron_jobs SET cron = ?, effective_cron = ?, timezone = ?, prompt = ?, approximate = ?, options = ?,
           status = ?, expires_at = ?, next_nominal_at = ?, next_due_at = ?, next_final = ?,
           pending_slot_at = NULL, pending_count = 0, pending_final = 0
         WHERE id = ?`,
    ).run(
      j.cron,
      j.effectiveCron,
      j.timezone,
      j.prompt,
      j.approximate ? 1 : 0,
      JSON.stringify(j.options),
      status,
      j.expiresAt,
      j.nextNominalAt,
      j.nextDueAt,
      j.nextFinal ? 1 : 0,
      j.id,
    );
    return this.getJob(j.id);
  }

  async createScheduleTrigger(input: {
    trigger: Trigger;
    session: Omit<NewSession, 'createdAt'> & { scopeKey: string };
    job: NewJob;
  }): Promise<Trigger> {
    this.db
      .transaction(() => {
        this.insertTrigger(input.trigger);
        const s = input.session;
        this.sql(
          `INSERT INTO sessions (id, name, workspace, owner, defaults, status, created_at, scope_key)
           VALUES (?, ?, ?, ?, ?, 'open', ?, ?)`,
        ).run(
          s.id,
          s.name,
          s.workspace,
          s.owner,
          JSON.stringify(s.defaults),
          input.trigger.createdAt,
          s.scopeKey,
        );
        this.insertJob(input.job, input.trigger.enabled ? 'active' : 'paused');
      })
      .immediate();
    return (await this.getTrigger(input.trigger.id))!;
  }

  async getJob(id: string): Promise<CronJob | null> {
    const row = this.sql('SELECT * FROM cron_jobs WHERE id = ?').get(id) as JobRow | undefined;
    return row ? toJob(row) : null;
  }

  async listJobs(sessionId: string): Promise<CronJob[]> {
    const rows = this.sql('SELECT * FROM cron_jobs WHERE session_id = ? ORDER BY created_at, id').all(
      sessionId,
    ) as JobRow[];
    return rows.map(toJob);
  }

  async countJobs(): Promise<number> {
    return (this.sql('SELECT COUNT(*) AS n FROM cron_jobs').get() as { n: number }).n;
  }

  async deleteJob(id: string): Promise<boolean> {
    return this.sql('DELETE FROM cron_jobs WHERE id = ?').run(id).changes === 1;
  }

  async updateJobSchedule(
    id: string,
    status: JobStatus,
    next: { nominalAt: number; dueAt: number; final: boolean } | null,
  ): Promise<CronJob | null> {
    this.sql(
      `UPDATE cron_jobs SET status = ?, next_nominal_at = ?, next_due_at = ?, next_final = ? WHERE id = ?`,
    ).run(status, next?.nominalAt ?? null, next?.dueAt ?? null, next?.final ? 1 : 0, id);
    return this.getJob(id);
  }

  async listDueJobIds(now: number, limit: number): Promise<string[]> {
    return this.sql(
      `SELECT id FROM cron_jobs WHERE status = 'active' AND next_due_at IS NOT NULL AND next_due_at <= ?
         ORDER BY next_due_at LIMIT ?`,
    )
      .pluck()
      .all(now, limit) as string[];
  }

  async listReadyPendingJobIds(limit: number): Promise<string[]> {
    return this.sql(
      `SELECT j.id FROM cron_jobs j WHERE j.pending_slot_at IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.session_id = j.session_id AND r.status IN (${ACTIVE}))
         ORDER BY j.pending_slot_at LIMIT ?`,
    )
      .pluck()
      .all(limit) as string[];
  }

  async earliestDueAt(): Promise<number | null> {
    const row = this.sql(
      `SELECT next_due_at AS t FROM cron_jobs WHERE status = 'active' AND next_due_at IS NOT NULL
         ORDER BY next_due_at LIMIT 1`,
    ).get() as { t: number } | undefined;
    return row?.t ?? null;
  }

  async advanceJobs(jobIds: string[], now: number, decide: DecideFn): Promise<AdvanceResult[]> {
    const getJob = this.sql('SELECT * FROM cron_jobs WHERE id = ?');
    return this.db
      .transaction(() => {
        const results: AdvanceResult[] = [];
        for (const id of jobIds) {
          const row = getJob.get(id) as JobRow | undefined;
          if (!row) continue;
          const job = toJob(row);
          const t = decide(job, this.sessionBusy(job.sessionId));
          if (!t) continue;
          results.push({ jobId: id, run: this.applyTransition(job, t, now), transition: t });
        }
        return results;
      })
      .immediate();
  }

  /** Runs inside advanceJobs' transaction. */
  private applyTransition(job: CronJob, t: SlotTransition, now: number): Run | null {
    const insertSlot = this.sql(
      `INSERT INTO job_slots (job_id, slot_at, last_slot_at, slots, outcome, run_id, recorded_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const slot of t.coalesce) insertSlot.run(job.id, slot, slot, 1, 'coalesced', null, now);
    if (t.missed)
      insertSlot.run(job.id, t.missed.firstAt, t.missed.lastAt, t.missed.slots, 'missed', null, now);
    let run: Run | null = null;
    if (t.fire) {
      const coalesced = this.sql(
        `UPDATE job_slots SET run_id = ? WHERE job_id = ? AND outcome = 'coalesced' AND run_id IS NULL`,
      ).run(t.fire.runId, job.id).changes;
      run = this.insertRun(
        {
          id: t.fire.runId,
          sessionId: job.sessionId,
          jobId: job.id,
          slotAt: t.fire.slotAt,
          source: 'schedule',
          prompt: job.prompt,
          requestedBy: job.createdBy,
          createdAt: now,
          overrides: job.options,
          ...(job.triggerId ? { triggerId: job.triggerId } : {}),
        },
        coalesced,
      );
      insertSlot.run(job.id, t.fire.slotAt, t.fire.slotAt, 1, 'fired', t.fire.runId, now);
    }
    if (t.remove) {
      this.sql('DELETE FROM cron_jobs WHERE id = ?').run(job.id);
      return run;
    }
    this.sql(
      `UPDATE cron_jobs SET status = ?, next_nominal_at = ?, next_due_at = ?, next_final = ?,
           pending_slot_at = ?, pending_count = ?, pending_final = ?,
           last_slot_at = COALESCE(?, last_slot_at), fire_count = fire_count + ?
         WHERE id = ?`,
    ).run(
      t.status ?? job.status,
      t.next?.nominalAt ?? null,
      t.next?.dueAt ?? null,
      t.next?.final ? 1 : 0,
      t.pending?.slotAt ?? null,
      t.pending?.coalesced ?? 0,
      t.pending?.final ? 1 : 0,
      t.fire?.slotAt ?? null,
      t.fire ? 1 : 0,
      job.id,
    );
    return run;
  }

  async runJobNow(jobId: string, r: NewRun): Promise<Run | null> {
    return this.db
      .transaction(() => {
        const row = this.sql('SELECT * FROM cron_jobs WHERE id = ?').get(jobId) as JobRow | undefined;
        if (!row) return null;
        const job = toJob(row);
        if (job.status === 'missed' && job.nextNominalAt !== null) {
          // A missed one-shot: a person fires its slot now, exactly once, and the job is done.
          const run = this.insertRun({ ...r, jobId, slotAt: job.nextNominalAt, source: 'manual' }, 0);
          this.sql(
            `INSERT INTO job_slots (job_id, slot_at, last_slot_at, slots, outcome, run_id, recorded_at)
               VALUES (?, ?, ?, 1, 'fired', ?, ?)
               ON CONFLICT (job_id, slot_at) DO UPDATE SET outcome = 'fired', run_id = excluded.run_id,
                 recorded_at = excluded.recorded_at`,
          ).run(jobId, job.nextNominalAt, job.nextNominalAt, run.id, r.createdAt);
          this.sql('DELETE FROM cron_jobs WHERE id = ?').run(jobId);
          return run;
        }
        return this.insertRun({ ...r, jobId, slotAt: null, source: 'manual' }, 0);
      })
      .immediate();
  }

  async listSlots(jobId: string): Promise<SlotRecord[]> {
    const rows = this.sql('SELECT * FROM job_slots WHERE job_id = ? ORDER BY slot_at').all(
      jobId,
    ) as SlotRow[];
    return rows.map(toSlot);
  }

  // ---- runs

  private insertRun(r: NewRun, coalescedSlots: number): Run {
    this.sql(
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
    return toRun(this.sql('SELECT * FROM runs WHERE id = ?').get(r.id) as RunRow);
  }

  async createRun(r: NewRun): Promise<Run> {
    return this.insertRun(r, 0);
  }

  async getRun(id: string): Promise<Run | null> {
    const row = this.sql('SELECT * FROM runs WHERE id = ?').get(id) as RunRow | undefined;
    return row ? toRun(row) : null;
  }

  async listRuns(f: RunFilter): Promise<Page<Run>> {
    const { where, args } = equalities([
      ['session_id', f.sessionId],
      ['job_id', f.jobId],
      ['status', f.status],
    ]);
    addCursor(f.cursor, where, args, 'desc');
    const rows = this.sql(
      `SELECT * FROM runs ${whereSql(where)} ORDER BY created_at DESC, id DESC LIMIT ${f.limit + 1}`,
    ).all(...args) as RunRow[];
    return page(rows.map(toRun), f.limit);
  }

  async transitionRun(
    id: string,
    from: readonly RunStatus[],
    to: RunStatus,
    fields: {
      startedAt?: number;
      finishedAt?: number;
      error?: string | null;
      attempt?: number;
      activeMs?: number;
    } = {},
  ): Promise<boolean> {
    const marks = from.map(() => '?').join(', ');
    // started_at is the first start: a resumed or retried run keeps it.
    return (
      this.sql(
        `UPDATE runs SET status = ?, started_at = COALESCE(started_at, ?), finished_at = COALESCE(?, finished_at),
             error = CASE WHEN ? THEN ? ELSE error END, attempt = COALESCE(?, attempt), active_ms = active_ms + ?
           WHERE id = ? AND status IN (${marks})`,
      ).run(
        to,
        fields.startedAt ?? null,
        fields.finishedAt ?? null,
        fields.error !== undefined ? 1 : 0,
        fields.error ?? null,
        fields.attempt ?? null,
        Math.max(0, Math.round(fields.activeMs ?? 0)),
        id,
        ...from,
      ).changes === 1
    );
  }

  private sessionBusy(sessionId: string): boolean {
    return (
      this.sql(`SELECT 1 FROM runs WHERE session_id = ? AND status IN (${ACTIVE}) LIMIT 1`).get(sessionId) !==
      undefined
    );
  }

  async updateRun(id: string, patch: Parameters<Store['updateRun']>[1]): Promise<void> {
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
    this.sql(`UPDATE runs SET ${sets.join(', ')} WHERE id = ?`).run(...args, id);
  }

  // ---- conversations and events

  async loadConversation(conversationId: string): Promise<ConversationMessage[]> {
    const rows = this.sql(
      'SELECT role, content, run_id, stop_reason FROM conversation_messages WHERE conversation_id = ? ORDER BY seq',
    ).all(conversationId) as {
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
  ): Promise<void> {
    const insert = this.sql(
      `INSERT INTO conversation_messages (conversation_id, seq, role, content, run_id, created_at, stop_reason)
       VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM conversation_messages WHERE conversation_id = ?), ?, ?, ?, ?, ?)`,
    );
    const last = this.sql(
      'SELECT seq, role, content, stop_reason FROM conversation_messages WHERE conversation_id = ? ORDER BY seq DESC LIMIT 1',
    );
    const merge = this.sql(
      'UPDATE conversation_messages SET content = ?, run_id = ?, stop_reason = ? WHERE conversation_id = ? AND seq = ?',
    );
    this.db
      .transaction(() => {
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
      })
      .immediate();
  }

  async appendEvent(
    runId: string,
    type: string,
    data: Record<string, unknown>,
    at: number,
  ): Promise<RunEvent> {
    const row = this.sql(
      `INSERT INTO run_events (run_id, seq, type, data, at)
       VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM run_events WHERE run_id = ?), ?, ?, ?)
       RETURNING seq`,
    ).get(runId, runId, type, JSON.stringify(data), at) as { seq: number };
    return { runId, seq: row.seq, type, data, at };
  }

  async listEvents(runId: string, afterSeq: number, limit: number): Promise<RunEvent[]> {
    const rows = this.sql('SELECT * FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?').all(
      runId,
      afterSeq,
      limit,
    ) as EventRow[];
    return rows.map(toEvent);
  }

  // ---- questions

  async createQuestion(
    q: Omit<Question, 'status' | 'answers' | 'answeredBy' | 'resolvedAt'>,
  ): Promise<Question> {
    this.sql(
      `INSERT INTO questions (id, run_id, session_id, tool_use_id, questions, status, prior_results, created_at,
         expires_at)
       VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
    ).run(
      q.id,
      q.runId,
      q.sessionId,
      q.toolUseId,
      JSON.stringify(q.questions),
      JSON.stringify(q.priorResults),
      q.createdAt,
      q.expiresAt,
    );
    return (await this.getQuestion(q.id))!;
  }

  async getQuestion(id: string): Promise<Question | null> {
    return this.requestById('questions', toQuestion, id);
  }

  async findQuestion(runId: string, toolUseId: string): Promise<Question | null> {
    return this.requestByToolUse('questions', toQuestion, runId, toolUseId);
  }

  async listQuestions(f: { status?: QuestionStatus; runId?: string; limit: number }): Promise<Question[]> {
    return this.listRequests('questions', toQuestion, f);
  }

  async answerQuestion(
    id: string,
    answers: Record<string, string | string[]>,
    by: string,
    now: number,
  ): Promise<boolean> {
    return (
      this.sql(
        `UPDATE questions SET status = 'answered', answers = ?, answered_by = ?, resolved_at = ?
         WHERE id = ? AND status = 'pending'`,
      ).run(JSON.stringify(answers), by, now, id).changes === 1
    );
  }

  async closeQuestion(id: string, status: 'timed_out' | 'canceled', now: number): Promise<boolean> {
    return (
      this.sql(`UPDATE questions SET status = ?, resolved_at = ? WHERE id = ? AND status = 'pending'`).run(
        status,
        now,
        id,
      ).changes === 1
    );
  }

  async listExpiredQuestions(now: number, limit: number): Promise<Question[]> {
    return this.expiredRequests('questions', toQuestion, now, limit);
  }

  // ---- plans

  async createPlan(p: Plan): Promise<Plan> {
    this.sql(
      `INSERT INTO plans (id, run_id, session_id, conversation_id, tool_use_id, markdown, sha256, workspace_commit,
         status, round, previous_plan_id, requested_by, created_at, job_id, trigger_id, source, expires_at,
         approvals_required, allow_self_approval, execute_mode, network, owner, subject)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      p.id,
      p.runId,
      p.sessionId,
      p.conversationId,
      p.toolUseId,
      p.markdown,
      p.sha256,
      p.workspaceCommit,
      p.status,
      p.round,
      p.previousPlanId,
      p.requestedBy,
      p.createdAt,
      p.jobId,
      p.triggerId,
      p.source,
      p.expiresAt,
      p.approvalsRequired,
      p.allowSelfApproval ? 1 : 0,
      p.executeMode,
      p.network ? 1 : 0,
      p.owner,
      p.subject,
    );
    return (await this.getPlan(p.id))!;
  }

  async getPlan(id: string): Promise<Plan | null> {
    const row = this.sql(`SELECT plans.*, ${APPROVALS} FROM plans WHERE id = ?`).get(id) as
      | PlanRow
      | undefined;
    return row ? toPlan(row) : null;
  }

  async findPlan(runId: string, toolUseId: string): Promise<Plan | null> {
    const row = this.sql(`SELECT plans.*, ${APPROVALS} FROM plans WHERE run_id = ? AND tool_use_id = ?`).get(
      runId,
      toolUseId,
    ) as PlanRow | undefined;
    return row ? toPlan(row) : null;
  }

  async listPlans(f: PlanFilter): Promise<Page<Plan>> {
    // Listing the expired ones at activeAt: those written so, and pending ones past their expiry the sweep
    // has not reached yet (the expiry rule, isPlanOverdue in src/domain/plan-status.ts).
    const expiredAt = f.status === 'expired' ? f.activeAt : undefined;
    const { where, args } = equalities([
      ['status', expiredAt === undefined ? f.status : undefined],
      ['session_id', f.sessionId],
      ['job_id', f.jobId],
      ['trigger_id', f.triggerId],
      ['requested_by', f.requestedBy],
    ]);
    if (f.createdBefore !== undefined) {
      where.push('created_at < ?');
      args.push(f.createdBefore);
    }
    if (f.activeAt !== undefined && f.status === 'pending_approval') {
      // The expiry rule (isPlanOverdue, src/domain/plan-status.ts), negated: still pending at activeAt.
      // The unary + keeps the planner on plans_queue (status, created_at, id), which serves the order: an
      // index on expires_at would have it read every pending plan and sort them.
      where.push('+expires_at > ?');
      args.push(f.activeAt);
    }
    if (expiredAt !== undefined) {
      where.push(`(status = 'expired' OR (status = 'pending_approval' AND expires_at <= ?))`);
      args.push(expiredAt);
    }
    addCursor(f.cursor, where, args, 'asc');
    const columns = f.summary ? 'plans.*, substr(markdown, 1, 300) AS markdown' : 'plans.*';
    const rows = this.sql(
      `SELECT ${columns}, ${APPROVALS} FROM plans ${whereSql(where)} ORDER BY created_at ASC, id ASC LIMIT ${f.limit + 1}`,
    ).all(...args) as PlanRow[];
    return page(rows.map(toPlan), f.limit);
  }

  async plansVersion(): Promise<number> {
    return this.sql(`SELECT value FROM change_counters WHERE name = 'plans'`).pluck().get() as number;
  }

  async listDecisions(planId: string): Promise<Decision[]> {
    const rows = this.sql('SELECT * FROM decisions WHERE plan_id = ? ORDER BY created_at, id').all(
      planId,
    ) as DecisionRow[];
    return rows.map(toDecision);
  }

  async listPlanRuns(plan: Plan): Promise<Run[]> {
    const rows = this.sql(
      'SELECT * FROM runs WHERE id = ? OR executes_plan_id = ? OR revises_plan_id = ? ORDER BY created_at, id',
    ).all(plan.runId, plan.id, plan.id) as RunRow[];
    return rows.map(toRun);
  }

  async decidePlan(
    planId: string,
    decide: (plan: Plan, decisions: Decision[]) => DecisionEffect,
  ): Promise<{ plan: Plan; decision: Decision; run: Run | null }> {
    return this.db
      .transaction(() => {
        const row = this.sql(`SELECT plans.*, ${APPROVALS} FROM plans WHERE id = ?`).get(planId) as
          | PlanRow
          | undefined;
        if (!row) throw new NotFoundError(`plan ${planId} not found`);
        const decisions = (
          this.sql('SELECT * FROM decisions WHERE plan_id = ? ORDER BY created_at, id').all(
            planId,
          ) as DecisionRow[]
        ).map(toDecision);
        const effect = decide(toPlan(row), decisions);
        const d = effect.decision;
        this.sql(
          `INSERT INTO decisions (id, plan_id, kind, identity, comment, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
        ).run(d.id, d.planId, d.kind, d.identity, d.comment, d.sha256, d.createdAt);
        if (effect.planStatus) {
          this.sql('UPDATE plans SET status = ?, decided_at = ? WHERE id = ?').run(
            effect.planStatus,
            d.createdAt,
            planId,
          );
        }
        const run = effect.run ? this.insertRun(effect.run, 0) : null;
        const plan = toPlan(
          this.sql(`SELECT plans.*, ${APPROVALS} FROM plans WHERE id = ?`).get(planId) as PlanRow,
        );
        return { plan, decision: d, run };
      })
      .immediate();
  }

  async transitionPlan(
    id: string,
    from: readonly PlanStatus[],
    to: PlanStatus,
    fields: { failureReason?: string | null } = {},
  ): Promise<boolean> {
    const marks = from.map(() => '?').join(', ');
    return (
      this.sql(
        `UPDATE plans SET status = ?, failure_reason = CASE WHEN ? THEN ? ELSE failure_reason END
         WHERE id = ? AND status IN (${marks})`,
      ).run(to, fields.failureReason !== undefined ? 1 : 0, fields.failureReason ?? null, id, ...from)
        .changes === 1
    );
  }

  async expirePlans(now: number): Promise<number> {
    // The expiry rule (isPlanOverdue, src/domain/plan-status.ts) in SQL: pending, expires_at <= now.
    return this.sql(
      `UPDATE plans SET status = 'expired', decided_at = ? WHERE status = 'pending_approval' AND expires_at <= ?`,
    ).run(now, now).changes;
  }

  async recentExecutions(since: number, limit: number): Promise<RunStatus[]> {
    return this.sql(
      `SELECT status FROM runs WHERE phase = 'execute' AND finished_at IS NOT NULL AND finished_at >= ?
       ORDER BY finished_at DESC LIMIT ?`,
    )
      .pluck()
      .all(since, limit) as RunStatus[];
  }

  // ---- tool approvals

  async createToolApproval(
    a: Omit<ToolApproval, 'status' | 'message' | 'decidedBy' | 'decidedAt'>,
  ): Promise<ToolApproval> {
    this.sql(
      `INSERT INTO tool_approvals (id, run_id, session_id, plan_id, tool_use_id, tool, input, input_sha256, status,
         prior_results, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
    ).run(
      a.id,
      a.runId,
      a.sessionId,
      a.planId,
      a.toolUseId,
      a.tool,
      JSON.stringify(a.input),
      a.inputSha256,
      JSON.stringify(a.priorResults),
      a.createdAt,
      a.expiresAt,
    );
    return (await this.getToolApproval(a.id))!;
  }

  async getToolApproval(id: string): Promise<ToolApproval | null> {
    return this.requestById('tool_approvals', toToolApproval, id);
  }

  async findToolApproval(runId: string, toolUseId: string): Promise<ToolApproval | null> {
    return this.requestByToolUse('tool_approvals', toToolApproval, runId, toolUseId);
  }

  async listToolApprovals(f: {
    status?: ToolApprovalStatus;
    runId?: string;
    limit: number;
  }): Promise<ToolApproval[]> {
    return this.listRequests('tool_approvals', toToolApproval, f);
  }

  async resolveToolApproval(
    id: string,
    status: Exclude<ToolApprovalStatus, 'pending'>,
    by: string | null,
    message: string | null,
    now: number,
  ): Promise<boolean> {
    return (
      this.sql(
        `UPDATE tool_approvals SET status = ?, decided_by = ?, message = ?, decided_at = ?
         WHERE id = ? AND status = 'pending'`,
      ).run(status, by, message, now, id).changes === 1
    );
  }

  async listExpiredToolApprovals(now: number, limit: number): Promise<ToolApproval[]> {
    return this.expiredRequests('tool_approvals', toToolApproval, now, limit);
  }

  // ---- what questions and tool approvals share: both are a run's requests, answered or expiring

  private requestById<R, T>(table: RequestTable, to: (row: R) => T, id: string): T | null {
    const row = this.sql(`SELECT * FROM ${table} WHERE id = ?`).get(id) as R | undefined;
    return row ? to(row) : null;
  }

  private requestByToolUse<R, T>(
    table: RequestTable,
    to: (row: R) => T,
    runId: string,
    toolUseId: string,
  ): T | null {
    const row = this.sql(`SELECT * FROM ${table} WHERE run_id = ? AND tool_use_id = ?`).get(
      runId,
      toolUseId,
    ) as R | undefined;
    return row ? to(row) : null;
  }

  private listRequests<R, T>(
    table: RequestTable,
    to: (row: R) => T,
    f: { status?: string; runId?: string; limit: number },
  ): T[] {
    const { where, args } = equalities([
      ['status', f.status],
      ['run_id', f.runId],
    ]);
    const rows = this.sql(`SELECT * FROM ${table} ${whereSql(where)} ORDER BY created_at, id LIMIT ?`).all(
      ...args,
      f.limit,
    ) as R[];
    return rows.map(to);
  }

  private expiredRequests<R, T>(table: RequestTable, to: (row: R) => T, now: number, limit: number): T[] {
    const rows = this.sql(
      `SELECT * FROM ${table} WHERE status = 'pending' AND expires_at <= ? ORDER BY expires_at LIMIT ?`,
    ).all(now, limit) as R[];
    return rows.map(to);
  }

  // ---- the execute phase's call journal

  async startToolCall(c: NewToolCall): Promise<{ call: ToolCall; started: boolean }> {
    return this.db
      .transaction(() => {
        const inserted = this.sql(
          `INSERT INTO tool_calls (run_id, tool_use_id, tool, input_sha256, started_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (run_id, tool_use_id) DO NOTHING`,
        ).run(c.runId, c.toolUseId, c.tool, c.inputSha256, c.startedAt).changes;
        const row = this.sql('SELECT * FROM tool_calls WHERE run_id = ? AND tool_use_id = ?').get(
          c.runId,
          c.toolUseId,
        ) as ToolCallRow;
        return { call: toToolCall(row), started: inserted === 1 };
      })
      .immediate();
  }

  async recordToolCallProcess(runId: string, toolUseId: string, group: number, start: string | null) {
    this.sql(
      `UPDATE tool_calls SET process_group = ?, process_start = ?
       WHERE run_id = ? AND tool_use_id = ? AND finished_at IS NULL`,
    ).run(group, start, runId, toolUseId);
  }

  async finishToolCall(
    runId: string,
    toolUseId: string,
    result: { content: string; isError: boolean },
    now: number,
  ): Promise<void> {
    this.sql(
      `UPDATE tool_calls SET finished_at = ?, result = ?, process_group = NULL, process_start = NULL
       WHERE run_id = ? AND tool_use_id = ? AND finished_at IS NULL`,
    ).run(now, JSON.stringify(result), runId, toolUseId);
  }

  async listOpenCommands(limit: number): Promise<ToolCall[]> {
    const rows = this.sql(
      `SELECT * FROM tool_calls WHERE finished_at IS NULL AND process_group IS NOT NULL ORDER BY started_at LIMIT ?`,
    ).all(limit) as ToolCallRow[];
    return rows.map(toToolCall);
  }

  // ---- triggers and deliveries

  async createTrigger(t: Trigger): Promise<Trigger> {
    this.insertTrigger(t);
    return (await this.getTrigger(t.id))!;
  }

  private insertTrigger(t: Trigger): void {
    this.sql(
      `INSERT INTO triggers (id, name, kind, events, filters, prompt, workspace, options, hourly_cap, token_id,
         token_hash, enabled, created_by, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      t.id,
      t.name,
      t.kind,
      JSON.stringify(t.events),
      JSON.stringify(t.filters),
      t.prompt,
      t.workspace,
      JSON.stringify(t.options),
      t.hourlyCap,
      t.tokenId,
      t.tokenHash,
      t.enabled ? 1 : 0,
      t.createdBy,
      t.createdAt,
      t.updatedAt,
    );
  }

  async getTrigger(id: string): Promise<Trigger | null> {
    const row = this.sql('SELECT * FROM triggers WHERE id = ?').get(id) as TriggerRow | undefined;
    return row ? toTrigger(row) : null;
  }

  async findTriggerByToken(tokenId: string): Promise<Trigger | null> {
    const row = this.sql('SELECT * FROM triggers WHERE token_id = ?').get(tokenId) as TriggerRow | undefined;
    return row ? toTrigger(row) : null;
  }

  async listTriggers(f: { kind?: Trigger['kind']; enabled?: boolean }): Promise<Trigger[]> {
    const { where, args } = equalities([
      ['kind', f.kind],
      ['enabled', f.enabled === undefined ? undefined : f.enabled ? 1 : 0],
    ]);
    const rows = this.sql(`SELECT * FROM triggers ${whereSql(where)} ORDER BY created_at, id`).all(
      ...args,
    ) as TriggerRow[];
    return rows.map(toTrigger);
  }

  async updateTrigger(
    id: string,
    patch: Partial<Omit<Trigger, 'id' | 'kind' | 'createdAt' | 'createdBy'>>,
  ): Promise<Trigger | null> {
    const current = await this.getTrigger(id);
    if (!current) return null;
    const t = { ...current, ...patch };
    this.sql(
      `UPDATE triggers SET name = ?, events = ?, filters = ?, prompt = ?, workspace = ?, options = ?, hourly_cap = ?,
         token_id = ?, token_hash = ?, enabled = ?, updated_at = ? WHERE id = ?`,
    ).run(
      t.name,
      JSON.stringify(t.events),
      JSON.stringify(t.filters),
      t.prompt,
      t.workspace,
      JSON.stringify(t.options),
      t.hourlyCap,
      t.tokenId,
      t.tokenHash,
      t.enabled ? 1 : 0,
      t.updatedAt,
      id,
    );
    return this.getTrigger(id);
  }

  async deleteTrigger(id: string): Promise<boolean> {
    return this.db
      .transaction(() => {
        this.sql('DELETE FROM trigger_fire_counts WHERE trigger_id = ?').run(id);
        return this.sql('DELETE FROM triggers WHERE id = ?').run(id).changes === 1;
      })
      .immediate();
  }

  async recordDelivery(d: Delivery, payload?: string): Promise<{ delivery: Delivery; duplicate: boolean }> {
    return this.insertDelivery(d, payload);
  }

  async recordDeliveries(
    items: { delivery: Delivery; payload?: string | undefined }[],
  ): Promise<{ delivery: Delivery; duplicate: boolean }[]> {
    return this.db
      .transaction(() => items.map((i) => this.insertDelivery(i.delivery, i.payload)))
      .immediate();
  }

  private insertDelivery(
    d: Delivery,
    payload: string | undefined,
  ): { delivery: Delivery; duplicate: boolean } {
    const inserted = this.sql(
      `INSERT INTO deliveries (id, source, key, event, trigger_id, outcome, detail, subject, run_ids, received_at,
         payload, processed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source, key) DO NOTHING`,
    ).run(
      d.id,
      d.source,
      d.key,
      d.event,
      d.triggerId,
      d.outcome,
      d.detail,
      d.subject,
      JSON.stringify(d.runIds),
      d.receivedAt,
      payload ?? null,
      d.processedAt,
    ).changes;
    if (inserted === 1) return { delivery: d, duplicate: false };
    const row = this.sql(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE source = ? AND key = ?`).get(
      d.source,
      d.key,
    ) as DeliveryRow;
    return { delivery: toDelivery(row), duplicate: true };
  }

  async updateDelivery(id: string, patch: DeliveryPatch): Promise<void> {
    const columns: [keyof DeliveryPatch, string][] = [
      ['outcome', 'outcome'],
      ['detail', 'detail'],
      ['runIds', 'run_ids'],
      ['triggerId', 'trigger_id'],
      ['subject', 'subject'],
      ['payload', 'payload'],
      ['claimedUntil', 'claimed_until'],
      ['processedAt', 'processed_at'],
    ];
    const sets: string[] = [];
    const args: unknown[] = [];
    for (const [key, column] of columns) {
      const value = patch[key];
      if (value === undefined) continue;
      sets.push(`${column} = ?`);
      args.push(key === 'runIds' ? JSON.stringify(value) : value);
    }
    if (sets.length) this.sql(`UPDATE deliveries SET ${sets.join(', ')} WHERE id = ?`).run(...args, id);
  }

  async getDelivery(id: string): Promise<Delivery | null> {
    const row = this.sql(`SELECT ${DELIVERY_COLUMNS} FROM deliveries WHERE id = ?`).get(id) as
      | DeliveryRow
      | undefined;
    return row ? toDelivery(row) : null;
  }

  async queuedDeliveries(limit: number, now: number): Promise<Delivery[]> {
    const rows = this.sql(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries
       WHERE outcome = 'queued' AND (claimed_until IS NULL OR claimed_until <= ?) ORDER BY rowid LIMIT ?`,
    ).all(now, limit) as DeliveryRow[];
    return rows.map(toDelivery);
  }

  async claimDelivery(id: string, until: number, now: number): Promise<string | null> {
    const row = this.sql(
      `UPDATE deliveries SET claimed_until = ?
       WHERE id = ? AND outcome = 'queued' AND (claimed_until IS NULL OR claimed_until <= ?) RETURNING payload`,
    ).get(until, id, now) as { payload: string | null } | undefined;
    return row ? (row.payload ?? '') : null;
  }

  async requeueDelivery(id: string, payload: string): Promise<boolean> {
    return (
      this.sql(
        `UPDATE deliveries SET outcome = 'queued', detail = NULL, payload = ?, claimed_until = NULL,
           processed_at = NULL
         WHERE id = ? AND (outcome = 'failed' OR (outcome = 'accepted' AND processed_at IS NULL))`,
      ).run(payload, id).changes === 1
    );
  }

  async nextClaimExpiry(now: number): Promise<number | null> {
    return this.sql(
      `SELECT MIN(claimed_until) FROM deliveries WHERE outcome = 'queued' AND claimed_until > ?`,
    )
      .pluck()
      .get(now) as number | null;
  }

  async listTriggerFires(
    triggerId: string,
    limit: number,
  ): Promise<
    { delivery: Delivery; outcome: 'accepted' | 'filtered' | 'capped'; runId: string | null; at: number }[]
  > {
    const rows = this.sql(
      `SELECT ${D_DELIVERY_COLUMNS}, f.outcome AS fire_outcome, f.run_id AS fire_run_id, f.at AS fire_at
       FROM trigger_fires f JOIN deliveries d ON d.id = f.delivery_id
       WHERE f.trigger_id = ? ORDER BY f.at DESC, d.id DESC LIMIT ?`,
    ).all(triggerId, limit) as (DeliveryRow & {
      fire_outcome: 'accepted' | 'filtered' | 'capped';
      fire_run_id: string | null;
      fire_at: number;
    })[];
    return rows.map((r) => ({
      delivery: toDelivery(r),
      outcome: r.fire_outcome,
      runId: r.fire_run_id,
      at: r.fire_at,
    }));
  }

  async listDeliveries(f: {
    triggerId?: string | undefined;
    outcome?: DeliveryOutcome | undefined;
    limit: number;
    before?: string | undefined;
  }): Promise<Delivery[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    if (f.triggerId) {
      where.push(
        '(d.trigger_id = ? OR d.id IN (SELECT delivery_id FROM trigger_fires WHERE trigger_id = ?))',
      );
      args.push(f.triggerId, f.triggerId);
    }
    if (f.outcome) {
      where.push('d.outcome = ?');
      args.push(f.outcome);
    }
    if (f.before) {
      const seq = this.sql('SELECT rowid FROM deliveries WHERE id = ?').pluck().get(f.before) as
        | number
        | undefined;
      if (seq === undefined) return [];
      where.push('d.rowid < ?');
      args.push(seq);
    }
    // Newest first in order of arrival (the rowid), which needs no index of its own.
    const rows = this.sql(
      `SELECT ${D_DELIVERY_COLUMNS} FROM deliveries d
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY d.rowid DESC LIMIT ?`,
    ).all(...args, f.limit) as DeliveryRow[];
    return rows.map(toDelivery);
  }

  async fireTrigger(input: TriggerFireInput): Promise<{ outcome: 'accepted' | 'capped'; run: Run | null }> {
    return this.db
      .transaction(() => {
        // Fires are counted by the minute: the current one and the 60 before it (an hour, rounded up), so
        // the cost is at most 61 rows however busy the trigger is.
        const minute = Math.floor(input.now / 60_000);
        const n = this.sql(
          'SELECT COALESCE(SUM(fires), 0) FROM trigger_fire_counts WHERE trigger_id = ? AND minute >= ?',
        )
          .pluck()
          .get(input.triggerId, minute - 60) as number;
        // A delivery processed again (redelivered after a failure) fires each trigger at most once.
        const earlier = this.sql(
          `SELECT outcome, run_id FROM trigger_fires WHERE trigger_id = ? AND delivery_id = ? AND outcome <> 'filtered'`,
        ).get(input.triggerId, input.deliveryId) as
          | { outcome: 'accepted' | 'capped'; run_id: string | null }
          | undefined;
        if (earlier) {
          const row = earlier.run_id
            ? (this.sql('SELECT * FROM runs WHERE id = ?').get(earlier.run_id) as RunRow)
            : null;
          return { outcome: earlier.outcome, run: row ? toRun(row) : null };
        }
        const fire = this.sql(
          `INSERT INTO trigger_fires (trigger_id, delivery_id, outcome, run_id, at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (trigger_id, delivery_id) DO NOTHING`,
        );
        if (n >= input.hourlyCap) {
          fire.run(input.triggerId, input.deliveryId, 'capped', null, input.now);
          return { outcome: 'capped' as const, run: null };
        }
        const s = input.session;
        let session = this.sql('SELECT id, status FROM sessions WHERE scope_key = ?').get(s.scopeKey) as
          | { id: string; status: string }
          | undefined;
        if (!session) {
          const id = input.run.id.replace(/^run_/, 'ses_');
          this.sql(
            `INSERT INTO sessions (id, name, workspace, owner, defaults, status, created_at, scope_key)
             VALUES (?, ?, ?, ?, ?, 'open', ?, ?)`,
          ).run(id, s.name, s.workspace, s.owner, JSON.stringify(s.defaults), input.now, s.scopeKey);
          session = { id, status: 'open' };
        } else if (session.status !== 'open') {
          this.sql(`UPDATE sessions SET status = 'open', closed_at = NULL WHERE id = ?`).run(session.id);
        }
        const run = this.insertRun({ ...input.run, sessionId: session.id }, 0);
        fire.run(input.triggerId, input.deliveryId, 'accepted', run.id, input.now);
        this.sql(
          `INSERT INTO trigger_fire_counts (trigger_id, minute, fires) VALUES (?, ?, 1)
           ON CONFLICT (trigger_id, minute) DO UPDATE SET fires = fires + 1`,
        ).run(input.triggerId, minute);
        this.sql('DELETE FROM trigger_fire_counts WHERE trigger_id = ? AND minute < ?').run(
          input.triggerId,
          minute - 60,
        );
        return { outcome: 'accepted' as const, run };
      })
      .immediate();
  }

  async recordTriggerFire(
    triggerId: string,
    deliveryId: string,
    outcome: 'filtered',
    now: number,
  ): Promise<void> {
    this.sql(
      `INSERT INTO trigger_fires (trigger_id, delivery_id, outcome, run_id, at) VALUES (?, ?, ?, NULL, ?)
       ON CONFLICT (trigger_id, delivery_id) DO NOTHING`,
    ).run(triggerId, deliveryId, outcome, now);
  }

  async supersedePlans(subject: string, exceptDelivery: string | undefined, now: number): Promise<string[]> {
    return this.sql(
      `UPDATE plans SET status = 'superseded', decided_at = ?
       WHERE subject = ? AND status = 'pending_approval'
         AND run_id NOT IN (SELECT id FROM runs WHERE delivery_id = ? AND subject = ?) RETURNING id`,
    )
      .pluck()
      .all(now, subject, exceptDelivery ?? null, subject) as string[];
  }

  async activeRunsForSubject(subject: string): Promise<Run[]> {
    const rows = this.sql(
      `SELECT * FROM runs WHERE subject = ? AND status IN (${ACTIVE}) ORDER BY created_at`,
    ).all(subject) as RunRow[];
    return rows.map(toRun);
  }

  async pendingPlanForSubject(subject: string): Promise<Plan | null> {
    const row = this.sql(
      `SELECT plans.*, ${APPROVALS} FROM plans WHERE subject = ? AND status = 'pending_approval' ORDER BY created_at DESC LIMIT 1`,
    ).get(subject) as PlanRow | undefined;
    return row ? toPlan(row) : null;
  }

  async stats(): Promise<StoreStats> {
    const group = (sql: string) =>
      Object.fromEntries((this.sql(sql).all() as { k: string; n: number }[]).map((r) => [r.k, r.n]));
    const tokens = this.sql(
      `SELECT COALESCE(SUM(json_extract(usage, '$.input_tokens')), 0) AS input,
              COALESCE(SUM(json_extract(usage, '$.output_tokens')), 0) AS output,
              COALESCE(SUM(json_extract(usage, '$.cache_write_5m_tokens')), 0) AS cache_write_5m,
              COALESCE(SUM(json_extract(usage, '$.cache_write_1h_tokens')), 0) AS cache_write_1h,
              COALESCE(SUM(json_extract(usage, '$.cache_read_tokens')), 0) AS cache_read,
              COALESCE(SUM(cost_usd), 0) AS cost
       FROM runs`,
    ).get() as StoreStats['tokens'] & { cost: number };
    const count = (sql: string) => (this.sql(sql).get() as { n: number }).n;
    const { cost, ...tokenTotals } = tokens;
    return {
      runsByStatus: group('SELECT status AS k, COUNT(*) AS n FROM runs GROUP BY status'),
      runsByPhase: group('SELECT phase AS k, COUNT(*) AS n FROM runs GROUP BY phase'),
      plansByStatus: group('SELECT status AS k, COUNT(*) AS n FROM plans GROUP BY status'),
      deliveriesByOutcome: group('SELECT outcome AS k, COUNT(*) AS n FROM deliveries GROUP BY outcome'),
      slotsByOutcome: group('SELECT outcome AS k, SUM(slots) AS n FROM job_slots GROUP BY outcome'),
      pendingQuestions: count(`SELECT COUNT(*) AS n FROM questions WHERE status = 'pending'`),
      pendingToolApprovals: count(`SELECT COUNT(*) AS n FROM tool_approvals WHERE status = 'pending'`),
      activeJobs: count(`SELECT COUNT(*) AS n FROM cron_jobs WHERE status = 'active'`),
      tokens: tokenTotals,
      costUsd: cost,
    };
  }

  // ---- state

  async getState(key: string): Promise<string | null> {
    const row = this.sql('SELECT value FROM scheduler_state WHERE key = ?').get(key) as
      | { value: string }
      | undefined;
    return row?.value ?? null;
  }

  async setState(key: string, value: string): Promise<void> {
    this.sql(
      'INSERT INTO scheduler_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ).run(key, value);
  }
  // ---- delivering executed plans (SQL in delivery.ts)

  private deliverySql: PlanDeliverySql | null = null;
  private get deliveries(): PlanDeliverySql {
    this.deliverySql ??= new PlanDeliverySql(this.db);
    return this.deliverySql;
  }

  async listUndecidedPlanDeliveries(limit: number): Promise<Plan[]> {
    return this.deliveries.undecided(limit);
  }

  async duePlanDeliveries(now: number, limit: number): Promise<string[]> {
    return this.deliveries.due(now, limit);
  }

  async nextPlanDeliveryAt(): Promise<number | null> {
    return this.deliveries.nextAt();
  }

  async claimPlanDelivery(planId: string, now: number, until: number): Promise<Plan | null> {
    return this.deliveries.claim(planId, now, until);
  }

  async updatePlanDelivery(
    planId: string,
    from: readonly (PlanDeliveryStatus | null)[],
    patch: PlanDeliveryPatch,
  ): Promise<boolean> {
    return this.deliveries.update(planId, from, patch);
  }

  // ---- notification outbox (the SQL lives in ./outbox.ts)

  private outboxSql: SqliteOutbox | undefined;
  private get outbox(): SqliteOutbox {
    this.outboxSql ??= new SqliteOutbox(this.db);
    return this.outboxSql;
  }

  async notificationCursor(): Promise<number | null> {
    return this.outbox.cursor();
  }

  async eventLogEnd(): Promise<number> {
    return this.outbox.logEnd();
  }

  async eventsAfter(
    after: number,
    types: readonly string[],
    limit: number,
  ): Promise<{ events: LoggedEvent[]; end: number }> {
    return this.outbox.eventsAfter(after, types, limit);
  }

  async enqueueNotifications(rows: NewNotification[], cursor: number): Promise<number> {
    return this.outbox.enqueue(rows, cursor);
  }

  async claimNotifications(now: number, holdUntil: number, limit: number): Promise<Notification[]> {
    return this.outbox.claim(now, holdUntil, limit);
  }

  async settleNotification(id: string, outcome: NotificationOutcome): Promise<void> {
    this.outbox.settle(id, outcome);
  }

  async nextNotificationDue(): Promise<number | null> {
    return this.outbox.nextDue();
  }

  async listNotifications(filter: Parameters<Store['listNotifications']>[0]): Promise<Page<Notification>> {
    return this.outbox.list(filter);
  }

  async countNotifications(): Promise<Record<NotificationStatus, number>> {
    return this.outbox.counts();
  }
}

/** `col = ?` conditions for the filters that are set (undefined means: not filtered). */
function equalities(filters: [string, unknown][]): { where: string[]; args: unknown[] } {
  const set = filters.filter(([, value]) => value !== undefined);
  return { where: set.map(([col]) => `${col} = ?`), args: set.map(([, value]) => value) };
}

function whereSql(where: string[]): string {
  return where.length ? `WHERE ${where.join(' AND ')}` : '';
}

function addCursor(cursor: string | undefined, where: string[], args: unknown[], dir: 'asc' | 'desc'): void {
  if (!cursor) return;
  const c = decodeCursor(cursor);
  if (!c) throw new InvalidCursorError();
  where.push(dir === 'asc' ? '(created_at, id) > (?, ?)' : '(created_at, id) < (?, ?)');
  args.push(c.createdAt, c.id);
}

function page<T extends { createdAt: number; id: string }>(items: T[], limit: number): Page<T> {
  if (items.length <= limit) return { items, nextCursor: null };
  const kept = items.slice(0, limit);
  const last = kept[kept.length - 1]!;
  return { items: kept, nextCursor: encodeCursor(last.createdAt, last.id) };
}
