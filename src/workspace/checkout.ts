import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { RunCheckout } from '../domain/types.js';
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
 * A worktree of the repository's local clone at the pull request's head commit. When the clone does not have
 * that commit yet it is fetched from the clone's remote (by sha, then by the PR's head ref); when that fails
 * too, the run fails with a clear error instead of planning against the wrong code.
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
  if (!(await hasCommit(c.clone, c.headSha))) {
    const attempts = [
      ['fetch', '--quiet', 'origin', c.headSha],
      ['fetch', '--quiet', 'origin', `refs/pull/${c.number}/head`],
    ];
    for (const args of attempts) {
      try {
        await git(c.clone, args, { timeoutMs: 120_000 });
      } catch {
        // try the next way
      }
      if (await hasCommit(c.clone, c.headSha)) break;
    }
    if (!(await hasCommit(c.clone, c.headSha))) {
      throw new CheckoutError(
        `head commit ${c.headSha} of ${c.repository}#${c.number} is not in the local clone and could not be fetched from its remote`,
      );
    }
  }
  await mkdir(join(path, '..'), { recursive: true });
  await git(c.clone, ['worktree', 'add', '--quiet', '--detach', path, c.headSha]);
  return path;
}

export async function removeCheckout(clone: string, path: string): Promise<void> {
  if (!existsSync(path)) return;
  await withRepoLock(clone, () => git(clone, ['worktree', 'remove', '--force', path]).catch(() => undefined));
}
