import { applyCommand, exportCommand } from './commands/apply.js';
import { DEFAULT_URL } from './commands/connection.js';
import { deliveriesGroup } from './commands/deliveries.js';
import type { Group, Subcommand } from './commands/group.js';
import { jobsGroup } from './commands/jobs.js';
import { LOCAL_COMMANDS, localHelpLines } from './commands/local.js';
import { notificationsGroup } from './commands/notifications.js';
import { plansGroup } from './commands/plans.js';
import { questionsGroup } from './commands/questions.js';
import { runsGroup } from './commands/runs.js';
import { sessionsGroup } from './commands/sessions.js';
import { toolApprovalsGroup } from './commands/tool-approvals.js';
import { triggersGroup } from './commands/triggers.js';
import { usageGroup } from './commands/usage.js';

// `drydock --help`, printed from the command definitions: the local commands (commands/local.ts), the
// remote command groups (commands/*.ts, each a Group) and the remote commands of their own (apply, export).
// docs/cli.md holds the same text (src/cli/reference.ts writes it; a test keeps the two equal).

/** The remote command groups, in the order help lists them: `drydock jobs ...`. */
export const REMOTE_GROUPS: readonly Group[] = [
  sessionsGroup,
  jobsGroup,
  triggersGroup,
  deliveriesGroup,
  notificationsGroup,
  usageGroup,
  plansGroup,
  questionsGroup,
  toolApprovalsGroup,
  runsGroup,
];

/** The remote commands that are no group's: `drydock apply`, `drydock export`. */
export const STANDALONE: readonly { name: string; command: Subcommand }[] = [
  { name: 'apply', command: applyCommand },
  { name: 'export', command: exportCommand },
];

/** The widest line help wraps a command's synopsis at. */
const WIDTH = 110;

/**
 * `line` wrapped at WIDTH between the words of a synopsis (a bracketed group, `[--mcp NAME ... | --no-mcp]`,
 * stays on one line), the continuation lines indented under the command.
 */
export function wrapSynopsis(line: string, indent = '      '): string {
  const words: string[] = [];
  let depth = 0;
  for (const part of line.trim().split(' ')) {
    if (depth > 0) words[words.length - 1] += ` ${part}`;
    else words.push(part);
    depth += (part.match(/\[/g)?.length ?? 0) - (part.match(/\]/g)?.length ?? 0);
  }
  const lines: string[] = [];
  let current = line.slice(0, line.length - line.trimStart().length);
  for (const word of words) {
    const start = current.trim() === '';
    if (!start && current.length + 1 + word.length > WIDTH) {
      lines.push(current);
      current = `${indent}${word}`;
    } else current += start ? word : ` ${word}`;
  }
  lines.push(current);
  return lines.join('\n');
}

/** The text of `drydock --help`. */
export function topLevelHelp(): string {
  const local = LOCAL_COMMANDS.flatMap(localHelpLines);
  const remote = [
    ...REMOTE_GROUPS.flatMap((g) =>
      Object.entries(g.commands).map(([name, c]) => wrapSynopsis(`  ${g.name} ${name} ${c.synopsis}`)),
    ),
    ...STANDALONE.map(({ name, command }) => wrapSynopsis(`  ${name} ${command.synopsis}`)),
  ];
  return [
    'usage: drydock <command> [options]',
    '',
    "local commands (on the daemon's host, with its configuration and database):",
    ...local,
    `  ${'--version'.padEnd(22)}print the version`,
    '',
    'remote commands (talk to a running daemon over its HTTP API):',
    ...remote,
    '',
    'connection options of every remote command:',
    `  ${'--url URL'.padEnd(22)}daemon URL (default: $DRYDOCK_URL, else ${DEFAULT_URL})`,
    `  ${'--token TOKEN'.padEnd(22)}API token (default: $DRYDOCK_TOKEN, which is better: flags show up in ps)`,
    '',
    'run "drydock <group> <command> --help" (or "drydock help <group>") for a command\'s options',
    '',
    'exit codes: 0 success; 1 failure (for remote commands: the API refused or failed, printed as',
    '"drydock: <status> <code>: <message>", or the daemon is unreachable); 2 bad usage or invalid configuration',
  ].join('\n');
}
