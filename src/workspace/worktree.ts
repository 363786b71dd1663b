import { existsSync } from 'node:fs';
import { chmod, copyFile, lstat, mkdir, readdir, rm, stat, utimes } from 'node:fs/promises';
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
      `the workspace moved from ${planned.slice(0, 12)} to ${current?.slice(0, 12) ?? 'nothing'} since the plan was made or approved`,
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
 * HEAD is no longer that commit (`base`: the plan's, or the head its approval found moved on, see
 * plans/staleness.ts). A pull request's plan is pinned to the PR's head instead (`checkBase`
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
  /**
   * Given a worktree just made, before any command ran in it: makes it writable to the commands (a root
   * daemon's run as another uid: Sandbox.handOver). The index is then refreshed, so that the commit's
   * `git add` in the sandbox does not hash every file again for the changed owner.
   */
  handOver?: (top: string) => Promise<void>,
): Promise<ExecutionTree> {
  // Absolute: git resolves a relative path against the repository, drydock against its own directory.
  const top = resolve(worktrees, planId);
  if (startOver) await removeWorktree(repo, top, branchFor(planId));
  const fresh = !existsSync(top);
  if (fresh) {
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
  if (fresh) {
    // A subdirectory with nothing committed in it yet is not in the worktree: the session still works there.
    await mkdir(root, { recursive: true });
    if (prefix !== '') await outsideSkipped(top, gitDir, prefix);
    if (handOver) {
      await handOver(top);
      // Only now, while the tree holds nothing but what git checked out of the base commit.
      await git(top, ['update-index', '-q', '--refresh'], { gitDir }).catch(() => undefined);
    }
  }
  return { top, root, prefix, gitDir, commonDir };
}

/**
 * A session on `prefix` (a subdirectory) sees only it in the sandbox: the rest of the worktree is not mounted.
 * Its index entries are marked skip-worktree, so that git in the sandbox (`git status`, `git diff`) does not
 * take them for deleted. Done on a fresh worktree, before any command ran in it.
 */
async function outsideSkipped(top: string, gitDir: string, prefix: string): Promise<void> {
  const outside = await git(top, ['ls-files', '-z', '--', '.', `:(exclude)${prefix}`], { gitDir });
  if (outside === '') return;
  await git(top, ['update-index', '--skip-worktree', '-z', '--stdin'], { gitDir, input: outside });
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
  /** Called right before the branch is moved; throws to leave it as it is (this process lost the run). */
  confirm: () => Promise<void> = async () => {},
): Promise<ExecutionResult> {
  const bare = (args: string[], input?: Buffer | string) =>
    git(tree.commonDir, args, { bare: true, ...(input !== undefined ? { input } : {}) });
  await rm(scratch, { recursive: true, force: true });
  await mkdir(join(scratch, 'objects'), { recursive: true, mode: 0o700 });
  try {
    // The worktree's index as git left it after checking out the base: only its stat data saves rehashing.
    await copyIndex(join(tree.gitDir, 'index'), join(scratch, 'index'));
    await isolation.handOver(scratch);
    const { tree: written, carrier } = await writeTree(tree, scratch, isolation, base);
    const baseTree = (await bare(['rev-parse', '--verify', `${base}^{tree}`])).trim();
    let commit: string | null = null;
    if (written !== baseTree) {
      const pack = await packNewObjects(tree, scratch, isolation, carrier, base);
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
      await confirm();
      // Only from the base it was made at: a branch another execution of the plan moved meanwhile (this
      // process was paused between the check and here) is left as that execution left it.
      await bare([
        'update-ref',
        '-m',
        `drydock: plan ${plan.id}`,
        `refs/heads/${branchFor(plan.id)}`,
        commit,
        base,
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

/**
 * A copy of an index that git trusts no more than the original. git takes an entry whose stat data matches
 * the file as unchanged unless the entry is not older than the index file itself ("racily clean"): then it
 * reads the file. A copy with a new modification time would turn a file edited in the second the base was
 * checked out, to the same size, into an unchanged one, and the edit would be lost. The copy keeps the
 * original's time (to the millisecond, never later). No index: git builds one, hashing every file.
 */
async function copyIndex(from: string, to: string): Promise<void> {
  const before = await stat(from).catch(() => null);
  if (!before) return;
  await copyFile(from, to);
  await utimes(to, before.atime, before.mtime);
}

/** The environment of git in `isolation` over the worktree: an index and objects of its own under `scratch`. */
function isolatedEnv(tree: ExecutionTree, scratch: string): Record<string, string> {
  return {
    ...gitEnvironment('/tmp/home', '/usr/local/bin:/usr/bin:/bin'),
    GIT_DIR: tree.gitDir,
    GIT_WORK_TREE: tree.top,
    GIT_INDEX_FILE: join(scratch, 'index'),
    GIT_OBJECT_DIRECTORY: join(scratch, 'objects'),
    GIT_ALTERNATE_OBJECT_DIRECTORIES: join(tree.commonDir, 'objects'),
  };
}

/** What git in `isolation` sees: the worktree and the repository read-only, `scratch` writable. */
function isolatedOptions(tree: ExecutionTree, scratch: string) {
  return {
    cwd: tree.top,
    readOnly: [tree.commonDir, tree.top],
    writable: [scratch],
    timeoutMs: 600_000,
    maxStdout: MAX_PACK_BYTES,
  };
}

/**
 * `git add -A` of the session's part, `git write-tree`, and a carrier commit of that tree on the base (so that
 * the pack holds only what the base lacks: a bare tree would bring every object again), in one sandbox.
 * Returns the tree's id and the carrier's; the host makes the real commit itself.
 */
async function writeTree(
  tree: ExecutionTree,
  scratch: string,
  isolation: Isolation,
  base: string,
): Promise<{ tree: string; carrier: string }> {
  const scope = tree.prefix === '' ? '.' : tree.prefix;
  const script =
    'git "$@" add -A -- "$SCOPE" >&2 || { echo "git add failed" >&2; exit 3; }\n' +
    't=$(git "$@" write-tree) || { echo "git write-tree failed" >&2; exit 3; }\n' +
    'c=$(echo carrier | git "$@" commit-tree "$t" -p "$BASE") || exit 3\n' +
    'echo "$t $c"\n';
  const out = await isolation.run(['/bin/sh', '-c', script, 'sh', ...HARDENING], {
    ...isolatedOptions(tree, scratch),
    env: { ...isolatedEnv(tree, scratch), SCOPE: scope, BASE: base },
  });
  const m = /^([0-9a-f]{40,64}) ([0-9a-f]{40,64})$/.exec(out.stdout.toString('utf8').trim());
  if (out.code !== 0 || !m) {
    throw new TreeRefusedError(`git add over the execution's tree failed: ${lastLine(out.stderr)}`);
  }
  return { tree: m[1]!, carrier: m[2]! };
}

/** The objects of the carrier commit that the base does not have, as one pack. */
async function packNewObjects(
  tree: ExecutionTree,
  scratch: string,
  isolation: Isolation,
  carrier: string,
  base: string,
): Promise<Buffer> {
  const packed = await isolation.run(['git', ...HARDENING, 'pack-objects', '--revs', '--stdout', '-q'], {
    ...isolatedOptions(tree, scratch),
    env: isolatedEnv(tree, scratch),
    input: `${carrier}\n^${base}\n`,
  });
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
  /** More refs of the repository to delete with the branch (what a delivery kept: replay.ts's deliveryRefs). */
  refs: readonly string[] = [],
): Promise<void> {
  await removeTree(path);
  if (repo && existsSync(repo)) {
    // One lock and two git commands per worktree: a retention pass after a restart may owe a hundred of them,
    // while executions wait for the same lock. update-ref deletes a ref that is not there without a word.
    const gone = [...(branch ? [`refs/heads/${branch}`] : []), ...refs];
    await withRepoLock(repo, async () => {
      await git(repo, ['worktree', 'prune']).catch(() => undefined);
      if (gone.length === 0) return;
      const input = gone.map((ref) => `delete ${ref}\n`).join('');
      await git(repo, ['update-ref', '--stdin'], { input, timeoutMs: 10_000 }).catch(() => undefined);
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
