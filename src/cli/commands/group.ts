import { parseArgs } from 'node:util';
import { ApiClient, ApiError, UnreachableError } from '../client.js';
import { checkOptions, closest, type OptionsConfig, RemoteUsageError, type Values } from './args.js';
import {
  CONNECTION_HELP,
  type Credential,
  connection,
  connectionOptions,
  knownTokens,
  redact,
} from './connection.js';
import { out } from './output.js';

// A command group (`drydock runs ...`) and its subcommands: help, dispatch, and error reporting with exit
// codes (0 ok, 1 the API refused or failed or is unreachable, 2 bad usage).

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

export interface Group {
  name: string;
  summary: string;
  commands: Record<string, Subcommand>;
}

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
  const say = (msg: string) => process.stderr.write(`drydock: ${redact(msg, secrets)}\n`);
  try {
    return await runCommand(`${group.name} ${name}`, () => commandHelp(group, name, command), command, rest);
  } catch (err) {
    return reportFailure(err, say, `${group.name} ${name}`, command);
  }
}

/**
 * Runs a remote command that is no group's (`drydock apply ...`) and returns its exit code, as runGroup
 * does for a group's: the same options, help, errors and exit codes.
 */
export async function runStandalone(name: string, command: Subcommand, argv: string[]): Promise<number> {
  const secrets = knownTokens(argv, command.credential);
  const say = (msg: string) => process.stderr.write(`drydock: ${redact(msg, secrets)}\n`);
  const help = () => `usage: drydock ${name} ${command.synopsis}\n\n${command.help}\n\n${CONNECTION_HELP}`;
  try {
    return await runCommand(name, help, command, argv);
  } catch (err) {
    return reportFailure(err, say, name, command);
  }
}

/** Checks and parses the arguments, then runs the subcommand against the daemon; -h/--help prints its help. */
async function runCommand(
  label: string,
  help: () => string,
  command: Subcommand,
  rest: string[],
): Promise<number> {
  const options = { ...command.options, ...connectionOptions };
  try {
    if (checkOptions(rest, options, label).help) {
      out(help());
      return 0;
    }
  } catch (err) {
    // One line: the option and the closest one it may have meant.
    throw new OptionMistake((err as Error).message);
  }
  const parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true });
  const values = parsed.values as Values;
  const positionals = parsed.positionals;
  if (positionals.length !== command.positionals.length) {
    const wanted = command.positionals.length
      ? `expects ${command.positionals.join(' ')}`
      : 'takes no arguments';
    throw new RemoteUsageError(`${label} ${wanted}, got ${positionals.length} argument(s)`);
  }
  const conn = connection(values, command.credential);
  return (
    (await command.run({
      client: new ApiClient(conn.url, conn.token),
      command: label,
      values,
      args: positionals,
    })) ?? 0
  );
}

/** A mistake among the options, said in one line (without the usage that follows other usage errors). */
class OptionMistake extends Error {}

/** Says what went wrong (through `say`, which redacts tokens) and returns the exit code for it. */
function reportFailure(err: unknown, say: (msg: string) => void, command: string, c: Subcommand): number {
  if (err instanceof OptionMistake) {
    say(err.message);
    return 2;
  }
  if (err instanceof RemoteUsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    say(
      `${(err as Error).message}\nusage: drydock ${command} ${c.synopsis}\n` +
        `(run "drydock ${command} --help" for details)`,
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
