import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

// What the soak and the outage drills set up before a daemon starts: small git repositories to work on, and
// an approver token made with the CLI (`drydock token create`), as a user would.

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'Soak',
  GIT_AUTHOR_EMAIL: 'soak@example.invalid',
  GIT_COMMITTER_NAME: 'Soak',
  GIT_COMMITTER_EMAIL: 'soak@example.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
};

/** The files of every repository the soak makes. */
export const FILES = {
  'README.md':
    '# shop\n\nA small service with users and orders.\n\nSee the [wiki](https://example.invalid).\n',
  'CONTRIBUTING.md': '# Contributing\n\nRun `npm test` before you push.\n',
  'src/users.ts': 'export function listUsers() {\n  return [];\n}\n',
};

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-C', dir, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...GIT_ENV, HOME: dir },
  }).trim();
}

/** A git repository at `dir` with `files` in one commit on main; its HEAD. */
export function makeRepo(dir: string, files: Record<string, string> = FILES): string {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  return git(dir, 'rev-parse', 'HEAD');
}

/** `drydock token create --role approver` with a daemon's environment (its database); the token. */
export function createApproverToken(cli: string, env: NodeJS.ProcessEnv, name: string): string {
  return execFileSync(process.execPath, [cli, 'token', 'create', '--name', name, '--role', 'approver'], {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }).trim();
}
