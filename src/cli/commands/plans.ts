import { PLAN_STATUSES } from '../../store/types.js';
import { type ApiClient, ApiError } from '../client.js';
import {
  age,
  choices,
  clean,
  dash,
  fields,
  firstLine,
  type Group,
  idPath,
  jsonOption,
  nextPage,
  oneLine,
  oneOf,
  out,
  positiveInt,
  printedJson,
  queryString,
  required,
  runGroup,
  str,
  table,
  when,
} from './common.js';
import { deliverCommand } from './plans-deliver.js';

// drydock plans list|show|approve|reject|revise: the approval queue over GET/POST /v1/plans.

interface PlanJson {
  id: string;
  status: string;
  round: number;
  previous_plan_id: string | null;
  session_id: string;
  job_id: string | null;
  trigger_id: string | null;
  source: string;
  run_id: string;
  requested_by: string;
  owner: string;
  markdown: string;
  title?: string;
  sha256: string;
  workspace_commit: string | null;
  approvals_required: number;
  allow_self_approval: boolean;
  execute_mode: string;
  network: boolean;
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  failure_reason: string | null;
}

interface DecisionJson {
  id: string;
  kind: string;
  identity: string;
  comment: string | null;
  sha256: string;
  created_at: string;
}

interface RunJson {
  id: string;
  phase: string;
  status: string;
  created_at: string;
  error: string | null;
}

interface PlanDetailJson extends PlanJson {
  approvals: number;
  decisions: DecisionJson[];
  runs: RunJson[];
}

interface DecideJson {
  plan: PlanJson;
  decision: DecisionJson;
  run: RunJson | null;
  /** What happens next, in words (the run that was started, where it will wait). */
  next?: string;
}

/** Approvals per plan: only GET /v1/plans/:id counts them, so the table asks for each (a few at a time). */
async function approvalCounts(client: ApiClient, plans: PlanJson[]): Promise<Map<string, number | null>> {
  const counts = new Map<string, number | null>();
  let next = 0;
  const worker = async () => {
    while (next < plans.length) {
      const plan = plans[next++]!;
      try {
        const res = await client.request('GET', `/v1/plans/${idPath(plan.id)}`);
        counts.set(plan.id, (res.body as PlanDetailJson).approvals);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        counts.set(plan.id, null);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, plans.length) }, worker));
  return counts;
}

function decisionSummary(d: DecideJson): string {
  const { plan, run } = d;
  switch (plan.status) {
    case 'approved':
      return `plan ${plan.id} approved; execute run ${run?.id ?? '-'} queued${d.next ? `\n${d.next}` : ''}`;
    case 'rejected':
      return `plan ${plan.id} rejected`;
    case 'revision_requested':
      return `plan ${plan.id}: revision requested; round ${plan.round + 1} is planned by run ${run?.id ?? '-'}`;
    default:
      return `approval recorded; plan ${plan.id} is still ${plan.status} (${plan.approvals_required} approvals required)`;
  }
}

const decide = async (client: ApiClient, id: string, kind: string, body: Record<string, unknown>) =>
  client.request('POST', `/v1/plans/${idPath(id)}/${kind}`, body);

export const plansGroup: Group = {
  name: 'plans',
  summary:
    'The plan approval queue: list plans, read one, approve, reject or ask for a revision; deliver an executed one.',
  commands: {
    list: {
      synopsis: '[--status S] [--session ID] [--job ID] [--limit N] [--cursor C] [--json]',
      help: `Lists plans, oldest first: id, status, round, approvals (given/required), requester, age and the
first line of the plan.

  --status S            ${choices(PLAN_STATUSES)}
  --session ID          only this session's plans
  --job ID              only this job's plans
  --limit N             at most N plans (API default 50, max 200)
  --cursor C            the next page (from a previous listing)
  --json                print the API's JSON body`,
      options: {
        status: { type: 'string' },
        session: { type: 'string' },
        job: { type: 'string' },
        limit: { type: 'string' },
        cursor: { type: 'string' },
        ...jsonOption,
      },
      positionals: [],
      async run({ client, values }) {
        const q = queryString({
          status: oneOf(values, 'status', PLAN_STATUSES),
          session_id: str(values, 'session'),
          job_id: str(values, 'job'),
          limit: positiveInt(values, 'limit'),
          cursor: str(values, 'cursor'),
        });
        const res = await client.request('GET', `/v1/plans${q}`);
        if (printedJson(values, res.text)) return;
        const page = res.body as { items: PlanJson[]; next_cursor: string | null };
        if (!page.items.length) {
          out('no plans');
          return;
        }
        const counts = await approvalCounts(client, page.items);
        const now = Date.now();
        out(
          table(
            ['ID', 'STATUS', 'ROUND', 'APPROVALS', 'REQUESTED_BY', 'AGE', 'PLAN'],
            page.items.map((p) => [
              p.id,
              p.status,
              String(p.round),
              `${counts.get(p.id) ?? '?'}/${p.approvals_required}`,
              p.requested_by,
              age(p.created_at, now),
              p.title ?? firstLine(p.markdown ?? ''),
            ]),
          ),
        );
        if (page.next_cursor) {
          out(
            nextPage(
              'plans list',
              values,
              ['status', 'session', 'job', 'limit'],
              ['cursor', page.next_cursor],
            ),
          );
        }
      },
    },

    show: {
      synopsis: 'ID [--json]',
      help: `Shows one plan: its fields, the decisions on it, its runs, and the plan text.

  --json                print the API's JSON body`,
      options: { ...jsonOption },
      positionals: ['ID'],
      async run({ client, values, args }) {
        const res = await client.request('GET', `/v1/plans/${idPath(args[0]!)}`);
        if (printedJson(values, res.text)) return;
        const p = res.body as PlanDetailJson;
        const now = Date.now();
        const sections = [
          fields([
            ['plan', p.id],
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
            ['network', p.network ? 'allowed to commands' : 'none'],
            ['sha256', p.sha256],
            ['workspace_commit', p.workspace_commit],
            ['created', when(p.created_at, now)],
            ['expires', when(p.expires_at, now)],
            ['decided', when(p.decided_at, now)],
            ...(p.failure_reason ? [['failure', p.failure_reason] as [string, unknown]] : []),
          ]),
          `decisions:\n${
            p.decisions.length
              ? p.decisions
                  .map(
                    (d) =>
                      `  ${d.created_at}  ${d.kind.padEnd(7)}  ${oneLine(d.identity, 40)}  sha256 ${d.sha256.slice(0, 12)}` +
                      (d.comment ? `\n    ${clean(d.comment).replace(/\n/g, '\n    ')}` : ''),
                  )
                  .join('\n')
              : '  none'
          }`,
          `runs:\n${
            p.runs.length
              ? table(
                  ['ID', 'PHASE', 'STATUS', 'CREATED', 'ERROR'],
                  p.runs.map((r) => [r.id, r.phase, r.status, r.created_at, dash(r.error)]),
                ).replace(/^/gm, '  ')
              : '  none'
          }`,
          `plan:\n\n${clean(p.markdown).trimEnd()}`,
        ];
        out(sections.join('\n\n'));
      },
    },

    approve: {
      synopsis: 'ID [--sha256 S] [--comment C] [--json]',
      help: `Approves a pending plan. With enough approvals it becomes approved and its execute run starts.

  --sha256 S            refuse unless the plan is still exactly this text (its sha256, as shown)
  --comment C           a comment recorded with the approval
  --json                print the API's JSON body`,
      options: { sha256: { type: 'string' }, comment: { type: 'string' }, ...jsonOption },
      positionals: ['ID'],
      async run({ client, values, args }) {
        const res = await decide(client, args[0]!, 'approve', {
          sha256: str(values, 'sha256'),
          comment: str(values, 'comment'),
        });
        if (!printedJson(values, res.text)) out(decisionSummary(res.body as DecideJson));
      },
    },

    reject: {
      synopsis: 'ID --comment C [--json]',
      help: `Rejects a pending plan; nothing is executed.

  --comment C           why (required)
  --json                print the API's JSON body`,
      options: { comment: { type: 'string' }, ...jsonOption },
      positionals: ['ID'],
      async run({ client, values, args }) {
        const comment = required(values, 'comment', 'a rejection says why');
        const res = await decide(client, args[0]!, 'reject', { comment });
        if (!printedJson(values, res.text)) out(decisionSummary(res.body as DecideJson));
      },
    },

    revise: {
      synopsis: 'ID --feedback F [--sha256 S] [--json]',
      help: `Asks for a revised plan: a new planning round starts with your feedback.

  --feedback F          what to change (required)
  --sha256 S            refuse unless the plan is still exactly this text
  --json                print the API's JSON body`,
      options: { feedback: { type: 'string' }, sha256: { type: 'string' }, ...jsonOption },
      positionals: ['ID'],
      async run({ client, values, args }) {
        const feedback = required(values, 'feedback', 'a revision needs feedback');
        const res = await decide(client, args[0]!, 'revise', { feedback, sha256: str(values, 'sha256') });
        if (!printedJson(values, res.text)) out(decisionSummary(res.body as DecideJson));
      },
    },

    deliver: deliverCommand,
  },
};

export const plansCommand = (argv: string[]): Promise<number> => runGroup(plansGroup, argv);
