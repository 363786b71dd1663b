import { type ParseArgsConfig, parseArgs } from 'node:util';
import { planTitle, type TitleShape } from '../../domain/plan-title.js';
import { ApiClient, ApiError, UnreachableError } from '../client.js';

// What every command that talks to a running daemon shares: connection flags, argument parsing, help,
// error reporting with exit codes (0 ok, 1 the API refused or failed or is unreachable, 2 bad usage), and
// plain-text formatting for terminals.

export const DEFAULT_URL = 'http://127.0.0.1:8080';

export class RemoteUsageError extends Error {}

export type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface Context {
  client: ApiClient;
  /** The group and subcommand, `runs list`: for hints that name the command again. */
  command: string;
  values: Values;
  /** The positional arguments after the subcommand (an id, when the command takes one). */
  args: string[];
}

export interface Subcommand {
  /** The synopsis line after `drydock <group> `, e.g. `show ID [--json]`. */
  synopsis: string;
  /** What it does and its options, shown by --help. */
  help: string;
  options: OptionsConfig;
  /** How many positional arguments it takes, and how to call them in errors. */
  positionals: string[];
  /**
   * Authenticates with another credential instead of the API token (--token/DRYDOCK_TOKEN), e.g. a
   * trigger's own token: the option `--<option>` (which must be among `options`), else the variable `env`.
   */
  credential?: Credential;
  /** Resolves with the exit code, or nothing for 0. */
  run(ctx: Context): Promise<number | undefined>;
}

export interface Credential {
  option: string;
  env: string;
  /** What it is, for messages: "trigger token". */
  name: string;
}

export interface Group {
  name: string;
  summary: string;
  commands: Record<string, Subcommand>;
}

export const CONNECTION_HELP = `connection options (every remote command):
  --url URL             daemon URL (default: $DRYDOCK_URL, else ${DEFAULT_URL})
  --token TOKEN         API token (default: $DRYDOCK_TOKEN, which is better: flags show up in ps)
  -h, --help            print this help

exit codes: 0 success; 1 the API refused or failed, or the daemon is unreachable; 2 bad usage`;

const connectionOptions = {
  url: { type: 'string' },
  token: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionsConfig;

export const jsonOption = { json: { type: 'boolean' } } as const satisfies OptionsConfig;

/** A list of allowed values for help texts, wrapped under an option's description column. */
export function choices(values: readonly string[]): string {
  const lines: string[] = [];
  let line = '';
  for (const v of values) {
    const next = line ? `${line} | ${v}` : v;
    if (next.length > 80 && line) {
      lines.push(`${line} |`);
      line = v;
    } else line = next;
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(24)}`);
}

export const out = (text: string): void => {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
};

export function groupHelp(group: Group): string {
  const lines = Object.entries(group.commands).map(
    ([name, c]) => `  drydock ${group.name} ${name} ${c.synopsis}`,
  );
  return `${group.summary}\n\nusage:\n${lines.join('\n')}\n\nrun "drydock ${group.name} <command> --help" for details\n\n${CONNECTION_HELP}`;
}

export function commandHelp(group: Group, name: string, c: Subcommand): string {
  return `usage: drydock ${group.name} ${name} ${c.synopsis}\n\n${c.help}\n\n${CONNECTION_HELP}`;
}

/** Runs `drydock <group> <command> ...` and returns its exit code; prints errors, never the token. */
export async function runGroup(group: Group, argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    if (name === undefined) {
      process.stderr.write(`drydock: ${group.name}: expected a command\n\n${groupHelp(group)}\n`);
      return 2;
    }
    out(groupHelp(group));
    return 0;
  }
  const command = Object.hasOwn(group.commands, name) ? group.commands[name] : undefined;
  if (!command) {
    const near = closest(name, Object.keys(group.commands));
    process.stderr.write(
      `drydock: ${group.name}: unknown command "${name}"${near ? `; did you mean "${near}"?` : ''}\n\n${groupHelp(group)}\n`,
    );
    return 2;
  }
  const secrets = knownTokens(rest, command.credential);
  const options = { ...command.options, ...connectionOptions };
  const say = (msg: string) => process.stderr.write(`drydock: ${redact(msg, secrets)}\n`);
  try {
    if (checkOptions(rest, options, `${group.name} ${name}`).help) {
      out(commandHelp(group, name, command));
      return 0;
    }
  } catch (err) {
    // One line: the option and the closest one it may have meant.
    say((err as Error).message);
    return 2;
  }
  try {
    const parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true });
    const values = parsed.values as Values;
    const positionals = parsed.positionals;
    if (positionals.length !== command.positionals.length) {
      const wanted = command.positionals.length
        ? `expects ${command.positionals.join(' ')}`
        : 'takes no arguments';
      throw new RemoteUsageError(`${group.name} ${name} ${wanted}, got ${positionals.length} argument(s)`);
    }
    const conn = connection(values, command.credential);
    return (
      (await command.run({
        client: new ApiClient(conn.url, conn.token),
        command: `${group.name} ${name}`,
        values,
        args: positionals,
      })) ?? 0
    );
  } catch (err) {
    if (err instanceof RemoteUsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      say(
        `${(err as Error).message}\nusage: drydock ${group.name} ${name} ${command.synopsis}\n` +
          `(run "drydock ${group.name} ${name} --help" for details)`,
      );
      return 2;
    }
    if (err instanceof ApiError) {
      say(`${err.status} ${err.code}: ${err.message}`);
      return 1;
    }
    if (err instanceof UnreachableError) {
      say(err.message);
      return 1;
    }
    say((err as Error).stack ?? String(err));
    return 1;
  }
}

// --- options ---

/**
 * Checks `args` against `options` before parseArgs sees them, so that a mistake gets one line of ours
 * naming the command and the closest option (`unknown option --sesion for "jobs list"; did you mean
 * --session?`) instead of Node's text. Returns whether -h/--help is among them: help wins over any mistake.
 */
export function checkOptions(args: string[], options: OptionsConfig, command: string): { help: boolean } {
  const { tokens } = parseArgs({ args, options, allowPositionals: true, strict: false, tokens: true });
  let problem: string | null = null;
  for (const t of tokens) {
    if (t.kind === 'option-terminator') break;
    if (t.kind !== 'option') continue;
    const spec = Object.hasOwn(options, t.name) ? options[t.name] : undefined;
    if (spec && t.name === 'help') return { help: true };
    if (problem) continue;
    if (!spec) problem = unknownOption(t.rawName, Object.keys(options), command);
    else if (spec.type === 'boolean' && t.value !== undefined) {
      problem = `option ${t.rawName} of "${command}" takes no value, got "${t.value}"`;
    } else if (spec.type === 'string' && t.value === undefined) {
      problem = `option ${t.rawName} of "${command}" needs a value`;
    } else if (spec.type === 'string' && !t.inlineValue && t.value?.startsWith('-')) {
      // parseArgs refuses this as ambiguous: most often the value was forgotten.
      problem = `option ${t.rawName} of "${command}" needs a value (got the option ${t.value}; write ${t.rawName}=${t.value} if that is the value)`;
    }
  }
  if (problem) throw new RemoteUsageError(problem);
  return { help: false };
}

/** `unknown option --sesion for "jobs list"; did you mean --session?` */
export function unknownOption(raw: string, known: string[], command: string): string {
  const name = raw.replace(/^-+/, '').replace(/=.*$/, '');
  const near = raw.startsWith('--') || name.length > 1 ? closest(name, known) : undefined;
  return `unknown option ${raw} for "${command}"${
    near ? `; did you mean --${near}?` : ` (run "drydock ${command} --help" for its options)`
  }`;
}

/** The candidate nearest to `word` by edit distance (or the only one it starts), if any is near enough. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const prefixed = candidates.filter((c) => c.startsWith(word));
  if (word.length >= 3 && prefixed.length === 1) return prefixed[0];
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.min(3, Math.floor(word.length / 3)));
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d <= bestDistance && (best === undefined || d < editDistance(word, best))) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance, a swap of two neighbours counting as one edit. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The daemon URL and token from --url/--token, else DRYDOCK_URL/DRYDOCK_TOKEN; the token from the
 * command's own credential option or variable instead when it has one.
 */
function connection(values: Values, credential?: Credential): { url: string; token: string } {
  const url = str(values, 'url') ?? (process.env.DRYDOCK_URL?.trim() || DEFAULT_URL);
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new RemoteUsageError(`the daemon URL must be an http:// or https:// URL, got "${url}"`);
  }
  const token = credential
    ? (str(values, credential.option) ?? process.env[credential.env] ?? '').trim()
    : (str(values, 'token') ?? process.env.DRYDOCK_TOKEN ?? '').trim();
  if (!token) {
    throw new RemoteUsageError(
      credential
        ? `no ${credential.name}: pass --${credential.option} (or set ${credential.env})`
        : 'no API token: set DRYDOCK_TOKEN (or pass --token); create one with `drydock token create --name NAME --role operator`',
    );
  }
  // A header value cannot hold these; fetch would echo the value in its error.
  if (/[\s\p{Cc}]/u.test(token) || [...token].some((ch) => ch.codePointAt(0)! > 0x7e)) {
    throw new RemoteUsageError(
      `the ${credential?.name ?? 'API token'} contains spaces, control or non-ASCII characters`,
    );
  }
  return { url, token };
}

/**
 * The token values this invocation may hold (from the environment, --token and the command's credential
 * option), to keep out of errors.
 */
function knownTokens(args: string[], credential?: Credential): string[] {
  const found = [process.env.DRYDOCK_TOKEN ?? ''];
  const names = ['token'];
  if (credential) {
    found.push(process.env[credential.env] ?? '');
    names.push(credential.option);
  }
  args.forEach((a, i) => {
    for (const name of names) {
      if (a === `--${name}`) found.push(args[i + 1] ?? '');
      else if (a.startsWith(`--${name}=`)) found.push(a.slice(`--${name}=`.length));
    }
  });
  return found.map((t) => t.trim()).filter((t) => t.length >= 4);
}

function redact(text: string, secrets: string[]): string {
  return secrets.reduce((t, s) => t.replaceAll(s, '[token]'), text);
}

export function str(values: Values, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

export function strs(values: Values, name: string): string[] {
  const v = values[name];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

export const flag = (values: Values, name: string): boolean => values[name] === true;

/** A string option that must not be blank when given, or undefined when absent. */
export function nonBlank(values: Values, name: string): string | undefined {
  const v = str(values, name);
  if (v !== undefined && !v.trim()) throw new RemoteUsageError(`--${name} must not be blank`);
  return v;
}

/** A required, non-blank string option. */
export function required(values: Values, name: string, why: string): string {
  const v = str(values, name);
  if (v === undefined || !v.trim()) throw new RemoteUsageError(`--${name} is required: ${why}`);
  return v;
}

/** One of `allowed`, or undefined when the option is absent. */
export function oneOf<T extends string>(values: Values, name: string, allowed: readonly T[]): T | undefined {
  const v = str(values, name);
  if (v !== undefined && !(allowed as readonly string[]).includes(v)) {
    throw new RemoteUsageError(`--${name} must be one of ${allowed.join(', ')}, got "${v}"`);
  }
  return v as T | undefined;
}

/** A positive integer option, as the string the API takes. */
export function positiveInt(values: Values, name: string): string | undefined {
  const v = str(values, name);
  if (v !== undefined && !/^[1-9][0-9]{0,8}$/.test(v)) {
    throw new RemoteUsageError(`--${name} must be a positive integer, got "${v}"`);
  }
  return v;
}

/** A positive integer option as a number, or undefined when absent. */
export function positiveCount(values: Values, name: string): number | undefined {
  const v = positiveInt(values, name);
  return v === undefined ? undefined : Number(v);
}

/**
 * The command that prints the next page: the same filters as this one (a cursor belongs to its listing),
 * then the cursor option. Values are quoted for a POSIX shell where they need it.
 */
export function nextPage(
  command: string,
  values: Values,
  filters: string[],
  cursor: [string, string],
): string {
  const quote = (v: string) => (/^[\w@%+=:,./-]+$/.test(v) ? v : `'${v.replaceAll("'", "'\\''")}'`);
  const given = filters.flatMap((f) => {
    const v = str(values, f);
    return v === undefined ? [] : [`--${f} ${quote(v)}`];
  });
  return `\nmore: drydock ${command} ${[...given, `--${cursor[0]} ${quote(cursor[1])}`].join(' ')}`;
}

/** `?a=1&b=2` from the defined entries, or ''. */
export function queryString(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const idPath = (id: string): string => encodeURIComponent(id);

// --- formatting ---

/** Text from the API (some of it written by a model) made safe for a terminal: no escape sequences. */
export function clean(text: string): string {
  // C0 controls other than tab and newline, DEL, and C1 controls.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  return text.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '');
}

/** One line of at most `max` characters. */
export function oneLine(text: string, max = 60): string {
  const line = clean(text).replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A plan's title as the domain shapes it for `shape` (`planTitle`), without terminal control characters. */
export function terminalPlanTitle(markdown: string, shape: TitleShape): string {
  return clean(planTitle(markdown, shape));
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(headers: string[], rows: string[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => oneLine(c, 200)))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => [...(r[i] ?? '')].length)));
  return cells
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat(widths[i]! - [...c].length)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Aligned `key  value` lines; null and undefined values show as '-'. */
export function fields(entries: [string, unknown][]): string {
  const width = Math.max(...entries.map(([k]) => k.length));
  return entries
    .map(
      ([k, v]) =>
        `${k.padEnd(width)}  ${v === null || v === undefined || v === '' ? '-' : oneLine(String(v), 500)}`,
    )
    .join('\n');
}

function span(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** How long ago an ISO time was ("5m"), or '-'. */
export function age(iso: unknown, now = Date.now()): string {
  if (typeof iso !== 'string') return '-';
  const t = Date.parse(iso);
  return Number.isNaN(t) ? '-' : span(now - t);
}

/** How far an ISO time is from now: "5m ago" or "in 2h"; '-' when absent. */
export function relative(iso: unknown, now = Date.now()): string {
  if (typeof iso !== 'string') return '-';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '-';
  return t <= now ? `${span(now - t)} ago` : `in ${span(t - now)}`;
}

/** An ISO time with how far it is from now: "2025-01-02T03:04:05.000Z (5m ago)" or "(in 2h)". */
export function when(iso: unknown, now = Date.now()): string | null {
  if (typeof iso !== 'string') return null;
  return Number.isNaN(Date.parse(iso)) ? iso : `${iso} (${relative(iso, now)})`;
}

export const dash = (v: unknown): string => (v === null || v === undefined || v === '' ? '-' : String(v));

/** Prints the raw JSON body when --json is given; returns whether it did. */
export function printedJson(values: Values, text: string): boolean {
  if (!flag(values, 'json')) return false;
  out(text);
  return true;
}

/** Prints an answer: its JSON body with --json, else the text `render` makes of it. */
export function printAnswer<T>(
  values: Values,
  res: { text: string; body: unknown },
  render: (body: T) => string,
): void {
  if (!printedJson(values, res.text)) out(render(res.body as T));
}

/**
 * Prints a listing answer: its JSON body with --json; else `empty` when it has no items, else a table with
 * one row per item, then `more` (the way to the next page) when it gives a line.
 */
export function printListing<T, B extends { items: T[] } = { items: T[] }>(
  values: Values,
  res: { text: string; body: unknown },
  spec: {
    empty: string;
    headers: string[];
    row: (item: T, now: number) => string[];
    more?: (body: B) => string | null;
  },
): void {
  if (printedJson(values, res.text)) return;
  const body = res.body as B;
  if (!body.items.length) {
    out(spec.empty);
    return;
  }
  const now = Date.now();
  out(
    table(
      spec.headers,
      body.items.map((item) => spec.row(item, now)),
    ),
  );
  const more = spec.more?.(body);
  if (more) out(more);
}

// --- listings ---

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
}

export const JSON_HELP = helpLine('--json', "print the API's JSON body");

/** `  --limit N             at most N ...`: the option in a column 22 wide. */
export function helpLine(option: string, text: string): string {
  return `  ${option.padEnd(22)}${text}`;
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
        query[f.param ?? f.option] = f.allowed
          ? oneOf(values, f.option, f.allowed)
          : f.positive
            ? positiveInt(values, f.option)
            : str(values, f.option);
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

/** `--mcp NAME` and `--no-mcp`, which every command that sets run options takes. */
export const mcpOptions = {
  mcp: { type: 'string', multiple: true },
  'no-mcp': { type: 'boolean' },
} as const;

export const MCP_HELP = `  --mcp NAME            an MCP server (a name under mcp.servers in the daemon's configuration) whose
                        tools the runs get; repeat for more
  --no-mcp              no MCP servers, even where the session names some`;

/** `--mcp` (repeated) as a list of server names, `--no-mcp` as []; undefined when neither was given. */
export function mcpOption(values: Values): string[] | undefined {
  const names = strs(values, 'mcp');
  if (names.length && flag(values, 'no-mcp')) throw new RemoteUsageError('give --mcp or --no-mcp, not both');
  if (names.length) return names;
  return flag(values, 'no-mcp') ? [] : undefined;
}
