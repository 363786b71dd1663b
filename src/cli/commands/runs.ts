import { RUN_STATUSES } from '../../domain/types.js';
import type { DiffJson, RunDetailJson, RunJson } from '../../http/contract/index.js';
import { flag, JSON_HELP, jsonOption } from './args.js';
import type { Group } from './group.js';
import {
  actionCommand,
  choiceFilter,
  cursorFilter,
  idFilter,
  limitFilter,
  listCommand,
  showCommand,
} from './listing.js';
import { clean, dash, fields, out, printedJson, table } from './output.js';
import { idPath } from './request.js';
import { followCommand } from './run-follow.js';
import { age, when } from './times.js';

// drydock runs list|show|cancel|resume|follow|diff: agent runs over /v1/runs.

const STATUSES = RUN_STATUSES;

const duration = (ms: number | null): string =>
  ms === null ? '-' : ms < 1000 ? `${ms}ms` : `${(ms / 1000).toFixed(1)}s`;
const cost = (usd: number): string => `$${usd.toFixed(4)}`;

export const runsGroup: Group = {
  name: 'runs',
  summary:
    'Agent runs: list them, read one, cancel one, resume those waiting on the spend limit, follow one as it happens, print what one changed.',
  commands: {
    list: listCommand<RunDetailJson>({
      about: 'Lists runs, newest first: id, phase, status, source, session, age, duration, cost, plan.',
      filters: [
        choiceFilter('status', 'S', STATUSES),
        idFilter('session', "only this session's runs"),
        idFilter('job', "only this job's runs"),
        limitFilter(),
        cursorFilter,
      ],
      path: '/v1/runs',
      show: {
        empty: 'no runs',
        headers: ['ID', 'PHASE', 'STATUS', 'SOURCE', 'SESSION', 'AGE', 'DURATION', 'COST', 'PLAN'],
        row: (r, now) => [
          r.id,
          r.phase,
          r.status,
          r.source,
          r.session_id,
          age(r.created_at, now),
          duration(r.duration_ms),
          cost(r.cost_usd),
          dash(r.plan_id ?? r.executes_plan_id),
        ],
      },
    }),

    show: showCommand<RunDetailJson>({
      about: `Shows one run: status, phase, model, turns, tokens, cost, timing, error, plan and result.`,
      path: (id) => `/v1/runs/${idPath(id)}`,
      render(r, now) {
        const usage = Object.entries(r.usage ?? {})
          .map(([k, v]) => `${k.replace(/_tokens$/, '')} ${v}`)
          .join(', ');
        return `${fields([
          ['run', r.id],
          ['status', r.status],
          ['phase', r.phase],
          ['source', r.source],
          ['session', r.session_id],
          ['job', r.job_id],
          ['requested_by', r.requested_by],
          ['model', r.model],
          ['turns', r.turns],
          ['tokens', usage],
          ['cost', cost(r.cost_usd)],
          ['attempt', r.attempt],
          ['created', when(r.created_at, now)],
          ['started', when(r.started_at, now)],
          ['finished', when(r.finished_at, now)],
          [
            'duration',
            r.duration_ms === null
              ? null
              : `${duration(r.duration_ms)}${r.active_ms !== undefined ? ` (${duration(r.active_ms)} active, ${duration(r.waiting_ms ?? 0)} waiting)` : ''}`,
          ],
          ['waiting_on', r.waiting_on?.detail ?? null],
          ['error', r.error],
          ['plan', r.plan_id],
          ['revises_plan', r.revises_plan_id],
          ['executes_plan', r.executes_plan_id],
          ['execute_mode', r.execute_mode],
          ['result_commit', r.result_commit],
          ['changed_files', r.changed_files?.join(', ')],
        ])}${r.diff_stat ? `\n\ndiff:\n${clean(r.diff_stat).trimEnd()}` : ''}\n\nprompt:\n${clean(r.prompt).trimEnd()}`;
      },
    }),

    cancel: actionCommand<RunDetailJson>('POST', {
      about: 'Cancels a queued, running or waiting run (409 when it already ended).',
      path: (id) => `/v1/runs/${idPath(id)}/cancel`,
      render: (r) => `run ${r.id} ${r.status}`,
    }),

    resume: {
      synopsis: '[--json]',
      help: `Resumes every run waiting on the account's spend limit (status awaiting_input, waiting on
spend_limit), once the limit was raised on the Claude Console, and every run waiting on a spend cap
(spend_cap), once the cap was raised or removed: each goes on from its stored conversation (one still past its
cap waits again before its next request). Admin only. Prints the runs resumed.

${JSON_HELP}`,
      options: { ...jsonOption },
      positionals: [],
      async run({ client, values }) {
        const res = await client.request('POST', '/v1/runs/resume');
        if (printedJson(values, res.text)) return;
        const { resumed } = res.body as { resumed: RunJson[] };
        out(
          resumed.length
            ? resumed.map((r) => `run ${r.id} resumed`).join('\n')
            : 'no run waits on the spend limit',
        );
      },
    },

    follow: followCommand,

    diff: {
      synopsis: 'ID [--stat] [--json]',
      help: `Prints what an execute run changed, as a unified diff (from the plan's commit to the execution's
commit on drydock/<plan id>): the diff text on standard output, notes (cut short, no diff and why) on
standard error. On a terminal control characters are left out; piped, the text is as git wrote it, so
\`drydock runs diff ID | git apply\` works. Exit 1 when there is no diff to show (still running, failed,
removed by retention, not a git workspace), 0 for a diff or an execution that changed nothing.

  --stat                print the changed files with their +/- counts instead of the text
${JSON_HELP}`,
      options: { stat: { type: 'boolean' }, ...jsonOption },
      positionals: ['ID'],
      async run({ client, values, args }) {
        const res = await client.request('GET', `/v1/runs/${idPath(args[0]!)}/diff`);
        if (printedJson(values, res.text)) return;
        const d = res.body as DiffJson;
        const note = (text: string) => process.stderr.write(`drydock: ${clean(text)}\n`);
        if (d.state === 'no_changes') {
          note(`run ${d.run_id}: ${d.reason}`);
          return;
        }
        if (d.state !== 'ready' || d.diff === null) {
          note(`run ${d.run_id}: no diff (${d.state}): ${d.reason ?? ''}`);
          return 1;
        }
        if (flag(values, 'stat')) {
          out(
            table(
              ['FILE', 'ADDED', 'REMOVED'],
              d.files.map((f) => [
                f.old_path ? `${f.old_path} => ${f.path}` : f.path,
                f.binary ? 'binary' : String(f.additions),
                f.binary ? '' : String(f.deletions),
              ]),
            ),
          );
        } else {
          process.stdout.write(process.stdout.isTTY ? clean(d.diff) : d.diff);
        }
        if (d.truncated) note(`the diff is cut short: ${d.truncated}`);
      },
    },
  },
};
