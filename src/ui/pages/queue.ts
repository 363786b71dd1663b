import { planTitle } from '../../agent/worktree.js';
import { InvalidCursorError } from '../../store/store.js';
import type { Plan, Session } from '../../store/types.js';
import { html } from '../html.js';
import { age, alertBox, time, uiPath } from '../layout.js';
import { signedIn, type UiContext } from './context.js';

const PAGE = 100;
/** Counts above this read "200+": enough to say that there is work waiting. */
const COUNT_CAP = 200;

/** GET /ui: the plans waiting for approval, oldest first, and what else waits for a person. */
export function queueRoutes({ app, deps, guard }: UiContext): void {
  const { store } = deps;

  app.get('/', guard, async (c) => {
    const now = deps.clock.now();
    await store.expirePlans(now);
    const cursor = c.req.query('cursor');
    let plans: { items: Plan[]; nextCursor: string | null };
    try {
      plans = await store.listPlans({ status: 'pending_approval', limit: PAGE, cursor });
    } catch (err) {
      if (!(err instanceof InvalidCursorError)) throw err;
      const body = html`<h1>Plan queue</h1>${alertBox('That page of the queue does not exist.')}
<p><a href="/ui">First page</a></p>`;
      return c.html(signedIn(c, 'queue', 'Plan queue', body), 400);
    }
    const [questions, approvals] = await Promise.all([
      store.listQuestions({ status: 'pending', limit: COUNT_CAP + 1 }),
      store.listToolApprovals({ status: 'pending', limit: COUNT_CAP + 1 }),
    ]);
    const sessions = new Map<string, Session | null>();
    const rows = [];
    for (const plan of plans.items) {
      if (!sessions.has(plan.sessionId)) sessions.set(plan.sessionId, await store.getSession(plan.sessionId));
      const session = sessions.get(plan.sessionId);
      const approvalsSoFar = (await store.listDecisions(plan.id)).filter((d) => d.kind === 'approve').length;
      rows.push(html`<tr>
  <th scope="row"><a href="${uiPath('plans', plan.id)}">${planTitle(plan.markdown)}</a><br><code class="muted">${plan.id}</code></th>
  <td>${session?.name ?? plan.sessionId}</td>
  <td>${plan.round}</td>
  <td>${plan.requestedBy}</td>
  <td>${time(plan.createdAt)} <span class="muted">(${age(now - plan.createdAt)} ago)</span></td>
  <td>${approvalsSoFar} / ${plan.approvalsRequired}</td>
</tr>`);
    }
    const count = (n: number) => (n > COUNT_CAP ? `${COUNT_CAP}+` : String(n));
    const body = html`<h1>Plan queue</h1>
<ul class="waiting">
  <li><a href="/ui/questions">${count(questions.length)} pending question${questions.length === 1 ? '' : 's'}</a></li>
  <li><a href="/ui/tool-approvals">${count(approvals.length)} pending tool approval${approvals.length === 1 ? '' : 's'}</a></li>
</ul>
${
  rows.length
    ? html`<table>
  <caption>Plans waiting for approval, oldest first</caption>
  <thead><tr><th scope="col">Plan</th><th scope="col">Session</th><th scope="col">Round</th><th scope="col">Requested by</th><th scope="col">Waiting since</th><th scope="col">Approvals</th></tr></thead>
  <tbody>${rows}</tbody>
</table>`
    : html`<p>No plans are waiting for approval.</p>`
}
${plans.nextCursor && html`<p><a href="/ui?cursor=${encodeURIComponent(plans.nextCursor)}">More plans…</a></p>`}`;
    return c.html(signedIn(c, 'queue', 'Plan queue', body));
  });
}
