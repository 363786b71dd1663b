import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Identity } from '../../auth/tokens.js';
import { allows } from '../../auth/tokens.js';
import { planStatusAt } from '../../domain/plan-status.js';
import { planTitle } from '../../domain/plan-title.js';
import type {
  Decision,
  DecisionKind,
  DeliveryTarget,
  Plan,
  PlanDelivery,
  PlanDeliveryStatus,
  Run,
  TokenUsage,
} from '../../domain/types.js';
import type { AppDeps } from '../../http/deps.js';
import { DecisionError } from '../../plans/decisions.js';
import type { McpActivity } from '../../plans/mcp-activity.js';
import {
  type AskedQuestion,
  type FileActivity,
  type PlanContext,
  type PlanDiff,
  type PlanSource,
  planContext,
  type RunUsage,
} from '../../plans/plan-context.js';
import { type Approver, approvalRefusal, approversWith, decideRefusal } from '../../plans/policy.js';
import { type Freshness, movedOnMessage, pendingFreshness, staleMessage } from '../../plans/staleness.js';
import type { UiEnv } from '../env.js';
import { pageStatus } from '../errors.js';
import { field } from '../form.js';
import { html, type SafeHtml } from '../html.js';
import { alertBox, csrfField, time, uiPath, usd } from '../layout.js';
import { renderMarkdown } from '../markdown.js';
import { statusTag, statusWords } from '../status-words.js';
import { executionSection } from './execution.js';
import { memorySection } from './memory.js';
import { modelNotice } from './model-notice.js';
import { signedIn, type UiContext } from './page-context.js';
import { factsList, webLink } from './plan-facts.js';
import { uncommittedNote } from './plan-uncommitted.js';
import { waitingOf } from './waiting.js';

const SHA256 = /^[0-9a-f]{64}$/;
const LIMITS: Record<DecisionKind, number> = { approve: 10_000, reject: 10_000, revise: 20_000 };

const DONE: Record<string, string> = {
  approve: 'Your approval was recorded.',
  reject: 'The plan was rejected.',
  revise: 'Revision requested: a new planning round has started.',
};

/** The choices of the decision box, in the order shown, with the words a person reads. */
const CHOICES: [DecisionKind, string][] = [
  ['approve', 'Approve'],
  ['revise', 'Request changes'],
  ['reject', 'Reject'],
];

/** What the person typed, put back into the form when a decision is refused. */
interface Draft {
  kind: DecisionKind | null;
  text: string;
}

interface Shown {
  status?: ContentfulStatusCode;
  error?: string;
  notice?: string;
  draft?: Draft;
}

/** Who the viewer is to the plan policy (src/plans/policy.ts): their identity and their role. */
const asker = (viewer: Identity): Approver => ({ identity: viewer.identity, roles: [viewer.role] });

/**
 * Why this viewer may not approve this plan, or null when they may: the plan policy's reason
 * (src/plans/policy.ts, the rule the decision itself enforces), asked in advance so the page offers only
 * what will be accepted.
 */
export function cannotApprove(viewer: Identity, plan: Plan, decisions: readonly Decision[]): string | null {
  return approvalRefusal(plan, decisions, asker(viewer))?.reason ?? null;
}

/** A reason as a sentence of its own. */
const sentence = (reason: string) => `${reason.charAt(0).toUpperCase()}${reason.slice(1)}.`;

/** Why a plan cannot be decided at all any more, or null while it is pending. */
function closedReason(plan: Plan, now: number): string | null {
  const status = planStatusAt(plan, now);
  if (status === 'pending_approval') return null;
  if (status === 'expired') return 'This plan has expired';
  if (status === 'revision_requested') return 'Changes were requested on this plan (a new round replaces it)';
  return `This plan is ${statusWords('plan', status)}`;
}

/** GET /ui/plans/:id, its decision box (POST /ui/plans/:id/decide) and the older per-kind endpoints. */
export function planRoutes(ctx: UiContext): void {
  const { app, deps, guard } = ctx;

  app.get('/plans/:id', guard, (c) => {
    const done = c.req.query('done');
    return showPlan(deps, c, c.req.param('id'), {
      notice: done && Object.hasOwn(DONE, done) ? DONE[done] : undefined,
    });
  });

  // The decision box: one comment and a choice.
  app.post('/plans/:id/decide', guard, (c) => {
    const form = c.get('form');
    const choice = field(form, 'decision');
    const kind = CHOICES.some(([k]) => k === choice) ? (choice as DecisionKind) : null;
    const text = (field(form, 'comment') ?? '').trim();
    return decideFromForm(deps, c, c.req.param('id'), { kind, text }, field(form, 'sha256'));
  });

  // A stale plan from a job: rejected, and its job run again on the workspace's head.
  app.post('/plans/:id/plan-again', guard, (c) => planAgain(deps, c, c.req.param('id')));

  // The per-kind endpoints of the earlier page, kept as aliases of the decision box (a revision's text was
  // sent as `feedback` there).
  for (const kind of ['approve', 'reject', 'revise'] as const) {
    app.post(`/plans/:id/${kind}`, guard, (c) => {
      const form = c.get('form');
      const text = (
        field(form, kind === 'revise' ? 'feedback' : 'comment') ??
        field(form, 'comment') ??
        ''
      ).trim();
      return decideFromForm(deps, c, c.req.param('id'), { kind, text }, field(form, 'sha256'));
    });
  }
}

/** The plan page. Read only: a plan past its expiry shows as expired (planStatusAt); the daemon's sweep writes it so. */
async function showPlan(deps: AppDeps, c: Context<UiEnv>, id: string, shown: Shown = {}): Promise<Response> {
  const { store } = deps;
  const now = deps.clock.now();
  const plan = await store.getPlan(id);
  if (!plan) {
    const body = html`<h1>Plan not found</h1>${alertBox(`There is no plan ${id}.`)}<p><a href="/ui">Back to the queue</a></p>`;
    return c.html(signedIn(c, null, 'Plan not found', body), 404);
  }
  const [runs, session, context, execution, frame, freshness] = await Promise.all([
    store.listPlanRuns(plan),
    store.getSession(plan.sessionId),
    planContext(store, plan),
    executionSection(deps, plan),
    store.loadFrame(plan.conversationId),
    pendingFreshness(store, plan, now),
  ]);
  const decisions = context.decisions;
  const [waits, jobExists] = await Promise.all([
    waitingOf(deps, runs),
    plan.jobId ? store.getJob(plan.jobId).then((j) => j !== null) : false,
  ]);
  const title = planTitle(plan.markdown);
  const body = html`<h1>${title}</h1>
${alertBox(shown.error, shown.notice)}
${modelNotice(deps.config, [...runs.map((r) => r.model), session?.defaults.model], now)}
${factsList(deps, { plan, session, decisions, runs, cost: context.cost, waits, now })}
${freshnessNote(plan, freshness, freshness?.state === 'stale' ? planAgainBox(c, plan, jobExists) : '')}
${uncommittedNote(plan)}
${sourceSection(context.source)}
${memorySection(frame)}
${roundsSection(context)}
<h2 id="plan-text">The plan</h2>
<article class="plan-body" aria-labelledby="plan-text">
${renderMarkdown(plan.markdown)}
</article>
${execution}
${deliverySection(plan.delivery ?? null)}
${filesSection(context.files)}
${mcpCallsSection(context.mcpCalls)}
${questionsSection(context.questions)}
${costSection(context.cost)}
${decisionBox(c, plan, decisions, now, shown.draft, freshness)}
${decisionsSection(decisions)}
${runsSection(plan, runs)}`;
  return c.html(signedIn(c, null, title, body), shown.status ?? 200);
}

function decisionsSection(decisions: readonly Decision[]): SafeHtml {
  return html`<h2 id="decisions">Decisions</h2>
${
  decisions.length
    ? html`<table aria-labelledby="decisions"><thead><tr><th scope="col">Decision</th><th scope="col">By</th><th scope="col">When</th><th scope="col">Comment</th><th scope="col">sha256 seen</th></tr></thead>
<tbody>${decisions.map(
        (d) =>
          html`<tr><td>${decisionWords(d.kind)}</td><td>${d.identity}</td><td>${time(d.createdAt)}</td><td class="comment">${d.comment ?? ''}</td><td><code>${d.sha256.slice(0, 12)}</code></td></tr>`,
      )}</tbody></table>`
    : html`<p>No decisions yet.</p>`
}`;
}

function runsSection(plan: Plan, runs: readonly Run[]): SafeHtml {
  return html`<h2>Runs</h2>
<ul class="runs">${runs.map(
    (r) =>
      html`<li><a href="${uiPath('runs', r.id)}">${r.phase} run ${r.id}</a> — ${statusTag('run', r.status)}${
        r.id === plan.runId ? ' (proposed this plan)' : ''
      }</li>`,
  )}</ul>`;
}

/** What the form asked for, checked for what the page can tell; the message of the first problem, or null. */
function formProblem(kind: DecisionKind | null, text: string, sha256: string | undefined): string | null {
  if (kind === null) return 'Choose a decision: approve, request changes or reject.';
  if (kind === 'approve' && (!sha256 || !SHA256.test(sha256)))
    return 'The approval did not say which plan text it approves (sha256).';
  if (kind === 'reject' && !text) return 'A rejection needs a comment.';
  if (kind === 'revise' && !text) return 'A revision needs feedback.';
  if (text.length > LIMITS[kind]) return `That text is too long (at most ${LIMITS[kind]} characters).`;
  return null;
}

/** One decision from a form: checked here for what the page can tell, then by PlanDecisions. */
async function decideFromForm(
  deps: AppDeps,
  c: Context<UiEnv>,
  id: string,
  draft: Draft,
  sha256: string | undefined,
): Promise<Response> {
  const viewer = c.get('viewer');
  const kind = draft.kind;
  const barred = decideRefusal(asker(viewer));
  if (barred)
    return showPlan(deps, c, id, { status: 403, error: `Your role (${viewer.role}) may not decide plans.` });
  const error = formProblem(kind, draft.text, sha256);
  if (error || kind === null) return showPlan(deps, c, id, { status: 422, error: error ?? undefined, draft });
  try {
    await deps.plans.decide(id, kind, {
      identity: viewer.identity,
      comment: draft.text || undefined,
      sha256: kind === 'reject' ? undefined : sha256,
    });
  } catch (err) {
    if (!(err instanceof DecisionError)) throw err;
    return showPlan(deps, c, id, { status: pageStatus(err), error: err.message, draft });
  }
  return c.redirect(`${uiPath('plans', id)}?done=${kind}`, 303);
}

/** Rejects a stale plan of a job (with the person's comment, or a default one) and runs the job again. */
async function planAgain(deps: AppDeps, c: Context<UiEnv>, id: string): Promise<Response> {
  const viewer = c.get('viewer');
  const text = (field(c.get('form'), 'comment') ?? '').trim() || 'Stale: planned again on the current head.';
  if (!allows(viewer.role, 'operate') || !allows(viewer.role, 'decide'))
    return showPlan(deps, c, id, { status: 403, error: `Your role (${viewer.role}) may not run jobs.` });
  if (text.length > LIMITS.reject)
    return showPlan(deps, c, id, {
      status: 422,
      error: `That text is too long (at most ${LIMITS.reject} characters).`,
    });
  const plan = await deps.store.getPlan(id);
  const job = plan?.jobId ? await deps.store.getJob(plan.jobId) : null;
  if (!plan || !job)
    return showPlan(deps, c, id, { status: 409, error: 'This plan has no job to run again.' });
  const freshness = await pendingFreshness(deps.store, plan, deps.clock.now());
  if (freshness?.state !== 'stale')
    return showPlan(deps, c, id, { status: 409, error: 'Only a stale plan is planned again from here.' });
  try {
    await deps.plans.decide(id, 'reject', { identity: viewer.identity, comment: text });
  } catch (err) {
    if (!(err instanceof DecisionError)) throw err;
    return showPlan(deps, c, id, { status: pageStatus(err), error: err.message });
  }
  const run = await deps.jobs.runNow(job.id, viewer.identity);
  return c.redirect(uiPath('runs', run.id), 303);
}

const decisionWords = (kind: DecisionKind) =>
  kind === 'approve' ? 'approved' : kind === 'reject' ? 'rejected' : 'requested changes';

/**
 * One form: a comment and a choice. It offers only what this viewer may do; what they may not do is shown
 * disabled with the reason, or, when nothing may be done, replaced by the reason.
 */
function decisionBox(
  c: Context<UiEnv>,
  plan: Plan,
  decisions: Decision[],
  now: number,
  draft: Draft | undefined,
  freshness: Freshness | null,
) {
  const viewer = c.get('viewer');
  const closed = closedReason(plan, now);
  if (closed) {
    return html`<h2 id="decide">Decide</h2><p class="hint" id="decide-closed">${closed}: it can no longer be decided.</p>`;
  }
  const barred = decideRefusal(asker(viewer));
  if (barred) {
    return html`<h2 id="decide">Decide</h2><p class="hint" id="decide-closed">${sentence(barred.reason)}</p>`;
  }
  // A stale plan is not offered for approval at all (the approval would be refused 409 stale).
  const stale = freshness?.state === 'stale';
  const noApprove = stale ? null : cannotApprove(viewer, plan, decisions);
  const chosen = draft?.kind ?? null;
  // The tally once this viewer approves too: the policy's count of who counts.
  const withYours = approversWith(decisions, viewer.identity).length;
  return html`<h2 id="decide">Decide</h2>
<form method="post" action="${uiPath('plans', plan.id)}/decide" class="decide" id="decide-form">
  ${csrfField(c.get('csrf'))}
  <input type="hidden" name="sha256" value="${plan.sha256}">
  <fieldset>
    <legend>Your decision on this text (sha256 <code>${plan.sha256.slice(0, 12)}</code>…)</legend>
    ${CHOICES.filter(([kind]) => !(stale && kind === 'approve')).map(([kind, words]) => {
      const disabled = kind === 'approve' && noApprove !== null;
      return html`<div class="choice"><input type="radio" name="decision" id="decision-${kind}" value="${kind}" required${
        disabled ? html` disabled aria-describedby="approve-why"` : ''
      }${chosen === kind && !disabled ? html` checked` : ''}> <label for="decision-${kind}">${words}</label>${
        kind === 'approve'
          ? disabled
            ? html` <span class="why" id="approve-why">— not offered: ${noApprove}.</span>`
            : html` <span class="muted">(${withYours} of ${plan.approvalsRequired} approvals with yours)</span>`
          : kind === 'revise'
            ? html` <span class="muted">(a new planning round starts with your comment)</span>`
            : html` <span class="muted">(nothing is executed)</span>`
      }</div>`;
    })}
  </fieldset>
  <label for="decide-comment">Comment (required to reject or request changes)</label>
  <textarea id="decide-comment" name="comment" rows="4" maxlength="${LIMITS.revise}">${draft?.text ?? ''}</textarea>
  <button type="submit">Submit decision</button>
</form>`;
}

/**
 * Whether the plan may still be approved against its workspace's head (staleness.ts): stale, with why and what
 * to do instead of approving; or moved on, with the commits that touch nothing it read. Nothing while current.
 */
function freshnessNote(plan: Plan, f: Freshness | null, again: SafeHtml | string): SafeHtml | string {
  if (!f || f.state === 'current') return '';
  if (f.state === 'moved_on') {
    return html`<p class="hint moved-on" id="plan-freshness">${sentence(movedOnMessage(f))} Approved, it executes on the head, <code>${f.head?.slice(0, 12) ?? ''}</code>.</p>`;
  }
  return html`<div class="alert error stale" role="alert" id="plan-freshness"><p><strong>Stale: this plan cannot be approved.</strong> ${sentence(staleMessage(plan, f))}</p>${
    f.changedReadFiles.length
      ? html`<p>Changed since: ${f.changedReadFiles.map((p, i) => html`${i ? ', ' : ''}<code>${p}</code>`)}</p>`
      : ''
  }<p>Approving is not offered. Instead: <a href="#decide">request changes</a> (a new round revises it on the new head, with your comment), plan again from scratch, or <a href="#decide">reject it</a>.</p>${again}</div>`;
}

/** "Plan again": for a plan of a job, a button (for who may run jobs) or who can do it. */
function planAgainBox(c: Context<UiEnv>, plan: Plan, jobExists: boolean): SafeHtml | string {
  if (!plan.jobId || !jobExists)
    return html`<p class="muted">To plan again, start the work again the way it was started (its trigger or job is gone or there is none).</p>`;
  if (!allows(c.get('viewer').role, 'operate'))
    return html`<p class="muted">To plan again, an operator runs its job again: <code>drydock jobs run ${plan.jobId}</code>.</p>`;
  return html`<form method="post" action="${uiPath('plans', plan.id)}/plan-again" class="plan-again" id="plan-again-form">
  ${csrfField(c.get('csrf'))}
  <button type="submit">Reject and plan again</button> <span class="muted">(rejects this plan and runs job <code>${plan.jobId}</code> again on the current head)</span>
</form>`;
}

/** Where the work came from. Everything marked external is shown as text, never as markup or a live link. */
const DELIVERY_WORDS: Record<PlanDeliveryStatus, string> = {
  off: 'off',
  pending: 'waiting for its first attempt',
  retrying: 'an attempt failed; tried again',
  delivered: 'delivered',
  failed: 'failed: every attempt failed (the local branch stays; retry with drydock plans deliver)',
};

/** Where a delivery took the commit (PlanDelivery.target). */
const TARGET_WORDS: Record<DeliveryTarget, string> = {
  base: 'a pull request into the base branch',
  head: "one commit on the pull request's own branch",
  stacked: "a pull request into the pull request's branch",
  patch: "a patch in a comment (the change does not apply to the base without the pull request's commits)",
};

/** Where the executed result went: the pushed branch, the pull request, and the attempts so far. */
function deliverySection(d: PlanDelivery | null): SafeHtml | string {
  if (!d || d.status === 'off') return '';
  return html`<h2 id="delivery">Delivery</h2>
<dl class="facts delivery" aria-labelledby="delivery">
  <dt>Status</dt><dd id="delivery-status" data-status="${d.status}">${DELIVERY_WORDS[d.status]}</dd>
  ${d.target && html`<dt>Went to</dt><dd id="delivery-target" data-target="${d.target}">${TARGET_WORDS[d.target]}</dd>`}
  ${d.branch && html`<dt>Branch</dt><dd><code>${d.branch}</code>${d.remote ? html` on <code>${d.remote}</code>` : ''}${d.pushedAt !== null ? html`, pushed ${time(d.pushedAt)}` : ''}</dd>`}
  ${d.commit && html`<dt>Commit</dt><dd><code>${d.commit}</code></dd>`}
  ${d.pullRequestUrl && html`<dt>Pull request</dt><dd id="delivery-pr">${webLink(d.pullRequestUrl, `#${d.pullRequestNumber ?? ''} ${d.pullRequestUrl}`)}</dd>`}
  ${d.commentUrl && html`<dt>Comment</dt><dd>${webLink(d.commentUrl, 'on the pull request that started it')}</dd>`}
  <dt>Attempts</dt><dd>${d.attempts}${d.nextAttemptAt !== null && d.status !== 'delivered' && d.status !== 'failed' ? html`; next ${time(d.nextAttemptAt)}` : ''}</dd>
  ${d.lastError && html`<dt>Last error</dt><dd><pre class="untrusted">${d.lastError}</pre></dd>`}
</dl>`;
}

function sourceSection(source: PlanSource | null): SafeHtml {
  if (!source) return html`<h2 id="source">Source</h2><p>The run that started this work is gone.</p>`;
  const pr = source.pullRequest;
  const rows: SafeHtml[] = [];
  const row = (dt: string, dd: SafeHtml | string) => rows.push(html`<dt>${dt}</dt><dd>${dd}</dd>`);
  row('Started by', html`${sourceWords(source)}; requested by ${source.requestedBy}`);
  if (source.job) {
    row(
      'Job',
      html`<code>${source.job.id}</code>${source.job.cron ? html` <code>${source.job.cron}</code> (${source.job.timezone})` : ''}${
        source.job.exists ? '' : ' (deleted since)'
      }`,
    );
    if (source.job.slotAt !== null)
      row(
        'Slot',
        html`${time(source.job.slotAt)}${source.job.coalescedSlots > 1 ? ` (${source.job.coalescedSlots} slots coalesced)` : ''}`,
      );
  }
  if (source.trigger) {
    row(
      'Trigger',
      html`${source.trigger.name ?? '(deleted)'}${source.trigger.kind ? ` (${source.trigger.kind})` : ''} <code>${source.trigger.id}</code>`,
    );
  }
  if (source.delivery) {
    const d = source.delivery;
    row(
      'Delivery',
      html`<code>${d.event}</code> ${d.source === 'github' ? 'X-GitHub-Delivery' : 'key'} <code>${d.key}</code>, received ${time(d.receivedAt)} (${d.outcome})`,
    );
  }
  if (pr) {
    const label = `${pr.repository}#${pr.number}`;
    row(
      'Pull request',
      html`${pr.url ? html`<a href="${pr.url}" rel="noopener noreferrer nofollow">${label}</a>` : label}`,
    );
    row('Title', html`<span class="untrusted" id="pr-title">${pr.title ?? '(not recorded)'}</span>`);
    row('Author', html`<span class="untrusted">${pr.author ?? '(not recorded)'}</span>`);
    row('Head', html`<code>${pr.headRef}</code> at <code>${pr.headSha}</code>`);
    row('Base', html`<code>${pr.baseRef}</code>${pr.baseSha ? html` at <code>${pr.baseSha}</code>` : ''}`);
    if (pr.labels.length) row('Labels', html`<span class="untrusted">${pr.labels.join(', ')}</span>`);
  }
  return html`<h2 id="source">Source</h2>
<dl class="facts source">${rows}</dl>
${
  pr &&
  html`<h3 id="pr-body-h">Pull request description <span class="muted">(external: shown as text, what the agent read as data)</span></h3>
${pr.body ? html`<pre class="untrusted" id="pr-body" aria-labelledby="pr-body-h">${pr.body}</pre>` : html`<p class="muted" id="pr-body-none">The pull request has no description.</p>`}`
}
<h3 id="prompt-h">Prompt</h3>
<pre class="prompt" id="source-prompt" aria-labelledby="prompt-h">${source.prompt}</pre>
${
  source.firedText !== null &&
  html`<h3 id="fired-h">Text sent with the fire <span class="muted">(external: shown as text, given to the agent as data)</span></h3>
<pre class="untrusted" id="fired-text" aria-labelledby="fired-h">${source.firedText}</pre>`
}`;
}

export function sourceWords(source: PlanSource): string {
  switch (source.kind) {
    case 'pull_request':
      return 'a pull request';
    case 'trigger':
      return `trigger ${source.trigger?.name ?? source.trigger?.id ?? ''}`.trimEnd();
    case 'job':
      return source.job?.slotAt !== null ? 'a scheduled job' : 'a job run by hand';
    default:
      return 'a run started by hand';
  }
}

/** The rounds so far, the feedback that started each next one, and this round's changes. */
function roundsSection(context: PlanContext): SafeHtml {
  if (context.rounds.length < 2) return html``;
  return html`<h2 id="rounds">Rounds</h2>
<ol class="rounds">${context.rounds.map(
    (r) =>
      html`<li>${r.planId === context.rounds.at(-1)!.planId ? html`<strong>round ${r.round} (this plan)</strong>` : html`<a href="${uiPath('plans', r.planId)}">round ${r.round}</a>`}: ${statusTag('plan', r.status)}, proposed ${time(r.createdAt)}${
        r.feedback &&
        html`<br><span class="muted">${r.feedback.identity} asked for changes ${time(r.feedback.at)}:</span> <q class="comment">${r.feedback.comment ?? ''}</q>`
      }</li>`,
  )}</ol>
${context.diff && diffSection(context.diff)}`;
}

/** Added and removed lines marked by sign, element (ins/del) and a label read out, not by colour alone. */
function diffSection(diff: PlanDiff): SafeHtml {
  const heading = html`<h3 id="diff-h">Changes since round ${diff.previousRound} <span class="muted">(${diff.added} line${diff.added === 1 ? '' : 's'} added, ${diff.removed} removed)</span></h3>`;
  if (!diff.hunks.length)
    return html`${heading}<p>The plan text is the same as in round ${diff.previousRound}.</p>`;
  return html`${heading}
<div class="diff" id="plan-diff" aria-labelledby="diff-h">${diff.hunks.map(
    (
      h,
    ) => html`<p class="hunk muted">Lines ${h.oldStart}–${h.oldStart + Math.max(0, h.oldLines - 1)} of round ${diff.previousRound}, ${h.newStart}–${h.newStart + Math.max(0, h.newLines - 1)} of this round</p>
<ol class="diff-lines">${h.lines.map((l) =>
      l.op === 'add'
        ? html`<li class="add"><ins><span class="sign" aria-hidden="true">+</span><span class="sr-only">added: </span>${l.text}</ins></li>`
        : l.op === 'remove'
          ? html`<li class="remove"><del><span class="sign" aria-hidden="true">-</span><span class="sr-only">removed: </span>${l.text}</del></li>`
          : html`<li class="same"><span class="sign" aria-hidden="true"> </span>${l.text}</li>`,
    )}</ol>`,
  )}</div>`;
}

function filesSection(files: FileActivity[]): SafeHtml {
  const heading = html`<h2 id="files">Files read and searched</h2>`;
  if (!files.length) return html`${heading}<p>The agent read no files while planning.</p>`;
  return html`${heading}
<table aria-labelledby="files" id="files-table"><thead><tr><th scope="col">Tool</th><th scope="col">Path</th><th scope="col">Pattern</th><th scope="col">Round</th><th scope="col">Calls</th></tr></thead>
<tbody>${files.map(
    (f) =>
      html`<tr><td>${f.tool}</td><td>${f.path !== null ? html`<code>${f.path}</code>` : html`<span class="muted">workspace</span>`}</td><td>${
        f.pattern !== null ? html`<code>${f.pattern}</code>` : ''
      }${f.glob !== null ? html` in <code>${f.glob}</code>` : ''}</td><td>${f.round}</td><td>${f.calls}${
        f.errors ? html` <span class="warning">(${f.errors} failed)</span>` : ''
      }</td></tr>`,
  )}</tbody></table>`;
}

function mcpCallsSection(calls: McpActivity[]): SafeHtml {
  // Only where a run had MCP servers to call: no empty section on every other plan.
  if (!calls.length) return html``;
  return html`<h2 id="mcp-calls">MCP calls</h2>
<table aria-labelledby="mcp-calls" id="mcp-calls-table"><thead><tr><th scope="col">Server</th><th scope="col">Tool</th><th scope="col">Input</th><th scope="col">Round</th><th scope="col">Calls</th></tr></thead>
<tbody>${calls.map(
    (m) =>
      html`<tr><td>${m.server}</td><td><code>${m.tool}</code></td><td><code>${m.input}</code></td><td>${m.round}</td><td>${m.calls}${
        m.errors ? html` <span class="warning">(${m.errors} failed)</span>` : ''
      }</td></tr>`,
  )}</tbody></table>`;
}

function questionsSection(questions: AskedQuestion[]): SafeHtml {
  if (!questions.length) return html`<h2 id="questions">Questions</h2><p>The agent asked no questions.</p>`;
  return html`<h2 id="questions">Questions</h2>
<ul class="asked">${questions.map(
    (
      q,
    ) => html`<li><p class="muted">Round ${q.round}, asked ${time(q.createdAt)}: ${q.status.replace('_', ' ')}${
      q.answeredBy ? ` by ${q.answeredBy}` : ''
    }${q.resolvedAt !== null ? html` ${time(q.resolvedAt)}` : ''}</p>
<dl class="facts">${q.items.map(
      (i) =>
        html`<dt>${i.header ?? 'Question'}</dt><dd><span class="question">${i.question}</span><br><span class="muted">Options: ${i.options.join(' · ')}</span><br>Answer: ${
          i.answer === null
            ? html`<span class="muted">none</span>`
            : html`<strong class="answer">${Array.isArray(i.answer) ? i.answer.join(', ') : i.answer}</strong>`
        }</dd>`,
    )}</dl></li>`,
  )}</ul>`;
}

const tokens = (u: TokenUsage) =>
  `${u.input_tokens ?? 0} in, ${u.output_tokens ?? 0} out, ${u.cache_read_tokens ?? 0} cache read, ${
    (u.cache_write_5m_tokens ?? 0) + (u.cache_write_1h_tokens ?? 0)
  } cache write`;

function costSection(cost: PlanContext['cost']): SafeHtml {
  const row = (r: RunUsage) =>
    html`<tr><td>${r.round}</td><td><a href="${uiPath('runs', r.runId)}">${r.runId}</a></td><td>${r.model ?? '—'}</td><td>${r.turns}</td><td>${tokens(r.usage)}</td><td>${usd(r.costUsd)}</td></tr>`;
  return html`<h2 id="cost">Cost of planning</h2>
<table aria-labelledby="cost" id="cost-table"><thead><tr><th scope="col">Round</th><th scope="col">Run</th><th scope="col">Model</th><th scope="col">Turns</th><th scope="col">Tokens</th><th scope="col">Cost</th></tr></thead>
<tbody>${cost.runs.map(row)}</tbody>
<tfoot><tr><th scope="row" colspan="3">Total</th><td>${cost.total.turns}</td><td>${tokens(cost.total.usage)}</td><td id="cost-total">${usd(cost.total.costUsd)}</td></tr></tfoot></table>`;
}
