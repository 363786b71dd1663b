import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { SandboxStatus } from '../../agent/sandbox.js';
import { planTitle } from '../../agent/worktree.js';
import { allows } from '../../auth/tokens.js';
import { DecisionError } from '../../plans/decisions.js';
import type { DecisionKind, Plan } from '../../store/types.js';
import type { UiEnv } from '../env.js';
import { field } from '../form.js';
import { html } from '../html.js';
import { alertBox, csrfField, time, uiPath } from '../layout.js';
import { renderMarkdown } from '../markdown.js';
import { signedIn, type UiContext } from './context.js';

const SHA256 = /^[0-9a-f]{64}$/;
const LIMITS = { comment: 10_000, feedback: 20_000 };

const DONE: Record<string, string> = {
  approve: 'Your approval was recorded.',
  reject: 'The plan was rejected.',
  revise: 'Revision requested: a new planning round has started.',
};

/** What the person typed, put back into the form when a decision is refused. */
interface Draft {
  kind: DecisionKind;
  text: string;
}

interface Shown {
  status?: ContentfulStatusCode;
  error?: string;
  notice?: string;
  draft?: Draft;
}

/** GET /ui/plans/:id and its three decision forms. */
export function planRoutes(ctx: UiContext): void {
  const { app, deps, guard } = ctx;
  const { store } = deps;

  async function show(c: Context<UiEnv>, id: string, shown: Shown = {}): Promise<Response> {
    await store.expirePlans(deps.clock.now());
    const plan = await store.getPlan(id);
    if (!plan) {
      const body = html`<h1>Plan not found</h1>${alertBox(`There is no plan ${id}.`)}<p><a href="/ui">Back to the queue</a></p>`;
      return c.html(signedIn(c, null, 'Plan not found', body), 404);
    }
    const [decisions, runs, session] = await Promise.all([
      store.listDecisions(plan.id),
      store.listPlanRuns(plan),
      store.getSession(plan.sessionId),
    ]);
    const approvals = decisions.filter((d) => d.kind === 'approve').length;
    const title = planTitle(plan.markdown);
    const body = html`<h1>${title}</h1>
${alertBox(shown.error, shown.notice)}
<dl class="facts">
  <dt>Plan</dt><dd><code>${plan.id}</code></dd>
  <dt>Status</dt><dd id="plan-status">${plan.status}</dd>
  <dt>Round</dt><dd>${plan.round}${plan.previousPlanId && html` (revises <a href="${uiPath('plans', plan.previousPlanId)}">${plan.previousPlanId}</a>)`}</dd>
  <dt>Session</dt><dd>${session?.name ?? plan.sessionId} <span class="muted">(${session?.workspace ?? 'unknown workspace'})</span></dd>
  <dt>Requested by</dt><dd>${plan.requestedBy}${plan.owner !== plan.requestedBy ? ` (session owner ${plan.owner})` : ''}</dd>
  <dt>Approvals</dt><dd>${approvals} of ${plan.approvalsRequired} required${plan.allowSelfApproval ? ' (self-approval allowed)' : ''}</dd>
  <dt>Execute mode</dt><dd>${plan.executeMode}</dd>
  <dt>Commands</dt><dd id="plan-commands">${commandsLine(deps.sandbox, plan.network)}</dd>
  <dt>sha256</dt><dd><code id="plan-sha256">${plan.sha256}</code></dd>
  <dt>Workspace commit</dt><dd>${plan.workspaceCommit ? html`<code>${plan.workspaceCommit}</code>` : 'none (not a git workspace)'}</dd>
  <dt>Proposed</dt><dd>${time(plan.createdAt)}</dd>
  <dt>Expires</dt><dd>${time(plan.expiresAt)}</dd>
  ${plan.decidedAt !== null && html`<dt>Decided</dt><dd>${time(plan.decidedAt)}</dd>`}
  ${plan.failureReason && html`<dt>Failure</dt><dd>${plan.failureReason}</dd>`}
</dl>
<h2 id="plan-text">The plan</h2>
<article class="plan-body" aria-labelledby="plan-text">
${renderMarkdown(plan.markdown)}
</article>
${decideForms(c, plan, shown.draft)}
<h2>Decisions</h2>
${
  decisions.length
    ? html`<table><thead><tr><th scope="col">Decision</th><th scope="col">By</th><th scope="col">When</th><th scope="col">Comment</th><th scope="col">sha256 seen</th></tr></thead>
<tbody>${decisions.map(
        (d) =>
          html`<tr><td>${d.kind}</td><td>${d.identity}</td><td>${time(d.createdAt)}</td><td>${d.comment ?? ''}</td><td><code>${d.sha256.slice(0, 12)}</code></td></tr>`,
      )}</tbody></table>`
    : html`<p>No decisions yet.</p>`
}
<h2>Runs</h2>
<ul class="runs">${runs.map(
      (r) =>
        html`<li><a href="${uiPath('runs', r.id)}">${r.phase} run ${r.id}</a> — ${r.status}${
          r.id === plan.runId ? ' (proposed this plan)' : ''
        }</li>`,
    )}</ul>`;
    return c.html(signedIn(c, null, title, body), shown.status ?? 200);
  }

  app.get('/plans/:id', guard, (c) => {
    const done = c.req.query('done');
    return show(c, c.req.param('id'), { notice: done && Object.hasOwn(DONE, done) ? DONE[done] : undefined });
  });

  const decide = (kind: DecisionKind) =>
    app.post(`/plans/:id/${kind}`, guard, async (c) => {
      const id = c.req.param('id');
      const viewer = c.get('viewer');
      const form = c.get('form');
      const text = (field(form, kind === 'revise' ? 'feedback' : 'comment') ?? '').trim();
      const draft = { kind, text };
      if (!allows(viewer.role, 'decide')) {
        return show(c, id, { status: 403, error: `Your role (${viewer.role}) may not decide plans.` });
      }
      const sha256 = field(form, 'sha256');
      let error: string | null = null;
      if (kind === 'approve' && (!sha256 || !SHA256.test(sha256)))
        error = 'The approval did not say which plan text it approves (sha256).';
      else if (kind === 'reject' && !text) error = 'A rejection needs a comment.';
      else if (kind === 'revise' && !text) error = 'A revision needs feedback.';
      else if (text.length > (kind === 'revise' ? LIMITS.feedback : LIMITS.comment))
        error = `That text is too long (at most ${kind === 'revise' ? LIMITS.feedback : LIMITS.comment} characters).`;
      if (error) return show(c, id, { status: 422, error, draft });
      try {
        await deps.plans.decide(id, kind, {
          identity: viewer.identity,
          comment: text || undefined,
          sha256: kind === 'reject' ? undefined : sha256,
        });
      } catch (err) {
        if (!(err instanceof DecisionError)) throw err;
        return show(c, id, { status: err.status, error: err.message, draft });
      }
      return c.redirect(`${uiPath('plans', id)}?done=${kind}`, 303);
    });
  decide('approve');
  decide('reject');
  decide('revise');
}

function decideForms(c: Context<UiEnv>, plan: Plan, draft: Draft | undefined) {
  if (plan.status !== 'pending_approval') return html``;
  const viewer = c.get('viewer');
  if (!allows(viewer.role, 'decide')) {
    return html`<p class="hint">Your role (${viewer.role}) may read plans but not decide them.</p>`;
  }
  const action = (kind: DecisionKind) => `${uiPath('plans', plan.id)}/${kind}`;
  const typed = (kind: DecisionKind) => (draft?.kind === kind ? draft.text : '');
  const own =
    (plan.requestedBy === viewer.identity || plan.owner === viewer.identity) && !plan.allowSelfApproval;
  return html`<h2>Decide</h2>
${own && html`<p class="hint">You requested this plan: you may reject it or ask for a revision, but someone else must approve it.</p>`}
<form method="post" action="${action('approve')}" class="decide">
  ${csrfField(c.get('csrf'))}
  <input type="hidden" name="sha256" value="${plan.sha256}">
  <label for="approve-comment">Comment (optional)</label>
  <textarea id="approve-comment" name="comment" rows="2" maxlength="${LIMITS.comment}">${typed('approve')}</textarea>
  <button type="submit">Approve this text (sha256 ${plan.sha256.slice(0, 12)}…)</button>
</form>
<form method="post" action="${action('reject')}" class="decide">
  ${csrfField(c.get('csrf'))}
  <label for="reject-comment">Why reject it? (required)</label>
  <textarea id="reject-comment" name="comment" rows="2" required maxlength="${LIMITS.comment}">${typed('reject')}</textarea>
  <button type="submit">Reject</button>
</form>
<form method="post" action="${action('revise')}" class="decide">
  ${csrfField(c.get('csrf'))}
  <label for="revise-feedback">What should change? (required)</label>
  <textarea id="revise-feedback" name="feedback" rows="3" required maxlength="${LIMITS.feedback}">${typed('revise')}</textarea>
  <button type="submit">Request a revision</button>
</form>`;
}

/** How the execution's commands would run: the sandbox state of this daemon and the plan's network. */
function commandsLine(sandbox: SandboxStatus | undefined, network: boolean) {
  const net = network ? 'network allowed' : 'no network';
  if (!sandbox) return `sandbox state unknown; ${net}`;
  if (sandbox.state === 'bwrap') return `in the bubblewrap sandbox; ${net}`;
  if (sandbox.state === 'off')
    return html`<strong class="warning">NOT sandboxed</strong>: execute.sandbox is off, so commands run as the daemon user with its file access`;
  return html`<strong class="warning">Bash will refuse to run</strong>: ${sandbox.detail}`;
}
