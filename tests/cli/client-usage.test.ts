import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { runCli } from './cli-process.js';

// Usage of the built CLI without a daemon: --version, --help on every command and group, and one line of
// our own for a mistyped option or command, with the closest name.

vi.setConfig({ testTimeout: 60_000 });

const run = (args: string[]) => runCli(args, { DRYDOCK_TOKEN: 'tok-1234' });

const GROUPS: Record<string, string[]> = {
  sessions: ['list', 'show', 'create', 'close'],
  jobs: ['list', 'show', 'create', 'update', 'delete', 'pause', 'resume', 'run', 'slots', 'backfill'],
  triggers: ['list', 'show', 'create', 'update', 'delete', 'deliveries', 'fire'],
  deliveries: ['list', 'show'],
  plans: ['list', 'show', 'approve', 'reject', 'revise'],
  questions: ['list', 'show', 'answer'],
  'tool-approvals': ['list', 'show', 'decide'],
  runs: ['list', 'show', 'cancel', 'follow'],
  usage: ['show'],
};

/** Remote commands of their own, not in a group: `drydock apply -f FILE`. */
const STANDALONE = ['apply', 'export'];

describe('drydock --version', () => {
  it('prints the package version only', async () => {
    const version = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')).version;
    for (const flag of ['--version', '-V']) {
      const r = await run([flag]);
      expect(r).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });
});

describe('--help everywhere', () => {
  it('every group and command, the local commands, and `help <group>` exit 0 with their usage', async () => {
    const calls: [string[], string][] = [
      [['--help'], 'usage: drydock <command>'],
      [['token', '--help'], 'token create'],
      [['token', 'create', '--help'], 'token create'],
      [['token', 'revoke', '--help'], 'token revoke'],
      [['serve', '--help'], 'serve'],
      [['migrate', '--help'], 'migrate'],
      [['help', 'jobs'], 'drydock jobs create'],
    ];
    // Remote commands that are no group's.
    for (const c of STANDALONE) calls.push([[c, '--help'], `usage: drydock ${c} `]);
    for (const [group, commands] of Object.entries(GROUPS)) {
      calls.push([[group, '--help'], `drydock ${group} ${commands[0]}`]);
      for (const c of commands) calls.push([[group, c, '--help'], `usage: drydock ${group} ${c}`]);
    }
    // A few at a time: the machine is shared.
    for (let i = 0; i < calls.length; i += 4) {
      const batch = calls.slice(i, i + 4);
      const results = await Promise.all(batch.map(([args]) => run(args)));
      results.forEach((r, j) => {
        const [args, expected] = batch[j]!;
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
        expect(r.stdout, args.join(' ')).toContain(expected);
        expect(r.stderr).toBe('');
      });
    }
  });

  it('--help wins over a mistyped option beside it', async () => {
    const r = await run(['jobs', 'list', '--sesion', 'x', '--help']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('usage: drydock jobs list');
  });
});

describe('mistakes: one line of ours, exit 2', () => {
  it.each<[string[], string]>([
    [
      ['jobs', 'list', '--sesion', 'ses_1'],
      'drydock: unknown option --sesion for "jobs list"; did you mean --session?\n',
    ],
    [
      ['runs', 'follow', 'run_1', '--jsno'],
      'drydock: unknown option --jsno for "runs follow"; did you mean --json?\n',
    ],
    [
      ['runs', 'list', '--bogus'],
      'drydock: unknown option --bogus for "runs list" (run "drydock runs list --help" for its options)\n',
    ],
    [
      ['runs', 'list', '-x'],
      'drydock: unknown option -x for "runs list" (run "drydock runs list --help" for its options)\n',
    ],
    [['jobs', 'list', '--session'], 'drydock: option --session of "jobs list" needs a value\n'],
    [
      ['jobs', 'list', '--session', '--json'],
      'drydock: option --session of "jobs list" needs a value (got the option --json; write --session=--json if that is the value)\n',
    ],
    [['runs', 'list', '--json=yes'], 'drydock: option --json of "runs list" takes no value, got "yes"\n'],
    [['serve', '--prot', '9000'], 'drydock: unknown option --prot for "serve"; did you mean --port?\n'],
    [
      ['apply', '-f', 'x.yaml', '--prnue'],
      'drydock: unknown option --prnue for "apply"; did you mean --prune?\n',
    ],
    [
      ['token', 'create', '--nmae', 'x'],
      'drydock: unknown option --nmae for "token create"; did you mean --name?\n',
    ],
  ])('%j', async (args, stderr) => {
    const r = await run(args);
    expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ code: 2, stderr, stdout: '' });
  });

  it('an unknown command names the closest one', async () => {
    const top = await run(['job', 'list']);
    expect(top.code).toBe(2);
    expect(top.stderr.split('\n')[0]).toBe('drydock: unknown command "job"; did you mean "jobs"?');
    const standalone = await run(['aplly', '-f', 'x.yaml']);
    expect(standalone.stderr.split('\n')[0]).toBe('drydock: unknown command "aplly"; did you mean "apply"?');
    const sub = await run(['jobs', 'lsit']);
    expect(sub.code).toBe(2);
    expect(sub.stderr.split('\n')[0]).toBe('drydock: jobs: unknown command "lsit"; did you mean "list"?');
  });
});
