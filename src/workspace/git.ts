import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { WorkspaceKind } from '../domain/types.js';
import { runCollect } from './isolation.js';
import { lockRepository } from './repo-lock.js';
import { privateTempDir } from './temp.js';

const exec = promisify(execFile);

// Every git command drydock runs goes through `git()` below (or `gitTransfer()`, the same for a fetch from a
// remote): nothing else in drydock spawns git. The trees it runs in hold files that strangers wrote (a pull
// request's head, what the model wrote in an execution), and git reads configuration from places inside or
// beside such trees: `$HOME/.gitconfig`,
// `$XDG_CONFIG_HOME/git/config`, and the repository's `.git/config`. Several keys there are commands that git
// runs (`core.fsmonitor`, `core.hooksPath` and hooks, `core.sshCommand`, `diff.external`, `credential.helper`,
// `core.askPass`, `gpg.program` when signing, `core.pager`). So, per git's documentation (git-config(1)
// "ENVIRONMENT" and "FILES", githooks(5)):
//   - HOME and XDG_CONFIG_HOME are an empty directory of drydock's own, GIT_CONFIG_GLOBAL=/dev/null and
//     GIT_CONFIG_NOSYSTEM=1: no user-level or system-level file is read;
//   - `-c` settings (which win over every file) switch off or neutralise each executing key above, and the
//     commands that can show a patch get `--no-ext-diff --no-textconv` (an empty `diff.external` would make
//     git try to run "");
//   - a tree drydock checked out itself (a worktree) is addressed by GIT_DIR and GIT_WORK_TREE, pinned to the
//     administrative directory git made for it inside the repository drydock was pointed at: a `.git` file or
//     directory written into the tree is never consulted.
// What remains trusted is the configuration of the repository the operator named (a session's workspace, a
// configured clone): clean/smudge filters defined there still apply to paths its `.gitattributes` select.

/** `-c` overrides on every command: nothing configurable runs a program. */
export const HARDENING = [
  'core.fsmonitor=false',
  'core.hooksPath=/dev/null',
  'core.sshCommand=ssh',
  'core.askPass=',
  'core.pager=cat',
  'core.editor=true',
  'core.attributesFile=/dev/null',
  'core.excludesFile=/dev/null',
  'credential.helper=',
  'commit.gpgSign=false',
  'tag.gpgSign=false',
  'protocol.ext.allow=never',
  'gc.auto=0',
  'maintenance.auto=false',
].flatMap((setting) => ['-c', setting]);

/** Subcommands that may print a patch, where `diff.external` and textconv drivers would run. */
const PATCH_COMMANDS = new Set(['diff', 'log', 'show']);

let privateHome: string | null = null;

/**
 * An empty directory made once per process, standing in for HOME and XDG_CONFIG_HOME; made again if it went
 * (the process's temporary directories are removed when the daemon stops: temp.ts).
 */
function emptyHome(): string {
  if (privateHome === null || !existsSync(privateHome)) {
    privateHome = privateTempDir('drydock-git-home-');
    askpass = null;
  }
  return privateHome;
}

export interface GitOptions {
  timeoutMs?: number;
  /**
   * The administrative git directory of a worktree drydock made (see `worktreeGitDir`). When set, `dir` is
   * the work tree and git never looks for a `.git` inside it.
   */
  gitDir?: string;
  /** Username and password for git over HTTPS, answered through GIT_ASKPASS (see `askpassProgram`). */
  credentials?: GitCredentials;
  /** Ends the command (git is killed) when aborted. */
  signal?: AbortSignal;
  /** `dir` is a git directory (a repository's common one) used without any work tree. */
  bare?: boolean;
  /** Standard input (a pack for index-pack); the command is then not aborted by `signal`. */
  input?: Buffer | string;
  /** The index git reads and writes (GIT_INDEX_FILE): one of drydock's own, outside any work tree. */
  indexFile?: string;
}

/**
 * The environment of every git drydock runs: a fixed identity, no user or system configuration, no prompts.
 * `home` stands in for HOME and XDG_CONFIG_HOME (an empty directory).
 */
export function gitEnvironment(
  home: string,
  path = process.env.PATH ?? '/usr/bin:/bin',
): Record<string, string> {
  return {
    PATH: path,
    HOME: home,
    XDG_CONFIG_HOME: home,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    GIT_EDITOR: 'true',
    LC_ALL: 'C',
    GIT_AUTHOR_NAME: 'drydock',
    GIT_AUTHOR_EMAIL: 'drydock@localhost',
    GIT_COMMITTER_NAME: 'drydock',
    GIT_COMMITTER_EMAIL: 'drydock@localhost',
  };
}

/** The environment of one git command: `gitEnvironment`, plus where the repository is and the credentials. */
function commandEnvironment(dir: string, opts: GitOptions): Record<string, string> {
  const env = gitEnvironment(emptyHome());
  if (opts.bare) {
    // A git directory alone: no work tree, so no file of one is read (attributes, submodules, the index's).
    env.GIT_DIR = resolve(dir);
  } else if (opts.gitDir) {
    env.GIT_DIR = opts.gitDir;
    env.GIT_WORK_TREE = resolve(dir);
  }
  if (opts.indexFile) env.GIT_INDEX_FILE = opts.indexFile;
  if (opts.credentials) {
    // GIT_ASKPASS wins over the emptied core.askPass (gitcredentials(7)); the secret travels in the environment
    // of git and its askpass child only, never in an argument (which `ps` shows to every user).
    env.GIT_ASKPASS = askpassProgram();
    env.DRYDOCK_GIT_USERNAME = opts.credentials.username;
    env.DRYDOCK_GIT_PASSWORD = opts.credentials.password;
  }
  return env;
}

/** The subcommand and its arguments, with `--no-ext-diff --no-textconv` where a patch may be printed. */
const withoutPrograms = (args: string[]): string[] =>
  PATCH_COMMANDS.has(args[0] ?? '') ? [args[0]!, '--no-ext-diff', '--no-textconv', ...args.slice(1)] : args;

/** git with a fixed identity, no user or system configuration, nothing executable configured, no prompts. */
export async function git(dir: string, args: string[], opts: GitOptions = {}): Promise<string> {
  if (opts.input) return (await gitBytes(dir, args, opts)).toString('utf8');
  const env = commandEnvironment(dir, opts);
  const command = withoutPrograms(args);
  const { stdout } = await exec('git', ['-C', dir, ...HARDENING, ...command], {
    timeout: opts.timeoutMs ?? 60_000,
    maxBuffer: 16 * 1024 * 1024,
    env,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  return stdout;
}

/**
 * `git()` whose output is bytes as git wrote them (a patch of files in any encoding), at most `maxBytes`
 * (default 16 MiB; more fails). Takes `input`; not aborted by `signal`.
 */
export async function gitBytes(
  dir: string,
  args: string[],
  opts: GitOptions & { maxBytes?: number } = {},
): Promise<Buffer> {
  const command = withoutPrograms(args);
  const out = await runCollect(['git', '-C', dir, ...HARDENING, ...command], commandEnvironment(dir, opts), {
    ...(opts.input !== undefined ? { input: opts.input } : {}),
    timeoutMs: opts.timeoutMs ?? 60_000,
    maxStdout: opts.maxBytes ?? 16 * 1024 * 1024,
  });
  if (out.code !== 0)
    throw new Error(`git ${command[0]} failed:\n${out.stderr.trim() || `exit ${out.code ?? out.signal}`}`);
  return out.stdout;
}

/** The repository's shared git directory (the `.git` of the main checkout), absolute. */
export async function commonGitDir(repo: string): Promise<string> {
  const out = await git(repo, ['rev-parse', '--path-format=absolute', '--git-common-dir'], {
    timeoutMs: 10_000,
  });
  return out.trim();
}

/**
 * The administrative directory git keeps for the worktree at `path` (`<common>/worktrees/<name>`), found from
 * the repository's side (`common` is its shared git directory, see `commonGitDir`): each one names its
 * worktree in a `gitdir` file. Never read from the worktree itself, whose `.git` file is as writable as the
 * rest of it.
 */
export async function worktreeGitDir(common: string, path: string): Promise<string> {
  const admin = join(common, 'worktrees');
  const expected = join(resolve(path), '.git');
  for (const name of await readdir(admin).catch(() => [] as string[])) {
    const recorded = await readFile(join(admin, name, 'gitdir'), 'utf8').catch(() => null);
    if (recorded !== null && resolve(recorded.trim()) === expected) return join(admin, name);
  }
  throw new Error(`${path} is not a worktree of the repository whose git directory is ${common}`);
}

const SHA = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;

/**
 * HEAD read from the repository's files: `.git/HEAD`, then the loose ref or `packed-refs`. Spawning git
 * costs milliseconds and blocks the event loop for longer once the process is large; approvals ask for HEAD
 * every time. Read synchronously: two or three files of a few bytes, each read whole and fresh (git replaces
 * a ref by renaming a new file over it, so a read sees the old commit or the new one, never a mix, and a
 * workspace that moved is seen to have moved), cost a few microseconds; the promise API's open, stat, read
 * and close would cost four trips through the thread pool per file. Returns undefined when the layout is
 * anything else (a worktree's `.git` file, an unusual ref), and the caller asks git.
 */
function headFromFiles(dir: string): string | null | undefined {
  const gitDir = join(dir, '.git');
  const head = readSmallFile(join(gitDir, 'HEAD'));
  if (head === null) return undefined;
  const text = head.trim();
  if (SHA.test(text)) return text;
  const m = /^ref: (refs\/[\w./-]+)$/.exec(text);
  if (!m || m[1]!.includes('..')) return undefined;
  const loose = readSmallFile(join(gitDir, m[1]!));
  if (loose !== null) return SHA.test(loose.trim()) ? loose.trim() : undefined;
  const packed = readSmallFile(join(gitDir, 'packed-refs'));
  if (packed === null) return null; // an unborn branch: no commit yet
  for (const line of packed.split('\n')) {
    const [sha, ref] = line.split(' ');
    if (ref === m[1] && sha && SHA.test(sha)) return sha;
  }
  return null;
}

/** A file's text, or null when it cannot be read (missing, a directory, unreadable). */
function readSmallFile(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** The commit HEAD points at, or null when the directory is not a git work tree (or has no commit yet). */
export async function headCommit(dir: string, gitDir?: string): Promise<string | null> {
  if (!gitDir) {
    const fast = headFromFiles(dir);
    if (fast !== undefined) return fast;
  }
  try {
    const sha = (
      await git(dir, ['rev-parse', '--verify', '-q', 'HEAD^{commit}'], {
        timeoutMs: 10_000,
        ...(gitDir ? { gitDir } : {}),
      })
    ).trim();
    return /^[0-9a-f]{40,64}$/.test(sha) ? sha : null;
  } catch {
    return null;
  }
}

/** True when `dir` lies in a git work tree (whether or not it has a commit yet). */
export async function inGitRepository(dir: string): Promise<boolean> {
  try {
    return (await git(dir, ['rev-parse', '--is-inside-work-tree'], { timeoutMs: 10_000 })).trim() === 'true';
  } catch {
    return false;
  }
}

/**
 * What a new session's workspace is (Session.workspaceKind): judged once, when the session is made, and never
 * again, so that a `.git` a command makes in a plain directory is never taken for a repository.
 */
export async function workspaceKindOf(dir: string): Promise<WorkspaceKind> {
  return (await inGitRepository(dir)) ? 'git' : 'plain';
}

/** Where `dir` lies below the top of its work tree: `''` at the top, else `sub/dir/` (git's --show-prefix). */
export async function prefixInRepository(dir: string): Promise<string> {
  return (await git(dir, ['rev-parse', '--show-prefix'], { timeoutMs: 10_000 })).trim();
}

const locks = new Map<string, Promise<unknown>>();

/**
 * What git says when another process holds one of its lock files (`<file>.lock` is created with O_EXCL and
 * git gives up at once rather than wait: "Unable to create '….lock': File exists", "cannot lock ref …",
 * "could not lock config file …"; git's lockfile.c and refs/files-backend.c).
 */
const LOCK_HELD = /\.lock'?: File exists|cannot lock ref|could not lock config file/;
/** How often, and how long at most in all (about 10 s), a git change is tried again while a lock is held. */
const LOCK_RETRIES = 12;

/**
 * Runs `fn` alone for this repository. git takes lock files for worktree and ref changes, and two
 * `worktree add` on one clone at the same moment fail; within this process they queue instead, and
 * drydock processes sharing the repository (replicas on a shared volume) take turns through a lock file
 * (repo-lock.ts). Anyone else's git (a person's) may hold a lock as well: then `fn` is tried again after a
 * growing wait, as long as git says a lock is held. `fn` must be a change
 * git refuses whole when it cannot take its lock (worktree add, branch -D, checkout are).
 */
export function withRepoLock<T>(repo: string, fn: () => Promise<T>): Promise<T> {
  const previous = locks.get(repo) ?? Promise.resolve();
  const tried = () => acrossProcesses(repo, () => whileLocked(fn));
  const next = previous.then(tried, tried);
  const settled = next.catch(() => undefined);
  locks.set(repo, settled);
  void settled.then(() => {
    if (locks.get(repo) === settled) locks.delete(repo);
  });
  return next;
}

/**
 * `fn` holding the lock other drydock processes on this repository take too (repo-lock.ts), in the
 * repository's common git directory. A directory that is not in a repository has none: `fn` says why.
 */
async function acrossProcesses<T>(repo: string, fn: () => Promise<T>): Promise<T> {
  let dir: string;
  try {
    dir = await commonGitDir(repo);
  } catch {
    return fn();
  }
  const release = await lockRepository(dir);
  try {
    return await fn();
  } finally {
    await release();
  }
}

async function whileLocked<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= LOCK_RETRIES || !LOCK_HELD.test((err as Error)?.message ?? '')) throw err;
      const wait = Math.min(50 * 2 ** attempt, 1_500) * (0.5 + Math.random() / 2);
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

export interface GitCredentials {
  username: string;
  password: string;
}

let askpass: string | null = null;

/**
 * The program git asks for a user name and password over HTTPS. Per gitcredentials(7), git runs the program
 * named by GIT_ASKPASS with the prompt ("Username for 'https://…': ", "Password for …") as its one argument
 * and reads the answer from its standard output. It answers from the environment drydock gives that one git
 * command: the script itself holds no secret. Written once per process, in drydock's private git home.
 */
function askpassProgram(): string {
  const home = emptyHome();
  if (askpass) return askpass;
  const path = join(home, 'askpass.sh');
  writeFileSync(
    path,
    '#!/bin/sh\ncase "$1" in\n  Username*) printf \'%s\\n\' "$DRYDOCK_GIT_USERNAME" ;;\n  *) printf \'%s\\n\' "$DRYDOCK_GIT_PASSWORD" ;;\nesac\n',
    { mode: 0o700 },
  );
  askpass = path;
  return path;
}

/** The URL of a remote of the repository at `repo` (as configured there). Throws when there is no such remote. */
export async function remoteUrl(repo: string, remote: string): Promise<string> {
  return (await git(repo, ['remote', 'get-url', '--', remote], { timeoutMs: 10_000 })).trim();
}

/** The commit a local branch points at, or null when there is no such branch. */
export async function branchCommit(repo: string, branch: string): Promise<string | null> {
  try {
    const sha = (
      await git(repo, ['rev-parse', '--verify', '-q', `refs/heads/${branch}^{commit}`], { timeoutMs: 10_000 })
    ).trim();
    return /^[0-9a-f]{40,64}$/.test(sha) ? sha : null;
  } catch {
    return null;
  }
}

type RemoteOptions = Pick<GitOptions, 'credentials' | 'signal' | 'timeoutMs'>;

/**
 * Pushes the local branch to the same name on `remote` (no force: a branch that moved there is refused, not
 * overwritten). Pushing what the remote already has succeeds.
 */
export async function pushBranch(
  repo: string,
  remote: string,
  branch: string,
  opts: RemoteOptions = {},
): Promise<void> {
  const ref = `refs/heads/${branch}`;
  await git(repo, ['push', '--porcelain', '--', remote, `${ref}:${ref}`], opts);
}

/** Why `remote` refused a push (`PushRefusedError.reason`). */
export type PushRefusal = 'stale' | 'rejected' | 'remote_rejected';

/** The remote refused to move the branch; nothing moved. `detail` is git's line for the ref. */
export class PushRefusedError extends Error {
  constructor(
    readonly reason: PushRefusal,
    readonly detail: string,
  ) {
    super(`the push was refused: ${detail}`);
  }
}

/**
 * Pushes `commit` to branch `branch` of `remote`, never overwriting what someone else pushed. Without
 * `expected`: only as a fast-forward (no force). With `expected` (a full commit id), only while the remote
 * branch is at exactly that commit: `--force-with-lease=<ref>:<expected>` (git-push(1),
 * https://git-scm.com/docs/git-push: the ref is updated only "if the current value of the remote ref is the
 * expected value"; the lease's value is compared whole, never as an abbreviation), and the remote checks the
 * old value again when it moves the ref. A branch that moved (or went) is refused with git's "(stale info)".
 * Pushing what the remote already has succeeds ("[up to date]", before any lease is looked at).
 *
 * A refusal is a PushRefusedError, read from `--porcelain`'s line for the ref (git-push(1), OUTPUT:
 * `<flag> TAB <from>:<to> TAB <summary> (<reason>)`, flag `!` "for a ref that was rejected or failed to
 * push", `=` for one up to date): `[rejected] (stale info)` (the lease), `[rejected] (fetch first |
 * non-fast-forward)` ("Git did not try to send the ref at all"), or `[remote rejected] (reason)` ("The remote
 * end refused the update. Usually caused by a hook on the remote side": GitHub's protected branches and
 * rules answer so, e.g. "(protected branch hook declined)").
 */
export async function pushCommit(
  repo: string,
  remote: string,
  commit: string,
  branch: string,
  opts: RemoteOptions & { expected?: string } = {},
): Promise<void> {
  const ref = `refs/heads/${branch}`;
  const lease = opts.expected ? [`--force-with-lease=${ref}:${opts.expected}`] : [];
  try {
    await git(repo, ['push', '--porcelain', ...lease, '--', remote, `${commit}:${ref}`], opts);
  } catch (err) {
    const out = `${(err as { stdout?: string }).stdout ?? ''}`;
    const line = out.split('\n').find((l) => l.startsWith('!\t'));
    if (!line) throw err;
    const summary = line.split('\t')[2] ?? line;
    const reason: PushRefusal = summary.startsWith('[remote rejected]')
      ? 'remote_rejected'
      : summary.includes('(stale info)')
        ? 'stale'
        : 'rejected';
    throw new PushRefusedError(reason, summary.trim());
  }
}

/** The commit branch `branch` of `remote` points at (ls-remote), or null when the remote has no such branch. */
export async function remoteBranchCommit(
  repo: string,
  remote: string,
  branch: string,
  opts: RemoteOptions = {},
): Promise<string | null> {
  const ref = `refs/heads/${branch}`;
  const out = await git(repo, ['ls-remote', '--', remote, ref], opts);
  for (const line of out.split('\n')) {
    const [sha, name] = line.split('\t');
    if (name === ref && sha && SHA.test(sha)) return sha;
  }
  return null;
}

/**
 * Fetches branch `branch` of `remote` into the local ref `into` (a ref of drydock's own, overwritten), and
 * returns the commit it got. No tags, no FETCH_HEAD (deliveries of several plans fetch at once).
 */
export async function fetchBranch(
  repo: string,
  remote: string,
  branch: string,
  into: string,
  opts: RemoteOptions = {},
): Promise<string> {
  await git(
    repo,
    ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', remote, `+refs/heads/${branch}:${into}`],
    opts,
  );
  const sha = (
    await git(repo, ['rev-parse', '--verify', '-q', `${into}^{commit}`], { timeoutMs: 10_000 })
  ).trim();
  if (!SHA.test(sha)) throw new Error(`fetching ${branch} from ${remote} left no commit in ${into}`);
  return sha;
}

/** The branch the remote's HEAD names (its default branch), or null when it names none. */
export async function remoteDefaultBranch(
  repo: string,
  remote: string,
  opts: RemoteOptions = {},
): Promise<string | null> {
  const out = await git(repo, ['ls-remote', '--symref', '--', remote, 'HEAD'], opts);
  const m = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(out);
  return m ? m[1]! : null;
}

/** A transfer (fetch, clone) stopped before it ended: by its time limit, or because `watch` gave a reason. */
export class TransferStopped extends Error {
  constructor(
    message: string,
    readonly why: 'timeout' | 'watch',
  ) {
    super(message);
  }
}

export interface TransferOptions {
  /** Longest the transfer may take; then it is killed (TransferStopped, `timeout`). */
  timeoutMs: number;
  credentials?: GitCredentials | undefined;
  /** `dir` is a git directory used without any work tree. */
  bare?: boolean;
  /**
   * Asked every `watchEveryMs` while the transfer runs: a reason to stop it (the transfer is killed,
   * TransferStopped `watch` with that reason), or null to let it go on.
   */
  watch?: () => Promise<string | null>;
  watchEveryMs?: number;
}

/**
 * git talking to a remote (fetch), the way `git()` runs it, in a process group of its own: git starts helpers
 * (git-remote-https, index-pack) that a kill of git alone would leave running, holding the connection. The
 * group is killed when the time is up or `watch` says so; the command's standard error is the error's message
 * when it fails.
 */
export function gitTransfer(dir: string, args: string[], opts: TransferOptions): Promise<string> {
  const env = commandEnvironment(dir, opts);
  return new Promise((done, fail) => {
    const child = spawn('git', ['-C', dir, ...HARDENING, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    let stopped: TransferStopped | null = null;
    const stop = (why: TransferStopped) => {
      if (stopped) return;
      stopped = why;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
    };
    const timer = setTimeout(
      () => stop(new TransferStopped(`it took longer than ${opts.timeoutMs} ms`, 'timeout')),
      opts.timeoutMs,
    );
    let watching = false;
    const watcher = opts.watch
      ? setInterval(() => {
          if (watching) return;
          watching = true;
          void opts.watch!()
            .then((reason) => {
              if (reason) stop(new TransferStopped(reason, 'watch'));
            })
            .catch(() => undefined)
            .finally(() => {
              watching = false;
            });
        }, opts.watchEveryMs ?? 250)
      : null;
    child.stdout.on('data', (b: Buffer) => {
      if (stdout.length < 1_000_000) stdout += b.toString('utf8');
    });
    child.stderr.on('data', (b: Buffer) => {
      if (stderr.length < 16_000) stderr += b.toString('utf8');
    });
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (watcher) clearInterval(watcher);
      if (stopped) fail(stopped);
      else if (code === 0) done(stdout);
      else fail(new Error(stderr.trim() || `git ${args[0]} exited with ${code}`));
    });
  });
}
