import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { EXECUTE_MODES, OVERLAP_POLICIES } from '../../domain/types.js';
import type {
  FiltersJson,
  FireResultJson,
  TriggerDeliveryJson,
  TriggerWithTokenJson,
} from '../../http/contract/index.js';
import type { ApiClient } from '../client.js';
import {
  choices,
  flag,
  JSON_HELP,
  jsonOption,
  LIMITS_HELP,
  limitOptions,
  limitsOption,
  MCP_HELP,
  mcpOption,
  mcpOptions,
  nonBlank,
  type OptionsConfig,
  oneOf,
  positiveCount,
  positiveInt,
  RemoteUsageError,
  scheduleOption,
  scheduleOptions,
  str,
  strs,
  type Values,
} from './args.js';
import { deliveryColumns, deliveryRow } from './deliveries.js';
import type { Group } from './group.js';
import { zoned } from './jobs.js';
import { deleteCommand, limitFilter, listCommand, showCommand } from './listing.js';
import { clean, dash, fields, oneLine, out, printAnswer, printedJson } from './output.js';
import { idPath } from './request.js';
import { age, when } from './times.js';

// drydock triggers list|show|create|update|delete|deliveries|fire: remote triggers over /v1/triggers.

const KINDS = ['github', 'generic', 'schedule'] as const;

/** The filter options: option name → the filter it sets. */
const FILTERS = {
  repository: 'repositories',
  'base-branch': 'base_branches',
  label: 'labels',
  author: 'authors',
  branch: 'branches',
  environment: 'environments',
  conclusion: 'conclusions',
  state: 'states',
} as const satisfies Record<string, keyof FiltersJson>;

/** The options only a github trigger takes (the events and every filter), for the messages that name them. */
const SCHEDULE_ONLY =
  '--cron, --timezone, --approximate, --overlap and --jitter-max-seconds apply to schedule triggers only';

const GITHUB_ONLY =
  '--event, --repository, --base-branch, --branch, --label, --author, --environment, --conclusion, --state, --draft and --merged apply to github triggers only';

/** What create and update share. */
const definitionOptions = {
  name: { type: 'string' },
  prompt: { type: 'string' },
  event: { type: 'string', multiple: true },
  repository: { type: 'string', multiple: true },
  'base-branch': { type: 'string', multiple: true },
  label: { type: 'string', multiple: true },
  author: { type: 'string', multiple: true },
  branch: { type: 'string', multiple: true },
  environment: { type: 'string', multiple: true },
  conclusion: { type: 'string', multiple: true },
  state: { type: 'string', multiple: true },
  draft: { type: 'string' },
  merged: { type: 'string' },
  workspace: { type: 'string' },
  'hourly-cap': { type: 'string' },
  ...limitOptions,
  'execute-mode': { type: 'string' },
  'approvals-required': { type: 'string' },
  ...mcpOptions,
  cron: { type: 'string' },
  timezone: { type: 'string' },
  approximate: { type: 'boolean' },
  ...scheduleOptions,
  ...jsonOption,
} as const satisfies OptionsConfig;

const definitionHelp = (
  draft: string,
  merged: string,
) => `  --name N              a name, shown in runs and plans
  --prompt TEXT         the prompt template; it may name {{repository}}, {{number}}, {{head_sha}},
                        {{head_ref}}, {{base_ref}}, {{event}}, {{author}}, {{trigger}}, {{branch}}, {{sha}},
                        {{tag}}, {{environment}}, {{conclusion}}, {{state}} (those its events fill: docs/triggers.md)
  --event E             github: an event to fire on, <event> or <event>.<action>: pull_request, issues,
                        issue_comment, check_suite, workflow_run, release, push, deployment_status, e.g.
                        pull_request.opened, issues.labeled, push (repeat for several)
  --repository R        github: only events of owner/repo R (repeatable)
  --base-branch B       github: only pull requests into branch B (repeatable)
  --branch B            github: only pushes to, failed checks of, or deployments of branch B (repeatable;
                        a push trigger needs at least one)
  --label L             github: only pull requests or issues with label L (repeatable)
  --author A            github: only events by GitHub user A (repeatable)
  --environment E       github: only deployment statuses of environment E (repeatable)
  --conclusion C        github: check suites and workflow runs that fire (default: failure; repeatable)
  --state S             github: deployment states that fire (default: success, failure, error; repeatable)
  ${draft}
  ${merged}
  --workspace DIR       the directory a generic or schedule trigger's runs work in (a relative path is
                        resolved against the current directory; the daemon must see the same path)
  --cron EXPR           schedule: when it fires, e.g. "0 3 * * MON-FRI" (it never expires)
  --timezone TZ         schedule: an IANA time zone, e.g. Europe/Berlin (default: the daemon's)
  --approximate         schedule: move a minute of exactly 0 or 30 forward 1-6 minutes
  --overlap P           schedule: what a slot due while its last run still goes becomes: skip,
                        buffer_one (default), buffer_all, cancel_other, allow_all (docs/scheduling.md)
  --jitter-max-seconds N
                        schedule: the longest jitter delay, in seconds (0: none)
  --hourly-cap N        at most N runs an hour
${LIMITS_HELP}
  --execute-mode M      ${choices(EXECUTE_MODES)}: what the execute phase may do without asking
  --approvals-required N
                        approvals a plan needs (1-10)
${MCP_HELP}`;

const TOKEN_NOTE = 'shown only this once: store it now';

const list = (xs: string[] | undefined): string | null => (xs?.length ? xs.join(', ') : null);

/** The options of runs (`options`), merged over `current`; undefined when no option was given. */
function runOptions(values: Values, current: Record<string, unknown> = {}) {
  const executeMode = oneOf(values, 'execute-mode', EXECUTE_MODES);
  const approvals = positiveCount(values, 'approvals-required');
  const mcp = mcpOption(values);
  if (executeMode === undefined && approvals === undefined && mcp === undefined) return undefined;
  return {
    ...current,
    ...(executeMode !== undefined ? { execute_mode: executeMode } : {}),
    ...(approvals !== undefined ? { approvals_required: approvals } : {}),
    ...(mcp !== undefined ? { mcp } : {}),
  };
}

/** Whether any option that only a github trigger uses (--event or a filter) was given. */
const githubOnlyGiven = (values: Values): boolean =>
  strs(values, 'event').length > 0 ||
  Object.keys(FILTERS).some((o) => strs(values, o).length > 0) ||
  str(values, 'draft') !== undefined ||
  str(values, 'merged') !== undefined;

/** The filters from the options, over `base`; undefined when no filter option was given. */
function filters(values: Values, base: FiltersJson, choices: readonly string[]) {
  const draft = oneOf(values, 'draft', choices);
  const merged = oneOf(values, 'merged', choices);
  const given = Object.entries(FILTERS).filter(([o]) => strs(values, o).length > 0);
  if (!given.length && draft === undefined && merged === undefined) return undefined;
  const next: FiltersJson = { ...base };
  for (const [option, key] of given) next[key] = strs(values, option);
  for (const [key, choice] of [
    ['draft', draft],
    ['merged', merged],
  ] as const) {
    if (choice === 'any') delete next[key];
    else if (choice !== undefined) next[key] = choice === 'true';
  }
  return next;
}

/** Prints a token the API just issued, labelled, with what to do with it. */
function printToken(t: TriggerWithTokenJson): void {
  if (!t.token) return;
  out(
    `token: ${t.token}\n  (${TOKEN_NOTE}; it cannot be shown again, only replaced with ` +
      `"drydock triggers update ${t.id} --rotate-token")\n` +
      `  fire with: drydock triggers fire ${t.id} --trigger-token <token> --text "..."` +
      ` (or DRYDOCK_TRIGGER_TOKEN=<token>)`,
  );
}

async function readText(path: string): Promise<string> {
  try {
    if (path === '-') {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    }
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as { code?: string }).code ?? (err as Error).message;
    throw new RemoteUsageError(`cannot read --text-file ${path}: ${code}`);
  }
}

/** A scheduled trigger's next fire times, in its zone beside UTC. */
function scheduleTimes(t: TriggerWithTokenJson): string {
  const times = t.schedule?.next_fire_times ?? [];
  return times.length ? times.map((at) => `  ${zoned(at, t.schedule!.timezone)}`).join('\n') : '  none';
}

/** Where the cap in effect comes from; a daemon that does not say is read from the kind. */
const capFrom = (t: TriggerWithTokenJson) =>
  t.hourly_cap_from ?? (t.kind === 'schedule' ? 'none' : 'trigger');

/** The hourly cap in effect, for the CAP column: `-` for a schedule trigger, which has none. */
function capCell(t: TriggerWithTokenJson): string {
  const from = capFrom(t);
  return from === 'none' ? '-' : `${t.hourly_cap}${from === 'default' ? ' (default)' : ''}`;
}

/** The hourly cap in effect for `triggers show`, and where it comes from. */
function capLine(t: TriggerWithTokenJson): string {
  switch (capFrom(t)) {
    case 'none':
      return '- (none: a schedule trigger fires on its cron; the hourly cap is for github and generic triggers)';
    case 'default':
      return `${t.hourly_cap} runs an hour (the default, github.trigger_hourly_cap)`;
    default:
      return `${t.hourly_cap} runs an hour`;
  }
}

const getTrigger = async (client: ApiClient, id: string): Promise<TriggerWithTokenJson> =>
  (await client.request('GET', `/v1/triggers/${idPath(id)}`)).body as TriggerWithTokenJson;

export const triggersGroup: Group = {
  name: 'triggers',
  summary:
    'Remote triggers: list them, read one, create, change or delete one, see its deliveries, fire a generic one.',
  commands: {
    list: listCommand<TriggerWithTokenJson>({
      about: `Lists triggers: id, kind, name, enabled, events, hourly cap (as triggers show gives it: "-" for a
schedule trigger, which has none; "(default)" when it is github.trigger_hourly_cap) and age.`,
      filters: [],
      path: '/v1/triggers',
      show: {
        empty: 'no triggers',
        headers: ['ID', 'KIND', 'NAME', 'ENABLED', 'CAP', 'AGE', 'EVENTS'],
        row: (t, now) => [
          t.id,
          t.kind,
          t.name,
          t.enabled ? 'yes' : 'no',
          capCell(t),
          age(t.created_at, now),
          dash(list(t.events)),
        ],
      },
    }),

    show: showCommand<TriggerWithTokenJson>({
      about: `Shows one trigger: kind, events, filters, workspace, run options, cap and its prompt template.`,
      path: (id) => `/v1/triggers/${idPath(id)}`,
      render(t, now) {
        const f = t.filters ?? {};
        return `${fields([
          ['trigger', t.id],
          ['name', t.name],
          ['kind', t.kind],
          ['enabled', t.enabled ? 'yes' : 'no'],
          ['events', list(t.events)],
          ['repositories', list(f.repositories)],
          ['base_branches', list(f.base_branches)],
          ['labels', list(f.labels)],
          ['authors', list(f.authors)],
          ['branches', list(f.branches)],
          ['environments', list(f.environments)],
          ['conclusions', list(f.conclusions)],
          ['states', list(f.states)],
          ['draft', f.draft === undefined ? null : String(f.draft)],
          ['merged', f.merged === undefined ? null : String(f.merged)],
          ['workspace', t.workspace],
          [
            'schedule',
            t.schedule
              ? `${t.schedule.cron} (${t.schedule.timezone})${t.schedule.approximate ? ', approximate' : ''}, overlap ${t.schedule.overlap}${t.schedule.jitter.max_seconds === null ? '' : `, jitter at most ${t.schedule.jitter.max_seconds} s`}, ${t.schedule.status}, fired ${t.schedule.fire_count} time(s), job ${t.schedule.job_id}`
              : null,
          ],
          ['hourly_cap', capLine(t)],
          ['limits', Object.keys(t.limits ?? {}).length ? JSON.stringify(t.limits) : null],
          ['options', Object.keys(t.options ?? {}).length ? JSON.stringify(t.options) : null],
          ['created_by', t.created_by],
          ['created', when(t.created_at, now)],
          ['updated', when(t.updated_at, now)],
        ])}${t.schedule ? `\n\nnext fires:\n${scheduleTimes(t)}` : ''}\n\nprompt:\n${clean(t.prompt).trimEnd()}${t.kind === 'schedule' ? `\n\nruns: drydock runs list --job ${t.schedule?.job_id ?? ''}` : `\n\ndeliveries: drydock triggers deliveries ${t.id}`}`;
      },
    }),

    create: {
      synopsis:
        '--kind github|generic|schedule --name N --prompt TEXT [--cron EXPR] [--timezone TZ] [--approximate] [--overlap P] [--jitter-max-seconds N] [--event E ...] [--repository owner/repo ...] [--base-branch B ...] [--branch B ...] [--label L ...] [--author A ...] [--environment E ...] [--conclusion C ...] [--state S ...] [--draft true|false] [--merged true|false] [--workspace DIR] [--hourly-cap N] [--daily-usd X] [--daily-runs N] [--execute-mode M] [--approvals-required N] [--mcp NAME ... | --no-mcp] [--json]',
      help: `Creates a trigger and prints its id. A github trigger fires on the webhook events it names (at least
one --event), filtered by the filter options; a generic trigger (it needs --workspace) fires on
'drydock triggers fire' with its own token, which is printed here, once, labelled "token:"; a schedule
trigger (it needs --cron and --workspace) fires on its cron schedule and never expires.

  --kind K              ${choices(KINDS)} (required)
${definitionHelp(
  '--draft true|false    github: only draft or only ready pull requests',
  '--merged true|false   github: only merged or only unmerged closed pull requests',
)}
  --json                print the API's JSON body (a generic trigger's token is its "token" field)`,
      options: { kind: { type: 'string' }, ...definitionOptions },
      positionals: [],
      async run({ client, values }) {
        const kind = oneOf(values, 'kind', KINDS);
        if (kind === undefined) throw new RemoteUsageError(`--kind is required: ${KINDS.join(' or ')}`);
        const name = nonBlank(values, 'name');
        if (name === undefined) throw new RemoteUsageError('--name is required: what to call the trigger');
        const prompt = nonBlank(values, 'prompt');
        if (prompt === undefined) throw new RemoteUsageError('--prompt is required: the prompt template');
        const workspace = nonBlank(values, 'workspace');
        const events = strs(values, 'event');
        if (kind === 'github' && !events.length) {
          throw new RemoteUsageError('a github trigger needs at least one --event, e.g. pull_request.opened');
        }
        const scheduleGiven =
          str(values, 'cron') !== undefined ||
          str(values, 'timezone') !== undefined ||
          flag(values, 'approximate') ||
          Object.keys(scheduleOption(values, OVERLAP_POLICIES)).length > 0;
        if (kind !== 'schedule' && scheduleGiven) {
          throw new RemoteUsageError(SCHEDULE_ONLY);
        }
        if (kind === 'schedule' && nonBlank(values, 'cron') === undefined) {
          throw new RemoteUsageError('a schedule trigger needs --cron, e.g. "0 3 * * MON-FRI"');
        }
        if (kind !== 'github') {
          if (githubOnlyGiven(values)) {
            throw new RemoteUsageError(GITHUB_ONLY);
          }
          if (workspace === undefined) {
            throw new RemoteUsageError(`a ${kind} trigger needs --workspace: the directory its runs work in`);
          }
        }
        const cap = positiveCount(values, 'hourly-cap');
        const res = await client.request('POST', '/v1/triggers', {
          kind,
          name,
          prompt,
          events: events.length ? events : undefined,
          filters: filters(values, {}, ['true', 'false']),
          workspace: workspace === undefined ? undefined : resolve(workspace),
          hourly_cap: cap,
          limits: limitsOption(values),
          options: runOptions(values),
          ...(kind === 'schedule'
            ? {
                cron: str(values, 'cron'),
                timezone: nonBlank(values, 'timezone'),
                approximate: flag(values, 'approximate') || undefined,
                ...scheduleOption(values, OVERLAP_POLICIES),
              }
            : {}),
        });
        if (printedJson(values, res.text)) return;
        const t = res.body as TriggerWithTokenJson;
        out(`trigger ${t.id} created (${t.kind}, "${oneLine(t.name)}")`);
        printToken(t);
        if (t.schedule) out(`next fires:\n${scheduleTimes(t)}`);
      },
    },

    update: {
      synopsis:
        'ID [--name N] [--prompt TEXT] [--cron EXPR] [--timezone TZ] [--approximate] [--overlap P] [--jitter-max-seconds N] [--event E ...] [--repository R ...] [--base-branch B ...] [--branch B ...] [--label L ...] [--author A ...] [--environment E ...] [--conclusion C ...] [--state S ...] [--draft true|false|any] [--merged true|false|any] [--clear-filters] [--workspace DIR] [--hourly-cap N] [--daily-usd X|none] [--daily-runs N|none] [--execute-mode M] [--approvals-required N] [--mcp NAME ... | --no-mcp] [--enable|--disable] [--rotate-token] [--json]',
      help: `Changes a trigger; what is not given stays as it is. --event replaces the events. Each filter option
replaces that filter's values and keeps the others (--clear-filters starts from none; --draft any and
--merged any drop those filters). --execute-mode, --approvals-required and --mcp/--no-mcp keep the other run options.
--rotate-token replaces a generic trigger's token and prints the new one, once, labelled "token:".

${definitionHelp(
  `--draft true|false|any\n${' '.repeat(24)}github: only draft, only ready, or any pull requests`,
  `--merged true|false|any\n${' '.repeat(24)}github: only merged, only unmerged, or any closed pull requests`,
)}
  --clear-filters       drop every filter not given in this command
  --enable, --disable   let it fire again, or make it refuse deliveries and fires
  --rotate-token        issue a new token (generic triggers); the old one stops working
  --json                print the API's JSON body (a new token is its "token" field)`,
      options: {
        ...definitionOptions,
        draft: { type: 'string' },
        'clear-filters': { type: 'boolean' },
        enable: { type: 'boolean' },
        disable: { type: 'boolean' },
        'rotate-token': { type: 'boolean' },
      },
      positionals: ['ID'],
      async run({ client, values, args }) {
        const id = args[0]!;
        if (flag(values, 'enable') && flag(values, 'disable')) {
          throw new RemoteUsageError('give at most one of --enable and --disable');
        }
        const name = nonBlank(values, 'name');
        const prompt = nonBlank(values, 'prompt');
        const workspace = nonBlank(values, 'workspace');
        const cap = positiveCount(values, 'hourly-cap');
        const events = strs(values, 'event');
        const clearFilters = flag(values, 'clear-filters');
        const filterGiven = clearFilters || githubOnlyGiven(values);
        const optionsGiven =
          str(values, 'execute-mode') !== undefined ||
          str(values, 'approvals-required') !== undefined ||
          mcpOption(values) !== undefined;
        // Validate before any request.
        oneOf(values, 'draft', ['true', 'false', 'any']);
        oneOf(values, 'merged', ['true', 'false', 'any']);
        oneOf(values, 'execute-mode', EXECUTE_MODES);
        positiveInt(values, 'approvals-required');
        const body: Record<string, unknown> = {
          name,
          prompt,
          workspace: workspace === undefined ? undefined : resolve(workspace),
          hourly_cap: cap,
          events: events.length ? events : undefined,
          enabled: flag(values, 'enable') ? true : flag(values, 'disable') ? false : undefined,
          rotate_token: flag(values, 'rotate-token') ? true : undefined,
          cron: nonBlank(values, 'cron'),
          timezone: nonBlank(values, 'timezone'),
          approximate: flag(values, 'approximate') ? true : undefined,
          ...scheduleOption(values, OVERLAP_POLICIES),
        };
        const limitsGiven = str(values, 'daily-usd') !== undefined || str(values, 'daily-runs') !== undefined;
        limitsOption(values);
        if (filterGiven || optionsGiven || limitsGiven) {
          // Filters and options are replaced whole by the API: merge over what the trigger has.
          const current = await getTrigger(client, id);
          if (current.kind !== 'github' && githubOnlyGiven(values)) {
            throw new RemoteUsageError(GITHUB_ONLY);
          }
          if (filterGiven) {
            body.filters =
              filters(values, clearFilters ? {} : (current.filters ?? {}), ['true', 'false', 'any']) ?? {};
          }
          if (optionsGiven) body.options = runOptions(values, current.options ?? {});
          if (limitsGiven) body.limits = limitsOption(values, current.limits ?? {});
        }
        if (Object.values(body).every((v) => v === undefined)) {
          throw new RemoteUsageError('nothing to change: give at least one option');
        }
        const res = await client.request('PATCH', `/v1/triggers/${idPath(id)}`, body);
        if (printedJson(values, res.text)) return;
        const t = res.body as TriggerWithTokenJson;
        out(`trigger ${t.id} updated (${t.enabled ? 'enabled' : 'disabled'})`);
        printToken(t);
        if (t.schedule) out(`next fires:\n${scheduleTimes(t)}`);
      },
    },

    delete: deleteCommand({
      about: 'Deletes a trigger: webhooks no longer match it and its token stops working. Its runs stay.',
      noun: 'trigger',
      path: (id) => `/v1/triggers/${idPath(id)}`,
    }),

    deliveries: listCommand<TriggerDeliveryJson>({
      about: `Lists a trigger's recent deliveries (webhook deliveries and fires), newest first: id, age, source,
event, what this trigger made of it (accepted, filtered, capped, ...; and the delivery's overall outcome
when that differs), its run, subject and detail.`,
      filters: [limitFilter()],
      path: (args) => `/v1/triggers/${idPath(args[0]!)}/deliveries`,
      positionals: ['ID'],
      show: {
        empty: 'no deliveries',
        headers: deliveryColumns('RUN'),
        row: (x, now) =>
          deliveryRow(
            x,
            now,
            x.delivery_outcome && x.delivery_outcome !== x.outcome
              ? `${x.outcome} (delivery: ${x.delivery_outcome})`
              : x.outcome,
            dash(x.run_id),
          ),
      },
    }),

    fire: {
      synopsis: 'ID --trigger-token T [--idempotency-key K] [--text TEXT | --text-file F] [--json]',
      help: `Fires a generic trigger: starts a run of its prompt, with the text as untrusted data. This
authenticates with the trigger's own token (shown when it was created or rotated), not with --token or
DRYDOCK_TOKEN. Prints the run: a new one, or the one an earlier fire with the same idempotency key started.

  --trigger-token T     the trigger's token (default: $DRYDOCK_TRIGGER_TOKEN, which is better: flags
                        show up in ps)
  --idempotency-key K   fire at most once for K: the same key again answers the same run
  --text TEXT           text passed to the run (at most 64 KB)
  --text-file F         the text from file F ("-" for standard input)
${JSON_HELP}`,
      options: {
        'trigger-token': { type: 'string' },
        'idempotency-key': { type: 'string' },
        text: { type: 'string' },
        'text-file': { type: 'string' },
        ...jsonOption,
      },
      credential: { option: 'trigger-token', env: 'DRYDOCK_TRIGGER_TOKEN', name: 'trigger token' },
      positionals: ['ID'],
      async run({ client, values, args }) {
        const file = str(values, 'text-file');
        if (file !== undefined && str(values, 'text') !== undefined) {
          throw new RemoteUsageError('give at most one of --text and --text-file');
        }
        const key = nonBlank(values, 'idempotency-key');
        const text = file !== undefined ? await readText(file) : str(values, 'text');
        const res = await client.request('POST', `/v1/triggers/${idPath(args[0]!)}/fire`, {
          idempotency_key: key,
          text,
        });
        printAnswer<FireResultJson>(values, res, (f) => {
          const run = f.run ? `run ${f.run.id}` : 'no run';
          return f.duplicate
            ? `${run} (already started by an earlier fire with this idempotency key; delivery ${f.delivery_id})`
            : `${run} started (delivery ${f.delivery_id})`;
        });
      },
    },
  },
};
