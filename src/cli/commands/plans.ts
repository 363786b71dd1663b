import { LIST_TITLE } from '../../domain/plan-title.js';
import { PLAN_STATUSES } from '../../domain/types.js';
import type {
  DecideResultJson,
  PlanContextJson,
  PlanDeliveryJson,
  PlanDetailJson,
  PlanJson,
  PlanSummaryJson,
} from '../../http/contract/index.js';
import { type ApiClient, ApiError } from '../client.js';
import { JSON_HELP, jsonOption, required, str } from './args.js';
import type { Context, Group } from './group.js';
import { choiceFilter, cursorFilter, idFilter, limitFilter, listCommand, showCommand } from './listing.js';
import { clean, dash, fields, oneLine, out, printAnswer, table, terminalPlanTitle } from './output.js';
import { deliverCommand } from './plans-deliver.js';
import { idPath } from './request.js';
import { relative, when } from './times.js';

// drydock plans list|show|approve|reject|revise: the approval queue over GET/POST /v1/plans.

const indent = (text: string, by = '    ') => text.replace(/^/gm, by);

const tokenLine = (u: Record<string, number>) =>
  `${u.input_tokens ?? 0} in, ${u.output_tokens ?? 0} out, ${u.cache_read_tokens ?? 0} cache read, ${
    (u.cache_write_5m_tokens ?? 0) + (u.cache_write_1h_tokens ?? 0)
  } cache write`;

/** Where an executed plan's result went: branch, pull request, the attempts and why the last one failed. */
function deliverySection(d: PlanDeliveryJson, now: number): string {
  const rows: [string, unknown][] = [
    ['status', d.status],
    ['target', d.target],
    ['branch', d.branch && `${d.branch}${d.remote ? ` on ${d.remote}` : ''}`],
    ['commit', d.commit],
    ['pushed', when(d.pushed_at, now)],
    ['pull_request', d.pull_request_url && `#${d.pull_request_number ?? '?'} ${d.pull_request_url}`],
    ['comment', d.comment_url],
    ['attempts', d.attempts],
  ];
  // Why it failed (for good), or why the last try did and when the next one is.
  if (d.last_error) rows.push([d.status === 'failed' ? 'reason' : 'last_error', oneLine(d.last_error, 300)]);
  if (d.next_attempt_at) rows.push(['next_attempt', when(d.next_attempt_at, now)]);
  return `delivery:\n${indent(fields(rows), '  ')}`;
}

/** The context's sections for `plans show`. External texts pass through `clean` (no terminal controls). */
function contextSections(c: PlanContextJson, now: number): string[] {
  return [
    c.source ? sourceSection(c.source, now) : null,
    c.rounds.length > 1 ? roundsSection(c.rounds) : null,
    c.diff ? diffSection(c.diff) : null,
    filesSection(c.files),
    c.mcp_calls.length ? mcpSection(c.mcp_calls) : null,
    questionsSection(c.questions),
    costSection(c.cost),
  ].filter((section): section is string => section !== null);
}

/** Where the plan came from: the request, its pull request, job, trigger or delivery, and the prompt. */
function sourceSection(s: NonNullable<PlanContextJson['source']>, now: number): string {
  const pr = s.pull_request;
  const entries: [string, unknown][] = [
    ['kind', s.kind],
    ['requested_by', s.requested_by],
  ];
  if (pr) {
    entries.push(
      ['pull_request', `${pr.repository}#${pr.number}${pr.html_url ? `  ${pr.html_url}` : ''}`],
      ['title', pr.title],
      ['author', pr.author],
      ['head', `${pr.head_ref} at ${pr.head_sha}`],
      ['base', pr.base_sha ? `${pr.base_ref} at ${pr.base_sha}` : pr.base_ref],
    );
  }
  if (s.job)
    entries.push(
      [
        'job',
        `${s.job.id}${s.job.cron ? `  ${s.job.cron} (${s.job.timezone})` : ''}${s.job.exists ? '' : ' (deleted)'}`,
      ],
      ['slot', when(s.job.slot_at, now)],
    );
  if (s.trigger)
    entries.push(['trigger', `${s.trigger.name ?? '(deleted)'} (${s.trigger.kind ?? '?'}) ${s.trigger.id}`]);
  if (s.delivery)
    entries.push([
      'delivery',
      `${s.delivery.event} ${s.delivery.key} received ${s.delivery.received_at} (${s.delivery.outcome})`,
    ]);
  let text = `source:\n${indent(fields(entries), '  ')}\n  prompt:\n${indent(clean(s.prompt).trimEnd())}`;
  if (s.fired_text !== null) text += `\n  fired text (external):\n${indent(clean(s.fired_text).trimEnd())}`;
  return text;
}

function roundsSection(rounds: PlanContextJson['rounds']): string {
  return `rounds:\n${rounds
    .map(
      (r) =>
        `  ${r.round}  ${r.plan_id}  ${r.status}` +
        (r.feedback
          ? `\n    changes asked by ${oneLine(r.feedback.identity, 40)}: ${oneLine(r.feedback.comment ?? '', 200)}`
          : ''),
    )
    .join('\n')}`;
}

/** What changed in the plan's text since the previous round. */
function diffSection(d: NonNullable<PlanContextJson['diff']>): string {
  const body = d.hunks
    .map(
      (h) =>
        `@@ -${h.old_start},${h.old_lines} +${h.new_start},${h.new_lines} @@\n` +
        h.lines
          .map(
            (l) =>
              `${l.op === 'add' ? '+' : l.op === 'remove' ? '-' : ' '}${clean(l.text).replace(/\n/g, ' ')}`,
          )
          .join('\n'),
    )
    .join('\n');
  return `changes since round ${d.previous_round} (+${d.added} -${d.removed}):\n${body ? indent(body, '  ') : '  none'}`;
}

function filesSection(files: PlanContextJson['files']): string {
  return `files read and searched:\n${
    files.length
      ? table(
          ['TOOL', 'PATH', 'PATTERN', 'ROUND', 'CALLS'],
          files.map((f) => [
            f.tool,
            dash(f.path),
            f.pattern === null ? '-' : `${f.pattern}${f.glob ? ` in ${f.glob}` : ''}`,
            String(f.round),
            `${f.calls}${f.errors ? ` (${f.errors} failed)` : ''}`,
          ]),
        ).replace(/^/gm, '  ')
      : '  none'
  }`;
}

function mcpSection(calls: PlanContextJson['mcp_calls']): string {
  return `MCP calls:\n${table(
    ['SERVER', 'TOOL', 'INPUT', 'ROUND', 'CALLS'],
    calls.map((m) => [
      oneLine(m.server, 60),
      oneLine(m.tool, 80),
      oneLine(m.input, 120),
      String(m.round),
      `${m.calls}${m.errors ? ` (${m.errors} failed)` : ''}`,
    ]),
  ).replace(/^/gm, '  ')}`;
}

function questionsSection(questions: PlanContextJson['questions']): string {
  return `questions:\n${
    questions.length
      ? questions
          .flatMap((q) =>
            q.items.map(
              (i) =>
                `  round ${q.round}, ${q.status}${q.answered_by ? ` by ${oneLine(q.answered_by, 40)}` : ''}: ${oneLine(i.question, 200)}\n    => ${
                  i.answer === null
                    ? '-'
                    : oneLine(Array.isArray(i.answer) ? i.answer.join(', ') : i.answer, 400)
                }`,
            ),
          )
          .join('\n')
      : '  none'
  }`;
}

function costSection(cost: PlanContextJson['cost']): string {
  return `cost of planning:\n${table(
    ['ROUND', 'RUN', 'MODEL', 'TURNS', 'TOKENS', 'COST'],
    [
      ...cost.runs.map((r) => [
        String(r.round),
        r.run_id,
        dash(r.model),
        String(r.turns),
        tokenLine(r.usage),
        `$${r.cost_usd.toFixed(4)}`,
      ]),
      [
        'total',
        '',
        '',
        String(cost.total.turns),
        tokenLine(cost.total.usage),
        `$${cost.total.cost_usd.toFixed(4)}`,
      ],
    ],
  ).replace(/^/gm, '  ')}`;
}

/** `plans show`: the plan's fields, its execution and delivery, decisions, runs, context and text. */
function renderPlan(p: PlanDetailJson, now: number): string {
  return [
    planFields(p, now),
    ...(p.status === 'pending_approval' ? [] : [executionSection(p, now)]),
    ...(p.delivery
      ? [deliverySection(p.delivery, now)]
      : p.status === 'executed'
        ? [
            `delivery:\n  none: delivery is off for this workspace, or not looked at yet (drydock plans deliver ${p.id} delivers it now)`,
          ]
        : []),
    decisionsSection(p.decisions),
    `runs:\n${
      p.runs.length
        ? table(
            ['ID', 'PHASE', 'STATUS', 'CREATED', 'ERROR'],
            p.runs.map((r) => [r.id, r.phase, r.status, r.created_at, dash(r.error)]),
          ).replace(/^/gm, '  ')
        : '  none'
    }`,
    ...(p.context ? contextSections(p.context, now) : []),
    `plan:\n\n${clean(p.markdown).trimEnd()}`,
  ].join('\n\n');
}

/** The plan's own fields, named as the columns of `plans list` are (id, status, ..., created, title). */
function planFields(p: PlanDetailJson, now: number): string {
  return fields([
    ['id', p.id],
    ['title', terminalPlanTitle(p.markdown, LIST_TITLE)],
    ['status', p.status],
    ['round', p.previous_plan_id ? `${p.round} (revises ${p.previous_plan_id})` : p.round],
    [
      'approvals',
      `${p.approvals}/${p.approvals_required}${p.allow_self_approval ? ' (self-approval allowed)' : ''}`,
    ],
    ['requested_by', p.requested_by],
    ['owner', p.owner],
    ['session', p.session_id],
    ['job', p.job_id],
    ['trigger', p.trigger_id],
    ['source', p.source],
    ['run', p.run_id],
    ['execute_mode', p.execute_mode],
    ['network', p.network_domains.length ? p.network_domains.join(', ') : 'none'],
    ['sha256', p.sha256],
    ['workspace_commit', p.workspace_commit],
    ...(p.execution_base ? [['execution_base', p.execution_base] as [string, unknown]] : []),
    // Only when the git workspace had uncommitted changes the plan was made without.
    ...(p.uncommitted_changes ? [['uncommitted', p.uncommitted_changes.message] as [string, unknown]] : []),
    // Only when the workspace moved past the plan's commit: stale (not approvable), or moved on.
    ...(p.freshness && p.freshness.state !== 'current'
      ? [['freshness', `${p.freshness.state}: ${p.freshness.message}`] as [string, unknown]]
      : []),
    ['created', when(p.created_at, now)],
    ['expires', when(p.expires_at, now)],
    ['decided', when(p.decided_at, now)],
    ...(p.failure_reason ? [['failure', p.failure_reason] as [string, unknown]] : []),
  ]);
}

/**
 * What carried the plan out: its execute run (status, branch, commit, what it changed, cost), or why there is
 * none. The branch is drydock/<plan id> in a git workspace; a plain one is changed in place.
 */
function executionSection(p: PlanDetailJson, now: number): string {
  const run = p.runs.filter((r) => r.phase === 'execute').at(-1);
  if (!run) {
    const why =
      p.status === 'approved' ? 'not started yet' : `none (the plan is ${p.status.replace(/_/g, ' ')})`;
    return `execution:\n  ${why}`;
  }
  const planning = p.context?.cost.total.cost_usd;
  const rows: [string, unknown][] = [
    ['run', `${run.id}  (drydock runs follow ${run.id})`],
    ['status', run.status],
    ['branch', p.workspace_commit ? `drydock/${p.id}` : 'none: not a git workspace, files changed in place'],
    ['commit', run.result_commit],
    ['changes', run.diff_stat ?? (run.changed_files?.length ? run.changed_files.join(', ') : null)],
    ['cost', `$${run.cost_usd.toFixed(4)} (${run.turns} turns)`],
    ...(planning === undefined
      ? []
      : [['total_cost', `$${(planning + run.cost_usd).toFixed(4)} with planning`] as [string, unknown]]),
    ['started', when(run.started_at, now)],
    ['finished', when(run.finished_at, now)],
  ];
  if (run.error) rows.push(['error', oneLine(run.error, 300)]);
  return `execution:\n${indent(fields(rows), '  ')}`;
}

function decisionsSection(decisions: PlanDetailJson['decisions']): string {
  return `decisions:\n${
    decisions.length
      ? decisions
          .map(
            (d) =>
              `  ${d.created_at}  ${d.kind.padEnd(7)}  ${oneLine(d.identity, 40)}  sha256 ${d.sha256.slice(0, 12)}` +
              (d.comment ? `\n    ${clean(d.comment).replace(/\n/g, '\n    ')}` : ''),
          )
          .join('\n')
      : '  none'
  }`;
}

/** A plan in a listing: its title, or its whole text with --markdown. */
type PlanItem = PlanSummaryJson | PlanJson;

/**
 * Approvals per plan, from the listing. A listing without them (an older daemon) is completed from
 * GET /v1/plans/:id, a few at a time; that answer now carries the whole plan context, so it is the fallback.
 */
async function approvalCounts(client: ApiClient, plans: PlanItem[]): Promise<Map<string, number | null>> {
  const counts = new Map<string, number | null>();
  const missing: PlanItem[] = [];
  for (const p of plans) {
    if (typeof p.approvals === 'number') counts.set(p.id, p.approvals);
    else missing.push(p);
  }
  let next = 0;
  const worker = async () => {
    while (next < missing.length) {
      const plan = missing[next++]!;
      try {
        const res = await client.request('GET', `/v1/plans/${idPath(plan.id)}`);
        counts.set(plan.id, (res.body as PlanDetailJson).approvals);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        counts.set(plan.id, null);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, missing.length) }, worker));
  return counts;
}

/** What a decision did, and what comes next: the daemon's words, else how to follow the run it started. */
function decisionSummary(d: DecideResultJson): string {
  const { plan, run } = d;
  const next = d.next ?? (run ? `follow it with drydock runs follow ${run.id}` : null);
  const then = next ? `\n${next}` : '';
  switch (plan.status) {
    case 'approved':
      return `plan ${plan.id} approved; execute run ${run?.id ?? '-'} queued${then}`;
    case 'rejected':
      return `plan ${plan.id} rejected`;
    case 'revision_requested':
      return `plan ${plan.id}: revision requested; round ${plan.round + 1} is planned by run ${run?.id ?? '-'}${then}`;
    default:
      return `approval recorded; plan ${plan.id} is still ${plan.status} (${plan.approvals_required} approvals required)`;
  }
}

/** `--status`: a plan status, `pending` for pending_approval, or `any`/`all` for every status. */
const STATUS_CHOICES = ['pending', ...PLAN_STATUSES, 'any', 'all'] as const;
const ORDERS = ['newest', 'oldest'] as const;

/** The `status` the API gets: pending plans when none was asked for, none (every status) for any or all. */
function statusQuery(given: string | undefined): string | undefined {
  if (given === undefined || given === 'pending') return 'pending_approval';
  return given === 'any' || given === 'all' ? undefined : given;
}

/** The columns of `plans list`, named as `plans show` names its fields. */
export const PLAN_COLUMNS = ['ID', 'STATUS', 'ROUND', 'APPROVALS', 'REQUESTED_BY', 'CREATED', 'TITLE'];

async function printPlans({ client, values }: Context, page: { items: PlanItem[] }, more: string | null) {
  // Without --status the listing is the pending plans only: say so, and how to see the others.
  const others =
    str(values, 'status') === undefined
      ? '(pending plans only; drydock plans list --status any lists every plan)'
      : null;
  if (!page.items.length) {
    out(others ? `no pending plans ${others}` : 'no plans');
    return;
  }
  const counts = await approvalCounts(client, page.items);
  const now = Date.now();
  out(
    table(
      PLAN_COLUMNS,
      page.items.map((p) => [
        p.id,
        p.status,
        String(p.round),
        `${counts.get(p.id) ?? '?'}/${p.approvals_required}`,
        p.requested_by,
        relative(p.created_at, now),
        'title' in p ? p.title : terminalPlanTitle(p.markdown, LIST_TITLE),
      ]),
    ),
  );
  if (more) out(more);
  if (others) out(others);
}

const decide = async (client: ApiClient, id: string, kind: string, body: Record<string, unknown>) =>
  client.request('POST', `/v1/plans/${idPath(id)}/${kind}`, body);

export const plansGroup: Group = {
  name: 'plans',
  summary:
    'The plan approval queue: list plans, read one, approve, reject or ask for a revision; deliver an executed one.',
  commands: {
    list: listCommand<PlanItem>({
      about: `Lists plans: by default the pending ones (waiting for approval), newest first; --status any lists
every plan. Columns: id, status, round, approvals (given/required), requester, created (how long ago) and
the plan's title, as plans show names them.`,
      filters: [
        {
          ...choiceFilter('status', 'S', STATUS_CHOICES, '(default: pending; any or all: every status)'),
          query: statusQuery,
        },
        idFilter('session', "only this session's plans"),
        idFilter('job', "only this job's plans"),
        idFilter('trigger', "only this trigger's plans"),
        {
          option: 'requester',
          arg: 'WHO',
          help: 'only plans this identity requested',
          param: 'requested_by',
        },
        {
          ...choiceFilter('order', 'O', ORDERS, '(default: newest first)'),
          query: (given) => given ?? 'newest',
        },
        limitFilter('at most N plans (API default 50, max 200)'),
        cursorFilter,
      ],
      path: '/v1/plans',
      show: { print: printPlans },
    }),

    show: showCommand<PlanDetailJson>({
      about: `Shows one plan: its fields, its execution (run, status, branch, commit, cost) and delivery (status,
pull request or branch, why it failed), the decisions on it, its runs, where it came from (job, trigger or pull
request, and the prompt), the changes since the previous round, the files the agent read and searched, the
questions it asked and their answers, what planning cost, and the plan text.`,
      path: (id) => `/v1/plans/${idPath(id)}`,
      render: renderPlan,
    }),

    approve: {
      synopsis: 'ID [--sha256 S] [--comment C] [--json]',
      help: `Approves a pending plan. With enough approvals it becomes approved and its execute run starts.

  --sha256 S            refuse unless the plan is still exactly this text (its sha256, as shown)
  --comment C           a comment recorded with the approval
${JSON_HELP}`,
      options: { sha256: { type: 'string' }, comment: { type: 'string' }, ...jsonOption },
      positionals: ['ID'],
      async run({ client, values, args }) {
        const res = await decide(client, args[0]!, 'approve', {
          sha256: str(values, 'sha256'),
          comment: str(values, 'comment'),
        });
        printAnswer(values, res, decisionSummary);
      },
    },

    reject: {
      synopsis: 'ID --comment C [--json]',
      help: `Rejects a pending plan; nothing is executed.

  --comment C           why (required)
${JSON_HELP}`,
      options: { comment: { type: 'string' }, ...jsonOption },
      positionals: ['ID'],
      async run({ client, values, args }) {
        const comment = required(values, 'comment', 'a rejection says why');
        const res = await decide(client, args[0]!, 'reject', { comment });
        printAnswer(values, res, decisionSummary);
      },
    },

    revise: {
      synopsis: 'ID --feedback F [--sha256 S] [--json]',
      help: `Asks for a revised plan: a new planning round starts with your feedback.

  --feedback F          what to change (required)
  --sha256 S            refuse unless the plan is still exactly this text
${JSON_HELP}`,
      options: { feedback: { type: 'string' }, sha256: { type: 'string' }, ...jsonOption },
      positionals: ['ID'],
      async run({ client, values, args }) {
        const feedback = required(values, 'feedback', 'a revision needs feedback');
        const res = await decide(client, args[0]!, 'revise', { feedback, sha256: str(values, 'sha256') });
        printAnswer(values, res, decisionSummary);
      },
    },

    deliver: deliverCommand,
  },
};
