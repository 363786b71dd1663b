import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { allows } from '../../auth/tokens.js';
import { selfApprovalBar } from '../../domain/self-approval.js';
import type { ToolApproval } from '../../domain/types.js';
import { QuestionError } from '../../runs/service.js';
import { workRoot } from '../../workspace/paths.js';
import type { UiEnv } from '../env.js';
import { pageStatus } from '../errors.js';
import { field } from '../form.js';
import { html, type SafeHtml } from '../html.js';
import { alertBox, csrfField, time, uiPath } from '../layout.js';
import { toolPreview } from '../tool-preview.js';
import { signedIn, type UiContext } from './page-context.js';

const MESSAGE_LIMIT = 10_000;
const DONE: Record<string, string> = {
  allow: 'The tool call was allowed; the run continues.',
  deny: 'The tool call was denied; the run continues without it.',
};

/** GET /ui/tool-approvals: each pending call shown as what it would do (tool-preview.ts), with allow / deny. */
export function toolApprovalRoutes({ app, deps, guard }: UiContext): void {
  app.get('/tool-approvals', guard, (c) => {
    const done = c.req.query('done');
    return show(c, deps, { notice: done && Object.hasOwn(DONE, done) ? DONE[done] : undefined });
  });
  app.post('/tool-approvals/:id', guard, (c) => decide(c, deps, c.req.param('id')));
}

type Deps = UiContext['deps'];

/** Each distinct id with what `get` reads for it. */
async function byId<T>(ids: string[], get: (id: string) => Promise<T>): Promise<Map<string, T>> {
  return new Map(await Promise.all([...new Set(ids)].map(async (id) => [id, await get(id)] as const)));
}

async function show(
  c: Context<UiEnv>,
  deps: Deps,
  shown: { status?: ContentfulStatusCode; error?: string; notice?: string } = {},
): Promise<Response> {
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
  if (!allows(viewer.role, 'decide')) {
    return show(c, deps, { status: 403, error: `Your role (${viewer.role}) may not decide tool calls.` });
  }
  const form = c.get('form');
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
  return c.redirect(`/ui/tool-approvals?done=${decision}`, 303);
}

function approvalForm(
  c: Context<UiEnv>,
  a: ToolApproval,
  preview: SafeHtml,
  canDecide: boolean,
  canAllow: boolean,
) {
  const messageId = `msg-${a.id}`;
  return html`<section class="tool-approval" aria-labelledby="h-${a.id}">
<h2 id="h-${a.id}"><code>${a.tool}</code> in run <a href="${uiPath('runs', a.runId)}">${a.runId}</a></h2>
<p class="muted">${a.planId && html`Carrying out plan <a href="${uiPath('plans', a.planId)}">${a.planId}</a>. `}Asked ${time(a.createdAt)}; expires ${time(a.expiresAt)}</p>
${preview}
${
  canDecide &&
  html`<form method="post" action="/ui/tool-approvals/${encodeURIComponent(a.id)}" class="tool">
  ${csrfField(c.get('csrf'))}
  <label for="${messageId}">Message to the agent (optional; read when you deny)</label>
  <textarea id="${messageId}" name="message" rows="2" maxlength="${MESSAGE_LIMIT}"></textarea>
  ${canAllow ? html`<button type="submit" name="decision" value="allow">Allow</button>` : html`<p class="hint">You requested this plan, so you may deny its tool calls but not allow them; another approver allows.</p>`}
  <button type="submit" name="decision" value="deny">Deny</button>
</form>`
}
</section>`;
}
