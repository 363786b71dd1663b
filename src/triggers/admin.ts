import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { DomainError } from '../domain/errors.js';
import type { CronJob, RunDefaults, Trigger, TriggerFilters } from '../domain/types.js';
import { newId } from '../ids.js';
import type { Store } from '../store/store.js';
import {
  planScheduleJob,
  type ScheduleDefinition,
  scheduleRequester,
  scheduleScope,
  switchedSchedule,
} from './schedule.js';
import { issueTriggerToken } from './tokens.js';

// Trigger administration: creating, changing and deleting triggers, their tokens, and the job a scheduled
// trigger fires through (schedule.ts), which follows its trigger. Input arrives checked (prompt placeholders,
// which fields fit which kind, the workspace an existing directory, the time zone canonical); what depends on
// the stored records is decided here.

export interface TriggerAdminDeps {
  store: Store;
  clock: Clock;
  config: Config;
  /** The scheduler loop, woken when a scheduled trigger's job changes. */
  scheduler: { kick(): void };
}

/** A trigger as requested. `schedule` is for (and required by) kind `schedule`. */
export type NewTriggerRequest = Pick<
  Trigger,
  'name' | 'kind' | 'events' | 'filters' | 'prompt' | 'workspace' | 'options' | 'enabled' | 'createdBy'
> & {
  /** Default: github.trigger_hourly_cap. */
  hourlyCap?: number | undefined;
  schedule?: ScheduleDefinition | undefined;
};

/** Fields to change; undefined leaves a field as it is. */
export interface TriggerChange {
  name?: string | undefined;
  events?: string[] | undefined;
  filters?: TriggerFilters | undefined;
  prompt?: string | undefined;
  workspace?: string | undefined;
  options?: RunDefaults | undefined;
  hourlyCap?: number | undefined;
  enabled?: boolean | undefined;
  /** A new token for a generic trigger; the old one stops working. */
  rotateToken?: boolean | undefined;
  /** A scheduled trigger's schedule: the parts given replace the job's. */
  cron?: string | undefined;
  timezone?: string | undefined;
  approximate?: boolean | undefined;
}

/** A trigger written, with its token when one was issued now (shown this once: only its hash is kept). */
export interface SavedTrigger {
  trigger: Trigger;
  token: string | null;
}

export class TriggerAdmin {
  constructor(private readonly deps: TriggerAdminDeps) {}

  async get(id: string): Promise<Trigger> {
    const trigger = await this.deps.store.getTrigger(id);
    if (!trigger) throw notFound(id);
    return trigger;
  }

  /** The job a scheduled trigger fires through; null for other kinds (and a schedule without one). */
  async jobOf(trigger: Trigger): Promise<CronJob | null> {
    return trigger.kind === 'schedule' ? this.deps.store.jobOfTrigger(trigger.id) : null;
  }

  /**
   * A new trigger; a generic one gets a token. A scheduled one is created with its session and job in one
   * transaction (CronError for an unusable schedule).
   */
  async create(req: NewTriggerRequest): Promise<SavedTrigger> {
    const { store, clock, config } = this.deps;
    const now = clock.now();
    const token = req.kind === 'generic' ? issueTriggerToken() : null;
    const trigger: Trigger = {
      id: newId('trg'),
      name: req.name,
      kind: req.kind,
      events: req.events,
      filters: req.filters,
      prompt: req.prompt,
      workspace: req.workspace,
      options: req.options,
      hourlyCap: req.hourlyCap ?? config.github.trigger_hourly_cap,
      tokenId: token?.tokenId ?? null,
      tokenHash: token?.tokenHash ?? null,
      enabled: req.enabled,
      createdBy: req.createdBy,
      createdAt: now,
      updatedAt: now,
    };
    if (req.kind !== 'schedule')
      return { trigger: await store.createTrigger(trigger), token: token?.token ?? null };
    if (!req.schedule || req.workspace === null) {
      throw new Error('TriggerAdmin.create: a schedule trigger needs its schedule and a workspace');
    }
    const sessionId = newId('ses');
    const job = planScheduleJob(trigger, req.schedule, { sessionId }, now, config);
    const created = await store.createScheduleTrigger({
      trigger,
      session: {
        id: sessionId,
        name: `schedule ${trigger.name}`,
        workspace: req.workspace,
        owner: scheduleRequester(trigger),
        defaults: {},
        scopeKey: scheduleScope(trigger.id),
      },
      job,
    });
    this.deps.scheduler.kick();
    return { trigger: created, token: null };
  }

  /**
   * Changes a trigger; a scheduled trigger's job follows (redefined, or paused and resumed with `enabled`).
   * The caller has checked the change against the trigger's kind (which never changes).
   */
  async update(id: string, change: TriggerChange): Promise<SavedTrigger> {
    const { store, clock } = this.deps;
    const token = change.rotateToken ? issueTriggerToken() : null;
    const updated = await store.updateTrigger(id, {
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(change.events !== undefined ? { events: change.events } : {}),
      ...(change.filters !== undefined ? { filters: change.filters } : {}),
      ...(change.prompt !== undefined ? { prompt: change.prompt } : {}),
      ...(change.workspace !== undefined ? { workspace: change.workspace } : {}),
      ...(change.options !== undefined ? { options: change.options } : {}),
      ...(change.hourlyCap !== undefined ? { hourlyCap: change.hourlyCap } : {}),
      ...(change.enabled !== undefined ? { enabled: change.enabled } : {}),
      ...(token ? { tokenId: token.tokenId, tokenHash: token.tokenHash } : {}),
      updatedAt: clock.now(),
    });
    if (!updated) throw notFound(id);
    if (updated.kind === 'schedule') await this.reschedule(updated, change);
    return { trigger: updated, token: token?.token ?? null };
  }

  /** Deletes the trigger, and a scheduled trigger's job with it (its session and history stay). */
  async delete(id: string): Promise<void> {
    const { store } = this.deps;
    const job = await store.jobOfTrigger(id);
    if (!(await store.deleteTrigger(id))) throw notFound(id);
    if (job) {
      await store.deleteJob(job.id);
      this.deps.scheduler.kick();
    }
  }

  /** A scheduled trigger's job follows the trigger: its definition, and on or off. */
  private async reschedule(t: Trigger, change: TriggerChange): Promise<void> {
    const { store, clock, config } = this.deps;
    const job = await store.jobOfTrigger(t.id);
    if (!job) return;
    const now = clock.now();
    const redefine =
      change.cron !== undefined ||
      change.timezone !== undefined ||
      change.approximate !== undefined ||
      change.prompt !== undefined ||
      change.options !== undefined;
    if (redefine) {
      const next = planScheduleJob(
        t,
        {
          cron: change.cron ?? job.cron,
          timezone: change.timezone ?? job.timezone,
          approximate: change.approximate ?? job.approximate,
        },
        { jobId: job.id, sessionId: job.sessionId },
        now,
        config,
      );
      await store.redefineJob(next, t.enabled ? 'active' : 'paused');
    } else if (change.enabled !== undefined && change.enabled !== (job.status !== 'paused')) {
      const s = switchedSchedule(job, change.enabled, now, config);
      await store.updateJobSchedule(job.id, s.status, s.next);
    }
    this.deps.scheduler.kick();
  }
}

const notFound = (id: string) => new DomainError('not_found', `trigger ${id} not found`);
