import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { allows, type Identity } from '../../auth/tokens.js';
import { DomainError } from '../../domain/errors.js';
import type { CronJob, Session } from '../../domain/types.js';
import { InvalidCursorError } from '../../store/store.js';
import type { UiEnv } from '../env.js';
import { pageStatus } from '../errors.js';
import { refusal } from '../guard.js';
import { html, type SafeHtml } from '../html.js';
import { alertBox, uiPath } from '../layout.js';
import { signedIn, type UiContext } from './page-context.js';
import { jobRow, type ScheduleView, triggerRow } from './schedule-tables.js';

/** Sessions' jobs a page shows. */
const PAGE = 50;
/** How many of each job's latest slots a row shows. */
const SLOTS = 10;
const ACTIONS = ['pause', 'resume', 'run'] as const;
type Action = (typeof ACTIONS)[number];

type Deps = UiContext['deps'];

/** What an action did, for the notice after the redirect: what it acted on, and the run it started. */
type Done = Record<'what', string> & { run?: string };

interface Shown {
  status?: ContentfulStatusCode;
  error?: string;
  notice?: SafeHtml;
}

/**
 * GET /ui/schedules: every scheduled trigger and every session's own job, with next fire times and the
 * outcomes of their last slots; POST /ui/schedules/{jobs,triggers}/:id/{pause,resume,run}: an operator
 * pauses, resumes or runs one now through the services the API uses (a trigger is paused by disabling it,
 * as `drydock triggers update --disable` does), then comes back here with a notice.
 */
export function scheduleRoutes({ app, deps, guard }: UiContext): void {
  app.get('/schedules', guard, (c) => show(c, deps, { notice: noticeOf(c) }));
  app.post('/schedules/jobs/:id/:action', guard, (c) => act(c, deps, 'job'));
  app.post('/schedules/triggers/:id/:action', guard, (c) => act(c, deps, 'trigger'));
}

/** What the redirect after an action says (from its query string). */
function noticeOf(c: Context<UiEnv>): SafeHtml | undefined {
  const done = c.req.query('done');
  const what = c.req.query('what') ?? '';
  const run = c.req.query('run');
  if (done === 'run' && run)
    return html`Run <a href="${uiPath('runs', run)}">${run}</a> of ${what} was queued.`;
  if (done === 'pause' || done === 'resume') return html`${what} ${done === 'pause' ? 'paused' : 'resumed'}.`;
  return undefined;
}

/** Every scheduled trigger's job, by trigger id (a page of 200 at a time: there are as many as triggers). */
async function triggerJobs(deps: Deps): Promise<Map<string, CronJob>> {
  const byTrigger = new Map<string, CronJob>();
  let cursor: string | undefined;
  do {
    const page = await deps.jobs.page({ ofTrigger: true, limit: 200, cursor });
    for (const job of page.items) if (job.triggerId) byTrigger.set(job.triggerId, job);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return byTrigger;
}

/** A page of sessions' own jobs; a cursor this daemon did not issue reads as the first page, said so. */
async function sessionJobs(deps: Deps, cursor: string | undefined, shown: Shown) {
  try {
    return await deps.jobs.page({ ofTrigger: false, limit: PAGE, cursor });
  } catch (err) {
    if (!(err instanceof InvalidCursorError)) throw err;
    shown.error ??= 'That page link was not one of ours; showing the first page.';
    return deps.jobs.page({ ofTrigger: false, limit: PAGE });
  }
}

async function show(c: Context<UiEnv>, deps: Deps, shown: Shown): Promise<Response> {
  const { store } = deps;
  const viewer = c.get('viewer');
  const triggers = await store.listTriggers({ kind: 'schedule' });
  const byTrigger = await triggerJobs(deps);
  const jobs = await sessionJobs(deps, c.req.query('cursor') || undefined, shown);
  // One read of the last slots for every job on the page; the sessions of the page's jobs, each read once.
  const slots = await store.recentSlots(
    [...byTrigger.values(), ...jobs.items].map((j) => j.id),
    SLOTS,
  );
  const sessions = new Map<string, Session | null>();
  for (const job of jobs.items) {
    if (!sessions.has(job.sessionId)) sessions.set(job.sessionId, await store.getSession(job.sessionId));
  }
  const v: ScheduleView = { slots, csrf: allows(viewer.role, 'operate') ? c.get('csrf') : null };
  const next =
    jobs.nextCursor && html`<p><a href="/ui/schedules?cursor=${jobs.nextCursor}">Next page of jobs</a></p>`;
  const body = html`<h1>Schedules</h1>
${alertBox(shown.error)}${shown.notice && html`<div class="alert notice" role="status"><p>${shown.notice}</p></div>`}
${!v.csrf && html`<p class="hint">Your role (${viewer.role}) may read schedules but not pause, resume or run them.</p>`}
<p class="muted">Scheduled triggers fire on their cron schedule and never expire; change them with
<code>drydock triggers update</code> or <code>PATCH /v1/triggers/&lt;id&gt;</code>. A session's jobs expire
unless renewed (<code>drydock jobs renew</code>). Each slot links its run, and the plan that run proposed.</p>
${
  triggers.length
    ? html`<table id="scheduled-triggers">
  <caption>Scheduled triggers</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Schedule</th><th scope="col">Zone</th><th scope="col">Status</th><th scope="col">Next fire times</th><th scope="col">Last ${SLOTS} slots</th><th scope="col">Fired</th><th scope="col">Workspace</th><th scope="col">Actions</th></tr></thead>
  <tbody>${triggers.map((t) => triggerRow(t, byTrigger.get(t.id) ?? null, v))}</tbody>
</table>`
    : html`<p>No scheduled triggers.</p>`
}
${
  jobs.items.length
    ? html`<table id="session-jobs">
  <caption>Session jobs</caption>
  <thead><tr><th scope="col">Job</th><th scope="col">Session</th><th scope="col">Schedule</th><th scope="col">Zone</th><th scope="col">Status</th><th scope="col">Next fire times</th><th scope="col">Expires</th><th scope="col">Last ${SLOTS} slots</th><th scope="col">Actions</th></tr></thead>
  <tbody>${jobs.items.map((j) => jobRow(j, sessions.get(j.sessionId) ?? null, v))}</tbody>
</table>${next}`
    : html`<p>No session jobs.</p>`
}`;
  return c.html(signedIn(c, 'schedules', 'Schedules', body), shown.status ?? 200);
}

/** A form's action: for an operator, through the services the API uses; a refusal shows on the page. */
async function act(c: Context<UiEnv>, deps: Deps, kind: 'job' | 'trigger'): Promise<Response> {
  const id = c.req.param('id')!;
  const action = c.req.param('action') as Action;
  if (!ACTIONS.includes(action))
    return c.html(refusal('Not found', `There is no page at ${c.req.path}.`), 404);
  const viewer = c.get('viewer');
  if (!allows(viewer.role, 'operate')) {
    return show(c, deps, {
      status: 403,
      error: `Your role (${viewer.role}) may not pause, resume or run schedules.`,
    });
  }
  try {
    const done =
      kind === 'job' ? await onJob(deps, id, action, viewer) : await onTrigger(deps, id, action, viewer);
    return c.redirect(
      `/ui/schedules?${new URLSearchParams({ done: action, ...done } as Record<string, string>)}`,
      303,
    );
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return show(c, deps, { status: pageStatus(err), error: err.message });
  }
}

/** A session's job paused, resumed or run (Jobs refuses a scheduled trigger's job the first two). */
async function onJob(deps: Deps, id: string, action: Action, viewer: Identity): Promise<Done> {
  if (action === 'run') return { what: `job ${id}`, run: (await deps.jobs.runNow(id, viewer.identity)).id };
  await (action === 'pause' ? deps.jobs.pause(id) : deps.jobs.resume(id));
  return { what: `Job ${id}` };
}

/** A scheduled trigger disabled, enabled (its job follows) or its job run now. */
async function onTrigger(deps: Deps, id: string, action: Action, viewer: Identity): Promise<Done> {
  const trigger = await deps.triggerAdmin.get(id);
  const job = await deps.triggerAdmin.jobOf(trigger);
  if (!job) throw new DomainError('not_found', `trigger ${id} is not a scheduled trigger with a job`);
  if (action === 'run') {
    return { what: `trigger ${trigger.name}`, run: (await deps.jobs.runNow(job.id, viewer.identity)).id };
  }
  await deps.triggerAdmin.update(trigger, { enabled: action === 'resume', role: viewer.role });
  return { what: `Trigger ${trigger.name}` };
}
