import type { Clock } from '../clock.js';
import { mcpServerNames } from '../config/mcp-names.js';
import type { Config } from '../config/schema.js';
import { DomainError } from '../domain/errors.js';
import { latitudeOf, refuseLoosening } from '../domain/loosening.js';
import { checkMcpSelection } from '../domain/mcp-selection.js';
import { loosensLimits, type SpendLimits } from '../domain/spend.js';
import {
  type CronJob,
  DEFAULT_OVERLAP,
  type OverlapPolicy,
  type Role,
  type RunDefaults,
  type Trigger,
  type TriggerFilters,
} from '../domain/types.js';
import { scheduleZone } from '../domain/zone.js';
import { newId } from '../ids.js';
import { checkedRunOptions } from '../models/catalogue.js';
import type { JobStore, TriggerStore } from '../store/store.js';
import { workspaceDir } from '../workspace/dir.js';
import { workspaceKindOf } from '../workspace/git.js';
import type { HiddenPaths } from '../workspace/hidden.js';
import { familyOfEvent, triggerMisfit } from './match.js';
import {
  planScheduleJob,
  type ScheduleDefinition,
  scheduleRequester,
  scheduleScope,
  switchedSchedule,
} from './schedule.js';
import { EVENT_FIELDS, TEMPLATE_FIELDS, unfilledPlaceholders, unknownPlaceholders } from './template.js';
import { issueTriggerToken } from './tokens.js';

// Trigger administration: creating, changing and deleting triggers, their tokens, and the job a scheduled
// trigger fires through (schedule.ts), which follows its trigger. A request is checked here before anything is
// written: its prompt's placeholders, which fields fit which kind, the workspace an existing directory, the
// time zone canonical, the model allowed, the schedule usable.

export interface TriggerAdminDeps {
  store: JobStore & TriggerStore;
  clock: Clock;
  config: Config;
  /** The scheduler loop, woken when a scheduled trigger's job changes. */
  scheduler: { kick(): void };
  /** What no trigger's workspace may hold (the daemon's one list, see workspace/hidden.ts). */
  hidden: HiddenPaths;
}

/**
 * A trigger as requested. `cron` is required by kind `schedule`; cron, timezone, approximate, overlap and
 * jitter are its alone.
 */
export type NewTriggerRequest = Pick<Trigger, 'name' | 'kind' | 'prompt' | 'enabled' | 'createdBy'> & {
  /** Required by kind `github`, refused by `schedule`. */
  events?: string[] | undefined;
  filters?: TriggerFilters | undefined;
  /** Required by kinds `generic` and `schedule`: an absolute path to an existing directory. */
  workspace?: string | null | undefined;
  options?: RunDefaults | undefined;
  /** Default: github.trigger_hourly_cap. */
  hourlyCap?: number | undefined;
  /** Spend caps (default: none). */
  limits?: SpendLimits | undefined;
  cron?: string | undefined;
  /** Default: the configured time zone. */
  timezone?: string | undefined;
  approximate?: boolean | undefined;
  /** Default: buffer_one. */
  overlap?: OverlapPolicy | undefined;
  /** The job's own jitter bound in seconds; null or absent: the configured cap. */
  jitterMaxSeconds?: number | null | undefined;
};

/** Fields to change; undefined leaves a field as it is. */
export interface TriggerChange {
  /** The caller's role: only an admin may change options to be more permissive (domain/loosening.ts). */
  role: Role;
  name?: string | undefined;
  events?: string[] | undefined;
  filters?: TriggerFilters | undefined;
  prompt?: string | undefined;
  workspace?: string | undefined;
  options?: RunDefaults | undefined;
  hourlyCap?: number | undefined;
  /** Replaces the trigger's spend caps ({} removes them). */
  limits?: SpendLimits | undefined;
  enabled?: boolean | undefined;
  /** A new token for a generic trigger; the old one stops working. */
  rotateToken?: boolean | undefined;
  /** A scheduled trigger's schedule: the parts given replace the job's. */
  cron?: string | undefined;
  timezone?: string | undefined;
  approximate?: boolean | undefined;
  overlap?: OverlapPolicy | undefined;
  /** null: back to the configured cap. */
  jitterMaxSeconds?: number | null | undefined;
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
    checkPrompt(req.prompt);
    checkKindFields(req);
    await this.refuseTakenName(req.name, null);
    if (req.kind === 'github') checkGithubFit(req.events ?? [], req.filters ?? {}, req.prompt);
    const workspace = req.workspace ? await workspaceDir(req.workspace, this.deps.hidden) : null;
    const options = checkedRunOptions(config, req.options, clock.now());
    checkMcpSelection(options, mcpServerNames(config));
    const schedule: ScheduleDefinition | null =
      req.kind === 'schedule'
        ? {
            cron: req.cron ?? '',
            timezone: scheduleZone(req.timezone ?? config.timezone),
            approximate: req.approximate ?? false,
            overlap: req.overlap ?? DEFAULT_OVERLAP,
            jitterMaxSeconds: req.jitterMaxSeconds ?? null,
          }
        : null;
    const now = clock.now();
    const token = req.kind === 'generic' ? issueTriggerToken() : null;
    const trigger: Trigger = {
      id: newId('trg'),
      name: req.name,
      kind: req.kind,
      events: req.events ?? [],
      filters: req.filters ?? {},
      prompt: req.prompt,
      workspace,
      options,
      hourlyCap: req.hourlyCap ?? config.github.trigger_hourly_cap,
      limits: req.limits ?? {},
      tokenId: token?.tokenId ?? null,
      tokenHash: token?.tokenHash ?? null,
      enabled: req.enabled,
      createdBy: req.createdBy,
      createdAt: now,
      updatedAt: now,
    };
    if (!schedule || workspace === null) {
      return { trigger: await store.createTrigger(trigger), token: token?.token ?? null };
    }
    const sessionId = newId('ses');
    const job = planScheduleJob(trigger, schedule, { sessionId }, now, config);
    const created = await store.createScheduleTrigger({
      trigger,
      session: {
        id: sessionId,
        name: `schedule ${trigger.name}`,
        workspace,
        workspaceKind: await workspaceKindOf(workspace),
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
   * Changes a trigger (`current`, as the caller read it: its kind never changes); a scheduled trigger's job
   * follows (redefined, or paused and resumed with `enabled`). The whole change is checked, the job's new
   * schedule included, before anything is written; new options more permissive than the stored ones are
   * forbidden to all but an admin, checked by the store against the freshest row.
   */
  async update(current: Trigger, change: TriggerChange): Promise<SavedTrigger> {
    const { store, clock, config } = this.deps;
    checkChange(current, change);
    if (change.name !== undefined && change.name !== current.name) {
      await this.refuseTakenName(change.name, current.id);
    }
    if (current.kind === 'github') {
      checkGithubFit(
        change.events ?? current.events,
        change.filters ?? current.filters,
        change.prompt ?? current.prompt,
      );
    }
    const workspace =
      change.workspace !== undefined ? await workspaceDir(change.workspace, this.deps.hidden) : undefined;
    const options =
      change.options !== undefined ? checkedRunOptions(config, change.options, clock.now()) : undefined;
    checkMcpSelection(options, mcpServerNames(config));
    const timezone = change.timezone !== undefined ? scheduleZone(change.timezone) : undefined;
    const follow = await this.followingJob(current, { ...change, workspace, options, timezone });
    const token = change.rotateToken ? issueTriggerToken() : null;
    const updated = await store.updateTrigger(
      current.id,
      {
        ...(change.name !== undefined ? { name: change.name } : {}),
        ...(change.events !== undefined ? { events: change.events } : {}),
        ...(change.filters !== undefined ? { filters: change.filters } : {}),
        ...(change.prompt !== undefined ? { prompt: change.prompt } : {}),
        ...(workspace !== undefined ? { workspace } : {}),
        ...(options !== undefined ? { options } : {}),
        ...(change.hourlyCap !== undefined ? { hourlyCap: change.hourlyCap } : {}),
        ...(change.limits !== undefined ? { limits: change.limits } : {}),
        ...(change.enabled !== undefined ? { enabled: change.enabled } : {}),
        ...(token ? { tokenId: token.tokenId, tokenHash: token.tokenHash } : {}),
        updatedAt: clock.now(),
      },
      allOf([
        options !== undefined
          ? noLoosening(change.role, options, config.execute.network_default_domains)
          : undefined,
        change.limits !== undefined ? noRaisedCaps(change.role, change.limits) : undefined,
      ]),
    );
    if (!updated) throw notFound(current.id);
    if (follow) await follow(updated);
    return { trigger: updated, token: token?.token ?? null };
  }

  /**
   * A trigger's name is unique: it is how `drydock apply` finds the trigger again (conflict naming the one
   * that has it). Checked here, not by a unique index, so that an existing database holding two of a name
   * still upgrades (apply refuses such a name until one is renamed); two creations at the same instant may
   * still both pass, which apply then reports as an ambiguous name.
   */
  private async refuseTakenName(name: string, self: string | null): Promise<void> {
    const taken = (await this.deps.store.listTriggers({})).find((t) => t.name === name && t.id !== self);
    if (taken) {
      throw new DomainError(
        'conflict',
        `a trigger named "${name}" exists already (${taken.id}); trigger names are unique`,
      );
    }
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

  /**
   * How a scheduled trigger's job follows a change of the trigger (its definition, or on and off), planned
   * now so that an unusable schedule (invalid_cron) is refused before the trigger is written; null when the
   * job stays as it is.
   */
  private async followingJob(
    current: Trigger,
    change: TriggerChange,
  ): Promise<((updated: Trigger) => Promise<void>) | null> {
    const { store, clock, config } = this.deps;
    const job = current.kind === 'schedule' ? await store.jobOfTrigger(current.id) : null;
    if (!job) return null;
    const now = clock.now();
    const redefine = scheduleChanged(change) || change.prompt !== undefined || change.options !== undefined;
    if (redefine) {
      const next = planScheduleJob(
        { ...current, prompt: change.prompt ?? current.prompt, options: change.options ?? current.options },
        {
          cron: change.cron ?? job.cron,
          timezone: change.timezone ?? job.timezone,
          approximate: change.approximate ?? job.approximate,
          overlap: change.overlap ?? job.overlap,
          jitterMaxSeconds:
            change.jitterMaxSeconds === undefined ? job.jitterMaxSeconds : change.jitterMaxSeconds,
        },
        { jobId: job.id, sessionId: job.sessionId },
        now,
        config,
      );
      return async (updated) => {
        await store.redefineJob(next, updated.enabled ? 'active' : 'paused');
        this.deps.scheduler.kick();
      };
    }
    if (change.enabled === undefined || change.enabled === (job.status !== 'paused')) return null;
    const s = switchedSchedule(job, change.enabled, now, config);
    return async () => {
      await store.updateJobSchedule(job.id, s.status, s.next);
      this.deps.scheduler.kick();
    };
  }
}

/**
 * The store's check of new options against the trigger as stored: a trigger's runs get its options over an
 * empty session, so an option left out is the strictest, never inherited.
 */
const noLoosening =
  (role: Role, options: RunDefaults, networkDefaults: readonly string[]) =>
  (stored: Trigger): void =>
    refuseLoosening(
      role,
      latitudeOf(stored.options),
      latitudeOf(options),
      { what: `trigger ${stored.id}`, than: 'than it is', label: 'now' },
      networkDefaults,
    );

/**
 * The store's check of new spend caps against the trigger as stored: only an admin raises or removes one
 * (docs/spend-caps.md); anyone who may change the trigger may lower or add one.
 */
const noRaisedCaps =
  (role: Role, limits: SpendLimits) =>
  (stored: Trigger): void => {
    if (role !== 'admin' && loosensLimits(stored.limits, limits)) {
      throw new DomainError(
        'forbidden',
        `only an admin raises or removes trigger ${stored.id}'s spend caps (limits ${JSON.stringify(stored.limits)} now)`,
      );
    }
  };

/** The checks given, as one (undefined when none is). */
function allOf(checks: (((t: Trigger) => void) | undefined)[]): ((t: Trigger) => void) | undefined {
  const given = checks.filter((c) => c !== undefined);
  if (!given.length) return undefined;
  return (t) => {
    for (const c of given) c(t);
  };
}

/** Which fields fit which kind of trigger, for a new one. */
function checkKindFields(req: NewTriggerRequest): void {
  if (req.kind === 'github' && !req.events?.length) {
    throw invalidRequest('a github trigger needs events, e.g. ["pull_request.opened"]');
  }
  if (req.kind !== 'github' && !req.workspace) {
    throw invalidRequest(`a ${req.kind} trigger needs a workspace directory`);
  }
  if (req.kind === 'schedule') {
    if (!req.cron) throw invalidRequest('a schedule trigger needs cron, e.g. "0 3 * * *"');
    if (req.events?.length || req.filters)
      throw invalidRequest('a schedule trigger has no events or filters');
    checkSchedulePrompt(req.prompt);
  } else if (scheduleChanged(req)) {
    throw invalidRequest(SCHEDULE_FIELDS_ONLY);
  }
}

/** Whether a request names any of a scheduled trigger's own fields. */
const scheduleChanged = (
  r: Pick<TriggerChange, 'cron' | 'timezone' | 'approximate' | 'overlap' | 'jitterMaxSeconds'>,
) =>
  r.cron !== undefined ||
  r.timezone !== undefined ||
  r.approximate !== undefined ||
  r.overlap !== undefined ||
  r.jitterMaxSeconds !== undefined;

/** Which fields of a change fit the trigger's kind (which never changes). */
function checkChange(current: Trigger, change: TriggerChange): void {
  if (change.prompt !== undefined) checkPrompt(change.prompt);
  if (change.rotateToken && current.kind !== 'generic') {
    throw invalidRequest('only generic triggers have a token');
  }
  if (scheduleChanged(change) && current.kind !== 'schedule') throw invalidRequest(SCHEDULE_FIELDS_ONLY);
  if (current.kind === 'schedule' && change.prompt !== undefined) checkSchedulePrompt(change.prompt);
}

const SCHEDULE_FIELDS_ONLY = 'cron, timezone, approximate, overlap and jitter are for schedule triggers';

/** A prompt names only placeholders an event fills. */
function checkPrompt(prompt: string): void {
  const unknown = unknownPlaceholders(prompt);
  if (unknown.length) {
    throw new DomainError(
      'invalid_prompt',
      `prompt names unknown placeholders ${unknown.map((u) => `{{${u}}}`).join(', ')}; available: ${TEMPLATE_FIELDS.map((f) => `{{${f}}}`).join(', ')} (titles, bodies and fired text are passed separately, as untrusted data)`,
    );
  }
}

/**
 * A github trigger's events, filters and prompt fit together: every event is one drydock handles, every filter
 * applies to every event (a filter an event lacks would silently block it), and every placeholder of the prompt
 * is filled by every event.
 */
function checkGithubFit(events: string[], filters: TriggerFilters, prompt: string): void {
  const misfit = triggerMisfit(events, filters);
  if (misfit) throw invalidRequest(misfit);
  for (const event of events) {
    const family = familyOfEvent(event) as keyof typeof EVENT_FIELDS;
    const unfilled = unfilledPlaceholders(prompt, family);
    if (unfilled.length) {
      throw new DomainError(
        'invalid_prompt',
        `prompt names ${unfilled.map((u) => `{{${u}}}`).join(', ')}, which ${event} events do not fill; they fill ${EVENT_FIELDS[family].map((f) => `{{${f}}}`).join(', ')}`,
      );
    }
  }
}

/** A scheduled trigger's prompt is sent as written: there is no event to fill placeholders from. */
function checkSchedulePrompt(prompt: string): void {
  if (/\{\{\s*[\w.]+\s*\}\}/.test(prompt)) {
    throw new DomainError(
      'invalid_prompt',
      'a schedule trigger has no event to fill {{placeholders}} from: its prompt is sent as written',
    );
  }
}

const invalidRequest = (message: string) => new DomainError('invalid_request', message);
const notFound = (id: string) => new DomainError('not_found', `trigger ${id} not found`);
