import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { allows } from '../../auth/tokens.js';
import { planTitle } from '../../domain/plan-title.js';
import { selfApprovalBar } from '../../domain/self-approval.js';
import type { ToolApproval } from '../../domain/types.js';
import { QuestionError } from '../../runs/service.js';
import { workRoot } from '../../workspace/paths.js';
import type { UiEnv } from '../env.js';
import { pageStatus } from '../errors.js';
import { field } from '../form.js';
import { html, type SafeHtml } from '../html.js';
import { alertBox, csrfField, time, uiPath } from '../layout.js';
import { statusTag, statusWords } from '../status-words.js';
import { toolPreview } from '../tool-preview.js';
import { signedIn, type UiContext } from './page-context.js';
import { toolApprovalPath } from './waiting.js';

const MESSAGE_LIMIT = 10_000;
const DONE: Record<string, string> = {
  allow: 'The tool call was allowed; the run continues.',
  deny: 'The tool call was denied; the run continues without it.',
};

/** GET /ui/tool-approvals: each pending call shown as what it would do (tool-preview.ts), with allow / deny. */
export function toolApprovalRoutes({ app, deps, guard }: UiContext): void {
  app.get('/tool-approvals', guard, (c) => {
    const done = c.req.query('done');
    return showList(c, deps, { notice: done && Object.hasOwn(DONE, done) ? DONE[done] : undefined });
  });
  app.get('/tool-approvals/:id', guard, (c) => {
    const done = c.req.query('done');
    return showOne(c, deps, c.req.param('id'), {
      notice: done && Object.hasOwn(DONE, done) ? DONE[done] : undefined,
    });
  });
  app.post('/tool-approvals/:id', guard, (c) => decide(c, deps, c.req.param('id')));
}

interface Shown {
  status?: ContentfulStatusCode;
  error?: string;
  notice?: string;
}

/**
 * GET /ui/tool-approvals/:id: one tool call with what it would do, the run that asked, the plan it carries out,
 * the session and workspace, and (while it is pending) the allow / deny form of the list page.
 */
async function showOne(c: Context<UiEnv>, deps: Deps, id: string, shown: Shown = {}): Promise<Response> {
  const { store } = deps;
  const a = await store.getToolApproval(id);
  if (!a) {
    const body = html`<h1>Tool call not found</h1>${alertBox(`There is no tool approval ${id}.`)}<p><a href="/ui/tool-approvals">The pending tool approvals</a></p>`;
    return c.html(signedIn(c, 'tool-approvals', 'Tool call not found', body), 404);
  }
  const [plan, session, run] = await Promise.all([
    a.planId ? store.getPlan(a.planId) : null,
    store.getSession(a.sessionId),
    store.getRun(a.runId),
  ]);
  const preview = await toolPreview(a, {
    workRoot: workRoot(deps.config),
    hidden: deps.hidden,
    plan,
    session,
  });
  const viewer = c.get('viewer');
  const canDecide = allows(viewer.role, 'decide') && a.status === 'pending';
  const canAllow = !plan || selfApprovalBar(plan, viewer.identity) === null;
  const title = `Tool call ${a.tool}`;
  const body = html`<h1>Tool call <code>${a.tool}</code></h1>
${alertBox(shown.error, shown.notice)}
<dl class="facts" id="approval-facts">
  <dt>Status</dt><dd id="approval-status" data-status="${a.status}" title="${a.status}">${statusWords('tool_approval', a.status)}${a.decidedBy ? ` by ${a.decidedBy}` : ''}${a.decidedAt !== null ? html` ${time(a.decidedAt)}` : ''}</dd>
  ${a.message && html`<dt>Message</dt><dd class="comment">${a.message}</dd>`}
  <dt>Run</dt><dd><a href="${uiPath('runs', a.runId)}" id="approval-run">${a.runId}</a>${run ? html` — ${statusTag('run', run.status)}${run.executeMode ? ` (mode ${run.executeMode})` : ''}` : ''}</dd>
  ${a.planId && html`<dt>Plan it carries out</dt><dd><a href="${uiPath('plans', a.planId)}" id="approval-plan">${plan ? planTitle(plan.markdown) : a.planId}</a></dd>`}
  <dt>Session</dt><dd>${session?.name ?? a.sessionId} <span class="muted">(${session?.workspace ?? 'unknown workspace'})</span></dd>
  <dt>Asked</dt><dd>${time(a.createdAt)}</dd>
  <dt>Expires</dt><dd>${time(a.expiresAt)}</dd>
</dl>
<h2 id="preview-h">What it would do</h2>
${preview}
${!allows(viewer.role, 'decide') && html`<p class="hint">Your role (${viewer.role}) may read tool calls but not decide them.</p>`}
${canDecide && decisionForm(c, a, canAllow, 'page')}
<p><a href="/ui/tool-approvals">All pending tool approvals</a></p>`;
  return c.html(signedIn(c, 'tool-approvals', title, body), shown.status ?? 200);
}

type Deps = UiContext['deps'];

/** Each distinct id with what `get` reads for it. */
async function byId<T>(ids: string[], get: (id: string) => Promise<T>): Promise<Map<string, T>> {
  return new Map(await Promise.all([...new Set(ids)].map(async (id) => [id, await get(id)] as const)));
}

async function showList(c: Context<UiEnv>, deps: Deps, shown: Shown = {}): Promise<Response> {
  const { store } = deps;
  const pending = await store.listToolApprovals({ status: 'pending', limit: 100 });
  const viewer = c.get('viewer');
  const canDecide = allows(viewer.role, 'decide');
  // Whoever requested a plan (or owns its session) may deny its calls but not allow them.
  const plans = await byId(
    pending.map((a) => a.planId).filter((id): id is string => id !== null),
    (id) => store.getPlan(id),
  );
  const sessions = await byId(
    pending.map((a) => a.sessionId),
    (id) => store.getSession(id),
  );
  // What each call would do: the file it would write or the edit, as a diff; the command.
  const previews = await Promise.all(
    pending.map((a) =>
      toolPreview(a, {
        workRoot: workRoot(deps.config),
        hidden: deps.hidden,
        plan: a.planId ? (plans.get(a.planId) ?? null) : null,
        session: sessions.get(a.sessionId) ?? null,
      }),
    ),
  );
  const ownCall = (a: ToolApproval) => {
    const plan = a.planId ? plans.get(a.planId) : null;
    return !!plan && selfApprovalBar(plan, viewer.identity) !== null;
  };
  const body = html`<h1>Pending tool approvals</h1>
${alertBox(shown.error, shown.notice)}
${!canDecide && html`<p class="hint">Your role (${c.get('viewer').role}) may read tool calls but not decide them.</p>`}
${pending.length ? pending.map((a, i) => approvalForm(c, a, previews[i]!, canDecide, !ownCall(a))) : html`<p>No tool calls are waiting for a decision.</p>`}`;
  return c.html(signedIn(c, 'tool-approvals', 'Tool approvals', body), shown.status ?? 200);
}

async function decide(c: Context<UiEnv>, deps: Deps, id: string): Promise<Response> {
  const viewer = c.get('viewer');
  const form = c.get('form');
  // From the call's own page, the answer is that page again; from the list, the list.
  const onPage = field(form, 'from') === 'page';
  const show = (cc: Context<UiEnv>, d: Deps, shown: Shown) =>
    onPage ? showOne(cc, d, id, shown) : showList(cc, d, shown);
  if (!allows(viewer.role, 'decide')) {
    return show(c, deps, { status: 403, error: `Your role (${viewer.role}) may not decide tool calls.` });
  }
  const decision = field(form, 'decision');
  const message = (field(form, 'message') ?? '').trim();
  if (decision !== 'allow' && decision !== 'deny') {
    return show(c, deps, { status: 422, error: 'Choose allow or deny.' });
  }
  if (message.length > MESSAGE_LIMIT) {
    return show(c, deps, {
      status: 422,
      error: `The message is too long (at most ${MESSAGE_LIMIT} characters).`,
    });
  }
  try {
    await deps.runs.decideToolApproval(id, decision === 'allow', message || null, viewer.identity);
  } catch (err) {
    if (!(err instanceof QuestionError)) throw err;
    return show(c, deps, { status: pageStatus(err), error: err.message });
  }
  return c.redirect(
    onPage ? `${toolApprovalPath(id)}?done=${decision}` : `/ui/tool-approvals?done=${decision}`,
    303,
  );
}

function approvalForm(
  c: Context<UiEnv>,
  a: ToolApproval,
  preview: SafeHtml,
  canDecide: boolean,
  canAllow: boolean,
) {
  return html`<section class="tool-approval" aria-labelledby="h-${a.id}">
<h2 id="h-${a.id}"><a href="${toolApprovalPath(a.id)}"><code>${a.tool}</code></a> in run <a href="${uiPath('runs', a.runId)}">${a.runId}</a></h2>
<p class="muted">${a.planId && html`Carrying out plan <a href="${uiPath('plans', a.planId)}">${a.planId}</a>. `}Asked ${time(a.createdAt)}; expires ${time(a.expiresAt)}</p>
${preview}
${canDecide && decisionForm(c, a, canAllow, 'list')}
</section>`;
}

/** Allow / deny with an optional message; `from` says where the answer goes back to. */
function decisionForm(c: Context<UiEnv>, a: ToolApproval, canAllow: boolean, from: 'list' | 'page') {
  const messageId = `msg-${a.id}`;
  return html`<form method="post" action="${toolApprovalPath(a.id)}" class="tool">
  ${csrfField(c.get('csrf'))}
  ${from === 'page' && html`<input type="hidden" name="from" value="page">`}
  <label for="${messageId}">Message to the agent (optional; read when you deny)</label>
  <textarea id="${messageId}" name="message" rows="2" maxlength="${MESSAGE_LIMIT}"></textarea>
  ${canAllow ? html`<button type="submit" name="decision" value="allow">Allow</button>` : html`<p class="hint">You requested this plan, so you may deny its tool calls but not allow them; another approver allows.</p>`}
  <button type="submit" name="decision" value="deny">Deny</button>
</form>`;
}
