import type { SpendCaps } from '../caps/spend-caps.js';
import type { Clock } from '../clock.js';
import { mcpServerNames } from '../config/mcp-names.js';
import type { Config } from '../config/schema.js';
import { DomainError } from '../domain/errors.js';
import { latitudeOf, refuseLoosening } from '../domain/loosening.js';
import { checkMcpSelection } from '../domain/mcp-selection.js';
import type { SpendCapHit } from '../domain/spend.js';
import type { CronJob, Page, Role, Run, RunDefaults, SlotRecord } from '../domain/types.js';
import { scheduleZone } from '../domain/zone.js';
import { newId } from '../ids.js';
import { checkedRunOptions } from '../models/catalogue.js';
import type { JobFilter, JobStore, SessionStore } from '../store/store.js';
import { type BackfilledSlot, type BackfillRange, backfillSlots } from './backfill.js';
import { capSlot } from './cap-slot.js';
import { decideBackfill, oneShotPassed, specOf } from './decide.js';
import { type JobRequest, jitterOptions, jobFromRequest } from './job-request.js';
import { nextFire } from './next-fire.js';

// A session's cron jobs as people change them: create, pause, resume, renew, run now, delete. The scheduler
// loop (loop.ts) fires them; this only writes their definition and status, then wakes the loop.

export interface JobsDeps {
  store: JobStore & SessionStore;
  clock: Clock;
  config: Config;
  /** The scheduler loop, woken when a job changes. */
  scheduler: { kick(): void };
  /** Where a run-now run goes (the run queue). */
  submitRun: (run: Run) => void;
  /** Cancels a run as `drydock runs cancel` does (a backfill under cancel_other). */
  cancelRun: (runId: string) => Promise<unknown>;
  /**
   * Spend caps: a run-now past one is refused (429 spend_cap), a backfilled slot past one is recorded
   * `capped`. Default: no caps.
   */
  caps?: Pick<SpendCaps, 'admit' | 'snapshot' | 'note'>;
}

/**
 * A job as requested: its time zone (default: the configured one) is made canonical (invalid_timezone when
 * there is none such), its options are checked against the model catalogue (invalid_model).
 */
export type NewJobRequest = Pick<
  JobRequest,
  'cron' | 'prompt' | 'recurring' | 'approximate' | 'createdBy' | 'name' | 'overlap' | 'jitterMaxSeconds'
> & {
  timezone?: string | undefined;
  options?: JobRequest['options'] | undefined;
  /** The caller's role: only an admin may make a job more permissive than its session (domain/loosening.ts). */
  role: Role;
};

/** Fields of a session's job to change (PATCH /v1/jobs/:id); undefined leaves a field as it is. */
export type JobChange = Partial<
  Pick<
    NewJobRequest,
    'cron' | 'timezone' | 'prompt' | 'recurring' | 'approximate' | 'options' | 'overlap' | 'jitterMaxSeconds'
  >
> & {
  /** The caller's role: only an admin may make a job more permissive than its session. */
  role: Role;
};

const notFound = (id: string) => new DomainError('not_found', `job ${id} not found`);

export class Jobs {
  constructor(private readonly deps: JobsDeps) {}

  async get(id: string): Promise<CronJob> {
    const job = await this.deps.store.getJob(id);
    if (!job) throw notFound(id);
    return job;
  }

  /** A session's jobs; not_found when there is no such session. */
  async list(sessionId: string): Promise<CronJob[]> {
    const { store } = this.deps;
    if (!(await store.getSession(sessionId)))
      throw new DomainError('not_found', `session ${sessionId} not found`);
    return store.listJobs(sessionId);
  }

  /**
   * Jobs across sessions, scheduled triggers' jobs among them (GET /v1/jobs, the Schedules page), oldest
   * first; bad_cursor for a cursor the store did not issue.
   */
  async page(filter: JobFilter): Promise<Page<CronJob>> {
    return this.deps.store.listJobPage(filter);
  }

  async slots(id: string): Promise<SlotRecord[]> {
    const job = await this.get(id);
    return this.deps.store.listSlots(job.id);
  }

  /**
   * A new job in a session, planned from now. Throws CronError (invalid_cron) for an unusable expression,
   * forbidden when a caller other than an admin asks for more latitude than the session gives, and a conflict
   * when the session holds config.scheduler.max_jobs_per_session jobs already.
   */
  async create(sessionId: string, req: NewJobRequest): Promise<CronJob> {
    const { store, clock, config } = this.deps;
    const timezone = scheduleZone(req.timezone ?? config.timezone);
    const options = checkedRunOptions(config, req.options, clock.now());
    checkMcpSelection(options, mcpServerNames(config));
    await this.refuseLooserThanSession(sessionId, req.role, options);
    const job = jobFromRequest(
      { id: newId('job'), sessionId, ...req, timezone, options },
      clock.now(),
      config,
    );
    const created = await store.createJob(job, config.scheduler.max_jobs_per_session);
    this.deps.scheduler.kick();
    return created;
  }

  /**
   * Changes a session's job: the new definition is checked as at creation (cron, zone, model, latitude
   * against its session), then the job is planned anew from now (its next slot and, for a recurring job, a
   * fresh expiry period) and keeps its name, status (paused stays paused; a missed one-shot becomes active)
   * and history. A scheduled trigger's job is changed through its trigger (managed_by_trigger).
   */
  async update(id: string, change: JobChange): Promise<CronJob> {
    const { store, clock, config } = this.deps;
    const job = await this.own(id);
    const now = clock.now();
    const timezone = scheduleZone(change.timezone ?? job.timezone);
    const options =
      change.options !== undefined ? checkedRunOptions(config, change.options, now) : job.options;
    checkMcpSelection(options, mcpServerNames(config));
    await this.refuseLooserThanSession(job.sessionId, change.role, options);
    const next = jobFromRequest(
      {
        id: job.id,
        sessionId: job.sessionId,
        name: job.name,
        cron: change.cron ?? job.cron,
        timezone,
        prompt: change.prompt ?? job.prompt,
        recurring: change.recurring ?? job.recurring,
        approximate: change.approximate ?? job.approximate,
        overlap: change.overlap ?? job.overlap,
        jitterMaxSeconds:
          change.jitterMaxSeconds !== undefined ? change.jitterMaxSeconds : job.jitterMaxSeconds,
        options,
        createdBy: job.createdBy,
      },
      now,
      config,
    );
    const updated = await store.redefineJob(next, job.status === 'paused' ? 'paused' : 'active');
    this.deps.scheduler.kick();
    return this.updated(job.id, updated);
  }

  /**
   * Forbidden when a caller other than an admin asks a job of the session for more latitude than the session
   * gives; not_found without the session. A session's defaults never change once it is made, so the check
   * against the row read here cannot go stale before the job is written. The job's unset options inherit the
   * session's: that is no raise.
   */
  private async refuseLooserThanSession(sessionId: string, role: Role, options: RunDefaults): Promise<void> {
    const { store, config } = this.deps;
    const session = await store.getSession(sessionId);
    if (!session) throw new DomainError('not_found', `session ${sessionId} not found`);
    refuseLoosening(
      role,
      latitudeOf(session.defaults),
      latitudeOf(options, session.defaults),
      { what: `a job of session ${session.id}`, than: 'than its session', label: 'session' },
      config.execute.network_default_domains,
    );
  }

  async delete(id: string): Promise<void> {
    await this.own(id);
    if (!(await this.deps.store.deleteJob(id))) throw notFound(id);
    this.deps.scheduler.kick();
  }

  async pause(id: string): Promise<CronJob> {
    const job = await this.own(id);
    if (job.status === 'missed')
      throw new DomainError('conflict', 'a missed one-shot cannot be paused; run or delete it');
    // A one-shot keeps its slot while paused, so resuming can tell whether it passed meanwhile.
    const keep = job.recurring || job.nextNominalAt === null ? null : current(job);
    return this.updated(job.id, await this.deps.store.updateJobSchedule(job.id, 'paused', keep));
  }

  async resume(id: string): Promise<CronJob> {
    const { store, clock, config } = this.deps;
    const job = await this.own(id);
    if (job.status !== 'paused') throw new DomainError('conflict', `job is ${job.status}, not paused`);
    const now = clock.now();
    let updated: CronJob | null;
    if (job.recurring) {
      // Slots that passed while paused are skipped: resuming schedules the next slot from now.
      updated = await store.updateJobSchedule(
        job.id,
        'active',
        nextFire(specOf(job), now, now, jitterOptions(config)),
      );
    } else if (job.nextNominalAt !== null && oneShotPassed(job.nextNominalAt, now)) {
      // A one-shot whose time passed while paused is not run behind anyone's back: it waits for a person.
      // Resumed inside its early-jitter window (due, but its nominal time still ahead), it fires.
      updated = await store.updateJobSchedule(job.id, 'missed', current(job));
    } else {
      updated = await store.updateJobSchedule(job.id, 'active', current(job));
    }
    this.deps.scheduler.kick();
    return this.updated(job.id, updated);
  }

  /** A run of the job's prompt now, outside its schedule (a scheduled trigger's job too). */
  async runNow(id: string, requestedBy: string): Promise<Run> {
    const { store, clock } = this.deps;
    const job = await this.get(id);
    await this.deps.caps?.admit({ sessionId: job.sessionId, triggerId: job.triggerId });
    const run = await store.runJobNow(job.id, {
      id: newId('run'),
      sessionId: job.sessionId,
      jobId: job.id,
      slotAt: null,
      source: 'manual',
      prompt: job.prompt,
      requestedBy,
      createdAt: clock.now(),
      overrides: job.options,
      ...(job.triggerId ? { triggerId: job.triggerId } : {}),
    });
    if (!run) throw notFound(job.id);
    this.deps.submitRun(run);
    return run;
  }

  /**
   * The slots of a past range fired once each (backfillSlots says which, and refuses), the job's overlap
   * policy applied as if each came due now; a slot that has a run or an outcome already is not fired again.
   * What each slot became, in order.
   */
  async backfill(id: string, range: BackfillRange): Promise<BackfilledSlot[]> {
    const { store, clock, config } = this.deps;
    const job = await this.get(id);
    const now = clock.now();
    const slots = backfillSlots(job, range, now, config.scheduler.max_backfill_slots);
    const ctx = {
      now,
      startedAt: now,
      catchupWindowMs: config.scheduler.catchup_window_ms,
      jitter: jitterOptions(config),
      newRunId: () => newId('run'),
      maxBuffered: config.scheduler.max_buffered_slots,
    };
    // A backfill's slots count against the spend caps as the scheduler's do, one by one (daily_runs too).
    const spend = (await this.deps.caps?.snapshot(now)) ?? null;
    const hits = new Map<string, SpendCapHit>();
    const done = await store.backfillJob(job.id, slots, now, (fresh, runs, slotAt) =>
      capSlot(fresh, decideBackfill(fresh, runs, slotAt, ctx), spend, hits),
    );
    if (!done) throw notFound(job.id);
    const hit = hits.get(job.id);
    if (hit && spend) await this.deps.caps?.note(hit, spend.day);
    for (const { run, transition } of done.results) {
      for (const c of transition.cancel ?? []) await this.deps.cancelRun(c.runId);
      if (run) this.deps.submitRun(run);
    }
    if (done.results.length) this.deps.scheduler.kick();
    const recorded = new Map((await store.listSlots(job.id)).map((r) => [r.slotAt, r]));
    const already = new Set(done.already);
    return slots.map((slotAt): BackfilledSlot => {
      const row = recorded.get(slotAt);
      if (already.has(slotAt)) return { slotAt, outcome: 'already_done', runId: row?.runId ?? null };
      if (row) return { slotAt, outcome: row.outcome, runId: row.runId };
      // Only buffer_one's waiting slot has no row yet (it is recorded when it fires or is replaced).
      return { slotAt, outcome: 'pending', runId: null };
    });
  }

  /**
   * Another expiry period from now, recorded on the job (renewals, renewed_at, renewed_by). A session's
   * recurring jobs expire (recurring_expiry_ms) so that forgotten ones stop; a team that means to keep a
   * schedule renews it, or makes it a scheduled trigger, which never expires.
   */
  async renew(id: string, by: string): Promise<CronJob> {
    const { store, clock, config } = this.deps;
    const job = await this.own(id);
    if (!job.recurring) {
      throw new DomainError('conflict', `job ${job.id} is a one-shot: it has no expiry to renew`);
    }
    const now = clock.now();
    const renewed = await store.renewJob(job.id, now + config.scheduler.recurring_expiry_ms, by, now);
    if (!renewed) throw notFound(job.id);
    this.deps.scheduler.kick();
    return renewed;
  }

  /** A scheduled trigger's job is changed through its trigger, never on its own. */
  private async own(id: string): Promise<CronJob> {
    const job = await this.get(id);
    if (job.triggerId) {
      throw new DomainError(
        'managed_by_trigger',
        `job ${job.id} fires schedule trigger ${job.triggerId}: change, pause or delete it through /v1/triggers/${job.triggerId}`,
      );
    }
    return job;
  }

  /** A job deleted between reading and writing it is gone. */
  private updated(id: string, job: CronJob | null): CronJob {
    if (!job) throw notFound(id);
    return job;
  }
}

/** The job's next slot as stored, or null when it has none. */
const current = (job: CronJob) =>
  job.nextNominalAt === null || job.nextDueAt === null
    ? null
    : { nominalAt: job.nextNominalAt, dueAt: job.nextDueAt, final: job.nextFinal };
