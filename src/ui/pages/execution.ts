import { executionBase } from '../../domain/footprint.js';
import { isFinishedRunStatus, type Plan, type Run } from '../../domain/types.js';
import type { AppDeps } from '../../http/deps.js';
import { workRoot } from '../../workspace/paths.js';
import { readResultDiff } from '../../workspace/result-diff.js';
import { branchFor } from '../../workspace/worktree.js';
import { parseUnifiedDiff, renderDiff, visibleControls, visibleLines } from '../diff.js';
import { html, type SafeHtml } from '../html.js';
import { time, uiPath } from '../layout.js';
import { statusWords } from '../status-words.js';

// An execution shown as a code review would: its status, branch and commit, the diff it committed
// (rendered per file by ui/diff.ts) and the output of the commands it ran. The plan page shows it for the
// plan's execute run (executionSection); the run page shows the same for an execute run (executionDetails).

/** Commands shown at most (the latest ones), and characters of one output shown. */
const MAX_COMMANDS = 50;
const MAX_OUTPUT_CHARS = 50_000;
/** Outputs longer than this (lines or characters) start folded. */
const FOLD_LINES = 15;
const FOLD_CHARS = 1_500;

/** The plan's execution, or nothing when the plan has no execute run yet. For the plan page. */
export async function executionSection(deps: AppDeps, plan: Plan): Promise<SafeHtml> {
  const runs = await deps.store.listPlanRuns(plan);
  const run = runs.filter((r) => r.phase === 'execute' && r.executesPlanId === plan.id).at(-1);
  if (!run) return html``;
  return html`<section class="execution" aria-labelledby="execution-heading">
<h2 id="execution-heading">Execution</h2>
${await executionDetails(deps, plan, run, { facts: true })}
</section>`;
}

/**
 * What an execute run did: facts (status, branch, commit, diff stat; left out where the page shows them
 * already), the rendered diff, the commands and their output.
 */
export async function executionDetails(
  deps: AppDeps,
  plan: Plan | null,
  run: Run,
  o: { facts: boolean },
): Promise<SafeHtml> {
  const [diff, commands] = await Promise.all([
    readResultDiff({ store: deps.store, workRoot: workRoot(deps.config) }, run),
    commandsOf(deps, run),
  ]);
  const branch = plan?.workspaceCommit ? branchFor(plan.id) : null;
  const facts =
    o.facts &&
    html`<dl class="facts">
  <dt>Run</dt><dd><a href="${uiPath('runs', run.id)}">${run.id}</a> — <span class="execution-status status" data-status="${run.status}" title="${run.status}">${statusWords('run', run.status)}</span>${run.executeMode ? ` (mode ${run.executeMode})` : ''}</dd>
  <dt>Finished</dt><dd>${time(run.finishedAt)}</dd>
  <dt>Branch</dt><dd>${branch ? html`<code class="execution-branch">${branch}</code>` : 'none: the workspace is not a git repository, files were changed in place'}</dd>
  <dt>Commit</dt><dd>${run.resultCommit ? html`<code class="execution-commit">${run.resultCommit}</code>` : '—'}</dd>
  ${plan && executionBase(plan) && html`<dt>Based on</dt><dd><code>${executionBase(plan)}</code>${plan.executionBase ? ' (the head it was approved on; the plan was made against an earlier commit)' : ''}</dd>`}
  ${run.diffStat && html`<dt>Diff stat</dt><dd><pre>${visibleLines(run.diffStat)}</pre></dd>`}
  ${!branch && run.changedFiles?.length && html`<dt>Changed files</dt><dd><ul>${run.changedFiles.map((f) => html`<li><code>${visibleControls(f)}</code></li>`)}</ul></dd>`}
</dl>`;
  const changes =
    diff.state === 'ready'
      ? html`${diff.truncated && html`<p class="warning" role="note">Only part of the diff is shown: ${diff.truncated}.</p>`}
${renderDiff(parseUnifiedDiff(diff.diff), { idPrefix: `exec-${run.id}` })}`
      : html`<p class="muted diff-state" data-state="${diff.state}">${diffStateText(diff.state)}: ${diff.state === 'pending' ? pendingReason(run) : diff.reason}.</p>`;
  return html`${facts}
<h3 id="changes-${run.id}">Changes</h3>
${changes}
<h3 id="commands-${run.id}">Commands run</h3>
${commandList(commands)}`;
}

/** Why an execution has no diff yet, with the run's status in words (result-diff.ts says it with the stored value). */
function pendingReason(run: Run): string {
  const words = statusWords('run', run.status);
  return isFinishedRunStatus(run.status)
    ? `the execution ended (${words}) before recording a commit`
    : `the execution has not recorded a commit yet (the run is ${words})`;
}

function diffStateText(state: string): string {
  switch (state) {
    case 'no_changes':
      return 'No changes';
    case 'pending':
      return 'No diff yet';
    case 'not_git':
      return 'No diff';
    case 'unavailable':
      return 'The diff is no longer available';
    default:
      return 'No diff';
  }
}

export interface CommandRun {
  toolUseId: string;
  command: string;
  description: string | null;
  /** null: no result yet (running, waiting for an approval, or never run). */
  output: string | null;
  isError: boolean;
}

/**
 * The Bash calls of the run with their results, from its conversation: the tool_use blocks the model sent
 * and the tool_result blocks that answered them (the event log records only their sizes).
 */
export async function commandsOf(deps: AppDeps, run: Run): Promise<CommandRun[]> {
  if (!run.conversationId) return [];
  const messages = await deps.store.loadConversation(run.conversationId);
  const found: CommandRun[] = [];
  const byId = new Map<string, CommandRun>();
  for (const m of messages) {
    if (m.runId !== undefined && m.runId !== run.id) continue;
    for (const b of m.content) {
      const block = b as {
        type?: unknown;
        id?: unknown;
        name?: unknown;
        input?: { command?: unknown; description?: unknown };
        tool_use_id?: unknown;
        content?: unknown;
        is_error?: unknown;
      };
      if (
        m.role === 'assistant' &&
        block.type === 'tool_use' &&
        block.name === 'Bash' &&
        typeof block.id === 'string'
      ) {
        const c: CommandRun = {
          toolUseId: block.id,
          command:
            typeof block.input?.command === 'string'
              ? block.input.command
              : JSON.stringify(block.input ?? null),
          description: typeof block.input?.description === 'string' ? block.input.description : null,
          output: null,
          isError: false,
        };
        found.push(c);
        byId.set(block.id, c);
      } else if (m.role === 'user' && block.type === 'tool_result' && typeof block.tool_use_id === 'string') {
        const c = byId.get(block.tool_use_id);
        if (!c) continue;
        c.output = resultText(block.content);
        c.isError = block.is_error === true;
      }
    }
  }
  return found;
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) =>
        (p as { type?: unknown }).type === 'text' ? String((p as { text?: unknown }).text ?? '') : '',
      )
      .join('\n');
  }
  return JSON.stringify(content ?? null);
}

/** Commands with their output escaped in <pre>; long outputs folded in <details>. */
export function commandList(commands: CommandRun[]): SafeHtml {
  if (!commands.length) return html`<p class="muted">No commands were run.</p>`;
  const shown = commands.slice(-MAX_COMMANDS);
  return html`${commands.length > shown.length && html`<p class="muted">The first ${commands.length - shown.length} commands are not shown.</p>`}
<ol class="commands">${shown.map((c) => {
    const state =
      c.output === null
        ? html`<span class="cmd-state cmd-pending">no result</span>`
        : c.isError
          ? html`<span class="cmd-state cmd-error">failed</span>`
          : html`<span class="cmd-state cmd-ok">ok</span>`;
    const text = c.output === null ? null : clipOutput(c.output);
    const lines = text === null ? 0 : text.split('\n').length;
    const pre = text !== null && html`<pre class="cmd-output">${visibleLines(text)}</pre>`;
    return html`<li class="command">
<p class="cmd-line"><code class="cmd">$ ${visibleLines(c.command)}</code> ${state}${c.description ? html` <span class="muted">${visibleControls(c.description)}</span>` : ''}</p>
${
  text !== null && (lines > FOLD_LINES || text.length > FOLD_CHARS)
    ? html`<details class="cmd-details"><summary>Output (${lines} lines, ${c.output!.length} characters)</summary>${pre}</details>`
    : pre
}
</li>`;
  })}</ol>`;
}

function clipOutput(text: string): string {
  return text.length > MAX_OUTPUT_CHARS
    ? `${text.slice(0, MAX_OUTPUT_CHARS)}\n… (${text.length - MAX_OUTPUT_CHARS} more characters)`
    : text;
}
