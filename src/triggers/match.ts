import type { Trigger, TriggerFilters } from '../domain/types.js';
import {
  EVENT_ACTIONS,
  EVENT_FAMILIES,
  type EventContext,
  type EventFamily,
  isEventFamily,
} from '../github/events/index.js';
import type { PullRequestContext } from './fire-context.js';

// Which github triggers a delivery fires: the events a trigger names, then its filters. Each filter applies to
// the events that have what it compares (FILTER_EVENTS); a trigger naming a filter that one of its events lacks
// is refused when it is written, so a filter never silently blocks an event.

/** What a trigger's filters compare. An absent field: the event has no such thing. */
export interface MatchFacts {
  event: string;
  repository: string;
  baseBranch?: string;
  branch?: string | null;
  labels?: string[];
  author?: string | null;
  draft?: boolean;
  merged?: boolean;
  environment?: string | null;
  conclusion?: string | null;
  state?: string | null;
}

type Family = EventFamily | 'pull_request';

/** The events each filter applies to. */
export const FILTER_EVENTS: Record<keyof TriggerFilters, readonly Family[]> = {
  repositories: ['pull_request', ...EVENT_FAMILIES],
  base_branches: ['pull_request'],
  branches: ['push', 'check_suite', 'workflow_run', 'deployment_status'],
  labels: ['pull_request', 'issues', 'issue_comment'],
  authors: [
    'pull_request',
    'issues',
    'issue_comment',
    'workflow_run',
    'release',
    'push',
    'deployment_status',
  ],
  draft: ['pull_request'],
  merged: ['pull_request'],
  environments: ['deployment_status'],
  conclusions: ['check_suite', 'workflow_run'],
  states: ['deployment_status'],
};

/** The conclusions of a check suite or workflow run that fire when a trigger names none. */
export const DEFAULT_CONCLUSIONS = ['failure'];
/** The deployment states that fire when a trigger names none (not the in-between ones: queued, pending, ...). */
export const DEFAULT_STATES = ['success', 'failure', 'error'];

/** What the filters compare of a pull request or another event. */
export function factsOf(ctx: PullRequestContext | EventContext): MatchFacts {
  if (ctx.kind === 'pull_request') {
    return {
      event: ctx.event,
      repository: ctx.repository,
      baseBranch: ctx.baseRef,
      labels: ctx.labels,
      author: ctx.author,
      draft: ctx.draft,
      merged: ctx.merged === true,
    };
  }
  const f = ctx.facts;
  const applies = (filter: keyof TriggerFilters) => FILTER_EVENTS[filter].includes(ctx.family);
  return {
    event: ctx.event,
    repository: ctx.repository,
    ...(applies('branches') ? { branch: f.branch } : {}),
    ...(applies('labels') ? { labels: f.labels } : {}),
    ...(applies('authors') ? { author: f.author } : {}),
    ...(applies('environments') ? { environment: f.environment } : {}),
    ...(applies('conclusions') ? { conclusion: f.conclusion } : {}),
    ...(applies('states') ? { state: f.state } : {}),
  };
}

/** Why a github trigger does not fire for an event, or null when it does. */
export function mismatch(trigger: Trigger, facts: MatchFacts): string | null {
  const [eventName] = facts.event.split('.');
  if (!trigger.events.includes(facts.event) && !trigger.events.includes(eventName!))
    return `event ${facts.event} not subscribed`;
  const f = trigger.filters;
  const lower = (xs: string[] | undefined) => xs?.map((x) => x.toLowerCase());
  if (f.repositories?.length && !lower(f.repositories)!.includes(facts.repository.toLowerCase())) {
    return `repository ${facts.repository} not in filter`;
  }
  if (
    facts.baseBranch !== undefined &&
    f.base_branches?.length &&
    !f.base_branches.includes(facts.baseBranch)
  )
    return `base branch ${facts.baseBranch} not in filter`;
  if (facts.branch !== undefined && f.branches?.length && !f.branches.includes(facts.branch ?? ''))
    return `branch ${facts.branch ?? '(none)'} not in filter`;
  if (facts.labels !== undefined && f.labels?.length && !facts.labels.some((l) => f.labels!.includes(l)))
    return 'no matching label';
  if (
    facts.author !== undefined &&
    f.authors?.length &&
    !lower(f.authors)!.includes((facts.author ?? '').toLowerCase())
  )
    return `author ${facts.author ?? '(unknown)'} not in filter`;
  if (facts.draft !== undefined && f.draft !== undefined && f.draft !== facts.draft)
    return facts.draft ? 'draft pull request' : 'not a draft';
  if (facts.merged !== undefined && f.merged !== undefined && f.merged !== facts.merged)
    return facts.merged ? 'merged pull request' : 'not merged';
  return outcomeMismatch(f, facts);
}

/** The filters on how something ended: environment, conclusion, state. */
function outcomeMismatch(f: TriggerFilters, facts: MatchFacts): string | null {
  if (
    facts.environment !== undefined &&
    f.environments?.length &&
    !f.environments.some((e) => e.toLowerCase() === (facts.environment ?? '').toLowerCase())
  )
    return `environment ${facts.environment ?? '(none)'} not in filter`;
  if (facts.conclusion !== undefined) {
    const fire = f.conclusions?.length ? f.conclusions : DEFAULT_CONCLUSIONS;
    if (!fire.includes(facts.conclusion ?? ''))
      return `conclusion ${facts.conclusion || '(none)'} fires no run (conclusions: ${fire.join(', ')})`;
  }
  if (facts.state !== undefined) {
    const fire = f.states?.length ? f.states : DEFAULT_STATES;
    if (!fire.includes(facts.state ?? ''))
      return `state ${facts.state || '(none)'} fires no run (states: ${fire.join(', ')})`;
  }
  return null;
}

/** The event family of a trigger's event name (`issues` of `issues.opened`). */
export const familyOfEvent = (event: string): string => event.split('.')[0]!;

/**
 * Why a github trigger's events and filters do not fit together, or null: an event drydock does not handle, an
 * action its event does not have (or none fires), a filter one of its events lacks, a push without branches.
 */
export function triggerMisfit(events: string[], filters: TriggerFilters): string | null {
  const families = new Set<Family>();
  for (const event of events) {
    const [family, action] = event.split('.') as [string, string | undefined];
    if (family === 'pull_request') {
      families.add(family);
      continue;
    }
    if (!isEventFamily(family)) {
      return `event ${event} is not one drydock handles: pull_request, ${Object.keys(EVENT_ACTIONS).join(', ')} (each as <event> or <event>.<action>)`;
    }
    const actions = EVENT_ACTIONS[family];
    if (action !== undefined && !actions.includes(action)) {
      return actions.length
        ? `event ${event}: ${family} fires on ${actions.map((a) => `${family}.${a}`).join(', ')}`
        : `event ${event}: ${family} has no actions; name it as ${family}`;
    }
    families.add(family);
  }
  for (const [filter, applies] of Object.entries(FILTER_EVENTS) as [
    keyof TriggerFilters,
    readonly Family[],
  ][]) {
    const value = filters[filter];
    if (value === undefined || (Array.isArray(value) && !value.length)) continue;
    const misses = [...families].filter((f) => !applies.includes(f));
    if (misses.length) {
      return `filter ${filter} does not apply to ${misses.join(', ')} events (it applies to ${applies.join(', ')})`;
    }
  }
  if (
    filters.merged !== undefined &&
    events.some((e) => e.startsWith('pull_request.') && e !== 'pull_request.closed')
  ) {
    return 'filter merged applies to closed pull requests: name pull_request.closed (or pull_request)';
  }
  if (families.has('push') && !filters.branches?.length) {
    return 'a trigger on push needs filters.branches: the branches whose pushes fire it (drydock pushes branches of its own)';
  }
  return null;
}
