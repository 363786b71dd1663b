import type { SandboxStatus } from '../../agent/sandbox.js';
import { planStatusAt } from '../../domain/plan-status.js';
import type { Decision, Plan, Run, Session } from '../../domain/types.js';
import type { AppDeps } from '../../http/deps.js';
import type { PlanContext } from '../../plans/plan-context.js';
import { approversOf } from '../../plans/policy.js';
import { branchFor } from '../../workspace/worktree.js';
import { html, type SafeHtml } from '../html.js';
import { time, uiPath, usd } from '../layout.js';
import { statusWords } from '../status-words.js';
import { type Waiting, waitingLinks } from './waiting.js';

// The facts at the top of the plan page: where the plan stands and what waits on a person, what it cost
// (planning, execution, total), where its result went (the pull request, or the branch and commit), who asked,
// and the terms it carries (approvals, mode, commands).

/** What the top facts show besides the plan itself. */
export interface FactsInput {
  plan: Plan;
  session: Session | null;
  decisions: readonly Decision[];
  runs: readonly Run[];
  cost: PlanContext['cost'];
  waits: readonly Waiting[];
  now: number;
}

/** The plan's execute run, if it has one. */
export const executeRunOf = (plan: Plan, runs: readonly Run[]): Run | null =>
  runs.filter((r) => r.phase === 'execute' && r.executesPlanId === plan.id).at(-1) ?? null;

export function factsList(deps: AppDeps, f: FactsInput): SafeHtml {
  const { plan, session, decisions, now } = f;
  const approvals = approversOf(decisions).length;
  const status = planStatusAt(plan, now);
  return html`<dl class="facts" id="plan-facts">
  <dt>Status</dt><dd id="plan-status" data-status="${status}" title="${status}">${statusWords('plan', status)}</dd>
  ${f.waits.length > 0 && html`<dt>Waiting on you</dt><dd id="plan-waiting">${waitingLinks(f.waits)}</dd>`}
  ${resultFacts(plan, f.runs)}
  <dt>Cost</dt><dd id="plan-cost">${costLine(plan, f)}</dd>
  <dt>Plan</dt><dd><code>${plan.id}</code></dd>
  <dt>Round</dt><dd>${plan.round}${plan.previousPlanId && html` (revises <a href="${uiPath('plans', plan.previousPlanId)}">${plan.previousPlanId}</a>)`}</dd>
  <dt>Session</dt><dd>${session?.name ?? plan.sessionId} <span class="muted">(${session?.workspace ?? 'unknown workspace'})</span></dd>
  <dt>Requested by</dt><dd>${plan.requestedBy}${plan.owner !== plan.requestedBy ? ` (session owner ${plan.owner})` : ''}</dd>
  <dt>Approvals</dt><dd>${approvals} of ${plan.approvalsRequired} required${plan.allowSelfApproval ? ' (self-approval allowed)' : ''}</dd>
  <dt>Execute mode</dt><dd>${plan.executeMode}</dd>
  <dt>Commands</dt><dd id="plan-commands">${commandsLine(deps.sandbox, plan.network)}</dd>
  <dt>sha256</dt><dd><code id="plan-sha256">${plan.sha256}</code></dd>
  <dt>Workspace commit</dt><dd>${plan.workspaceCommit ? html`<code>${plan.workspaceCommit}</code>` : 'none (not a git workspace)'}</dd>
  <dt>Proposed</dt><dd>${time(plan.createdAt)}</dd>
  <dt>Expires</dt><dd>${time(plan.expiresAt)}</dd>
  ${plan.decidedAt !== null && html`<dt>Decided</dt><dd>${time(plan.decidedAt)}</dd>`}
  ${plan.failureReason && html`<dt>Failure</dt><dd>${plan.failureReason}</dd>`}
</dl>`;
}

/** Planning, and once it executes the execution and the total (the Cost section below itemizes planning). */
function costLine(plan: Plan, f: FactsInput): SafeHtml {
  const planning = f.cost.total.costUsd;
  const run = executeRunOf(plan, f.runs);
  if (!run)
    return html`planning <span id="cost-planning">${usd(planning)}</span> <a href="#cost">(by round)</a>`;
  return html`planning <span id="cost-planning">${usd(planning)}</span> + execution <a href="${uiPath('runs', run.id)}" id="cost-execution">${usd(run.costUsd)}</a> = <strong id="cost-all">${usd(planning + run.costUsd)}</strong>`;
}

/** Only http(s) addresses become links; anything else is shown as text. */
export const webLink = (url: string, label: string) =>
  /^https?:\/\//i.test(url) ? html`<a href="${url}" rel="noopener noreferrer nofollow">${label}</a>` : label;

/**
 * Where the executed result is: the execution run and, once delivered, the pull request (or, without one, the
 * branch and commit); the Delivery section below has the attempts and errors.
 */
function resultFacts(plan: Plan, runs: readonly Run[]): SafeHtml | string {
  const run = executeRunOf(plan, runs);
  if (!run) return '';
  const d = plan.delivery && plan.delivery.status !== 'off' ? plan.delivery : null;
  const branch = d?.branch ?? (plan.workspaceCommit ? branchFor(plan.id) : null);
  const commit = d?.commit ?? run.resultCommit;
  return html`<dt>Execution</dt><dd id="plan-execution"><a href="${uiPath('runs', run.id)}">${run.id}</a> — <span class="status" data-status="${run.status}" title="${run.status}">${statusWords('run', run.status)}</span></dd>
  ${d && html`<dt>Delivery</dt><dd id="plan-delivery" data-status="${d.status}" title="${d.status}">${statusWords('delivery', d.status)} <a href="#delivery">(details)</a></dd>`}
  ${
    d?.pullRequestUrl
      ? html`<dt>Pull request</dt><dd id="plan-pr">${webLink(d.pullRequestUrl, `#${d.pullRequestNumber ?? ''} ${d.pullRequestUrl}`)}</dd>`
      : html`${branch && html`<dt>Branch</dt><dd id="plan-branch"><code>${branch}</code></dd>`}${commit && html`<dt>Commit</dt><dd id="plan-commit"><code>${commit}</code></dd>`}`
  }`;
}

/**
 * How the execution's commands would run: the sandbox state of this daemon and the host names the plan lets
 * them reach (through the egress proxy; never the host's own network).
 */
function commandsLine(sandbox: SandboxStatus | undefined, network: readonly string[]) {
  const net = network.length
    ? html`network only to <span id="plan-network">${network.join(', ')}</span>, through drydock's egress proxy`
    : 'no network';
  if (!sandbox) return html`sandbox state unknown; ${net}`;
  if (sandbox.state === 'bwrap') return html`in the bubblewrap sandbox; ${net}`;
  if (sandbox.state === 'off')
    return html`<strong class="warning">NOT sandboxed</strong>: execute.sandbox is off, so commands run as the daemon user with its file access and the host's whole network`;
  return html`<strong class="warning">Bash will refuse to run</strong>: ${sandbox.detail}`;
}
