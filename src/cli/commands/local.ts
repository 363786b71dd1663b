import type { OptionsConfig } from './args.js';

// The local commands (`drydock serve`, `token create`, `gc` ...): they run on the daemon's host with its
// configuration and database. Their names, arguments, options and help lines are written here once: the
// commands parse their options from these definitions, and `drydock --help` and docs/cli.md are printed
// from them (src/cli/help.ts, src/cli/reference.ts).

export interface LocalOption {
  /** The long option, without `--`. */
  name: string;
  type: 'string' | 'boolean';
  short?: string;
  /** The value's placeholder in help (`FILE`), for a string option. */
  arg?: string;
  /**
   * What it does, one help line each (wrapped by hand at the help's width). Empty: a common option
   * (`--config FILE`) listed with the others like it on one line.
   */
  text: string[];
}

export interface LocalCommand {
  /** `serve`, or `token create` for a command with a subcommand. */
  name: string;
  /** The positional arguments after the name, as help shows them (`ID`, `SERVER`). */
  args: string;
  /** What it does, one help line each. */
  summary: string[];
  options: LocalOption[];
}

const config: LocalOption = { name: 'config', type: 'string', arg: 'FILE', text: [] };
const dataDir: LocalOption = { name: 'data-dir', type: 'string', arg: 'DIR', text: [] };

export const LOCAL_COMMANDS: readonly LocalCommand[] = [
  {
    name: 'serve',
    args: '',
    summary: ['start the daemon (HTTP API and scheduler)'],
    options: [
      {
        ...config,
        text: ['configuration file (default: $DRYDOCK_CONFIG, else built-in defaults)'],
      },
      { name: 'port', type: 'string', arg: 'N', text: ['listen port (default 8080)'] },
      { name: 'host', type: 'string', arg: 'ADDR', text: ['listen address (default 127.0.0.1)'] },
      {
        ...dataDir,
        text: ['database, worktrees and checkouts (default ./data; relative to where drydock starts)'],
      },
    ],
  },
  {
    name: 'migrate',
    args: '',
    summary: ['apply pending database migrations and exit'],
    options: [config, dataDir],
  },
  {
    name: 'migrate-store',
    args: '',
    summary: [
      'copy everything of a SQLite database into an empty PostgreSQL database, in one',
      "transaction (all or nothing), and print each table's rows in both; stop the",
      'daemon first (the file is only read)',
    ],
    options: [
      {
        name: 'from',
        type: 'string',
        arg: 'FILE',
        text: [
          "the SQLite database (data_dir/drydock.db), at this drydock's schema (run",
          '"drydock migrate" first)',
        ],
      },
      {
        name: 'to',
        type: 'string',
        arg: 'URL',
        text: [
          'postgres://user:password@host:5432/db (default: $DATABASE_URL); its tables are',
          'made if missing, and it is refused unless they are empty',
        ],
      },
    ],
  },
  {
    name: 'token create',
    args: '',
    summary: ['create an API token and print it once (its id goes to stderr)'],
    options: [
      { name: 'name', type: 'string', arg: 'NAME', text: ['who the token is for (also its identity)'] },
      { name: 'role', type: 'string', arg: 'ROLE', text: ['admin | operator | approver | viewer'] },
      {
        name: 'init',
        type: 'boolean',
        text: ['make a new database when there is none (else: refused, naming where it looked)'],
      },
      config,
      dataDir,
    ],
  },
  {
    name: 'token revoke',
    args: 'ID',
    summary: ['revoke a token (its id, or the token itself); its /ui sessions end too'],
    options: [config, dataDir],
  },
  {
    name: 'doctor',
    args: '',
    summary: [
      'make one tiny real request to the configured model and report the key, the',
      "model, the thinking mode, the price and the Grep tool's ripgrep, one line each;",
      "with github.app, check that GitHub accepts the App's JWT, list its installations",
      'and say what permissions each lacks (exit 1 when a check fails)',
    ],
    options: [config, dataDir],
  },
  {
    name: 'mcp tools',
    args: 'SERVER',
    summary: [
      'start the MCP server SERVER of mcp.servers as a run would, list its tools with their',
      'annotations and which phase may call each (plan; execute: ask or allow in manual,',
      'edits and auto) and why, then stop it (exit 1 when it does not start)',
    ],
    options: [config, { name: 'json', type: 'boolean', text: ['print the same as one JSON object'] }],
  },
  {
    name: 'gc',
    args: '',
    summary: [
      "remove executions' worktrees (and their local drydock/<plan> branches) and pull",
      'request checkouts settled longer than retention.worktree_ttl_ms ago; never one',
      'a run can still use (the daemon also does this a minute after it starts, then',
      'every retention.interval_ms)',
    ],
    options: [
      { name: 'dry-run', type: 'boolean', text: ['only list what would be removed'] },
      config,
      dataDir,
    ],
  },
];

/** The local command `name` (`token create`); throws for a name that is not one. */
export function localCommand(name: string): LocalCommand {
  const command = LOCAL_COMMANDS.find((c) => c.name === name);
  if (!command) throw new Error(`no local command ${name}`);
  return command;
}

/** The options `parseArgs` takes for the local command `name`, with -h/--help. */
export function localOptions(name: string): OptionsConfig {
  const options: OptionsConfig = { help: { type: 'boolean', short: 'h' } };
  for (const o of localCommand(name).options) {
    options[o.name] = o.short ? { type: o.type, short: o.short } : { type: o.type };
  }
  return options;
}

/**
 * The option names of the local command `name` (`token revoke`), for suggestions; for a first word alone
 * (`token`), those of every command it starts.
 */
export function localOptionNames(name: string): string[] {
  const exact = LOCAL_COMMANDS.filter((c) => c.name === name);
  const names = new Set<string>();
  for (const c of exact.length ? exact : LOCAL_COMMANDS.filter((c) => c.name.split(' ')[0] === name)) {
    for (const o of c.options) names.add(o.name);
  }
  return [...names, 'help'];
}

/** The help lines of a local command: its usage with the summary beside it, then its options. */
export function localHelpLines(c: LocalCommand): string[] {
  const head = c.args ? `${c.name} ${c.args}` : c.name;
  const lines: string[] = [];
  const [first = '', ...rest] = c.summary;
  lines.push(head.length < 22 ? `  ${head.padEnd(22)}${first}` : `  ${head}\n${' '.repeat(24)}${first}`);
  for (const line of rest) lines.push(`${' '.repeat(24)}${line}`);
  const spelled = (o: LocalOption) => `--${o.name}${o.arg ? ` ${o.arg}` : ''}`;
  for (const o of c.options.filter((o) => o.text.length > 0)) {
    const [t = '', ...more] = o.text;
    lines.push(`      ${spelled(o).padEnd(20)}${t}`);
    for (const line of more) lines.push(`${' '.repeat(26)}${line}`);
  }
  const common = c.options.filter((o) => o.text.length === 0).map(spelled);
  if (common.length) lines.push(`      ${common.join(', ')}`);
  return lines;
}
