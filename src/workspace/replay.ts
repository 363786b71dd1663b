import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { commonGitDir, git, gitBytes } from './git.js';
import { privateTempDir } from './temp.js';

// An execution's own change, apart from the history it was made on. A pull request's plan executes on the
// pull request's head: the execution's commit has the contributor's last commit as its parent and, through
// it, all of theirs. What goes into the base repository's branches must be drydock's change alone: its diff
// to its parent, replayed onto the base branch as a new commit whose only parent is the base's tip (a
// cherry-pick); or, when it does not apply there, the diff itself as text for a person.
//
// Everything here runs on the repository's git directory alone, with an index of its own in a private
// temporary directory: no work tree is read or written, so nothing a command of the execution wrote is
// interpreted (git.ts). `git apply --cached --3way` (git-apply(1), https://git-scm.com/docs/git-apply):
// `--cached` applies "to the index, without using the working tree"; `--3way` falls back to a three-way merge
// of each file from the blob the patch names as its pre-image (the parent's, in this repository) when the
// context does not match; it "implies the --index option unless the --cached option is used", and "when
// used with the --cached option, any conflicts are left at higher stages in the cache" (and git apply
// fails): such a change does not apply.

/** Where the replayed commit of a plan is kept in the repository, so a retried delivery pushes the same one. */
export const replayedRef = (planId: string) => `refs/drydock/replayed/${planId}`;
/** Where the base branch is fetched to before replaying onto it. */
export const ontoRef = (planId: string) => `refs/drydock/onto/${planId}`;

/** A trailer of the replayed commit's message: the execution's commit it carries the change of. */
const REPLAYED_FROM = 'Drydock-Replayed-From';

/** The largest patch replayed or shown (bytes of `git diff --binary`). */
const MAX_PATCH_BYTES = 64 * 1024 * 1024;

const SHA = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;

/** `commit`'s one parent; throws for a root or a merge commit (an execution makes neither). */
export async function onlyParent(repo: string, commit: string): Promise<string> {
  const parents = (await git(repo, ['rev-parse', `${commit}^@`], { timeoutMs: 10_000 }))
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  if (parents.length !== 1 || !SHA.test(parents[0]!)) {
    throw new Error(`commit ${commit.slice(0, 12)} has ${parents.length} parents, not one`);
  }
  return parents[0]!;
}

/** The change `commit` made to its parent as `git diff` text: binary files summarised, at most `maxBytes`. */
export async function commitPatch(repo: string, commit: string, maxBytes: number): Promise<string> {
  const parent = await onlyParent(repo, commit);
  const common = await commonGitDir(repo);
  const out = await gitBytes(common, diffArgs(parent, commit, false), {
    bare: true,
    maxBytes: MAX_PATCH_BYTES,
  });
  return out.subarray(0, maxBytes).toString('utf8');
}

/**
 * The replayed commit of plan `planId` made before from `commit` (kept at `replayedRef`), or a new one: the
 * change `commit` made to its parent applied onto `onto`, committed with `commit`'s message (and a trailer
 * naming `commit`) and `onto` as its only parent, and kept at `replayedRef`. null when the change does not
 * apply to `onto`; `onto` itself when it changes nothing there.
 */
export async function replayCommit(
  repo: string,
  planId: string,
  commit: string,
  onto: string,
): Promise<string | null> {
  const common = await commonGitDir(repo);
  const bare = (args: string[], more: { input?: string | Buffer; indexFile?: string } = {}) =>
    git(common, args, { bare: true, timeoutMs: 120_000, ...more });
  const made = await keptReplay(repo, planId, commit);
  if (made) return made;
  const parent = await onlyParent(repo, commit);
  const patch = await gitBytes(common, diffArgs(parent, commit, true), {
    bare: true,
    maxBytes: MAX_PATCH_BYTES,
  });
  const scratch = privateTempDir('drydock-replay-');
  try {
    const indexFile = join(scratch, 'index');
    await bare(['read-tree', onto], { indexFile });
    if (patch.length > 0) {
      const applied = await bare(['apply', '--cached', '--3way', '--whitespace=nowarn'], {
        input: patch,
        indexFile,
      }).then(
        () => true,
        () => false,
      );
      if (!applied) return null;
    }
    const tree = (await bare(['write-tree'], { indexFile })).trim();
    if (tree === (await bare(['rev-parse', `${onto}^{tree}`])).trim()) return onto;
    const message = (await bare(['log', '-1', '--format=%B', commit])).trimEnd();
    const replayed = (
      await bare(['commit-tree', tree, '-p', onto], {
        input: `${message}\n${REPLAYED_FROM}: ${commit}\n`,
      })
    ).trim();
    // Created only where none is yet: an attempt that raced this one (none should: the delivery is claimed)
    // keeps its own.
    await bare(['update-ref', replayedRef(planId), replayed, '']);
    return replayed;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * The commit kept at `replayedRef` when it carries `commit`'s change (its trailer says so), else null (one
 * made from another commit, the local branch having moved since, is dropped).
 */
export async function keptReplay(repo: string, planId: string, commit: string): Promise<string | null> {
  const common = await commonGitDir(repo);
  const ref = replayedRef(planId);
  const kept = await git(common, ['rev-parse', '--verify', '-q', `${ref}^{commit}`], {
    bare: true,
    timeoutMs: 10_000,
  }).then(
    (out) => out.trim(),
    () => '',
  );
  if (!SHA.test(kept)) return null;
  const message = await git(common, ['log', '-1', '--format=%B', kept], { bare: true, timeoutMs: 10_000 });
  if (message.includes(`\n${REPLAYED_FROM}: ${commit}\n`)) return kept;
  await git(common, ['update-ref', '-d', ref, kept], { bare: true, timeoutMs: 10_000 });
  return null;
}

/** `git diff` of parent..commit with fixed prefixes and no renames; `binary`: whole binary contents. */
function diffArgs(parent: string, commit: string, binary: boolean): string[] {
  return [
    'diff',
    ...(binary ? ['--binary', '--full-index'] : []),
    '--no-color',
    '--no-renames',
    '--src-prefix=a/',
    '--dst-prefix=b/',
    parent,
    commit,
    '--',
  ];
}

/** What a plan's deliveries kept in the repository (its replayed commit, a fetched base): retention deletes them. */
export function deliveryRefs(planId: string): string[] {
  return [replayedRef(planId), ontoRef(planId)];
}
