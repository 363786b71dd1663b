import { EVENT_FAMILIES, type EventFamily, type EventReading, ignored } from './context.js';
import { deploymentStatusEvent } from './deployment.js';
import { checkSuiteEvent, workflowRunEvent } from './failures.js';
import { issuesEvent } from './issues.js';
import { pushEvent } from './push.js';
import { at, str } from './read.js';
import { releaseEvent } from './release.js';

export { type ButtonPress, type ButtonReading, buttonPress, madeBy } from './check-run.js';
export type { EventContext, EventFacts, EventFamily, EventReading, PlanTarget } from './context.js';
export { EVENT_FAMILIES } from './context.js';
export { commentBody, issueCommentEvent, onPullRequest } from './issues.js';
export { at, SHA, str } from './read.js';

/**
 * The actions of each event that may fire a trigger (a trigger names `<event>` for all of them, or
 * `<event>.<action>`); a push has no action. `pull_request` takes any action, as it always did; an
 * issue_comment fires only through a `/drydock plan <text>` command.
 */
export const EVENT_ACTIONS: Record<EventFamily, readonly string[]> = {
  issues: [
    'opened',
    'edited',
    'reopened',
    'closed',
    'labeled',
    'unlabeled',
    'assigned',
    'unassigned',
    'milestoned',
    'demilestoned',
  ],
  issue_comment: ['created'],
  check_suite: ['completed'],
  workflow_run: ['completed'],
  release: ['published', 'released', 'prereleased'],
  push: [],
  deployment_status: ['created'],
};

export const isEventFamily = (name: string): name is EventFamily =>
  (EVENT_FAMILIES as readonly string[]).includes(name);

/**
 * Why a delivery of `event` (an event family other than issue_comment, whose commands are read apart) starts
 * nothing, when its payload alone tells: an action no trigger can name. null: it may fire a trigger.
 */
export function unhandledAction(event: EventFamily, payload: unknown): string | null {
  const action = str(at(payload, 'action'));
  const actions = EVENT_ACTIONS[event];
  if (!actions.length) return null;
  return action && actions.includes(action) ? null : `${event}.${action ?? '(none)'} fires no trigger`;
}

/** Reads a delivery of `event` (not issue_comment: see issueCommentEvent) into what its triggers need. */
export function readEvent(event: EventFamily, payload: unknown): EventReading {
  const skip = unhandledAction(event, payload);
  if (skip) return ignored(skip);
  const action = str(at(payload, 'action')) ?? '';
  switch (event) {
    case 'issues':
      return issuesEvent(payload, action);
    case 'check_suite':
      return checkSuiteEvent(payload);
    case 'workflow_run':
      return workflowRunEvent(payload);
    case 'release':
      return releaseEvent(payload, action);
    case 'push':
      return pushEvent(payload);
    case 'deployment_status':
      return deploymentStatusEvent(payload);
    case 'issue_comment':
      return ignored('issue comments fire triggers only through /drydock plan');
  }
}
