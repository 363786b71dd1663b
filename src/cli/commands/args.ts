import { type ParseArgsConfig, parseArgs } from 'node:util';
import { closest } from '../../domain/closest.js';

export { closest };

// Reading a command's arguments: option specs, the check that names the closest option on a mistake, and
// typed readers of parsed values. A bad argument is a RemoteUsageError (exit code 2).

export class RemoteUsageError extends Error {}

export type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

export const jsonOption = { json: { type: 'boolean' } } as const satisfies OptionsConfig;

/** `  --limit N             at most N ...`: the option in a column 22 wide. */
export function helpLine(option: string, text: string): string {
  return `  ${option.padEnd(22)}${text}`;
}

export const JSON_HELP = helpLine('--json', "print the API's JSON body");

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

/** `--overlap P` and `--jitter-max-seconds N`, which jobs and schedule triggers take. */
export const scheduleOptions = {
  overlap: { type: 'string' },
  'jitter-max-seconds': { type: 'string' },
} as const;

export const SCHEDULE_HELP = `  --overlap P           what a slot due while the session is busy becomes: skip, buffer_one (default:
                        the newest waits), buffer_all (each waits its turn), cancel_other (cancel the
                        job's running run, fire the new one), allow_all (fire, queued behind it)
  --jitter-max-seconds N
                        the longest jitter delay, in seconds (0: no jitter; none: back to the
                        daemon's cap, the default)`;

/** The API's `overlap` and `jitter` from the options; both undefined when neither was given. */
export function scheduleOption(
  values: Values,
  policies: readonly string[],
): { overlap?: string; jitter?: { max_seconds: number | null } } {
  const overlap = oneOf(values, 'overlap', policies);
  const max = str(values, 'jitter-max-seconds');
  if (max !== undefined && max !== 'none' && !/^(0|[1-9][0-9]{0,4})$/.test(max)) {
    throw new RemoteUsageError(
      `--jitter-max-seconds must be a whole number of seconds (0-86400) or none, got "${max}"`,
    );
  }
  return {
    ...(overlap ? { overlap } : {}),
    ...(max !== undefined ? { jitter: { max_seconds: max === 'none' ? null : Number(max) } } : {}),
  };
}

/** `--daily-usd X` and `--daily-runs N`, a trigger's or session's spend caps (docs/spend-caps.md). */
export const limitOptions = {
  'daily-usd': { type: 'string' },
  'daily-runs': { type: 'string' },
} as const satisfies OptionsConfig;

export const LIMITS_HELP = `  --daily-usd X         spend cap: at most X US dollars of receipts a day (none: no cap)
  --daily-runs N        spend cap: at most N runs started a day (none: no cap)`;

/**
 * The spend caps given, merged over `current` (\`none\` drops a cap); undefined when neither option is given.
 * The API replaces limits whole, so an update merges over what the trigger has.
 */
export function limitsOption(
  values: Values,
  current: { daily_usd?: number | undefined; daily_runs?: number | undefined } = {},
): { daily_usd?: number; daily_runs?: number } | undefined {
  const usd = str(values, 'daily-usd');
  const runs = str(values, 'daily-runs');
  if (usd === undefined && runs === undefined) return undefined;
  const limits = { ...current };
  if (usd !== undefined) {
    const n = /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(usd.trim()) ? Number(usd) : Number.NaN;
    if (usd !== 'none' && !(n > 0))
      throw new RemoteUsageError(`--daily-usd must be a positive number or none, got "${usd}"`);
    if (usd === 'none') delete limits.daily_usd;
    else limits.daily_usd = n;
  }
  if (runs !== undefined) {
    if (runs !== 'none' && !/^[1-9][0-9]{0,8}$/.test(runs)) {
      throw new RemoteUsageError(`--daily-runs must be a positive integer or none, got "${runs}"`);
    }
    if (runs === 'none') delete limits.daily_runs;
    else limits.daily_runs = Number(runs);
  }
  return limits as { daily_usd?: number; daily_runs?: number };
}
