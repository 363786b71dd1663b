import {
  choices,
  helpLine,
  JSON_HELP,
  jsonOption,
  type OptionsConfig,
  oneOf,
  positiveInt,
  str,
  type Values,
} from './args.js';
import type { Context, Subcommand } from './group.js';
import { out, printAnswer, printedJson, printListing } from './output.js';
import { queryString } from './request.js';

// The shapes most subcommands take: a listing with filters and paging, and show, action and delete on one
// item by ID.

/**
 * The command that prints the next page: the same filters as this one (a cursor belongs to its listing),
 * flags among them, then the cursor option. Values are quoted for a POSIX shell where they need it.
 */
export function nextPage(
  command: string,
  values: Values,
  filters: string[],
  cursor: [string, string],
): string {
  const quote = (v: string) => (/^[\w@%+=:,./-]+$/.test(v) ? v : `'${v.replaceAll("'", "'\\''")}'`);
  const given = filters.flatMap((f) => {
    if (values[f] === true) return [`--${f}`]; // a flag given (`jobs list --paused`)
    const v = str(values, f);
    return v === undefined ? [] : [`--${f} ${quote(v)}`];
  });
  return `\nmore: drydock ${command} ${[...given, `--${cursor[0]} ${quote(cursor[1])}`].join(' ')}`;
}

/** A listing's option `--<option> <arg>`, sent as the query parameter `param` (default: the option's name). */
export interface ListFilter {
  option: string;
  /** The value's name in help texts: `S`, `ID`, `N`. */
  arg: string;
  /** The synopsis' spelling of the value when it differs from `arg` (`open|closed`). */
  synopsisArg?: string;
  /** The description column of its help line. */
  help: string;
  param?: string;
  /** The values it takes, when it takes only some. */
  allowed?: readonly string[];
  /** Whether it is a positive integer (a page size). */
  positive?: boolean;
  /** For the paging option: the field of the answer that holds the next page's value. */
  next?: string;
  /**
   * What the query sends for the value given (after the checks above; undefined when the option is absent):
   * a default, or an alias spelled out (`plans list --status any` sends no status).
   */
  query?: (given: string | undefined) => string | undefined;
}

export const limitFilter = (help = 'at most N (API default 50, max 200)'): ListFilter => ({
  option: 'limit',
  arg: 'N',
  help,
  positive: true,
});

export const cursorFilter: ListFilter = {
  option: 'cursor',
  arg: 'C',
  help: 'the next page (from a previous listing)',
  next: 'next_cursor',
};

/** A filter that takes one of `allowed`, listed in its help with `note` after them ("(default: all)"). */
export function choiceFilter(
  option: string,
  arg: string,
  allowed: readonly string[],
  note?: string,
): ListFilter {
  return { option, arg, help: note ? `${choices(allowed)} ${note}` : choices(allowed), allowed };
}

/** `--run ID`: only the items of one run (or session, job, ...), sent as `run_id`. */
export function idFilter(option: string, help: string): ListFilter {
  return { option, arg: 'ID', help, param: `${option}_id` };
}

/** How a listing prints: a table row per item, or its own way (then it prints `more` too, if it is given). */
export type ListingShow<T, B> =
  | { empty: string; headers: string[]; row: (item: T, now: number) => string[] }
  | { print: (ctx: Context, body: B, more: string | null) => Promise<void> | void };

/**
 * A `list` subcommand: its filters make its options, synopsis, help lines and query; with a paging filter,
 * the listing ends with the command for the next page (the same filters, then the page's value).
 */
export function listCommand<T, B extends { items: T[] } = { items: T[] }>(spec: {
  /** What it lists, the first paragraph of its help. */
  about: string;
  filters: ListFilter[];
  /** The API path, given the positional arguments. */
  path: string | ((args: string[]) => string);
  positionals?: string[];
  show: ListingShow<T, B>;
}): Subcommand {
  const { filters, show } = spec;
  const positionals = spec.positionals ?? [];
  const options: OptionsConfig = {};
  for (const f of filters) options[f.option] = { type: 'string' };
  const paging = filters.find((f) => f.next);
  const kept = filters.filter((f) => f !== paging).map((f) => f.option);
  return {
    synopsis: [
      ...positionals,
      ...filters.map((f) => `[--${f.option} ${f.synopsisArg ?? f.arg}]`),
      '[--json]',
    ].join(' '),
    help: `${spec.about}\n\n${[...filters.map((f) => helpLine(`--${f.option} ${f.arg}`, f.help)), JSON_HELP].join('\n')}`,
    options: { ...options, ...jsonOption },
    positionals,
    async run(ctx) {
      const { client, values, args } = ctx;
      const query: Record<string, string | undefined> = {};
      for (const f of filters) {
        const given = f.allowed
          ? oneOf(values, f.option, f.allowed)
          : f.positive
            ? positiveInt(values, f.option)
            : str(values, f.option);
        query[f.param ?? f.option] = f.query ? f.query(given) : given;
      }
      const path = typeof spec.path === 'string' ? spec.path : spec.path(args);
      const res = await client.request('GET', `${path}${queryString(query)}`);
      const more = (body: B): string | null => {
        const next = paging?.next ? (body as unknown as Record<string, unknown>)[paging.next] : null;
        return paging && typeof next === 'string' && next
          ? nextPage(ctx.command, values, kept, [paging.option, next])
          : null;
      };
      if ('headers' in show) {
        printListing<T, B>(values, res, { ...show, more });
        return;
      }
      if (printedJson(values, res.text)) return;
      const body = res.body as B;
      await show.print(ctx, body, more(body));
    },
  };
}

/** A subcommand on one item, `ID`: what it does (the first paragraph of its help) and where it sends. */
interface ItemSpec<T> {
  about: string;
  path: (id: string) => string;
  /** What it prints of the answer without --json. */
  render: (body: T, now: number) => string;
}

/**
 * An `ID [--json]` subcommand: sends `method` to `path(id)` and prints its JSON body with --json, else what
 * `render` makes of it. `jsonHelp` replaces the help line of --json when it has more to say.
 */
function itemCommand<T>(method: string, spec: ItemSpec<T> & { jsonHelp?: string }): Subcommand {
  return {
    synopsis: 'ID [--json]',
    help: `${spec.about}\n\n${spec.jsonHelp ?? JSON_HELP}`,
    options: { ...jsonOption },
    positionals: ['ID'],
    async run({ client, values, args }) {
      const res = await client.request(method, spec.path(args[0]!));
      printAnswer<T>(values, res, (body) => spec.render(body, Date.now()));
    },
  };
}

/** A `show ID` subcommand: reads `path(id)`. */
export const showCommand = <T>(spec: ItemSpec<T>): Subcommand => itemCommand('GET', spec);

/** An action on one item (`runs cancel ID`, `jobs pause ID`): POSTs (or DELETEs) `path(id)` without a body. */
export const actionCommand = <T>(
  method: 'POST' | 'DELETE',
  spec: ItemSpec<T> & { jsonHelp?: string },
): Subcommand => itemCommand(method, spec);

/** `delete ID`: DELETEs `path(id)`, then says `<noun> ID deleted`; `about` is its whole help. */
export function deleteCommand(spec: {
  about: string;
  noun: string;
  path: (id: string) => string;
}): Subcommand {
  return {
    synopsis: 'ID',
    help: spec.about,
    options: {},
    positionals: ['ID'],
    async run({ client, args }) {
      await client.request('DELETE', spec.path(args[0]!));
      out(`${spec.noun} ${args[0]} deleted`);
    },
  };
}
