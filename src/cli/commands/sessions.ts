import { resolve } from 'node:path';
import { EFFORTS, EXECUTE_MODES } from '../../domain/types.js';
import type { RunDefaultsJson, SessionJson } from '../../http/contract/index.js';
import {
  choices,
  flag,
  jsonOption,
  LIMITS_HELP,
  limitOptions,
  limitsOption,
  MCP_HELP,
  mcpOption,
  mcpOptions,
  nonBlank,
  oneOf,
  positiveCount,
  RemoteUsageError,
  required,
  str,
  strs,
  type Values,
} from './args.js';
import type { Group } from './group.js';
import {
  actionCommand,
  choiceFilter,
  cursorFilter,
  limitFilter,
  listCommand,
  showCommand,
} from './listing.js';
import { fields, printAnswer } from './output.js';
import { idPath } from './request.js';
import { age, when } from './times.js';

// drydock sessions list|show|create|close: the scopes of cron jobs, over /v1/sessions.

const STATUSES = ['open', 'closed'] as const;

/** A positive decimal number option (e.g. dollars), or undefined when absent. */
function positiveNumber(values: Values, name: string): number | undefined {
  const v = str(values, name);
  if (v === undefined) return undefined;
  const n = /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(v.trim()) ? Number(v) : Number.NaN;
  if (!(n > 0) || !Number.isFinite(n)) {
    throw new RemoteUsageError(`--${name} must be a positive number, got "${v}"`);
  }
  return n;
}

function thinkingOption(v: string | undefined): RunDefaultsJson['thinking'] {
  if (v === undefined) return undefined;
  if (v === 'off' || v === 'adaptive') return v;
  if (/^\d+$/.test(v) && Number(v) >= 1024) return { budget_tokens: Number(v) };
  throw new RemoteUsageError(
    `--thinking must be off, adaptive or a budget of at least 1024 tokens, got "${v}"`,
  );
}

function defaultsSummary(d: RunDefaultsJson): [string, unknown][] {
  const thinking =
    d.thinking === undefined || typeof d.thinking === 'string'
      ? d.thinking
      : `budget ${d.thinking.budget_tokens} tokens`;
  return [
    ['model', d.model],
    ['thinking', thinking],
    ['effort', d.effort],
    ['budget_usd', d.budget_usd],
    ['max_turns', d.max_turns],
    ['approvals_required', d.approvals_required],
    ['allow_self_approval', d.allow_self_approval],
    ['execute_mode', d.execute_mode],
    ['network', Array.isArray(d.network) ? d.network.join(', ') || 'none' : d.network],
    ['mcp', d.mcp === undefined ? undefined : d.mcp.join(', ') || 'none'],
  ];
}

export const sessionsGroup: Group = {
  name: 'sessions',
  summary: 'Sessions, the scopes of cron jobs: list them, read one, create one, close one.',
  commands: {
    list: listCommand<SessionJson>({
      about: 'Lists sessions: id, name, status, owner, age and workspace.',
      filters: [
        { ...choiceFilter('status', 'S', STATUSES, '(default: both)'), synopsisArg: 'open|closed' },
        limitFilter('at most N sessions (API default 50, max 200)'),
        cursorFilter,
      ],
      path: '/v1/sessions',
      show: {
        empty: 'no sessions',
        headers: ['ID', 'NAME', 'STATUS', 'OWNER', 'AGE', 'WORKSPACE'],
        row: (s, now) => [s.id, s.name, s.status, s.owner, age(s.created_at, now), s.workspace],
      },
    }),

    show: showCommand<SessionJson>({
      about: `Shows one session: name, status, workspace, owner, times and the defaults of its runs.`,
      path: (id) => `/v1/sessions/${idPath(id)}`,
      render(s, now) {
        const defaults = defaultsSummary(s.defaults ?? {}).filter(([, v]) => v !== undefined);
        return `${fields([
          ['session', s.id],
          ['name', s.name],
          ['status', s.status],
          ['workspace', s.workspace],
          ['owner', s.owner],
          ['created', when(s.created_at, now)],
          ['closed', when(s.closed_at, now)],
        ])}\n\ndefaults:\n${
          defaults.length ? fields(defaults).replace(/^/gm, '  ') : "  none (the daemon's defaults apply)"
        }\n\njobs: drydock jobs list --session ${s.id}`;
      },
    }),

    create: {
      synopsis:
        '--workspace DIR [--name N] [--model M] [--execute-mode M] [--approvals-required N] [--allow-self-approval] [--network-domain D ...] [--mcp NAME ...] [--budget-usd X] [--thinking off|adaptive|N] [--effort E] [--max-turns N] [--daily-usd X] [--daily-runs N] [--json]',
      help: `Creates a session and prints its id. Options other than --workspace and --name set the defaults of
the session's runs; unset ones are the daemon's.

  --workspace DIR       the directory its runs work in, usually a git repository (required; a relative
                        path is resolved against the current directory, and the daemon must see the same
                        path)
  --name N              a name (default: the id)
  --model M             the model its runs use
  --execute-mode M      ${choices(EXECUTE_MODES)}: what the execute phase may do without asking
  --approvals-required N
                        approvals a plan needs (1-10)
  --allow-self-approval let the person who requested a plan approve it
  --network-domain D    a host name the execute phase's commands may reach, through drydock's egress
                        proxy (registry.npmjs.org; *.github.com for any name below); repeat for more.
                        Without it they have no network at all
  --network             deprecated: the daemon's execute.network_default_domains
${MCP_HELP}
  --budget-usd X        the most a run may cost, in US dollars
  --thinking T          off, adaptive, or a budget of N tokens (at least 1024); translated to what the
                        model accepts (docs/models.md)
  --effort E            ${choices(EFFORTS)}: how much the model thinks, where it takes an effort
  --max-turns N         the most model turns a run may take
${LIMITS_HELP}
  --json                print the API's JSON body instead of the id`,
      options: {
        workspace: { type: 'string' },
        name: { type: 'string' },
        model: { type: 'string' },
        'execute-mode': { type: 'string' },
        'approvals-required': { type: 'string' },
        'allow-self-approval': { type: 'boolean' },
        'budget-usd': { type: 'string' },
        thinking: { type: 'string' },
        effort: { type: 'string' },
        'max-turns': { type: 'string' },
        network: { type: 'boolean' },
        'network-domain': { type: 'string', multiple: true },
        ...limitOptions,
        ...mcpOptions,
        ...jsonOption,
      },
      positionals: [],
      async run({ client, values }) {
        const workspace = required(values, 'workspace', 'the directory the runs work in');
        const name = nonBlank(values, 'name');
        const thinking = thinkingOption(str(values, 'thinking'));
        const defaults: RunDefaultsJson = {
          model: str(values, 'model'),
          execute_mode: oneOf(values, 'execute-mode', EXECUTE_MODES),
          approvals_required: positiveCount(values, 'approvals-required'),
          allow_self_approval: flag(values, 'allow-self-approval') ? true : undefined,
          budget_usd: positiveNumber(values, 'budget-usd'),
          thinking,
          effort: oneOf(values, 'effort', EFFORTS),
          max_turns: positiveCount(values, 'max-turns'),
          network: networkOption(values),
          mcp: mcpOption(values),
        };
        const given = Object.values(defaults).some((v) => v !== undefined);
        const res = await client.request('POST', '/v1/sessions', {
          workspace: resolve(workspace),
          name,
          defaults: given ? defaults : undefined,
          limits: limitsOption(values),
        });
        printAnswer<SessionJson>(values, res, (s) => s.id);
      },
    },

    close: actionCommand<SessionJson & { deleted_jobs: number }>('DELETE', {
      about: 'Closes a session: its cron jobs are deleted; its runs, plans and history stay.',
      path: (id) => `/v1/sessions/${idPath(id)}`,
      render: (s) =>
        `session ${s.id} closed; ${s.deleted_jobs} job${s.deleted_jobs === 1 ? '' : 's'} deleted`,
    }),
  },
};

/** `--network-domain` (repeated) as a list of host names; `--network` alone as true (deprecated). */
function networkOption(values: Values): RunDefaultsJson['network'] {
  const domains = strs(values, 'network-domain');
  if (domains.length && flag(values, 'network')) {
    throw new RemoteUsageError('give --network-domain or --network, not both');
  }
  if (domains.length) return domains;
  return flag(values, 'network') ? true : undefined;
}
