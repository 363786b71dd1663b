import type { Plan, Run } from '../domain/types.js';

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
    `Commit ${code(r.commit.slice(0, 12))} on ${code(r.branch)}` +
      (plan.workspaceCommit ? `, made against ${code(plan.workspaceCommit.slice(0, 12))}.` : '.'),
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
  branch: string;
  commit: string;
  remote: string;
  pullRequest: { url: string; number: number } | null;
}): string {
  const where = opts.pullRequest
    ? `opened pull request #${opts.pullRequest.number} (${opts.pullRequest.url}) from ${code(opts.branch)}`
    : `pushed ${code(opts.branch)} to ${code(opts.remote)}`;
  return (
    `drydock carried out the approved plan [${code(opts.planId)}](${opts.pageUrl}) for this pull request and ` +
    `${where} at commit ${code(opts.commit.slice(0, 12))}.\n\n${deliveryMarker(opts.planId)}`
  );
}
