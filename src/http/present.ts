import { mcpToolOf } from '../domain/mcp-names.js';
import { planStatusAt } from '../domain/plan-status.js';
import { LIST_TITLE, planTitle } from '../domain/plan-title.js';
import type {
  CronJob,
  Decision,
  Plan,
  PlanDelivery,
  Question,
  Run,
  RunEvent,
  Session,
  SlotRecord,
  ToolApproval,
  WebhookDelivery,
} from '../domain/types.js';
import { shownRunSource } from '../domain/types.js';
import { uncommittedNotice } from '../domain/uncommitted.js';
import type { PlanContext, PlanDiff, PlanSource } from '../plans/plan-context.js';
import { type Freshness, movedOnMessage, staleMessage } from '../plans/staleness.js';
import { upcomingSlots } from '../scheduler/next-fire.js';
import type {
  DecisionJson,
  FreshnessJson,
  JobJson,
  PlanContextJson,
  PlanDeliveryJson,
  PlanJson,
  PlanSummaryJson,
  QuestionJson,
  RunJson,
  SessionJson,
  SlotJson,
  ToolApprovalJson,
  WebhookDeliveryJson,
} from './contract/index.js';

// Domain records to their JSON form: snake_case, ISO-8601 UTC times. Each presenter returns the type of its
// contract schema (src/http/contract/), so the compiler and the drift test hold the two together.

export function iso(t: number): string;
export function iso(t: number | null): string | null;
export function iso(t: number | null): string | null {
  return t === null ? null : new Date(t).toISOString();
}

export const presentSession = (s: Session): SessionJson => ({
  id: s.id,
  name: s.name,
  workspace: s.workspace,
  owner: s.owner,
  status: s.status,
  defaults: s.defaults,
  limits: s.limits,
  created_at: iso(s.createdAt),
  closed_at: iso(s.closedAt),
  made_by_trigger: s.scopeKey !== null,
});

export const presentJob = (j: CronJob): JobJson => ({
  id: j.id,
  session_id: j.sessionId,
  name: j.name,
  cron: j.cron,
  effective_cron: j.effectiveCron,
  timezone: j.timezone,
  recurring: j.recurring,
  approximate: j.approximate,
  overlap: j.overlap,
  jitter: { max_seconds: j.jitterMaxSeconds, approximate: j.approximate },
  prompt: j.prompt,
  options: j.options,
  status: j.status,
  created_by: j.createdBy,
  created_at: iso(j.createdAt),
  expires_at: iso(j.expiresAt),
  next_fire_at: iso(j.nextNominalAt),
  next_fire_jittered_at: iso(j.nextDueAt),
  next_fire_final: j.nextNominalAt === null ? null : j.nextFinal,
  next_fire_times: upcomingSlots(j, 3).map((t) => iso(t)),
  pending_slot_at: iso(j.pendingSlotAt),
  pending_coalesced: j.pendingCoalesced,
  buffered_slots: j.bufferedSlots.map((t) => iso(t)),
  last_slot_at: iso(j.lastSlotAt),
  fire_count: j.fireCount,
  trigger_id: j.triggerId,
  renewals: j.renewals,
  renewed_at: iso(j.renewedAt),
  renewed_by: j.renewedBy,
  // How to keep a recurring job past its expiry (null when it has none).
  renew: j.expiresAt === null ? null : `POST /v1/jobs/${j.id}/renew (drydock jobs renew ${j.id})`,
});

export const presentRun = (r: Run): RunJson => ({
  id: r.id,
  session_id: r.sessionId,
  job_id: r.jobId,
  slot_at: iso(r.slotAt),
  source: shownRunSource(r.source),
  phase: r.phase,
  status: r.status,
  prompt: r.prompt,
  requested_by: r.requestedBy,
  coalesced_slots: r.coalescedSlots,
  created_at: iso(r.createdAt),
  started_at: iso(r.startedAt),
  finished_at: iso(r.finishedAt),
  error: r.error,
  model: r.model,
  turns: r.turns,
  usage: r.usage,
  cost_usd: r.costUsd,
  plan_id: r.planId,
  attempt: r.attempt,
  // From the first start to the end; of it, active (executing) and waiting (for people, parked).
  duration_ms: r.startedAt !== null && r.finishedAt !== null ? r.finishedAt - r.startedAt : null,
  active_ms: r.activeMs,
  waiting_ms:
    r.startedAt !== null && r.finishedAt !== null
      ? Math.max(0, r.finishedAt - r.startedAt - r.activeMs)
      : null,
  revises_plan_id: r.revisesPlanId,
  executes_plan_id: r.executesPlanId,
  execute_mode: r.executeMode,
  result_commit: r.resultCommit,
  diff_stat: r.diffStat,
  changed_files: r.changedFiles,
  waiting: r.waitingOn ? { on: r.waitingOn.on, until: iso(r.waitingOn.until)! } : null,
});

export const presentQuestion = (q: Question): QuestionJson => ({
  id: q.id,
  run_id: q.runId,
  session_id: q.sessionId,
  status: q.status,
  // Stored as the AskUserQuestion input ({questions}); the oldest rows hold the list itself.
  questions: ((q.questions as { questions?: unknown }).questions ?? q.questions) as QuestionJson['questions'],
  answers: q.answers,
  answered_by: q.answeredBy,
  created_at: iso(q.createdAt),
  expires_at: iso(q.expiresAt),
  resolved_at: iso(q.resolvedAt),
});

export const presentPlanSummary = (p: Plan, now: number): PlanSummaryJson => {
  const { markdown: _markdown, ...rest } = presentPlan(p, now);
  return { ...rest, title: planTitle(p.markdown, LIST_TITLE) };
};

export const presentPlan = (p: Plan, now: number): PlanJson => ({
  id: p.id,
  // A pending plan past its expiry reads expired, even before the sweep has written it so.
  status: planStatusAt(p, now),
  round: p.round,
  previous_plan_id: p.previousPlanId,
  session_id: p.sessionId,
  job_id: p.jobId,
  trigger_id: p.triggerId,
  source: shownRunSource(p.source),
  run_id: p.runId,
  requested_by: p.requestedBy,
  owner: p.owner,
  markdown: p.markdown,
  sha256: p.sha256,
  workspace_commit: p.workspaceCommit,
  execution_base: p.executionBase ?? null,
  uncommitted_changes: presentUncommitted(p),
  approvals_required: p.approvalsRequired,
  approvals: p.approvals ?? 0,
  allow_self_approval: p.allowSelfApproval,
  execute_mode: p.executeMode,
  network: p.network.length > 0,
  network_domains: p.network,
  created_at: iso(p.createdAt),
  expires_at: iso(p.expiresAt),
  decided_at: iso(p.decidedAt),
  failure_reason: p.failureReason,
  delivery: presentPlanDelivery(p.delivery ?? null),
});

/** What the plan's git workspace had uncommitted when it was made (domain/uncommitted.ts); null: nothing. */
const presentUncommitted = (p: Plan): PlanJson['uncommitted_changes'] => {
  const message = uncommittedNotice(p);
  return message && p.uncommitted
    ? { count: p.uncommitted.count, paths: p.uncommitted.paths, message }
    : null;
};

/** Whether a pending plan may still be approved (src/plans/staleness.ts), as the API says it. */
export const presentFreshness = (p: Pick<Plan, 'id' | 'workspaceCommit'>, f: Freshness): FreshnessJson => ({
  state: f.state,
  head: f.head,
  commits_behind: f.commitsBehind,
  changed_read_files: f.changedReadFiles,
  reason: f.reason,
  message: f.state === 'stale' ? staleMessage(p, f) : f.state === 'moved_on' ? movedOnMessage(f) : 'current',
});

/** Where an executed plan's result went (src/delivery/); null while not looked at, or when delivery is off. */
export const presentPlanDelivery = (d: PlanDelivery | null): PlanDeliveryJson | null =>
  d === null || d.status === 'off'
    ? null
    : {
        status: d.status,
        target: d.target,
        branch: d.branch,
        remote: d.remote,
        commit: d.commit,
        pushed_at: iso(d.pushedAt),
        pull_request_url: d.pullRequestUrl,
        pull_request_number: d.pullRequestNumber,
        comment_url: d.commentUrl,
        attempts: d.attempts,
        last_error: d.lastError,
        next_attempt_at: iso(d.nextAttemptAt),
      };

export const presentDecision = (d: Decision): DecisionJson => ({
  id: d.id,
  kind: d.kind,
  identity: d.identity,
  comment: d.comment,
  sha256: d.sha256,
  created_at: iso(d.createdAt),
});

export const presentToolApproval = (a: ToolApproval): ToolApprovalJson => ({
  id: a.id,
  run_id: a.runId,
  session_id: a.sessionId,
  plan_id: a.planId,
  tool_use_id: a.toolUseId,
  tool: a.tool,
  input: a.input,
  mcp: mcpToolOf(a.tool),
  status: a.status,
  message: a.message,
  decided_by: a.decidedBy,
  created_at: iso(a.createdAt),
  expires_at: iso(a.expiresAt),
  decided_at: iso(a.decidedAt),
});

export const presentEvent = (e: RunEvent) => ({ seq: e.seq, type: e.type, at: iso(e.at), ...e.data });

export const presentSlot = (s: SlotRecord): SlotJson => ({
  slot_at: iso(s.slotAt),
  last_slot_at: iso(s.lastSlotAt),
  slots: s.slots,
  outcome: s.outcome,
  run_id: s.runId,
  recorded_at: iso(s.recordedAt),
});

/**
 * A webhook delivery or fire, with `triggerIds`, the triggers its runs were started by. A GitHub delivery is
 * stored with no trigger of its own (one can fire several): it names the one it fired, when it fired one.
 */
export const presentWebhookDelivery = (d: WebhookDelivery, triggerIds: string[]): WebhookDeliveryJson => ({
  id: d.id,
  source: d.source,
  key: d.key,
  event: d.event,
  trigger_id: d.triggerId ?? (triggerIds.length === 1 ? triggerIds[0]! : null),
  trigger_ids: triggerIds,
  outcome: d.outcome,
  detail: d.detail,
  subject: d.subject,
  run_ids: d.runIds,
  received_at: iso(d.receivedAt),
  processed_at: iso(d.processedAt),
});

/** The approver's context of a plan (src/plans/plan-context.ts) in its JSON form. */
export const presentPlanContext = (c: PlanContext): PlanContextJson => ({
  source: c.source && presentPlanSource(c.source),
  rounds: c.rounds.map((r) => ({
    round: r.round,
    plan_id: r.planId,
    run_id: r.runId,
    status: r.status,
    created_at: iso(r.createdAt),
    feedback: r.feedback && {
      identity: r.feedback.identity,
      comment: r.feedback.comment,
      at: iso(r.feedback.at),
    },
  })),
  files: c.files.map((f) => ({
    tool: f.tool,
    path: f.path,
    pattern: f.pattern,
    glob: f.glob,
    round: f.round,
    calls: f.calls,
    errors: f.errors,
  })),
  mcp_calls: c.mcpCalls.map((m) => ({
    server: m.server,
    tool: m.tool,
    input: m.input,
    round: m.round,
    calls: m.calls,
    errors: m.errors,
  })),
  questions: c.questions.map((q) => ({
    id: q.id,
    run_id: q.runId,
    round: q.round,
    status: q.status,
    created_at: iso(q.createdAt),
    resolved_at: iso(q.resolvedAt),
    answered_by: q.answeredBy,
    items: q.items.map((i) => ({
      question: i.question,
      header: i.header,
      multi_select: i.multiSelect,
      options: i.options,
      answer: i.answer,
    })),
  })),
  cost: {
    runs: c.cost.runs.map((r) => ({
      round: r.round,
      run_id: r.runId,
      status: r.status,
      model: r.model,
      turns: r.turns,
      usage: r.usage,
      cost_usd: r.costUsd,
    })),
    total: { turns: c.cost.total.turns, usage: c.cost.total.usage, cost_usd: c.cost.total.costUsd },
  },
  decisions: c.decisions.map(presentDecision),
  diff: c.diff && presentPlanDiff(c.diff),
});

/** Where a plan's work came from (plans/plan-context.ts `PlanSource`) in its JSON form. */
const presentPlanSource = (s: PlanSource): NonNullable<PlanContextJson['source']> => ({
  kind: s.kind,
  run_id: s.runId,
  requested_by: s.requestedBy,
  prompt: s.prompt,
  job: s.job && {
    id: s.job.id,
    exists: s.job.exists,
    cron: s.job.cron,
    timezone: s.job.timezone,
    slot_at: iso(s.job.slotAt),
    coalesced_slots: s.job.coalescedSlots,
  },
  trigger: s.trigger && {
    id: s.trigger.id,
    name: s.trigger.name,
    kind: s.trigger.kind,
    exists: s.trigger.exists,
  },
  delivery: s.delivery && {
    id: s.delivery.id,
    source: s.delivery.source,
    key: s.delivery.key,
    event: s.delivery.event,
    outcome: s.delivery.outcome,
    received_at: iso(s.delivery.receivedAt),
  },
  fired_text: s.firedText,
  pull_request: s.pullRequest && {
    repository: s.pullRequest.repository,
    number: s.pullRequest.number,
    title: s.pullRequest.title,
    html_url: s.pullRequest.url,
    author: s.pullRequest.author,
    head_ref: s.pullRequest.headRef,
    base_ref: s.pullRequest.baseRef,
    head_sha: s.pullRequest.headSha,
    base_sha: s.pullRequest.baseSha,
    draft: s.pullRequest.draft,
    labels: s.pullRequest.labels,
  },
});

/** A round's changes against the previous round's text in their JSON form. */
const presentPlanDiff = (d: PlanDiff): NonNullable<PlanContextJson['diff']> => ({
  previous_plan_id: d.previousPlanId,
  previous_round: d.previousRound,
  added: d.added,
  removed: d.removed,
  hunks: d.hunks.map((h) => ({
    old_start: h.oldStart,
    old_lines: h.oldLines,
    new_start: h.newStart,
    new_lines: h.newLines,
    lines: h.lines.map((l) => ({
      op: l.op,
      text: l.text,
      old_line: l.oldLine ?? null,
      new_line: l.newLine ?? null,
    })),
  })),
});
