import { execFileSync } from 'node:child_process';
import { makeRepo as makeGitRepo } from '../../tests/support/git-repo.js';

// What the soak and the outage drills set up before a daemon starts: small git repositories to work on, and
// an approver token made with the CLI (`drydock token create`), as a user would.

/** The files of every repository the soak makes. */
export const FILES = {
  'README.md':
    '# shop\n\nA small service with users and orders.\n\nSee the [wiki](https://example.invalid).\n',
  'CONTRIBUTING.md': '# Contributing\n\nRun `npm test` before you push.\n',
  'src/users.ts': 'export function listUsers() {\n  return [];\n}\n',
};

/** A git repository at `dir` with `files` in one commit on main; its HEAD. */
export function makeRepo(dir: string, files: Record<string, string> = FILES): string {
  return makeGitRepo(dir, files);
}

/** `drydock token create --role approver` with a daemon's environment (its database); the token. */
export function createApproverToken(cli: string, env: NodeJS.ProcessEnv, name: string): string {
  // --init: made before the replicas first start on their database, which may not exist yet.
  return execFileSync(
    process.execPath,
    [cli, 'token', 'create', '--init', '--name', name, '--role', 'approver'],
    {
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  ).trim();
}
