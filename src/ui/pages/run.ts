import { shownRunSource } from '../../domain/types.js';
import { branchFor } from '../../workspace/worktree.js';
import { visibleLines } from '../diff.js';
import { html } from '../html.js';
import { alertBox, time, uiPath, usd } from '../layout.js';
import { statusWords } from '../status-words.js';
import { executionDetails } from './execution.js';
import { signedIn, type UiContext } from './page-context.js';
import { waitingLinks, waitingOf } from './waiting.js';

/**
 * GET /ui/runs/:id: the run's record, for an execute run its diff and command outputs; app.js follows its
 * event log live from /ui/runs/:id/events and shows it as a timeline.
 */
export function runRoutes({ app, deps, guard }: UiContext): void {
  app.get('/runs/:id', guard, async (c) => {
    const id = c.req.param('id');
    const run = await deps.store.getRun(id);
    if (!run) {
      const body = html`<h1>Run not found</h1>${alertBox(`There is no run ${id}.`)}<p><a href="/ui">Back to the queue</a></p>`;
      return c.html(signedIn(c, null, 'Run not found', body), 404);
    }
    const plan = run.planId ?? run.executesPlanId ?? run.revisesPlanId;
    const u = run.usage;
    const duration =
      run.startedAt !== null && run.finishedAt !== null
        ? `${((run.finishedAt - run.startedAt) / 1000).toFixed(1)} s`
        : '—';
    const executed =
      run.phase === 'execute' && run.executesPlanId ? await deps.store.getPlan(run.executesPlanId) : null;
    const execution =
      run.phase === 'execute' ? await executionDetails(deps, executed, run, { facts: false }) : null;
    const waits = await waitingOf(deps, [run]);
    const body = html`<h1>${run.phase === 'execute' ? 'Execute' : 'Plan'} run <code>${run.id}</code></h1>
<dl class="facts">
  <dt>Status</dt><dd id="run-status" data-status="${run.status}" title="${run.status}">${statusWords('run', run.status)}</dd>
  ${waits.length > 0 && html`<dt>Waiting on you</dt><dd id="run-waiting-person">${waitingLinks(waits)}</dd>`}
  ${run.waitingOn?.on === 'spend_limit' && html`<dt>Waiting on</dt><dd id="run-waiting">the account's spend limit: an admin resumes it with <code>drydock runs resume</code> once the limit is raised; else it tries again at ${time(run.waitingOn.until)}</dd>`}
  ${run.waitingOn?.on === 'spend_cap' && html`<dt>Waiting on</dt><dd id="run-waiting">a spend cap's daily_usd (<a href="/ui/usage">usage</a>): it goes on when the day resets at ${time(run.waitingOn.until)}, or when an admin raises the cap and resumes it with <code>drydock runs resume</code></dd>`}
  <dt>Phase</dt><dd>${run.phase}${run.executeMode ? ` (mode ${run.executeMode})` : ''}</dd>
  ${plan && html`<dt>Plan</dt><dd><a href="${uiPath('plans', plan)}">${plan}</a></dd>`}
  <dt>Requested by</dt><dd>${run.requestedBy} (${shownRunSource(run.source)})</dd>
  <dt>Model</dt><dd>${run.model ?? '—'}</dd>
  <dt>Turns</dt><dd>${run.turns}</dd>
  <dt>Tokens</dt><dd>input ${u.input_tokens ?? 0}, output ${u.output_tokens ?? 0}, cache read ${u.cache_read_tokens ?? 0}, cache write ${(u.cache_write_5m_tokens ?? 0) + (u.cache_write_1h_tokens ?? 0)}</dd>
  <dt>Cost</dt><dd>${usd(run.costUsd)}</dd>
  <dt>Started</dt><dd>${time(run.startedAt)}</dd>
  <dt>Finished</dt><dd>${time(run.finishedAt)} (${duration})</dd>
  ${run.error && html`<dt>Error</dt><dd>${run.error}</dd>`}
  ${executed?.workspaceCommit && html`<dt>Branch</dt><dd><code>${branchFor(executed.id)}</code></dd>`}
  ${run.resultCommit && html`<dt>Result commit</dt><dd><code>${run.resultCommit}</code></dd>`}
  ${run.changedFiles && run.changedFiles.length > 0 && html`<dt>Changed files</dt><dd><ul>${run.changedFiles.map((f) => html`<li><code>${f}</code></li>`)}</ul></dd>`}
  ${run.diffStat && html`<dt>Diff stat</dt><dd><pre>${visibleLines(run.diffStat)}</pre></dd>`}
</dl>
${execution && html`<section class="execution" aria-labelledby="execution-heading"><h2 id="execution-heading">Execution</h2>${execution}</section>`}
<h2 id="events-heading">Timeline</h2>
<p id="run-events-state" role="status">Loading the event log…</p>
<noscript><p>The live event log needs JavaScript. Reload the page to see the run's latest status.</p></noscript>
<ol id="run-events" class="events timeline" aria-labelledby="events-heading" data-events-url="/ui/runs/${encodeURIComponent(run.id)}/events"></ol>`;
    return c.html(signedIn(c, null, `Run ${run.id}`, body));
  });
}
