import { dataOf, type RunEventMap } from '../domain/events.js';
import type { NotificationEvent } from '../domain/notifications.js';
import { clipText, NOTIFICATION_TITLE, planTitle } from '../domain/plan-title.js';
import type { LoggedEvent, Plan, Run } from '../domain/types.js';
import { approversOf } from '../plans/policy.js';
import { type Facts, NO_FACTS } from './facts.js';
import type { AnnouncementData, CommonData } from './format.js';
import { uiLink } from './webhooks.js';

/**
 * The run events that become notifications, and what each becomes:
 * - `plan_proposed` (a plan run captured a plan)          → plan.pending
 * - `question_request` (a run parked on AskUserQuestion)   → question.pending
 * - `tool_approval_request` (an execute run parked a call) → tool_approval.pending
 * - `run_finished` of an execute run                       → plan.executed when it completed (its result
 *   was recorded: ExecutePhase.finish turns a failed recording into a failed run), else plan.execution_failed
 * - `delivery_failed` (pushing or opening the pull request failed for good, on the execute run)
 *                                                          → delivery.failed
 * - `plan_decided` (one decision, on the planning run)     → plan.approved for an approval (each one, with the
 *   tally: a plan needing two approvals announces two), plan.rejected for a rejection; a revise request → nothing
 * - `delivery_completed` (the result was pushed, its pull request opened or its comment posted, on the execute
 *   run)                                                   → delivery.succeeded
 * Each event is in the run event log once, and the outbox row it makes is keyed (event, webhook): each is
 * announced once to each webhook that wants it.
 */
export const ANNOUNCED_RUN_EVENTS = [
  'plan_proposed',
  'question_request',
  'tool_approval_request',
  'run_finished',
  'delivery_failed',
  'plan_decided',
  'delivery_completed',
] as const;

export interface Announcement {
  event: NotificationEvent;
  runId: string;
  planId: string | null;
  data: AnnouncementData;
}

/** What the mapping reads besides the event: its run, and the plan it concerns (when there is one). */
export interface Context {
  run: Run | null;
  plan: Plan | null;
  publicUrl: string | null;
  /** Where the work came from, who decided, what it cost (facts.ts); absent: unknown (NO_FACTS). */
  facts?: Facts;
}

/** The plan an event concerns, for the notifier to look up before calling `announce`. */
export function planIdOf(event: LoggedEvent, run: Run | null): string | null {
  const named =
    dataOf(event, 'plan_proposed') ??
    dataOf(event, 'delivery_failed') ??
    dataOf(event, 'plan_decided') ??
    dataOf(event, 'delivery_completed');
  return named ? named.plan_id : (run?.executesPlanId ?? null);
}

/** What every announcement of one event shares: its ids, the common data fields and its links. */
interface Common {
  runId: string;
  planId: string | null;
  base: { run_id: string; plan_id: string | null; session_id: string | null } & CommonData;
  link: (path: string) => string;
  planLinks: () => Record<string, string>;
  /** The plan's title, from its markdown (or the proposed markdown), else its id. */
  title: () => string;
}

function commonOf(event: LoggedEvent, ctx: Context): Common {
  const { run, plan, publicUrl } = ctx;
  const facts = ctx.facts ?? NO_FACTS;
  const link = (path: string) => uiLink(publicUrl, path);
  const runId = event.runId;
  const planId = plan?.id ?? planIdOf(event, run);
  const proposed = dataOf(event, 'plan_proposed');
  const pr = facts.pullRequest;
  return {
    runId,
    planId,
    base: {
      run_id: runId,
      plan_id: planId,
      session_id: run?.sessionId ?? null,
      ...commonData(facts, event.at),
    },
    link,
    planLinks: () => ({
      ...(planId ? { plan: link(`/ui/plans/${encodeURIComponent(planId)}`) } : {}),
      run: link(`/ui/runs/${encodeURIComponent(runId)}`),
      ...(pr ? { pull_request: pr.url } : {}),
    }),
    title: () =>
      planTitle(plan?.markdown ?? proposed?.markdown ?? '', NOTIFICATION_TITLE) ||
      `plan ${planId ?? ''}`.trim(),
  };
}

/** The notification an event makes, or null for one that makes none. Pure. */
export function announce(event: LoggedEvent, ctx: Context): Announcement | null {
  const c = commonOf(event, ctx);
  if (dataOf(event, 'plan_proposed')) return planPending(c);
  const question = dataOf(event, 'question_request');
  if (question) return questionPending(question, c);
  const approval = dataOf(event, 'tool_approval_request');
  if (approval) return toolApprovalPending(approval, c);
  const finished = dataOf(event, 'run_finished');
  if (finished) return executionEnded(finished, ctx, c);
  const delivery = dataOf(event, 'delivery_failed');
  if (delivery) return deliveryFailed(delivery, c);
  const decided = dataOf(event, 'plan_decided');
  if (decided) return planDecided(decided, ctx, c);
  const completed = dataOf(event, 'delivery_completed');
  if (completed) return deliverySucceeded(completed, ctx, c);
  return null;
}

/**
 * What every payload carries (CommonData) from the facts of its event. The approvers are those who approved
 * by `at` (the event's time): one who approves before the event is collected is not in an earlier event's
 * payload, so a payload does not depend on when it was collected.
 */
export function commonData(facts: Facts, at = Number.POSITIVE_INFINITY): CommonData {
  return {
    repository: facts.repository,
    workspace: facts.workspace,
    pull_request: facts.pullRequest,
    job: facts.job,
    trigger: facts.trigger,
    requested_by: facts.requestedBy,
    approvers: approversOf(facts.decisions.filter((d) => d.createdAt <= at)),
    cost: { plan_usd: facts.cost.planUsd, execution_usd: facts.cost.executionUsd },
  };
}

function planPending(c: Common): Announcement | null {
  const { runId, planId, base } = c;
  if (!planId) return null;
  return { event: 'plan.pending', runId, planId, data: { ...base, title: c.title(), links: c.planLinks() } };
}

function questionPending(question: RunEventMap['question_request'], c: Common): Announcement {
  const { runId, planId, base, link } = c;
  const questions = question.questions ?? [];
  const first = questions[0]?.question;
  return {
    event: 'question.pending',
    runId,
    planId,
    data: {
      ...base,
      ...(question.question_id !== undefined ? { question_id: question.question_id } : {}),
      title:
        oneLine(first ?? 'a question') + (questions.length > 1 ? ` (+${questions.length - 1} more)` : ''),
      links: { question: link('/ui/questions'), run: link(`/ui/runs/${encodeURIComponent(runId)}`) },
    },
  };
}

function toolApprovalPending(approval: RunEventMap['tool_approval_request'], c: Common): Announcement {
  const { runId, planId, base, link } = c;
  const tool = approval.tool ?? 'tool';
  return {
    event: 'tool_approval.pending',
    runId,
    planId,
    data: {
      ...base,
      ...(approval.tool_approval_id !== undefined ? { tool_approval_id: approval.tool_approval_id } : {}),
      title: `${tool}: ${oneLine(toolSummary(approval.input))}`,
      links: {
        // The call's own page (allow/deny there); the list when an old event names no id.
        tool_approval: link(
          approval.tool_approval_id !== undefined
            ? `/ui/tool-approvals/${encodeURIComponent(approval.tool_approval_id)}`
            : '/ui/tool-approvals',
        ),
        ...c.planLinks(),
      },
    },
  };
}

function executionEnded(finished: RunEventMap['run_finished'], ctx: Context, c: Common): Announcement | null {
  const { run, plan } = ctx;
  const { runId, planId, base } = c;
  if (!run?.executesPlanId || !planId) return null;
  const status = finished.status ?? run.status;
  const executed = status === 'completed';
  return {
    event: executed ? 'plan.executed' : 'plan.execution_failed',
    runId,
    planId,
    data: {
      ...base,
      title: c.title(),
      status,
      ...(executed
        ? { commit: run.resultCommit, branch: run.resultCommit ? `drydock/${planId}` : null }
        : { error: clipText(finished.error ?? plan?.failureReason ?? status, 500, CUT) }),
      links: c.planLinks(),
    },
  };
}

function deliveryFailed(delivery: RunEventMap['delivery_failed'], c: Common): Announcement | null {
  const { runId, planId, base } = c;
  if (!planId) return null;
  return {
    event: 'delivery.failed',
    runId,
    planId,
    data: {
      ...base,
      title: c.title(),
      error: clipText(delivery.error ?? 'unknown error', 500, CUT),
      ...(delivery.attempts !== undefined ? { attempts: delivery.attempts } : {}),
      links: c.planLinks(),
    },
  };
}

/**
 * An approval (plan.approved, with the approvals counted up to it and the plan's status after it: still
 * pending_approval until the quorum, then approved) or a rejection (plan.rejected, with the comment as the
 * reason). A revise request announces nothing (the next round's plan.pending does).
 */
function planDecided(decided: RunEventMap['plan_decided'], ctx: Context, c: Common): Announcement | null {
  const { runId, planId, base } = c;
  if (!planId || decided.decision === 'revise') return null;
  const common = { ...base, title: c.title(), plan_status: decided.plan_status };
  if (decided.decision === 'reject') {
    return {
      event: 'plan.rejected',
      runId,
      planId,
      data: {
        ...common,
        rejected_by: decided.identity,
        reason: decided.comment === null ? null : clipText(decided.comment, 500, CUT),
        links: c.planLinks(),
      },
    };
  }
  // The approvals up to this one: a later approval, already stored when this event is read, does not count.
  const decisions = (ctx.facts ?? NO_FACTS).decisions;
  const at = decisions.findIndex((d) => d.kind === 'approve' && d.identity === decided.identity);
  const upTo = approversOf(
    at < 0 ? [...decisions, { kind: 'approve', identity: decided.identity }] : decisions.slice(0, at + 1),
  );
  return {
    event: 'plan.approved',
    runId,
    planId,
    data: {
      ...common,
      approvers: upTo,
      approved_by: decided.identity,
      approvals: { count: upTo.length, required: ctx.plan?.approvalsRequired ?? upTo.length },
      ...(decided.comment !== null ? { comment: clipText(decided.comment, 500, CUT) } : {}),
      links: c.planLinks(),
    },
  };
}

/**
 * The result delivered: where it went (`delivery`), with the pull request it opened (base, stacked) or the
 * one it pushed onto (head: the pull request the work came from), else the branch and commit pushed.
 */
function deliverySucceeded(
  done: RunEventMap['delivery_completed'],
  ctx: Context,
  c: Common,
): Announcement | null {
  const { runId, planId, base } = c;
  if (!planId) return null;
  const origin = (ctx.facts ?? NO_FACTS).pullRequest;
  const target = done.target ?? null;
  const pr = done.pull_request_url
    ? {
        number: ctx.plan?.delivery?.pullRequestNumber ?? pullNumber(done.pull_request_url),
        url: done.pull_request_url,
      }
    : target === 'head' && origin
      ? { number: origin.number, url: origin.url }
      : null;
  const comment = ctx.plan?.delivery?.commentUrl ?? null;
  return {
    event: 'delivery.succeeded',
    runId,
    planId,
    data: {
      ...base,
      title: c.title(),
      commit: done.commit,
      branch: done.branch,
      delivery: {
        target,
        branch: done.branch,
        commit: done.commit,
        remote: done.remote,
        pull_request: pr,
        comment_url: comment,
      },
      links: { ...c.planLinks(), ...(pr ? { delivered: pr.url } : comment ? { delivered: comment } : {}) },
    },
  };
}

/** The number at the end of a pull request's address (…/pull/12), or null. */
function pullNumber(url: string): number | null {
  const m = /\/pull\/(\d+)\/?$/.exec(url);
  return m ? Number(m[1]) : null;
}

/** Marks text cut short in a notification. */
const CUT = NOTIFICATION_TITLE.cutMark;

/** Free text (a question, a command) on one line of at most 120 characters, as a notification's title. */
function oneLine(text: string): string {
  return clipText(text.replace(/\s+/g, ' ').trim(), NOTIFICATION_TITLE.max, CUT);
}

/** What a tool call would do, in a few words: the command, or the file it writes. */
function toolSummary(input: unknown): string {
  const i = (input ?? {}) as Record<string, unknown>;
  for (const key of ['command', 'file_path', 'path']) if (typeof i[key] === 'string') return i[key] as string;
  return JSON.stringify(input ?? null);
}
