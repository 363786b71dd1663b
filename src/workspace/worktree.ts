import { existsSync } from 'node:fs';
import { chmod, copyFile, lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import {
  commonGitDir,
  git,
  gitEnvironment,
  HARDENING,
  headCommit,
  prefixInRepository,
  withRepoLock,
  worktreeGitDir,
} from './git.js';
import type { Isolation } from './isolation.js';

export class StaleBaseError extends Error {
  constructor(
    readonly planned: string,
    readonly current: string | null,
  ) {
    super(
      `the workspace moved from ${planned.slice(0, 12)} to ${current?.slice(0, 12) ?? 'nothing'} since the plan was made`,
    );
  }
}

export const branchFor = (planId: string) => `drydock/${planId}`;

/** Where an execution works when its workspace is a git repository. */
export interface ExecutionTree {
  /** The top of the worktree drydock made for the plan. */
  top: string;
  /** Where the session works: `top`, or the same subdirectory of it as the session's workspace. */
  root: string;
  /** The session's subdirectory relative to the top (`''`, or `sub/dir/` as git says it). */
  prefix: string;
  /** The worktree's administrative git directory, inside the repository (see `worktreeGitDir`). */
  gitDir: string;
  /** The repository's shared git directory (objects, refs, its configuration). */
  commonDir: string;
}

/**
 * The execute phase of a plan made in a git repository works in its own worktree, on branch
 * `drydock/<plan id>`, checked out at the commit the plan was made against: the person's checkout is never
 * touched. A session on a subdirectory of the repository works in the same subdirectory of the worktree, so
 * a plan's relative paths mean the same files in both phases. Refuses (StaleBaseError) when the repository's
 * HEAD is no longer that commit. A pull request's plan is pinned to the PR's head instead (`checkBase`
 * false): a new push supersedes it before it can run.
 */
export async function prepareWorktree(
  repo: string,
  planId: string,
  base: string,
  worktrees: string,
  checkBase = true,
  /**
   * An execution that starts over (its replica stopped or died midway): what the earlier attempt left, its
   * worktree and branch, is removed and made again at `base`. The base was checked by that first attempt.
   */
  startOver = false,
): Promise<ExecutionTree> {
  // Absolute: git resolves a relative path against the repository, drydock against its own directory.
  const top = resolve(worktrees, planId);
  if (startOver) await removeWorktree(repo, top, branchFor(planId));
  if (!existsSync(top)) {
    // Not resumed after a restart: the worktree is made now.
    if (checkBase && !startOver) {
      const head = await headCommit(repo);
      if (head !== base) throw new StaleBaseError(base, head);
    }
    // Only the daemon's uid enters the worktrees (a command may leave a set-ID file in one: see sweep.ts).
    await mkdir(dirname(top), { recursive: true, mode: 0o700 });
    await chmod(dirname(top), 0o700);
    await withRepoLock(repo, () => git(repo, ['worktree', 'add', '-q', '-b', branchFor(planId), top, base]));
  }
  const [commonDir, prefix] = await Promise.all([commonGitDir(repo), prefixInRepository(repo)]);
  const gitDir = await worktreeGitDir(commonDir, top);
  const root = prefix === '' ? top : join(top, prefix);
  // A subdirectory with nothing committed in it yet is not in the worktree: the session still works there.
  await mkdir(root, { recursive: true });
  return { top, root, prefix, gitDir, commonDir };
}

export interface ExecutionResult {
  commit: string | null;
  diffStat: string;
  changedFiles: string[];
}

/** The execution's tree could not be committed for what is in it; its own execution fails with the reason. */
export class TreeRefusedError extends Error {}

/** Room for an execution's tree: the largest pack of new objects drydock takes from it. */
const MAX_PACK_BYTES = 512 * 1024 * 1024;

/**
 * Commits what the execution changed in the session's part of the worktree, referencing the plan; returns the
 * commit and what changed. Nothing on the host reads the worktree (a sandboxed command wrote it: see
 * isolation.ts): `git add` and `git write-tree` run in `isolation`, seeing the worktree and the repository's
 * git directory read-only and writing an index and objects of their own under `scratch`; the new objects
 * come out as a pack, which the host's git checks (`index-pack --strict`) into the repository's object store.
 * The host then makes the commit from that tree and moves the branch, on the git directory alone.
 */
export async function commitExecution(
  tree: ExecutionTree,
  base: string,
  plan: { id: string; sha256: string; title: string },
  isolation: Isolation,
  scratch: string,
): Promise<ExecutionResult> {
  const bare = (args: string[], input?: Buffer | string) =>
    git(tree.commonDir, args, { bare: true, ...(input !== undefined ? { input } : {}) });
  await rm(scratch, { recursive: true, force: true });
  await mkdir(join(scratch, 'objects'), { recursive: true, mode: 0o700 });
  try {
    // The worktree's index as git left it after checking out the base: only its stat data saves rehashing.
    await copyFile(join(tree.gitDir, 'index'), join(scratch, 'index')).catch(() => undefined);
    await isolation.handOver(scratch);
    const written = await writeTree(tree, scratch, isolation);
    const baseTree = (await bare(['rev-parse', '--verify', `${base}^{tree}`])).trim();
    let commit: string | null = null;
    if (written !== baseTree) {
      const pack = await packNewObjects(tree, scratch, isolation, written, base);
      try {
        await bare(['index-pack', '--stdin', '--strict'], pack);
      } catch (err) {
        throw new TreeRefusedError(`the objects the execution made were refused: ${lastLine(err)}`);
      }
      if ((await bare(['cat-file', '-t', written])).trim() !== 'tree') {
        throw new TreeRefusedError(`the execution's tree ${written} did not arrive`);
      }
      const message = `${plan.title}\n\nCarries out drydock plan ${plan.id}.\n\nDrydock-Plan: ${plan.id}\nDrydock-Plan-Sha256: ${plan.sha256}\n`;
      commit = (await bare(['commit-tree', written, '-p', base], message)).trim();
      await bare([
        'update-ref',
        '-m',
        `drydock: plan ${plan.id}`,
        `refs/heads/${branchFor(plan.id)}`,
        commit,
      ]);
    }
    const head = commit ?? base;
    const diffStat = (await bare(['diff', '--stat', base, head])).trim();
    const changedFiles = (await bare(['diff', '--name-only', base, head])).split('\n').filter(Boolean);
    return { commit, diffStat, changedFiles };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** git run in `isolation` over the worktree, writing only under `scratch`, with nothing of the daemon's. */
function isolatedGit(
  tree: ExecutionTree,
  scratch: string,
  isolation: Isolation,
  args: string[],
  input?: string,
) {
  const env = {
    ...gitEnvironment('/tmp/home', '/usr/local/bin:/usr/bin:/bin'),
    GIT_DIR: tree.gitDir,
    GIT_WORK_TREE: tree.top,
    GIT_INDEX_FILE: join(scratch, 'index'),
    GIT_OBJECT_DIRECTORY: join(scratch, 'objects'),
    GIT_ALTERNATE_OBJECT_DIRECTORIES: join(tree.commonDir, 'objects'),
  };
  return isolation.run(['git', ...HARDENING, ...args], {
    cwd: tree.top,
    readOnly: [tree.commonDir, tree.top],
    writable: [scratch],
    env,
    ...(input !== undefined ? { input } : {}),
    timeoutMs: 600_000,
    maxStdout: MAX_PACK_BYTES,
  });
}

/** `git add -A` of the session's part, then `git write-tree`: the tree's id. */
async function writeTree(tree: ExecutionTree, scratch: string, isolation: Isolation): Promise<string> {
  const scope = tree.prefix === '' ? '.' : tree.prefix;
  const added = await isolatedGit(tree, scratch, isolation, ['add', '-A', '--', scope]);
  if (added.code !== 0) {
    throw new TreeRefusedError(`git add over the execution's tree failed: ${lastLine(added.stderr)}`);
  }
  const written = await isolatedGit(tree, scratch, isolation, ['write-tree']);
  const id = written.stdout.toString('utf8').trim();
  if (written.code !== 0 || !/^[0-9a-f]{40,64}$/.test(id)) {
    throw new TreeRefusedError(
      `git write-tree over the execution's tree failed: ${lastLine(written.stderr)}`,
    );
  }
  return id;
}

/** The objects of `written` that the base commit does not have, as one pack. */
async function packNewObjects(
  tree: ExecutionTree,
  scratch: string,
  isolation: Isolation,
  written: string,
  base: string,
): Promise<Buffer> {
  const packed = await isolatedGit(
    tree,
    scratch,
    isolation,
    ['pack-objects', '--revs', '--stdout', '-q'],
    `${written}\n--not\n${base}\n`,
  );
  if (packed.code !== 0) {
    throw new TreeRefusedError(`packing the execution's objects failed: ${lastLine(packed.stderr)}`);
  }
  return packed.stdout;
}

function lastLine(err: unknown): string {
  const text = typeof err === 'string' ? err : ((err as Error)?.message ?? String(err));
  const lines = text
    .trim()
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  // fsck's `error:` lines name the object and the check; the last line only says that fsck failed.
  const errors = lines.filter((l) => l.startsWith('error: ')).map((l) => l.slice('error: '.length));
  return (errors.length > 0 ? errors.slice(0, 3).join('; ') : (lines.at(-1) ?? 'no reason given')).slice(
    0,
    500,
  );
}

/**
 * The worktree's directory first, as plain data (git never looks into what a command may have written: no
 * `worktree remove`, which reads the tree), then what the repository kept of it (`worktree prune` reads only
 * the repository's own files) and its local branch.
 */
export async function removeWorktree(
  repo: string | null,
  path: string,
  branch: string | null,
): Promise<void> {
  await removeTree(path);
  if (repo && existsSync(repo)) {
    await withRepoLock(repo, async () => {
      await git(repo, ['worktree', 'prune']).catch(() => undefined);
      if (branch) await git(repo, ['branch', '-D', branch]).catch(() => undefined);
    });
  }
}

/**
 * Deletes a tree a command may have left unwritable (`chmod 0500` directories stop a removal by anyone but
 * root): each directory is made writable to its owner on the way down. Symbolic links are never followed.
 */
export async function removeTree(path: string): Promise<void> {
  const open = async (p: string): Promise<void> => {
    const s = await lstat(p).catch(() => null);
    if (!s?.isDirectory()) return;
    await chmod(p, 0o700).catch(() => undefined);
    for (const name of await readdir(p).catch(() => [] as string[])) await open(join(p, name));
  };
  try {
    await rm(path, { recursive: true, force: true });
  } catch {
    await open(path);
    await rm(path, { recursive: true, force: true });
  }
}
