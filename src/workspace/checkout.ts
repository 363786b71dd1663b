import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { CommitCheckout, PullRequestCheckout, RunCheckout } from '../domain/types.js';
import { git, withRepoLock } from './git.js';

export class CheckoutError extends Error {}

async function hasCommit(clone: string, sha: string): Promise<boolean> {
  try {
    await git(clone, ['cat-file', '-e', `${sha}^{commit}`], { timeoutMs: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/**
 * A worktree of the repository's local clone at the commit a run plans on: a pull request's head, or the commit
 * another event named (`CommitCheckout`). When the clone does not have that commit yet it is fetched from the
 * clone's remote (by sha, then by the pull request's head ref or the event's branch or tag); a commit named only
 * by a branch or tag is the one the remote has there now. When that fails too, the run fails with a clear error
 * instead of planning against the wrong code.
 */
export function checkoutPullRequest(c: RunCheckout, path: string): Promise<string> {
  // Absolute: git resolves a relative path against the clone, drydock against its own directory.
  return withRepoLock(c.clone, () => checkout(c, resolve(path)));
}

async function checkout(c: RunCheckout, path: string): Promise<string> {
  if (existsSync(path)) return path;
  if (!existsSync(join(c.clone, '.git')) && !existsSync(join(c.clone, 'HEAD'))) {
    throw new CheckoutError(`the clone of ${c.repository} at ${c.clone} is not a git repository`);
  }
  const sha = c.kind === 'commit' ? await commitOf(c) : await pullRequestHead(c);
  await mkdir(join(path, '..'), { recursive: true });
  await git(c.clone, ['worktree', 'add', '--quiet', '--detach', path, sha]);
  return path;
}

/** Fetches from the clone's remote, one way after the other, until `done` says the commit is there. */
async function fetchUntil(clone: string, refs: string[], done: () => Promise<boolean>): Promise<boolean> {
  for (const ref of refs) {
    try {
      await git(clone, ['fetch', '--quiet', 'origin', ref], { timeoutMs: 120_000 });
    } catch {
      // try the next way
    }
    if (await done()) return true;
  }
  return done();
}

async function pullRequestHead(c: PullRequestCheckout): Promise<string> {
  const there = () => hasCommit(c.clone, c.headSha);
  if (!(await there()) && !(await fetchUntil(c.clone, [c.headSha, `refs/pull/${c.number}/head`], there))) {
    throw new CheckoutError(
      `head commit ${c.headSha} of ${c.repository}#${c.number} is not in the local clone and could not be fetched from its remote`,
    );
  }
  return c.headSha;
}

/**
 * The commit of a `CommitCheckout`: its sha, fetched by sha or by its ref when the clone lacks it; or, named only
 * by a ref (`refs/heads/…`, `refs/tags/…`, built from a checked name), the commit the remote has there now.
 */
async function commitOf(c: CommitCheckout): Promise<string> {
  if (c.sha) {
    const sha = c.sha;
    const there = () => hasCommit(c.clone, sha);
    if (!(await there()) && !(await fetchUntil(c.clone, c.ref ? [sha, c.ref] : [sha], there))) {
      throw new CheckoutError(
        `commit ${sha} of ${c.repository} is not in the local clone and could not be fetched from its remote`,
      );
    }
    return sha;
  }
  if (!c.ref) throw new CheckoutError(`the run names no commit of ${c.repository} to plan on`);
  try {
    await git(c.clone, ['fetch', '--quiet', 'origin', c.ref], { timeoutMs: 120_000 });
    // FETCH_HEAD is the clone's own: the repository lock is held, so no other fetch of drydock's moved it.
    const sha = await git(c.clone, ['rev-parse', '--verify', '--quiet', 'FETCH_HEAD^{commit}'], {
      timeoutMs: 10_000,
    });
    return sha.trim();
  } catch (err) {
    const why = ((err as { stderr?: string }).stderr || (err as Error).message).trim().split('\n')[0];
    throw new CheckoutError(
      `${c.ref} of ${c.repository} could not be fetched from the clone's remote: ${why}`,
    );
  }
}

/**
 * A detached worktree of the git workspace `repo` at `commit`, at `path`: where a plan run of that workspace
 * reads, so that it sees the commit its execution will start from and none of the person's uncommitted
 * changes. Made once; a run that continues (a restart, an answer) finds it there. Returns its top, absolute.
 */
export function checkoutCommit(repo: string, commit: string, path: string): Promise<string> {
  // Absolute: git resolves a relative path against the repository, drydock against its own directory.
  const top = resolve(path);
  return withRepoLock(repo, async () => {
    if (existsSync(top)) return top;
    await mkdir(dirname(top), { recursive: true });
    await git(repo, ['worktree', 'add', '--quiet', '--detach', top, commit]);
    return top;
  });
}

export async function removeCheckout(clone: string, path: string): Promise<void> {
  if (!existsSync(path)) return;
  await withRepoLock(clone, () => git(clone, ['worktree', 'remove', '--force', path]).catch(() => undefined));
}
