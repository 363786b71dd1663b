import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { allows } from '../../auth/tokens.js';
import { planStatusAt } from '../../domain/plan-status.js';
import { planTitle } from '../../domain/plan-title.js';
import {
  type CronJob,
  PLAN_STATUSES,
  type Plan,
  type PlanStatus,
  type Session,
  type Trigger,
} from '../../domain/types.js';
import { DecisionError } from '../../plans/decisions.js';
import { type PlanSource, planSource, SourceCache } from '../../plans/plan-context.js';
import { approversOf } from '../../plans/policy.js';
import { type Freshness, type FreshnessMemo, movedOnMessage, planFreshness } from '../../plans/staleness.js';
import { InvalidCursorError } from '../../store/store.js';
import type { UiEnv } from '../env.js';
import { field, fields } from '../form.js';
import { html, type SafeHtml } from '../html.js';
import { age, alertBox, csrfField, time, uiPath } from '../layout.js';
import { statusTag, statusWords } from '../status-words.js';
import { signedIn, type UiContext } from './page-context.js';
import { cannotApprove } from './plan.js';
import { type Waiting, waitingCell } from './waiting.js';

const PAGE = 100;
/** Counts above this read "200+": enough to say that there is work waiting. */
const COUNT_CAP = 200;
const DAY = 86_400_000;
/** The most plans one bulk rejection takes (two pages of the queue). */
const BULK_MAX = 200;
const COMMENT_MAX = 10_000;
/** How often the page script fetches the rows again. */
const REFRESH_MS = 15_000;

/** The queue's filters, from the query string (GET form); every one optional. */
interface QueueFilter {
  /** A plan status, or null for every status. */
  status: PlanStatus | null;
  session: string;
  job: string;
  trigger: string;
  requester: string;
  /** Only plans proposed more than this many days ago; null: any age. */
  olderThanDays: number | null;
  /** Only plans whose workspace moved past the commit they were made against. */
  behind: boolean;
  cursor: string | undefined;
}

function readFilter(c: Context<UiEnv>): { filter: QueueFilter; problems: string[] } {
  const problems: string[] = [];
  const q = (name: string) => (c.req.query(name) ?? '').trim().slice(0, 200);
  const rawStatus = c.req.query('status');
  let status: PlanStatus | null = 'pending_approval';
  if (rawStatus === 'any') status = null;
  else if (rawStatus !== undefined && rawStatus !== '') {
    if ((PLAN_STATUSES as readonly string[]).includes(rawStatus)) status = rawStatus as PlanStatus;
    else problems.push(`There is no plan status "${rawStatus}".`);
  }
  const rawDays = q('older_than_days');
  let olderThanDays: number | null = null;
  if (rawDays !== '') {
    const n = Number(rawDays);
    if (Number.isInteger(n) && n >= 0 && n <= 3650) olderThanDays = n;
    else problems.push('"Older than" takes a whole number of days (0 to 3650).');
  }
  return {
    filter: {
      status,
      session: q('session'),
      job: q('job'),
      trigger: q('trigger'),
      requester: q('requester'),
      olderThanDays,
      behind: c.req.query('behind') === '1',
      cursor: c.req.query('cursor') || undefined,
    },
    problems,
  };
}

/** The filter as a query string (without the cursor unless asked). */
function filterQuery(f: QueueFilter, extra: Record<string, string> = {}): string {
  const p = new URLSearchParams();
  if (f.status !== 'pending_approval') p.set('status', f.status ?? 'any');
  if (f.session) p.set('session', f.session);
  if (f.job) p.set('job', f.job);
  if (f.trigger) p.set('trigger', f.trigger);
  if (f.requester) p.set('requester', f.requester);
  if (f.olderThanDays !== null) p.set('older_than_days', String(f.olderThanDays));
  if (f.behind) p.set('behind', '1');
  for (const [k, v] of Object.entries(extra)) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
}

interface BulkDraft {
  comment: string;
  selected: Set<string>;
}

interface Shown {
  status?: ContentfulStatusCode;
  error?: string;
  notice?: string;
  results?: SafeHtml;
  draft?: BulkDraft;
}

/** GET /ui: the plan queue with filters, marks and bulk rejection; GET /ui/queue/rows: its rows alone. */
export function queueRoutes({ app, deps, guard }: UiContext): void {
  app.get('/', guard, (c) => render(c, deps));
  // The rows alone, for the page script's refresh: it replaces the table's body and nothing else.
  app.get('/queue/rows', guard, (c) => rowsOnly(c, deps));
  // Bulk reject: each selected plan through the normal decision path, each outcome reported.
  app.post('/plans/bulk-reject', guard, (c) => bulkReject(c, deps));
}

type Deps = UiContext['deps'];

/** What one row of the queue shows about its plan. */
interface RowFacts {
  plan: Plan;
  session: Session | null;
  source: PlanSource | null;
  status: PlanStatus;
  /** Set when a pending plan's workspace moved past its commit: stale, or moved on (staleness.ts). */
  behind: Freshness | null;
  /** Why the viewer cannot approve it, or null. */
  why: string | null;
  /** What its runs wait on a person for (a tool call, a question), with where to act. */
  waits: readonly Waiting[];
  approvals: number;
  now: number;
}

/** The rows of the queue's table, and the cursor of the next page. */
async function rows(c: Context<UiEnv>, deps: Deps, f: QueueFilter, draft?: BulkDraft) {
  const { store } = deps;
  // Read only: plans past their expiry list and show as expired (planStatusAt); the daemon's sweep writes it.
  const now = deps.clock.now();
  const page = await store.listPlans({
    status: f.status ?? undefined,
    activeAt: now,
    summary: true,
    sessionId: f.session || undefined,
    jobId: f.job || undefined,
    triggerId: f.trigger || undefined,
    requestedBy: f.requester || undefined,
    createdBefore: f.olderThanDays !== null ? now - f.olderThanDays * DAY : undefined,
    limit: PAGE,
    cursor: f.cursor,
  });
  const viewer = c.get('viewer');
  const mayDecide = allows(viewer.role, 'decide');
  const sessions = new Map<string, Promise<Session | null>>();
  const memo: FreshnessMemo = new Map();
  const cache = new SourceCache(store);
  const out: SafeHtml[] = [];
  const waiting = await waitingByPlan(deps);
  let pickable = 0;
  for (const plan of page.items) {
    if (!sessions.has(plan.sessionId)) sessions.set(plan.sessionId, store.getSession(plan.sessionId));
    const [session, decisions, source] = await Promise.all([
      sessions.get(plan.sessionId)!,
      store.listDecisions(plan.id),
      planSource(store, plan, cache),
    ]);
    const status = planStatusAt(plan, now);
    const pending = status === 'pending_approval';
    const behind = pending ? await behindHead(plan, session, memo) : null;
    if (f.behind && behind === null) continue;
    const why = pending ? cannotApprove(viewer, plan, decisions) : null;
    const approvals = approversOf(decisions).length;
    const waits = waiting.get(plan.id) ?? [];
    const facts = { plan, session, source, status, behind, why, waits, approvals, now };
    if (mayDecide && pending) pickable++;
    out.push(
      planRow(facts, mayDecide && pending, draft?.selected.has(plan.id) ?? false, bulkView(f, mayDecide)),
    );
  }
  return { rows: out, nextCursor: page.nextCursor, pickable };
}

/**
 * What waits on a person, by plan: the pending tool calls (each names its plan) and the pending questions of
 * runs that revise or carry out a plan. Read once per page.
 */
async function waitingByPlan(deps: Deps): Promise<Map<string, Waiting[]>> {
  const { store } = deps;
  const [approvals, questions] = await Promise.all([
    store.listToolApprovals({ status: 'pending', limit: COUNT_CAP }),
    store.listQuestions({ status: 'pending', limit: COUNT_CAP }),
  ]);
  const byPlan = new Map<string, Waiting[]>();
  const add = (planId: string | null, w: Waiting) => {
    if (planId) byPlan.set(planId, [...(byPlan.get(planId) ?? []), w]);
  };
  for (const approval of approvals)
    add(approval.planId, { kind: 'tool_approval', runId: approval.runId, approval });
  const runs = await Promise.all(questions.map((q) => store.getRun(q.runId)));
  questions.forEach((question, i) => {
    const run = runs[i];
    add(run?.executesPlanId ?? run?.revisesPlanId ?? null, {
      kind: 'question',
      runId: question.runId,
      question,
    });
  });
  return byPlan;
}

/**
 * Whether a pending plan's git workspace moved past its commit, by the one staleness rule (staleness.ts): stale
 * (approving it is refused), or moved on without touching what it read. Heads and moves are read once per
 * workspace and commit (`memo`). Null when the workspace did not move or the rule does not apply.
 */
async function behindHead(
  plan: Plan,
  session: Session | null,
  memo: FreshnessMemo,
): Promise<Freshness | null> {
  if (!session) return null;
  const f = await planFreshness(plan, session.workspace, memo);
  return f && f.state !== 'current' ? f : null;
}

/** One row of the queue's table; `pickable` adds the box that selects it for bulk rejection. */
function planRow(r: RowFacts, pickable: boolean, checked: boolean, pickColumn = true): SafeHtml {
  const { plan, session, source, status, behind, why, waits, approvals, now } = r;
  const box = `pick-${plan.id}`;
  return html`<tr data-plan="${plan.id}">
  ${
    pickColumn &&
    html`<td>${
      pickable
        ? html`<input type="checkbox" name="plan" value="${plan.id}" id="${box}" form="bulk-form"${
            checked ? html` checked` : ''
          }><label for="${box}"><span class="sr-only">Select ${plan.id}</span></label>`
        : ''
    }</td>`
  }
  <th scope="row"><a href="${uiPath('plans', plan.id)}">${planTitle(plan.markdown)}</a><br><code class="muted">${plan.id}</code></th>
  <td class="source">${sourceCell(source)}</td>
  <td>${session?.name ?? plan.sessionId}</td>
  <td>${plan.round}</td>
  <td>${plan.requestedBy}</td>
  <td class="plan-status">${statusTag('plan', status)}${waits.length ? html`<br>${waitingCell(waits)}` : ''}</td>
  <td>${time(plan.createdAt)} <span class="muted">(${age(now - plan.createdAt)} ago)</span>${
    behind === null
      ? ''
      : behind.state === 'stale'
        ? html`<br><span class="stale">stale: ${staleReason(behind)}</span>`
        : html`<br><span class="muted moved-on">${movedOnMessage(behind)}</span>`
  }</td>
  <td>${approvals} / ${plan.approvalsRequired}</td>
  <td class="mark">${why ? html`<span class="cannot">You cannot approve: ${why}.</span>` : ''}</td>
</tr>`;
}

/** Whether the table has the column of boxes for bulk rejection: only where pending plans can be listed. */
const bulkView = (f: QueueFilter, mayDecide: boolean) =>
  mayDecide && (f.status === 'pending_approval' || f.status === null);

/** The table's columns: with the box column, or without it. */
const columns = (f: QueueFilter, mayDecide: boolean) => (bulkView(f, mayDecide) ? 10 : 9);

/** Why a stale plan is stale, briefly (the row's line; the plan page and a refused approval say it whole). */
export function staleReason(f: Freshness): string {
  if (f.reason === 'footprint_changed') return `a commit since changed ${f.changedReadFiles.join(', ')}`;
  if (f.reason === 'no_footprint')
    return `the workspace moved on to ${f.head?.slice(0, 12)}, and what this plan read was not recorded`;
  if (!f.head) return 'the workspace has no commit';
  return `its commit is no longer in the history of the workspace's head (${f.head.slice(0, 12)})`;
}

const emptyRow = (f: QueueFilter, mayDecide: boolean) =>
  html`<tr class="empty"><td colspan="${columns(f, mayDecide)}">${
    f.status === 'pending_approval' &&
    !f.session &&
    !f.job &&
    !f.trigger &&
    !f.requester &&
    f.olderThanDays === null &&
    !f.behind
      ? 'No plans are waiting for approval.'
      : 'No plans match these filters.'
  }</td></tr>`;

async function render(c: Context<UiEnv>, deps: Deps, shown: Shown = {}): Promise<Response> {
  const { store } = deps;
  const { filter: f, problems } = readFilter(c);
  if (problems.length) {
    const body = html`<h1>Plan queue</h1>${alertBox(problems.join(' '))}<p><a href="/ui">The whole queue</a></p>`;
    return c.html(signedIn(c, 'queue', 'Plan queue', body), 400);
  }
  let table: Awaited<ReturnType<typeof rows>>;
  try {
    table = await rows(c, deps, f, shown.draft);
  } catch (err) {
    if (!(err instanceof InvalidCursorError)) throw err;
    const body = html`<h1>Plan queue</h1>${alertBox('That page of the queue does not exist.')}
<p><a href="/ui">First page</a></p>`;
    return c.html(signedIn(c, 'queue', 'Plan queue', body), 400);
  }
  const [questions, approvals, choices] = await Promise.all([
    store.listQuestions({ status: 'pending', limit: COUNT_CAP + 1 }),
    store.listToolApprovals({ status: 'pending', limit: COUNT_CAP + 1 }),
    filterChoices(deps),
  ]);
  const viewer = c.get('viewer');
  const mayDecide = allows(viewer.role, 'decide');
  const count = (n: number) => (n > COUNT_CAP ? `${COUNT_CAP}+` : String(n));
  const caption =
    f.status === 'pending_approval'
      ? 'Plans waiting for approval, oldest first'
      : `Plans (${f.status ? statusWords('plan', f.status) : 'any status'}), oldest first`;
  const body = html`<h1>Plan queue</h1>
${alertBox(shown.error, shown.notice)}
${shown.results ?? ''}
<ul class="waiting">
  <li><a href="/ui/questions">${count(questions.length)} pending question${questions.length === 1 ? '' : 's'}</a></li>
  <li><a href="/ui/tool-approvals">${count(approvals.length)} pending tool approval${approvals.length === 1 ? '' : 's'}</a></li>
</ul>
${filterForm(f, choices)}
${mayDecide ? '' : html`<p class="hint">Your role (${viewer.role}) may read plans but not decide them.</p>`}
<table>
  <caption>${caption}</caption>
  <thead><tr>${
    bulkView(f, mayDecide) &&
    html`<th scope="col"><input type="checkbox" id="select-all" aria-controls="queue-rows"><label for="select-all"><span class="sr-only">Select all plans on this page</span></label></th>`
  }<th scope="col">Plan</th><th scope="col">Source</th><th scope="col">Session</th><th scope="col">Round</th><th scope="col">Requested by</th><th scope="col">Status</th><th scope="col">${f.status === 'pending_approval' ? 'Waiting since' : 'Proposed'}</th><th scope="col">Approvals</th><th scope="col">Your approval</th></tr></thead>
  <tbody id="queue-rows" data-rows-url="/ui/queue/rows${filterQuery(f, f.cursor ? { cursor: f.cursor } : {})}" data-refresh-ms="${REFRESH_MS}">${
    table.rows.length ? table.rows : emptyRow(f, mayDecide)
  }</tbody>
</table>
<p class="muted" id="queue-refresh" aria-live="polite"></p>
${table.nextCursor && html`<p><a href="/ui${filterQuery(f, { cursor: table.nextCursor })}">More plans…</a></p>`}
${
  bulkView(f, mayDecide) &&
  table.pickable > 0 &&
  html`<form method="post" action="/ui/plans/bulk-reject${filterQuery(f)}" class="decide bulk" id="bulk-form">
  ${csrfField(c.get('csrf'))}
  <h2 id="bulk-h">Reject the selected plans</h2>
  <p class="hint">For superseded or stale plans. Each selected plan is rejected on its own, with this comment, as if from its page; nothing is executed.</p>
  <label for="bulk-comment">Why reject them? (required)</label>
  <textarea id="bulk-comment" name="comment" rows="2" required maxlength="${COMMENT_MAX}">${shown.draft?.comment ?? ''}</textarea>
  <button type="submit">Reject selected plans</button>
</form>`
}`;
  return c.html(signedIn(c, 'queue', 'Plan queue', body), shown.status ?? 200);
}

async function rowsOnly(c: Context<UiEnv>, deps: Deps): Promise<Response> {
  const { filter, problems } = readFilter(c);
  const mayDecide = allows(c.get('viewer').role, 'decide');
  const n = columns(filter, mayDecide);
  if (problems.length)
    return c.html(html`<tr class="empty"><td colspan="${n}">${problems.join(' ')}</td></tr>`.value, 400);
  try {
    const table = await rows(c, deps, filter);
    return c.html((table.rows.length ? html`${table.rows}` : emptyRow(filter, mayDecide)).value);
  } catch (err) {
    if (!(err instanceof InvalidCursorError)) throw err;
    return c.html(
      html`<tr class="empty"><td colspan="${n}">That page of the queue does not exist.</td></tr>`.value,
      400,
    );
  }
}

async function bulkReject(c: Context<UiEnv>, deps: Deps): Promise<Response> {
  const viewer = c.get('viewer');
  const form = c.get('form');
  const ids = [
    ...new Set(
      fields(form, 'plan')
        .map((id) => id.trim())
        .filter(Boolean),
    ),
  ];
  const comment = (field(form, 'comment') ?? '').trim();
  const draft = { comment, selected: new Set(ids) };
  if (!allows(viewer.role, 'decide'))
    return render(c, deps, { status: 403, error: `Your role (${viewer.role}) may not decide plans.` });
  if (!ids.length)
    return render(c, deps, { status: 422, error: 'Select at least one plan to reject.', draft });
  if (!comment) return render(c, deps, { status: 422, error: 'A rejection needs a comment.', draft });
  if (comment.length > COMMENT_MAX)
    return render(c, deps, {
      status: 422,
      error: `That comment is too long (at most ${COMMENT_MAX} characters).`,
      draft,
    });
  if (ids.length > BULK_MAX)
    return render(c, deps, {
      status: 422,
      error: `At most ${BULK_MAX} plans can be rejected at once.`,
      draft,
    });
  const done: string[] = [];
  const refused: { id: string; why: string }[] = [];
  for (const id of ids) {
    try {
      await deps.plans.decide(id, 'reject', { identity: viewer.identity, comment });
      done.push(id);
    } catch (err) {
      if (!(err instanceof DecisionError)) throw err;
      refused.push({ id, why: err.message });
    }
  }
  const results = bulkResults(done, refused);
  return render(c, deps, { results, ...(refused.length && !done.length ? { status: 409 } : {}) });
}

/** What a bulk rejection did: the plans it rejected and those it could not, with why. */
function bulkResults(done: string[], refused: { id: string; why: string }[]): SafeHtml {
  return html`<section class="bulk-results" aria-labelledby="bulk-results-h" role="status">
<h2 id="bulk-results-h">Bulk rejection: ${done.length} rejected, ${refused.length} refused</h2>
${done.length ? html`<p>Rejected: ${done.map((id, i) => html`${i ? ', ' : ''}<a href="${uiPath('plans', id)}">${id}</a>`)}.</p>` : ''}
${
  refused.length
    ? html`<p>Not rejected:</p><ul class="refused">${refused.map(
        (r) => html`<li><a href="${uiPath('plans', r.id)}">${r.id}</a>: ${r.why}</li>`,
      )}</ul>`
    : ''
}</section>`;
}

/** Where a plan came from, in a table cell: job, trigger or pull request (with its link), all escaped. */
function sourceCell(source: PlanSource | null): SafeHtml {
  if (!source) return html`<span class="muted">unknown</span>`;
  const pr = source.pullRequest;
  if (pr) {
    const label = `${pr.repository}#${pr.number}`;
    const title = pr.title ?? '';
    return html`pull request ${pr.url ? html`<a href="${pr.url}" rel="noopener noreferrer nofollow">${label}</a>` : label}${
      title
        ? html`<br><span class="untrusted">${title.length > 120 ? `${title.slice(0, 120)}…` : title}</span>`
        : ''
    }${pr.author ? html`<br><span class="muted">by ${pr.author}</span>` : ''}`;
  }
  if (source.kind === 'trigger' && source.trigger)
    return html`trigger ${source.trigger.name ?? source.trigger.id}${source.trigger.kind ? html` <span class="muted">(${source.trigger.kind})</span>` : ''}`;
  if (source.job) {
    const line = source.prompt.split('\n').find((l) => l.trim()) ?? '';
    return html`job <code>${source.job.id}</code>${source.job.slotAt === null ? ' (run by hand)' : ''}<br><span class="muted">${
      line.length > 80 ? `${line.slice(0, 80)}…` : line
    }</span>`;
  }
  return html`by hand <span class="muted">(${source.requestedBy})</span>`;
}

/** What the filters offer by name: sessions, jobs, triggers, and people who requested plans. */
interface Choices {
  sessions: Session[];
  jobs: { job: CronJob; session: Session }[];
  triggers: Trigger[];
  requesters: string[];
}

/** The most sessions the filters list by name (the newest); an id typed in the address still filters. */
const CHOICES_MAX = 200;

async function filterChoices(deps: Deps): Promise<Choices> {
  const { store } = deps;
  const [sessions, triggers] = await Promise.all([
    store.listSessions({ limit: CHOICES_MAX }).then((p) => p.items),
    store.listTriggers({}),
  ]);
  const open = sessions.filter((x) => x.status === 'open');
  const jobs = (
    await Promise.all(
      open.map(async (session) => (await store.listJobs(session.id)).map((job) => ({ job, session }))),
    )
  ).flat();
  const requesters = [
    ...new Set([...sessions.map((x) => x.owner), ...jobs.map((j) => j.job.createdBy)]),
  ].sort();
  return { sessions, jobs, triggers, requesters };
}

/** A job as people know it: its name, else the first line of its prompt, with its session. */
const jobLabel = (job: CronJob, session: Session) => {
  const line = job.name ?? job.prompt.split('\n').find((l) => l.trim()) ?? job.id;
  return `${line.length > 60 ? `${line.slice(0, 60)}…` : line} (${session.name})`;
};

/** A select of `options` (value, label) with "any" first; a chosen id not among them stays, as itself. */
function choiceSelect(id: string, name: string, any: string, chosen: string, options: [string, string][]) {
  const known = options.some(([v]) => v === chosen);
  const all: [string, string][] = [
    ['', any],
    ...options,
    ...(chosen && !known ? [[chosen, chosen] as [string, string]] : []),
  ];
  return html`<select id="${id}" name="${name}">${all.map(
    ([value, label]) =>
      html`<option value="${value}"${value === chosen ? html` selected` : ''}>${label}</option>`,
  )}</select>`;
}

function filterForm(f: QueueFilter, ch: Choices): SafeHtml {
  const option = (value: string, label: string, selected: boolean) =>
    html`<option value="${value}"${selected ? html` selected` : ''}>${label}</option>`;
  return html`<form method="get" action="/ui" class="filters" id="queue-filters" role="search" aria-label="Filter the queue">
  <div><label for="f-status">Status</label>
  <select id="f-status" name="status">${PLAN_STATUSES.map((s) => option(s, statusWords('plan', s), f.status === s))}${option('any', 'any status', f.status === null)}</select></div>
  <div><label for="f-session">Session</label>${choiceSelect(
    'f-session',
    'session',
    'any session',
    f.session,
    ch.sessions.map((x) => [x.id, `${x.name}${x.status === 'closed' ? ' (closed)' : ''}`]),
  )}</div>
  <div><label for="f-job">Job</label>${choiceSelect(
    'f-job',
    'job',
    'any job',
    f.job,
    ch.jobs.map(({ job, session }) => [job.id, jobLabel(job, session)]),
  )}</div>
  <div><label for="f-trigger">Trigger</label>${choiceSelect(
    'f-trigger',
    'trigger',
    'any trigger',
    f.trigger,
    ch.triggers.map((t) => [t.id, `${t.name} (${t.kind})`]),
  )}</div>
  <div><label for="f-requester">Requested by</label><input type="text" id="f-requester" name="requester" value="${f.requester}" list="f-requesters" autocomplete="off"><datalist id="f-requesters">${ch.requesters.map((r) => html`<option value="${r}"></option>`)}</datalist></div>
  <div><label for="f-older">Older than (days)</label><input type="number" id="f-older" name="older_than_days" min="0" max="3650" value="${f.olderThanDays ?? ''}"></div>
  <div class="check"><input type="checkbox" id="f-behind" name="behind" value="1"${f.behind ? html` checked` : ''}><label for="f-behind">Workspace moved on (stale or not)</label></div>
  <div><button type="submit">Filter</button> <a href="/ui">Clear</a></div>
</form>
<p class="quick">Quick filters: <a href="/ui?older_than_days=7">pending for over 7 days</a> · <a href="/ui?behind=1">workspace moved on (stale or not)</a> · <a href="/ui?status=any">every plan</a></p>`;
}
