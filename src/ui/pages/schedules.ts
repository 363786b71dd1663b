import { upcomingSlots } from '../../scheduler/next-fire.js';
import { html } from '../html.js';
import { time } from '../layout.js';
import { signedIn, type UiContext } from './page-context.js';

/** GET /ui/schedules: the scheduled triggers (the schedules a team keeps), with their next fire times. */
export function scheduleRoutes({ app, deps, guard }: UiContext): void {
  const { store } = deps;

  app.get('/schedules', guard, async (c) => {
    const rows = [];
    for (const t of await store.listTriggers({ kind: 'schedule' })) {
      const job = await store.jobOfTrigger(t.id);
      const next = job ? upcomingSlots(job, 3) : [];
      rows.push(html`<tr>
  <th scope="row">${t.name}<br><code class="muted">${t.id}</code></th>
  <td><code>${job?.cron ?? '—'}</code> <span class="muted">${job?.timezone ?? ''}</span></td>
  <td>${!t.enabled ? 'paused' : (job?.status ?? 'no job')}</td>
  <td>${next.length ? html`<ul class="times">${next.map((at) => html`<li>${time(at)}</li>`)}</ul>` : '—'}</td>
  <td>${job?.fireCount ?? 0}</td>
  <td><code>${t.workspace ?? ''}</code></td>
</tr>`);
    }
    const body = html`<h1>Schedules</h1>
<p class="muted">Scheduled triggers fire on their cron schedule and never expire; change them with
<code>drydock triggers update</code> or <code>PATCH /v1/triggers/&lt;id&gt;</code>.</p>
${
  rows.length
    ? html`<table>
  <caption>Scheduled triggers</caption>
  <thead><tr><th scope="col">Name</th><th scope="col">Schedule</th><th scope="col">Status</th><th scope="col">Next fire times</th><th scope="col">Fired</th><th scope="col">Workspace</th></tr></thead>
  <tbody>${rows}</tbody>
</table>`
    : html`<p>No scheduled triggers.</p>`
}`;
    return c.html(signedIn(c, 'schedules', 'Schedules', body));
  });
}
