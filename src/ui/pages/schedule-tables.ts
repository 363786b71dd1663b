import type { CronJob, Session, Trigger } from '../../domain/types.js';
import { upcomingSlots } from '../../scheduler/next-fire.js';
import type { RecentSlot } from '../../store/store.js';
import { html, type SafeHtml } from '../html.js';
import { csrfField, time, uiPath } from '../layout.js';

// The Schedules page's two tables: scheduled triggers and sessions' own jobs, each row with its next fire
// times, the outcomes of its last slots (linked to their runs and plans) and, for a viewer who may act, the
// forms that pause, resume or run it now.

/** What every row is shown with. */
export interface ScheduleView {
  /** The latest slots of each job shown, newest first (store.recentSlots). */
  slots: Map<string, RecentSlot[]>;
  /** The viewer's CSRF token when they may pause, resume and run (operators); null: no forms. */
  csrf: string | null;
}

/** How many of a job's next fire times a row lists. */
const UPCOMING = 3;

const utc = (t: number) =>
  new Date(t)
    .toISOString()
    .replace('T', ' ')
    .replace(/:00\.000Z$/, ' UTC');

/**
 * One slot's outcome as a small badge, linked to its run when it has one, with a link to the plan that run
 * proposed. Any outcome string renders (the class keeps only its letters), so outcomes added later show too.
 */
export function slotBadge(s: RecentSlot): SafeHtml {
  const cls = `slot slot-${s.outcome.replace(/[^a-z_]/g, '')}`;
  const label = s.slots > 1 ? `${s.outcome} ×${s.slots}` : s.outcome;
  const range = s.slots > 1 ? `${utc(s.slotAt)} … ${utc(s.lastSlotAt)}` : utc(s.slotAt);
  const title = `${label}: slot ${range}${s.runId ? `, run ${s.runId}` : ''}`;
  const badge = s.runId
    ? html`<a class="${cls}" href="${uiPath('runs', s.runId)}" title="${title}">${label}</a>`
    : html`<span class="${cls}" title="${title}">${label}</span>`;
  const plan =
    s.planId &&
    html` <a class="slot-plan" href="${uiPath('plans', s.planId)}" title="plan ${s.planId}">plan</a>`;
  return html`<li>${badge}${plan}</li>`;
}

/** The last slots' outcomes, newest first. */
export function slotList(slots: RecentSlot[] | undefined): SafeHtml {
  if (!slots?.length) return html`<span class="muted">none yet</span>`;
  return html`<ol class="slots" aria-label="last ${slots.length} slots, newest first">${slots.map(slotBadge)}</ol>`;
}

/** The next fire times while the job fires; what stops it otherwise. */
function nextTimes(job: CronJob | null, firing: boolean): SafeHtml {
  if (!job) return html`—`;
  if (!firing)
    return html`<span class="muted">none while ${job.status === 'missed' ? 'missed' : 'paused'}</span>`;
  const next = upcomingSlots(job, UPCOMING);
  return next.length ? html`<ul class="times">${next.map((at) => html`<li>${time(at)}</li>`)}</ul>` : html`—`;
}

/**
 * Pause (or resume) and run-now forms posting to `path`/<action>, for a viewer who may act; `label` names
 * what they act on for assistive technology. A missed one-shot cannot be paused: it is run or deleted.
 */
function actions(path: string, state: 'firing' | 'paused' | 'missed', label: string, csrf: string | null) {
  if (!csrf) return html`<span class="muted">—</span>`;
  const form = (action: string, text: string) =>
    html`<form class="inline" method="post" action="${path}/${action}">${csrfField(csrf)}<button type="submit" aria-label="${text}: ${label}">${text}</button></form>`;
  return html`${state === 'paused' ? form('resume', 'Resume') : state === 'firing' ? form('pause', 'Pause') : ''}${form('run', 'Run now')}`;
}

const schedule = (job: CronJob | null) =>
  job
    ? html`<code>${job.cron}</code>${job.effectiveCron !== job.cron ? html` <span class="muted">(→ <code>${job.effectiveCron}</code>)</span>` : ''}`
    : html`—`;

/** A scheduled trigger: enabled or not is the trigger's word; its job holds the schedule and the slots. */
export function triggerRow(t: Trigger, job: CronJob | null, v: ScheduleView): SafeHtml {
  const firing = t.enabled && job?.status === 'active';
  const status = !t.enabled ? 'paused' : (job?.status ?? 'no job');
  const state = !t.enabled ? 'paused' : firing ? 'firing' : 'missed';
  return html`<tr id="trigger-${t.id}">
  <th scope="row">${t.name}<br><code class="muted">${t.id}</code></th>
  <td>${schedule(job)}</td>
  <td>${job?.timezone ?? '—'}</td>
  <td>${status}</td>
  <td>${nextTimes(job, firing)}</td>
  <td>${job ? slotList(v.slots.get(job.id)) : '—'}</td>
  <td>${job?.fireCount ?? 0}</td>
  <td><code>${t.workspace ?? ''}</code></td>
  <td>${job ? actions(`/ui/schedules/triggers/${encodeURIComponent(t.id)}`, state, t.name, v.csrf) : '—'}</td>
</tr>`;
}

/** A session's own job, with its name (if it has one), session, expiry and prompt. */
export function jobRow(job: CronJob, session: Session | null, v: ScheduleView): SafeHtml {
  const firing = job.status === 'active';
  const state = firing ? 'firing' : job.status === 'missed' ? 'missed' : 'paused';
  const prompt = job.prompt.length > 80 ? `${job.prompt.slice(0, 79)}…` : job.prompt;
  return html`<tr id="job-${job.id}">
  <th scope="row">${job.name ? html`<strong>${job.name}</strong><br>` : ''}<code>${job.id}</code><br><span class="muted">${prompt}</span></th>
  <td>${session?.name ?? ''}<br><code class="muted">${job.sessionId}</code></td>
  <td>${schedule(job)}${job.recurring ? '' : html` <span class="muted">(once)</span>`}</td>
  <td>${job.timezone}</td>
  <td>${job.status}</td>
  <td>${nextTimes(job, firing)}</td>
  <td>${job.expiresAt === null ? html`<span class="muted">never</span>` : time(job.expiresAt)}</td>
  <td>${slotList(v.slots.get(job.id))}</td>
  <td>${actions(`/ui/schedules/jobs/${encodeURIComponent(job.id)}`, state, job.id, v.csrf)}</td>
</tr>`;
}
