import type { NotificationEvent } from '../domain/notifications.js';
import type { LoggedEvent, Plan, Run } from '../domain/types.js';
import type { AnnouncementData } from './format.js';
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
 */
export const ANNOUNCED_RUN_EVENTS = [
  'plan_proposed',
  'question_request',
  'tool_approval_request',
  'run_finished',
  'delivery_failed',
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
}

/** The plan an event concerns, for the notifier to look up before calling `announce`. */
export function planIdOf(event: LoggedEvent, run: Run | null): string | null {
  const fromData = typeof event.data.plan_id === 'string' ? event.data.plan_id : null;
  if (event.type === 'plan_proposed' || event.type === 'delivery_failed') return fromData;
  return run?.executesPlanId ?? null;
}

/** The notification an event makes, or null for one that makes none. Pure. */
export function announce(event: LoggedEvent, ctx: Context): Announcement | null {
  const { run, plan, publicUrl } = ctx;
  const link = (path: string) => uiLink(publicUrl, path);
  const runId = event.runId;
  const planId = plan?.id ?? planIdOf(event, run);
  const base = {
    run_id: runId,
    plan_id: planId,
    session_id: run?.sessionId ?? null,
  };
  const planLinks = (): Record<string, string> => ({
    ...(planId ? { plan: link(`/ui/plans/${encodeURIComponent(planId)}`) } : {}),
    run: link(`/ui/runs/${encodeURIComponent(runId)}`),
  });
  const planTitle = () =>
    title(plan?.markdown ?? (typeof event.data.markdown === 'string' ? event.data.markdown : '')) ||
    `plan ${planId ?? ''}`.trim();
  const d = event.data;

  switch (event.type) {
    case 'plan_proposed':
      if (!planId) return null;
      return {
        event: 'plan.pending',
        runId,
        planId,
        data: { ...base, title: planTitle(), links: planLinks() },
      };
    case 'question_request': {
      const questions = Array.isArray(d.questions) ? (d.questions as { question?: unknown }[]) : [];
      const first = questions.find((q) => typeof q?.question === 'string')?.question as string | undefined;
      return {
        event: 'question.pending',
        runId,
        planId,
        data: {
          ...base,
          ...(typeof d.question_id === 'string' ? { question_id: d.question_id } : {}),
          title:
            oneLine(first ?? 'a question') + (questions.length > 1 ? ` (+${questions.length - 1} more)` : ''),
          links: { question: link('/ui/questions'), run: link(`/ui/runs/${encodeURIComponent(runId)}`) },
        },
      };
    }
    case 'tool_approval_request': {
      const tool = typeof d.tool === 'string' ? d.tool : 'tool';
      return {
        event: 'tool_approval.pending',
        runId,
        planId,
        data: {
          ...base,
          ...(typeof d.tool_approval_id === 'string' ? { tool_approval_id: d.tool_approval_id } : {}),
          title: `${tool}: ${oneLine(toolSummary(d.input))}`,
          links: { tool_approval: link('/ui/tool-approvals'), ...planLinks() },
        },
      };
    }
    case 'run_finished': {
      if (!run?.executesPlanId || !planId) return null;
      const status = typeof d.status === 'string' ? d.status : run.status;
      const executed = status === 'completed';
      return {
        event: executed ? 'plan.executed' : 'plan.execution_failed',
        runId,
        planId,
        data: {
          ...base,
          title: planTitle(),
          status,
          ...(executed
            ? { commit: run.resultCommit, branch: run.resultCommit ? `drydock/${planId}` : null }
            : { error: clip(typeof d.error === 'string' ? d.error : (plan?.failureReason ?? status), 500) }),
          links: planLinks(),
        },
      };
    }
    case 'delivery_failed':
      if (!planId) return null;
      return {
        event: 'delivery.failed',
        runId,
        planId,
        data: {
          ...base,
          title: planTitle(),
          error: clip(typeof d.error === 'string' ? d.error : 'unknown error', 500),
          ...(typeof d.attempts === 'number' ? { attempts: d.attempts } : {}),
          links: planLinks(),
        },
      };
    default:
      return null;
  }
}

/** A plan's title: its first non-empty line without the heading marks, on one line, at most 120 characters. */
export function title(markdown: string): string {
  const line = markdown.split('\n').find((l) => l.trim() !== '') ?? '';
  return oneLine(line.replace(/^\s*#+\s*/, ''));
}

function oneLine(text: string): string {
  return clip(text.replace(/\s+/g, ' ').trim(), 120);
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** What a tool call would do, in a few words: the command, or the file it writes. */
function toolSummary(input: unknown): string {
  const i = (input ?? {}) as Record<string, unknown>;
  for (const key of ['command', 'file_path', 'path']) if (typeof i[key] === 'string') return i[key] as string;
  return JSON.stringify(input ?? null);
}
