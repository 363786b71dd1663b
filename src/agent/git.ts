import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** git with a fixed identity, no system or user config, no prompts: the same on every machine. */
export async function git(dir: string, args: string[], timeout = 60_000): Promise<string> {
  const { stdout } = await exec('git', ['-C', dir, ...args], {
    timeout,
    maxBuffer: 16 * 1024 * 1024,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      GIT_AUTHOR_NAME: 'drydock',
      GIT_AUTHOR_EMAIL: 'drydock@localhost',
      GIT_COMMITTER_NAME: 'drydock',
      GIT_COMMITTER_EMAIL: 'drydock@localhost',
    },
  });
  return stdout;
}

/** The commit HEAD points at, or null when the directory is not a git work tree (or has no commit yet). */
export async function headCommit(dir: string): Promise<string | null> {
  try {
    const sha = (await git(dir, ['rev-parse', '--verify', '-q', 'HEAD^{commit}'], 10_000)).trim();
    return /^[0-9a-f]{40,64}$/.test(sha) ? sha : null;
  } catch {
    return null;
  }
}
