import { posix } from 'node:path';
import { normalizedDomains } from '../../domain/network.js';
import type {
  ApplyDocument,
  FileJob,
  FileSession,
  FileTrigger,
  JobJson,
  SessionJson,
  TriggerJson,
} from '../../http/contract/index.js';
import { normalizeCron } from '../../scheduler/cron.js';
import {
  type Current,
  isEmpty,
  JOB_FIELDS,
  managedSession,
  requestOf,
  SESSION_FIELDS,
  TRIGGER_FIELDS,
} from './export.js';

// What `drydock apply` would change: the file against what the daemon holds, object by object, keyed by name.
// Pure: it reads the two and returns the changes (in the order they are to be made) and the problems that
// forbid applying anything (an ambiguous name, a change the API cannot make in place).
//
// A field the file gives is compared with the daemon's; a field it leaves out is left as the daemon has it.
// With `prune`, a named object the file leaves out is removed: a session closed (its jobs go with it), a job
// or trigger deleted. What apply never touches: sessions a trigger made, sessions made without a name, and
// jobs without a name (shown as "unmanaged").

/** One field that differs: the daemon's value and the file's. */
export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

export type Change =
  | { op: 'create_session'; session: FileSession }
  | { op: 'close_session'; session: SessionJson; jobs: number }
  | { op: 'create_job'; session: string; sessionId: string | null; job: FileJob }
  | { op: 'update_job'; session: string; job: JobJson; fields: FieldChange[] }
  | { op: 'delete_job'; session: string; job: JobJson }
  | { op: 'create_trigger'; trigger: FileTrigger }
  | { op: 'update_trigger'; trigger: TriggerJson; fields: FieldChange[] }
  | { op: 'delete_trigger'; trigger: TriggerJson };

export interface ApplyPlan {
  changes: Change[];
  /** Objects apply leaves alone, said in the diff (not changes). */
  unmanaged: string[];
  /** Why nothing can be applied; empty when the plan may be carried out. */
  problems: string[];
}

/** The changes that make the daemon hold what `doc` says. */
export function planApply(doc: ApplyDocument, current: Current, prune: boolean): ApplyPlan {
  const plan: ApplyPlan = { changes: [], unmanaged: [], problems: [] };
  const wanted = doc.sessions ?? [];
  const sessions = current.sessions.filter(managedSession);
  duplicatesInFile(
    wanted.map((s) => s.name),
    'session',
    plan,
  );
  for (const s of wanted) {
    const found = unique(sessions, s.name, 'session', plan);
    if (found === 'ambiguous') continue;
    if (!found) plan.changes.push({ op: 'create_session', session: s });
    else sessionFields(s, found, plan);
    planJobs(s, found ?? null, found ? (current.jobs.get(found.id) ?? []) : [], prune, plan);
  }
  planTriggers(doc.triggers ?? [], current.triggers, prune, plan);
  if (prune) {
    const names = new Set(wanted.map((s) => s.name));
    for (const s of sessions) {
      if (names.has(s.name)) continue;
      plan.changes.push({ op: 'close_session', session: s, jobs: current.jobs.get(s.id)?.length ?? 0 });
    }
  }
  return plan;
}

/** A session cannot change once made (its defaults bound what its jobs may do): a difference is a problem. */
function sessionFields(s: FileSession, found: SessionJson, plan: ApplyPlan): void {
  const { jobs: _jobs, ...fields } = s;
  for (const d of differences(fields, requestOf(SESSION_FIELDS, found))) {
    plan.problems.push(
      `session ${s.name}: ${d.field} ${shown(d.from)} → ${shown(d.to)}: a session cannot change once made; ` +
        `close it (drydock sessions close ${found.id}) and apply again, or give the file's session another name`,
    );
  }
}

function planJobs(
  s: FileSession,
  session: SessionJson | null,
  jobs: JobJson[],
  prune: boolean,
  plan: ApplyPlan,
): void {
  const wanted = s.jobs ?? [];
  duplicatesInFile(
    wanted.map((j) => `${s.name}/${j.name}`),
    'job',
    plan,
  );
  const named = jobs.filter((j) => j.name !== null);
  for (const j of jobs) {
    if (j.name === null) plan.unmanaged.push(`job ${s.name}/${j.id}: unmanaged (it has no name)`);
  }
  for (const job of wanted) {
    const found = unique(named, job.name, `job of session ${s.name}`, plan);
    if (found === 'ambiguous') continue;
    if (!found) {
      plan.changes.push({ op: 'create_job', session: s.name, sessionId: session?.id ?? null, job });
      continue;
    }
    const fields = differences(job, requestOf(JOB_FIELDS, found));
    if (fields.length) plan.changes.push({ op: 'update_job', session: s.name, job: found, fields });
  }
  if (!prune) return;
  const names = new Set(wanted.map((j) => j.name));
  for (const j of named) {
    if (!names.has(j.name!)) plan.changes.push({ op: 'delete_job', session: s.name, job: j });
  }
}

function planTriggers(wanted: FileTrigger[], triggers: TriggerJson[], prune: boolean, plan: ApplyPlan): void {
  duplicatesInFile(
    wanted.map((t) => t.name),
    'trigger',
    plan,
  );
  for (const t of wanted) {
    const found = unique(triggers, t.name, 'trigger', plan);
    if (found === 'ambiguous') continue;
    if (!found) {
      plan.changes.push({ op: 'create_trigger', trigger: t });
      continue;
    }
    if (found.kind !== t.kind) {
      plan.problems.push(
        `trigger ${t.name}: kind ${found.kind} → ${t.kind}: a trigger's kind cannot change; delete it ` +
          `(drydock triggers delete ${found.id}) and apply again, or give the file's trigger another name`,
      );
      continue;
    }
    const fields = differences(t, requestOf(TRIGGER_FIELDS, found));
    if (fields.length) plan.changes.push({ op: 'update_trigger', trigger: found, fields });
  }
  if (!prune) return;
  const names = new Set(wanted.map((t) => t.name));
  for (const t of triggers) {
    if (!names.has(t.name)) plan.changes.push({ op: 'delete_trigger', trigger: t });
  }
}

/** The one object of `name`, null for none; two or more are a problem naming each. */
function unique<T extends { id: string; name: string | null }>(
  objects: T[],
  name: string,
  what: string,
  plan: ApplyPlan,
): T | null | 'ambiguous' {
  const found = objects.filter((o) => o.name === name);
  if (found.length <= 1) return found[0] ?? null;
  plan.problems.push(
    `${found.length} ${what}s are named "${name}" (${found.map((o) => o.id).join(', ')}): apply cannot tell ` +
      'which one the file means; rename or remove all but one',
  );
  return 'ambiguous';
}

function duplicatesInFile(names: string[], what: string, plan: ApplyPlan): void {
  const seen = new Set<string>();
  for (const n of names) {
    if (seen.has(n)) plan.problems.push(`the file names ${what} "${n}" twice`);
    seen.add(n);
  }
}

/**
 * The fields the file gives whose value differs from the daemon's (the name, which keys the object, and a
 * session's jobs, compared one by one, aside). A field the daemon lacks compares as empty.
 */
export function differences(
  wanted: Record<string, unknown>,
  current: Record<string, unknown>,
): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const [field, to] of Object.entries(withApproximate(wanted))) {
    if (to === undefined || field === 'name' || field === 'jobs' || field === '$schema') continue;
    const from = current[field];
    const same =
      isEmpty(from) && isEmpty(to)
        ? true
        : canonical(asStored(field, from)) === canonical(asStored(field, to));
    if (!same) changes.push({ field, from, to });
  }
  return changes;
}

/**
 * A value as the daemon stores it, where it stores something else than it was given, so that a file written
 * by hand does not differ forever: run options' network lists lower case and sorted, time zones in their
 * canonical spelling (compared without case here).
 */
function asStored(field: string, v: unknown): unknown {
  if ((field === 'defaults' || field === 'options') && v && typeof v === 'object') {
    const options = v as { network?: unknown };
    if (Array.isArray(options.network)) return { ...options, network: normalizedDomains(options.network) };
  }
  if (field === 'timezone' && typeof v === 'string') return v.toLowerCase();
  // `@daily`, `mon`, extra spaces: the daemon keeps the normalized expression (`0 0 * * *`, `MON`).
  if (field === 'cron' && typeof v === 'string') return storedCron(v);
  // A job's own jitter cap as export writes it; null (the configured cap) is no cap of its own.
  if (field === 'jitter' && v && typeof v === 'object') {
    const max = (v as { max_seconds?: unknown }).max_seconds;
    return typeof max === 'number' ? { max_seconds: max } : undefined;
  }
  // The daemon resolves the directory it is given (a trailing slash, `a/../b`).
  if (field === 'workspace' && typeof v === 'string' && v.startsWith('/')) return posix.resolve(v);
  return v;
}

function storedCron(expr: string): string {
  try {
    return normalizeCron(expr);
  } catch {
    return expr; // the daemon refuses it, and says why, when it is sent
  }
}

/** `jitter.approximate` is `approximate` by its other name (the daemon refuses the two disagreeing). */
function withApproximate(wanted: Record<string, unknown>): Record<string, unknown> {
  const alias = (wanted.jitter as { approximate?: unknown } | undefined)?.approximate;
  return wanted.approximate === undefined && typeof alias === 'boolean'
    ? { ...wanted, approximate: alias }
    : wanted;
}

/** JSON with object keys sorted, so that two values equal in content compare equal. */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_key, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
}

/** A value in a diff line: JSON, cut to one short line. */
export function shown(v: unknown): string {
  if (v === undefined) return '(none)';
  const text = canonical(v).replace(/\s+/g, ' ');
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}
