import type { z } from 'zod';
import type {
  APPLY_API_VERSION,
  createJobSchema,
  createSessionSchema,
  createTriggerSchema,
  JobJson,
  SessionJson,
  TriggerJson,
} from '../../http/contract/index.js';

// An object as the API presents it, mapped back to the request that creates it: the shape of `drydock
// apply`'s file and what `drydock export` writes. One mapping per kind, holding every field of the kind's
// create schema: each either read from the presented object or explicitly not exported, with why. The
// compiler holds each mapping to its schema's fields, and tests/cli/apply-export.test.ts to the schema as
// parsed, so a field added to a create schema cannot be dropped from the export without anyone noticing.

/** A field of a create schema that the export leaves out on purpose, and why. */
export interface NotExported {
  notExported: string;
}

/** Reads one field of the create request from the presented object (undefined: the object has none). */
export type FieldOf<From> = (from: From) => unknown;

/** Every field of a create schema: read from the presented object, or not exported. */
export type Mapping<Schema extends z.ZodType, From> = {
  [K in keyof Required<z.input<Schema>>]: FieldOf<From> | NotExported;
};

/** A session's fields (its jobs are exported beside them, as `jobs`). */
export const SESSION_FIELDS: Mapping<typeof createSessionSchema, SessionJson> = {
  name: (s) => s.name,
  workspace: (s) => s.workspace,
  defaults: (s) => s.defaults,
  limits: (s) => s.limits,
};

export const JOB_FIELDS: Mapping<typeof createJobSchema, JobJson> = {
  name: (j) => j.name ?? undefined,
  cron: (j) => j.cron,
  timezone: (j) => j.timezone,
  prompt: (j) => j.prompt,
  recurring: (j) => j.recurring,
  approximate: (j) => j.approximate,
  overlap: (j) => j.overlap,
  // The jitter's approximate minute is `approximate` above; its cap only when the job has its own.
  jitter: (j) => jitterOf(j.jitter),
  options: (j) => j.options,
};

/** A job's own jitter cap as the file writes it: none when it takes the configured one. */
const jitterOf = (jitter: { max_seconds: number | null }) =>
  jitter.max_seconds === null ? undefined : { max_seconds: jitter.max_seconds };

/**
 * A trigger's fields, of every kind: a scheduled trigger's schedule is read from the job it fires through. A
 * generic trigger's token is no field of the request: the daemon makes it, and it is never exported.
 */
export const TRIGGER_FIELDS: Mapping<typeof createTriggerSchema, TriggerJson> = {
  kind: (t) => t.kind,
  name: (t) => t.name,
  events: (t) => t.events,
  filters: (t) => t.filters,
  prompt: (t) => t.prompt,
  workspace: (t) => t.workspace ?? undefined,
  options: (t) => t.options,
  hourly_cap: (t) => t.hourly_cap,
  limits: (t) => t.limits,
  enabled: (t) => t.enabled,
  cron: (t) => t.schedule?.cron,
  timezone: (t) => t.schedule?.timezone,
  approximate: (t) => t.schedule?.approximate,
  overlap: (t) => t.schedule?.overlap,
  jitter: (t) => (t.schedule ? jitterOf(t.schedule.jitter) : undefined),
};

const isNotExported = (f: FieldOf<never> | NotExported): f is NotExported => typeof f !== 'function';

/**
 * The create request of a presented object, every field the mapping exports as the object holds it (an
 * empty list or object included: the comparison of apply needs them).
 */
export function requestOf<From>(
  mapping: Record<string, FieldOf<From> | NotExported>,
  from: From,
): Record<string, unknown> {
  const request: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(mapping)) {
    if (isNotExported(field)) continue;
    const value = field(from);
    if (value !== undefined) request[key] = value;
  }
  return request;
}

/** The request as the file writes it: without empty lists and objects, which say what leaving them out says. */
export function fileForm(request: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(request).filter(([, v]) => !isEmpty(v)));
}

export const isEmpty = (v: unknown): boolean =>
  v === undefined ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);

/** What the daemon holds that apply manages: open sessions people made, their jobs, and triggers. */
export interface Current {
  sessions: SessionJson[];
  /** Each session's jobs, by session id. */
  jobs: Map<string, JobJson[]>;
  triggers: TriggerJson[];
}

/** A session apply manages: one people made (not a trigger) and named (a session made without a name has its id). */
export const managedSession = (s: SessionJson): boolean =>
  s.status === 'open' && !s.made_by_trigger && s.name !== s.id;

const byName = <T extends { name: string | null }>(list: T[]): T[] =>
  [...list].sort((a, b) => ((a.name ?? '') < (b.name ?? '') ? -1 : (a.name ?? '') > (b.name ?? '') ? 1 : 0));

/**
 * The file `drydock export` writes: every managed session with its named jobs, and every trigger, each list
 * in the order of names (so that two exports of the same objects are the same text, whenever each was made).
 */
export function exportDocument(current: Current): {
  apiVersion: typeof APPLY_API_VERSION;
  sessions: Record<string, unknown>[];
  triggers: Record<string, unknown>[];
} {
  const sessions = byName(current.sessions.filter(managedSession)).map((s) => {
    const jobs = byName((current.jobs.get(s.id) ?? []).filter((j) => j.name !== null)).map((j) =>
      fileForm(requestOf(JOB_FIELDS, j)),
    );
    return fileForm({ ...requestOf(SESSION_FIELDS, s), jobs });
  });
  const triggers = byName(current.triggers).map((t) => fileForm(requestOf(TRIGGER_FIELDS, t)));
  return { apiVersion: 'drydock/v1', sessions, triggers };
}
