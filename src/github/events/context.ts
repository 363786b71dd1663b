import type { FailedJobsQuery } from '../client.js';

/** The GitHub events beside `pull_request` that fire triggers, each read by its own module of this folder. */
export const EVENT_FAMILIES = [
  'issues',
  'issue_comment',
  'check_suite',
  'workflow_run',
  'release',
  'push',
  'deployment_status',
] as const;
export type EventFamily = (typeof EVENT_FAMILIES)[number];

/**
 * What a GitHub event other than a pull request says, as a trigger needs it. Everything outside `external` is
 * checked: names and refs match strict patterns, shas are full hex. `external` holds what people outside the team
 * wrote (titles, bodies, comments, release notes, commit messages, job names and their URLs): it reaches the model
 * only inside the untrusted-data block, never in the instructions.
 */
export interface EventContext {
  kind: 'event';
  family: EventFamily;
  /** `<event>.<action>`, or `push` (a push has no action). */
  event: string;
  /** owner/repo */
  repository: string;
  /** What the run's session and plans belong to: `owner/repo#12`, `owner/repo@refs/heads/main`, ... */
  subject: string;
  /** The GitHub login the run is requested for (the author, the commenter, the pusher), or null. */
  requester: string | null;
  /** Where the run plans. */
  target: PlanTarget;
  /** What the trigger's filters compare (null: the event has no such thing). */
  facts: EventFacts;
  /** Values a prompt template may name (see src/triggers/template.ts): each matches a strict pattern. */
  values: Record<string, string>;
  /** External. */
  external: Record<string, unknown>;
  /** The failed jobs GitHub is asked for (failed check suites and workflow runs), else null. */
  jobs: FailedJobsQuery | null;
}

/** The commit a run plans on (see `CommitCheckout` in src/domain/types.ts). */
export interface PlanTarget {
  sha: string | null;
  /** `refs/heads/<branch>` or `refs/tags/<tag>` */
  ref: string | null;
  memory: boolean;
}

export interface EventFacts {
  branch: string | null;
  labels: string[];
  author: string | null;
  environment: string | null;
  conclusion: string | null;
  state: string | null;
}

/** What reading a payload gave: a context, or why the delivery starts nothing (`ignored`) or is refused. */
export type EventReading = { context: EventContext } | { outcome: 'ignored' | 'rejected'; detail: string };

export const ignored = (detail: string): EventReading => ({ outcome: 'ignored', detail });
export const rejected = (detail: string): EventReading => ({ outcome: 'rejected', detail });

export const noFacts: EventFacts = {
  branch: null,
  labels: [],
  author: null,
  environment: null,
  conclusion: null,
  state: null,
};
