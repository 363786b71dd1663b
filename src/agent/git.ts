import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
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

const SHA = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;

/**
 * HEAD read from the repository's files: `.git/HEAD`, then the loose ref or `packed-refs`. Spawning git
 * costs milliseconds and blocks the event loop for longer once the process is large; approvals ask for HEAD
 * every time. Returns undefined when the layout is anything else (a worktree's `.git` file, an unusual
 * ref), and the caller asks git.
 */
async function headFromFiles(dir: string): Promise<string | null | undefined> {
  const gitDir = join(dir, '.git');
  const head = await readFile(join(gitDir, 'HEAD'), 'utf8').catch(() => null);
  if (head === null) return undefined;
  const text = head.trim();
  if (SHA.test(text)) return text;
  const m = /^ref: (refs\/[\w./-]+)$/.exec(text);
  if (!m || m[1]!.includes('..')) return undefined;
  const loose = await readFile(join(gitDir, m[1]!), 'utf8').catch(() => null);
  if (loose !== null) return SHA.test(loose.trim()) ? loose.trim() : undefined;
  const packed = await readFile(join(gitDir, 'packed-refs'), 'utf8').catch(() => null);
  if (packed === null) return null; // an unborn branch: no commit yet
  for (const line of packed.split('\n')) {
    const [sha, ref] = line.split(' ');
    if (ref === m[1] && sha && SHA.test(sha)) return sha;
  }
  return null;
}

/** The commit HEAD points at, or null when the directory is not a git work tree (or has no commit yet). */
export async function headCommit(dir: string): Promise<string | null> {
  const fast = await headFromFiles(dir);
  if (fast !== undefined) return fast;
  try {
    const sha = (await git(dir, ['rev-parse', '--verify', '-q', 'HEAD^{commit}'], 10_000)).trim();
    return /^[0-9a-f]{40,64}$/.test(sha) ? sha : null;
  } catch {
    return null;
  }
}

const locks = new Map<string, Promise<unknown>>();

/**
 * Runs `fn` alone for this repository. git takes lock files for worktree and ref changes, and two
 * `worktree add` on one clone at the same moment fail; within this process they queue instead.
 */
export function withRepoLock<T>(repo: string, fn: () => Promise<T>): Promise<T> {
  const previous = locks.get(repo) ?? Promise.resolve();
  const next = previous.then(fn, fn);
  const settled = next.catch(() => undefined);
  locks.set(repo, settled);
  void settled.then(() => {
    if (locks.get(repo) === settled) locks.delete(repo);
  });
  return next;
}
