import { type UsageReport, usageReport } from '../../caps/usage.js';
import { DomainError } from '../../domain/errors.js';
import { USAGE_KEYS, type UsageKey } from '../../domain/spend.js';
import { barChart } from '../bar-chart.js';
import { html } from '../html.js';
import { alertBox } from '../layout.js';
import { signedIn, type UiContext } from './page-context.js';

const usd = (v: number) => `$${v < 10 ? v.toFixed(2) : v.toFixed(0)}`;
const cents = (v: number) => `$${v.toFixed(2)}`;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * GET /ui/usage: where money went (docs/spend-caps.md): a bar chart of each day's cost, drawn on the server,
 * and the table of runs and receipts per day and key, for the range and grouping the form asks for.
 */
export function usageRoutes({ app, deps, guard }: UiContext): void {
  app.get('/usage', guard, async (c) => {
    const asked = c.req.query('by');
    const by: UsageKey = (USAGE_KEYS as readonly string[]).includes(asked ?? '')
      ? (asked as UsageKey)
      : 'session';
    const date = (name: string) => {
      const v = (c.req.query(name) ?? '').trim();
      return DATE.test(v) ? v : undefined;
    };
    const zone = deps.config.limits.timezone;
    const now = deps.clock.now();
    let error: string | undefined;
    let report: UsageReport;
    try {
      report = await usageReport(deps.store, { by, zone, now, from: date('from'), to: date('to') });
    } catch (err) {
      // A range the report refuses (from after to, too long): said, and the default range shown instead.
      if (!(err instanceof DomainError)) throw err;
      error = err.message;
      report = await usageReport(deps.store, { by, zone, now });
    }
    const { limits } = deps.config;
    const caps = [
      limits.daily_usd !== null ? `${cents(limits.daily_usd)} a day` : null,
      limits.daily_runs !== null ? `${limits.daily_runs} runs a day` : null,
    ].filter(Boolean);
    const chart = barChart({
      id: 'usage-chart',
      title: `Cost per day, ${report.from} to ${report.to} (${zone})`,
      desc: `${report.totals.runs} runs cost ${cents(report.totals.costUsd)} in all; the most in one day was ${cents(Math.max(0, ...report.days.map((d) => d.costUsd)))}.`,
      bars: report.days.map((d) => ({
        label: d.day,
        value: d.costUsd,
        text: `${d.day}: ${cents(d.costUsd)}, ${d.runs} run${d.runs === 1 ? '' : 's'}`,
      })),
      unit: usd,
    });
    const rows = report.rows.map(
      (r) => html`<tr>
  <td>${r.day}</td>
  <th scope="row">${r.name ?? r.key ?? html`<span class="muted">none</span>`}${r.name && r.key ? html`<br><code class="muted">${r.key}</code>` : ''}</th>
  <td class="num">${r.runs}</td>
  <td class="num">${cents(r.costUsd)}</td>
  <td class="num">${r.inputTokens}</td>
  <td class="num">${r.outputTokens}</td>
</tr>`,
    );
    const option = (k: UsageKey) =>
      html`<option value="${k}"${k === by ? html` selected` : ''}>${k}</option>`;
    const body = html`<h1>Usage</h1>
${alertBox(error)}
<p class="muted">Runs and their receipts by the day they were created, in ${zone} (<code>limits.timezone</code>).
Spend caps: ${caps.length ? caps.join(', ') : 'none for the whole daemon'}; triggers and sessions may have their own
(<code>limits</code>).</p>
<form class="filters" method="get" action="/ui/usage">
  <label for="usage-by">By</label> <select id="usage-by" name="by">${USAGE_KEYS.map(option)}</select>
  <label for="usage-from">From</label> <input id="usage-from" type="date" name="from" value="${report.from}">
  <label for="usage-to">To</label> <input id="usage-to" type="date" name="to" value="${report.to}">
  <button type="submit">Show</button>
</form>
<p id="usage-total"><strong>${cents(report.totals.costUsd)}</strong> over ${report.totals.runs} run${report.totals.runs === 1 ? '' : 's'},
${report.from} to ${report.to}.</p>
<figure>${chart}</figure>
${
  rows.length
    ? html`<table id="usage-table">
  <caption>Runs and cost per day and ${by}</caption>
  <thead><tr><th scope="col">Day</th><th scope="col">${by[0]!.toUpperCase()}${by.slice(1)}</th><th scope="col" class="num">Runs</th><th scope="col" class="num">Cost</th><th scope="col" class="num">Input tokens</th><th scope="col" class="num">Output tokens</th></tr></thead>
  <tbody>${rows}</tbody>
</table>`
    : html`<p>No runs in this range.</p>`
}`;
    return c.html(signedIn(c, 'usage', 'Usage', body), error ? 422 : 200);
  });
}
