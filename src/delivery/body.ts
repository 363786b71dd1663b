import { executionBase } from '../domain/footprint.js';
import type { DeliveryTarget, Plan, Run } from '../domain/types.js';

// The text a delivery posts on GitHub: the pull request (the plan, its receipts, a link to the plan page) and
// the comment on the pull request a run came from.

/** GitHub refuses a pull request body or comment over 65,536 characters; the plan gets what the rest leaves. */
const BODY_MAX = 65_536;

/** One line in code: a value the text never lets out of its backticks. */
const code = (s: string) => `\`${s.replace(/[`\r\n]/g, ' ')}\``;

const tokens = (n: number | undefined) => (n ?? 0).toLocaleString('en-US');

export interface Receipts {
  plan: Plan;
  /** The run that proposed the plan, and the execute run. */
  planRun: Run | null;
  executeRun: Run | null;
  approvers: string[];
  pageUrl: string;
  branch: string;
  commit: string;
  /** A pull request run's change replayed onto its base: the execution's commit and the base branch. */
  replayed?: { from: string; onto: string } | null;
}

function receiptRows(runs: { label: string; run: Run | null }[]): string[] {
  const rows = [
    '| phase | run | turns | input tokens | output tokens | cache read | cache write | cost (USD) |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  let total = 0;
  for (const { label, run } of runs) {
    if (!run) continue;
    const u = run.usage;
    total += run.costUsd;
    rows.push(
      `| ${label} | ${code(run.id)} | ${run.turns} | ${tokens(u.input_tokens)} | ${tokens(u.output_tokens)} | ` +
        `${tokens(u.cache_read_tokens)} | ${tokens((u.cache_write_5m_tokens ?? 0) + (u.cache_write_1h_tokens ?? 0))} | ` +
        `${run.costUsd.toFixed(4)} |`,
    );
  }
  rows.push(`| total | | | | | | | ${total.toFixed(4)} |`);
  return rows;
}

/** The pull request's body: the approved plan verbatim (cut only if GitHub could not take it), then receipts. */
export function pullRequestBody(r: Receipts): string {
  const { plan } = r;
  const footer = [
    '',
    '---',
    '',
    `Carried out by **drydock** after approval: plan [${code(plan.id)}](${r.pageUrl}) (round ${plan.round}, ` +
      `sha256 ${code(plan.sha256.slice(0, 12))}), requested by ${code(plan.requestedBy)}, approved by ` +
      `${r.approvers.length ? r.approvers.map(code).join(', ') : 'nobody recorded'}, executed in ${plan.executeMode} mode.`,
    '',
    r.replayed
      ? `Commit ${code(r.commit.slice(0, 12))} on ${code(r.branch)}: only drydock's change (commit ` +
        `${code(r.replayed.from.slice(0, 12))}, made on the pull request's head ` +
        `${code((plan.workspaceCommit ?? '').slice(0, 12))}), replayed onto ${code(r.replayed.onto)}. ` +
        "The pull request's own commits are not in it."
      : `Commit ${code(r.commit.slice(0, 12))} on ${code(r.branch)}` +
        (executionBase(plan) ? `, made against ${code(executionBase(plan)!.slice(0, 12))}.` : '.'),
    '',
    ...receiptRows([
      { label: 'plan', run: r.planRun },
      { label: 'execute', run: r.executeRun },
    ]),
  ].join('\n');
  const room = BODY_MAX - footer.length - 200;
  const markdown =
    plan.markdown.length <= room
      ? plan.markdown
      : `${plan.markdown.slice(0, room)}\n\n*(the plan is cut here; read it whole on the [plan page](${r.pageUrl}))*`;
  return `${markdown.trimEnd()}\n${footer}\n`;
}

/**
 * The hidden line that ends the delivery's comment on the pull request a plan came from: a retried delivery
 * (after a crash between GitHub accepting the comment and its answer) finds it and does not post again.
 */
export function deliveryMarker(planId: string): string {
  return `<!-- drydock:delivery ${planId} -->`;
}

/** The comment on the pull request a run came from: where its executed plan went, with its marker. */
export function pullRequestComment(opts: {
  planId: string;
  pageUrl: string;
  target: DeliveryTarget;
  /** The remote branch the commit went to (the pull request's own, for `head`). */
  branch: string;
  commit: string;
  remote: string;
  /** The branch the new pull request goes into. */
  into: string | null;
  pullRequest: { url: string; number: number } | null;
}): string {
  const pr = opts.pullRequest;
  const where =
    opts.target === 'head'
      ? `pushed it as one commit onto this pull request's branch ${code(opts.branch)}`
      : pr
        ? `opened pull request #${pr.number} (${pr.url}) from ${code(opts.branch)} into ` +
          (opts.target === 'stacked'
            ? `this pull request's branch ${code(opts.into ?? '')}`
            : `${code(opts.into ?? '')}, holding only drydock's change replayed onto it (not this pull request's commits)`)
        : `pushed ${code(opts.branch)} to ${code(opts.remote)}`;
  return (
    `drydock carried out the approved plan [${code(opts.planId)}](${opts.pageUrl}) for this pull request and ` +
    `${where} at commit ${code(opts.commit.slice(0, 12))}.\n\n${deliveryMarker(opts.planId)}`
  );
}

/** The most of a patch a comment shows (GitHub takes 65,536 characters a comment). */
export const PATCH_COMMENT_MAX = 60_000;

/**
 * The comment that carries an execution's change as a patch: a pull request from a fork whose change does not
 * apply to the base on its own. The patch is in a fence longer than any run of backticks inside it.
 */
export function patchComment(opts: {
  planId: string;
  pageUrl: string;
  base: string;
  commit: string;
  patch: string;
}): string {
  const cut = opts.patch.length > PATCH_COMMENT_MAX;
  const patch = cut ? opts.patch.slice(0, PATCH_COMMENT_MAX) : opts.patch;
  const longest = Math.max(0, ...[...patch.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return [
    `drydock carried out the approved plan [${code(opts.planId)}](${opts.pageUrl}) for this pull request. ` +
      `Its change does not apply to ${code(opts.base)} without this pull request's commits, and drydock ` +
      "neither pushes into another repository nor carries a pull request's commits into the base, so here it " +
      `is as a patch (commit ${code(opts.commit.slice(0, 12))} in drydock's clone; \`git apply\` it on this ` +
      'branch):',
    '',
    `${fence}diff`,
    patch.endsWith('\n') ? patch.slice(0, -1) : patch,
    fence,
    ...(cut
      ? [
          '',
          `*(the patch is cut here, at ${PATCH_COMMENT_MAX} characters; the execution's diff on drydock has all of it)*`,
        ]
      : []),
    '',
    deliveryMarker(opts.planId),
  ].join('\n');
}
