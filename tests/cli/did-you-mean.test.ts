import { afterEach, describe, expect, it, vi } from 'vitest';
import { connectionOptions } from '../../src/cli/commands/connection.js';
import { deliveriesGroup } from '../../src/cli/commands/deliveries.js';
import { type Group, runGroup } from '../../src/cli/commands/group.js';
import { jobsGroup } from '../../src/cli/commands/jobs.js';
import { notificationsGroup } from '../../src/cli/commands/notifications.js';
import { plansGroup } from '../../src/cli/commands/plans.js';
import { questionsGroup } from '../../src/cli/commands/questions.js';
import { runsGroup } from '../../src/cli/commands/runs.js';
import { sessionsGroup } from '../../src/cli/commands/sessions.js';
import { toolApprovalsGroup } from '../../src/cli/commands/tool-approvals.js';
import { triggersGroup } from '../../src/cli/commands/triggers.js';
import { usageGroup } from '../../src/cli/commands/usage.js';
import { runCli } from './cli-process.js';

// "Did you mean": a misspelt option, subcommand or command is exit 2 with the one it was likely meant to be,
// for every remote command (walked from the group definitions, in process: the mistake is found before any
// request) and every local command (the built binary: serve, migrate, migrate-store, token, doctor, gc, mcp,
// apply, export, help).

vi.setConfig({ testTimeout: 60_000 });

const GROUPS: Group[] = [
  plansGroup,
  questionsGroup,
  toolApprovalsGroup,
  runsGroup,
  sessionsGroup,
  jobsGroup,
  triggersGroup,
  deliveriesGroup,
  notificationsGroup,
  usageGroup,
];

/** A typo of `word`: its second and third letters swapped (or, where they are the same, its last dropped). */
function typo(word: string): string {
  return word[1] !== word[2] ? `${word[0]}${word[2]}${word[1]}${word.slice(3)}` : word.slice(0, -1);
}

/** Runs `drydock <group> ...argv` in this process; its exit code and what it wrote to stderr. */
async function inProcess(group: Group, argv: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  try {
    return { code: await runGroup(group, argv), stderr };
  } finally {
    write.mockRestore();
    stdout.mockRestore();
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('did you mean: remote commands', () => {
  it('every option of every subcommand of every group, misspelt, is suggested back (exit 2)', async () => {
    let checked = 0;
    for (const group of GROUPS) {
      for (const [name, command] of Object.entries(group.commands)) {
        const options = [...Object.keys(command.options), ...Object.keys(connectionOptions)];
        for (const option of options.filter((o) => o.length >= 4)) {
          const wrong = `--${typo(option)}`;
          const r = await inProcess(group, [name, wrong]);
          expect(r.code, `${group.name} ${name} ${wrong}`).toBe(2);
          expect(r.stderr).toBe(
            `drydock: unknown option ${wrong} for "${group.name} ${name}"; did you mean --${option}?\n`,
          );
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('every subcommand of every group, misspelt, is suggested back (exit 2)', async () => {
    for (const group of GROUPS) {
      for (const name of Object.keys(group.commands).filter((n) => n.length >= 4)) {
        const r = await inProcess(group, [typo(name)]);
        expect(r.code, `${group.name} ${typo(name)}`).toBe(2);
        expect(r.stderr).toContain(
          `drydock: ${group.name}: unknown command "${typo(name)}"; did you mean "${name}"?`,
        );
      }
    }
  });
});

describe('did you mean: local commands, groups and subcommands (the built binary)', () => {
  const cases: [string[], string][] = [
    [['serve', '--prot', '1'], 'unknown option --prot for "serve"; did you mean --port?'],
    [['serve', '--data-dri', 'x'], 'unknown option --data-dri for "serve"; did you mean --data-dir?'],
    [['migrate', '--confg', 'x'], 'unknown option --confg for "migrate"; did you mean --config?'],
    [['migrate-store', '--form', 'x'], 'unknown option --form for "migrate-store"; did you mean --from?'],
    [['token', 'create', '--nmae', 'x'], 'unknown option --nmae for "token create"; did you mean --name?'],
    [['token', 'create', '--roel', 'x'], 'unknown option --roel for "token create"; did you mean --role?'],
    [
      ['token', 'revoke', 'tok_x', '--dta-dir', 'x'],
      'unknown option --dta-dir for "token revoke"; did you mean --data-dir?',
    ],
    // token revoke takes no --name: nothing of token create's is suggested for it.
    [
      ['token', 'revoke', 'tok_x', '--nmae', 'x'],
      'unknown option --nmae for "token revoke" (run "drydock token revoke --help" for its options)',
    ],
    [['token', 'craete'], 'token: expected "create" or "revoke", got "craete"; did you mean "create"?'],
    [['token', 'revkoe'], 'token: expected "create" or "revoke", got "revkoe"; did you mean "revoke"?'],
    [['doctor', '--conifg', 'x'], 'unknown option --conifg for "doctor"; did you mean --config?'],
    [['gc', '--dryrun'], 'unknown option --dryrun for "gc"; did you mean --dry-run?'],
    [['mcp', 'tools', 'x', '--jsno'], 'unknown option --jsno for "mcp tools"; did you mean --json?'],
    [['mcp', 'tols', 'x'], 'mcp: unknown command "tols"; did you mean "tools"?'],
    [['mcp', 'tools'], 'mcp tools expects SERVER (a name under mcp.servers), got 0 argument(s)'],
    [['apply', '--dryrun'], 'unknown option --dryrun for "apply"; did you mean --dry-run?'],
    [['export', '--ouput', 'x'], 'unknown option --ouput for "export"; did you mean --output?'],
    [['jbos', 'list'], 'unknown command "jbos"; did you mean "jobs"?'],
    [['sevre'], 'unknown command "sevre"; did you mean "serve"?'],
    [['help', 'jbos'], 'unknown command "jbos"; did you mean "jobs"?'],
    [['plans', 'lsit'], 'plans: unknown command "lsit"; did you mean "list"?'],
  ];

  it('each names the command and the option or command it was likely meant to be (exit 2)', async () => {
    const results = await Promise.all(cases.map(([args]) => runCli(args)));
    results.forEach((r, i) => {
      const [args, message] = cases[i]!;
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr.split('\n')[0], args.join(' ')).toBe(`drydock: ${message}`);
      expect(r.stdout).toBe('');
    });
  });

  it('help of a known command still prints the usage (exit 0)', async () => {
    const r = await runCli(['help', 'serve']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('usage: drydock <command> [options]');
  });
});
