import { existsSync } from 'node:fs';
import { executionBase } from '../domain/footprint.js';
import { isFinishedRunStatus, type Plan, type Run } from '../domain/types.js';
import type { PlanStore, SessionStore } from '../store/store.js';
import { git } from './git.js';
import { worktreePath } from './paths.js';
import { branchFor } from './worktree.js';

// The unified diff of an execution, read back from git: the change between the commit the plan was made
// against (plan.workspaceCommit) and the commit the execution recorded (run.resultCommit). Both commits live
// in the session's workspace repository: an execution works in a worktree of it (data_dir/worktrees/<plan>,
// branch drydock/<plan>), and a pull request session's workspace is the configured clone, whose worktrees
// share its objects the same way. Retention removes the worktree and the local branch; the commit then stays
// readable until git prunes it, after which the diff is reported as no longer available. Nothing here
// throws for a missing or broken repository: every such case is an outcome with a reason.

export interface DiffLimits {
  /** Bytes of diff text returned at most (cut at a line end). */
  maxBytes: number;
  /** Files included at most (the first ones in git's order). */
  maxFiles: number;
}

export const DEFAULT_DIFF_LIMITS: DiffLimits = { maxBytes: 1_000_000, maxFiles: 300 };

/** One changed file as `git diff --numstat` counts it; counts are null for a binary file. */
export interface ChangedFile {
  path: string;
  /** The path before a rename or copy, else null. */
  oldPath: string | null;
  additions: number | null;
  deletions: number | null;
  binary: boolean;
}

interface DiffFacts {
  runId: string;
  planId: string | null;
  branch: string | null;
  base: string | null;
  commit: string | null;
}

export type ResultDiff =
  | (DiffFacts & {
      state: 'ready';
      diff: string;
      /** Every changed file (not only those whose text is in `diff`). */
      files: ChangedFile[];
      /** How many of `files` the diff text includes. */
      shownFiles: number;
      /** Why the text is shorter than the whole diff, or null when it is whole. */
      truncated: string | null;
    })
  /** The execution finished and changed nothing. */
  | (DiffFacts & { state: 'no_changes'; reason: string })
  /** No commit is recorded (yet): the execution is still going, or it failed before committing. */
  | (DiffFacts & { state: 'pending'; reason: string })
  /** The workspace is no git repository: the execution changed files in place and committed nothing. */
  | (DiffFacts & { state: 'not_git'; reason: string })
  /** The commit or the repository is gone (retention, a pruned or moved repository). */
  | (DiffFacts & { state: 'unavailable'; reason: string })
  /** The run is a planning run: it has no execution. */
  | (DiffFacts & { state: 'not_execution'; reason: string });

const SHA = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;
const TIMEOUT_MS = 30_000;

/** The diff of an execute run, capped by `limits`. Never throws for a missing repository or commit. */
export async function readResultDiff(
  deps: { store: PlanStore & SessionStore; workRoot: string },
  run: Run,
  limits: DiffLimits = DEFAULT_DIFF_LIMITS,
): Promise<ResultDiff> {
  const facts: DiffFacts = {
    runId: run.id,
    planId: run.executesPlanId,
    branch: null,
    base: null,
    commit: run.resultCommit,
  };
  if (run.phase !== 'execute' || !run.executesPlanId) {
    return {
      ...facts,
      state: 'not_execution',
      reason: `run ${run.id} is a ${run.phase} run: it executed nothing`,
    };
  }
  const plan = await deps.store.getPlan(run.executesPlanId);
  if (!plan) return { ...facts, state: 'unavailable', reason: `plan ${run.executesPlanId} is gone` };
  const base = executionBase(plan);
  if (!base) {
    return {
      ...facts,
      state: 'not_git',
      reason:
        'the workspace is not a git repository: the execution changed its files in place (see changed files)',
    };
  }
  const known: DiffFacts = { ...facts, branch: branchFor(plan.id), base };
  if (!run.resultCommit) {
    if (run.status === 'completed') {
      return { ...known, state: 'no_changes', reason: 'the execution finished without changing a file' };
    }
    const why = isFinishedRunStatus(run.status)
      ? `the execution ended ${run.status} before recording a commit`
      : `the execution has not recorded a commit yet (run ${run.status})`;
    return { ...known, state: 'pending', reason: why };
  }
  if (!SHA.test(base) || !SHA.test(run.resultCommit)) {
    return { ...known, state: 'unavailable', reason: 'the recorded commits are not commit ids' };
  }
  const repo = await repositoryOf(deps.store, plan);
  const gone = (why: string): ResultDiff => ({
    ...known,
    state: 'unavailable',
    reason: `${why}${existsSync(worktreePath(deps.workRoot, plan.id)) ? '' : '; its worktree and local branch were removed by retention'}`,
  });
  if (!repo || !existsSync(repo)) return gone('the workspace repository is no longer there');
  for (const sha of [base, run.resultCommit]) {
    if (!(await hasCommit(repo, sha)))
      return gone(`commit ${sha.slice(0, 12)} is no longer in the repository`);
  }
  try {
    return {
      ...known,
      state: 'ready',
      ...(await cappedDiff(repo, base, run.resultCommit, limits)),
    };
  } catch (err) {
    return gone(`git could not produce the diff (${firstLine((err as Error).message)})`);
  }
}

async function repositoryOf(store: PlanStore & SessionStore, plan: Plan): Promise<string | null> {
  return (await store.getSession(plan.sessionId))?.workspace ?? null;
}

async function hasCommit(repo: string, sha: string): Promise<boolean> {
  try {
    await git(repo, ['cat-file', '-e', `${sha}^{commit}`], { timeoutMs: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/**
 * Options that pin the output's shape whatever the repository's configuration says (diff.noprefix,
 * diff.mnemonicPrefix, diff.relative, diff.renames, color.ui): the parser and the people reading it expect
 * plain `a/`/`b/` git diffs with renames found.
 */
const SHAPE = ['--no-color', '--no-ext-diff', '-M', '--src-prefix=a/', '--dst-prefix=b/', '--no-relative'];

async function cappedDiff(
  repo: string,
  base: string,
  commit: string,
  limits: DiffLimits,
): Promise<{ diff: string; files: ChangedFile[]; shownFiles: number; truncated: string | null }> {
  const files = parseNumstat(
    await git(repo, ['diff', ...SHAPE, '--numstat', '-z', base, commit], { timeoutMs: TIMEOUT_MS }),
  );
  const chosen = files.slice(0, limits.maxFiles);
  // Pathspecs only when some files are left out; `:(literal)` keeps a file name from being read as a glob.
  const spec = (fs: ChangedFile[]) => [
    '--',
    ...fs.flatMap((f) => (f.oldPath ? [f.oldPath, f.path] : [f.path])).map((p) => `:(literal)${p}`),
  ];
  const notes: string[] = [];
  if (files.length > chosen.length) {
    notes.push(
      `${files.length - chosen.length} of ${files.length} files left out (at most ${limits.maxFiles})`,
    );
  }
  let text: string;
  try {
    text = await git(
      repo,
      ['diff', ...SHAPE, base, commit, ...(chosen.length < files.length ? spec(chosen) : [])],
      {
        timeoutMs: TIMEOUT_MS,
      },
    );
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') throw err;
    // More than git() buffers: file by file, until the byte limit is reached.
    text = '';
    for (const f of chosen) {
      if (Buffer.byteLength(text) >= limits.maxBytes) break;
      text += await git(repo, ['diff', ...SHAPE, base, commit, ...spec([f])], {
        timeoutMs: TIMEOUT_MS,
      }).catch(() => {
        notes.push(`${f.path} is too large to show`);
        return '';
      });
    }
  }
  const cut = cutAtLine(text, limits.maxBytes);
  if (cut.length < text.length) notes.push(`the diff text was cut at ${limits.maxBytes} bytes`);
  const shownFiles = cut.match(/^diff --git /gm)?.length ?? 0;
  return { diff: cut, files, shownFiles, truncated: notes.length ? notes.join('; ') : null };
}

/** The longest prefix of `text` of at most `maxBytes` UTF-8 bytes that ends at a line end. */
export function cutAtLine(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  const end = bytes.subarray(0, maxBytes).lastIndexOf(0x0a);
  return end < 0 ? '' : bytes.subarray(0, end + 1).toString('utf8');
}

/**
 * `git diff --numstat -z`: per file `added\tdeleted\tpath\0`, or for a rename or copy
 * `added\tdeleted\t\0old\0new\0`; a binary file counts `-` for both. With -z paths are written verbatim,
 * never quoted. (git's Documentation/diff-format.txt, "other diff formats", and git-diff(1) --numstat / -z:
 * https://github.com/git/git/blob/master/Documentation/diff-format.txt; checked against git 2.39 by
 * tests/workspace/result-diff.test.ts.)
 */
export function parseNumstat(out: string): ChangedFile[] {
  const parts = out.split('\0');
  const files: ChangedFile[] = [];
  for (let i = 0; i < parts.length; i++) {
    const m = /^(-|\d+)\t(-|\d+)\t([\s\S]*)$/.exec(parts[i]!.replace(/^\n/, ''));
    if (!m) continue;
    const binary = m[1] === '-' && m[2] === '-';
    let path = m[3]!;
    let oldPath: string | null = null;
    if (path === '') {
      oldPath = parts[++i] ?? '';
      path = parts[++i] ?? '';
    }
    files.push({
      path,
      oldPath,
      additions: binary ? null : Number(m[1]),
      deletions: binary ? null : Number(m[2]),
      binary,
    });
  }
  return files;
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? text;
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
