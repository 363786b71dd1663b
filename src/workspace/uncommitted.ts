import { MAX_UNCOMMITTED_LISTED, type UncommittedChanges } from '../domain/types.js';
import { git, prefixInRepository } from './git.js';

// What a git workspace has that its HEAD commit has not: the files a plan made from that commit never saw
// (agent/planning-base.ts). git's own `status`, read in the session's directory and only below it.

/**
 * The uncommitted changes of the work tree at `dir`, below `dir`: tracked files modified in the work tree or in
 * the index (staged), and untracked files that are not ignored, an untracked directory counting once as
 * `dir/` (git's `--untracked-files=normal`). A rename counts as its old and its new path. Paths are relative to
 * `dir`; the first `MAX_UNCOMMITTED_LISTED` of them (sorted) are listed. `git status` takes no optional lock:
 * the person's index is left as it is.
 */
export async function uncommittedChanges(dir: string): Promise<UncommittedChanges> {
  const [out, prefix] = await Promise.all([
    git(dir, [
      '--no-optional-locks',
      'status',
      '--porcelain=v1',
      '-z',
      '--no-renames',
      '--untracked-files=normal',
      '--ignore-submodules=none',
      '--',
      '.',
    ]),
    prefixInRepository(dir),
  ]);
  const paths = parseStatus(out, prefix).sort();
  return { count: paths.length, paths: paths.slice(0, MAX_UNCOMMITTED_LISTED) };
}

/**
 * The paths of `git status --porcelain=v1 -z --no-renames` output (`XY path` entries, NUL-terminated), made
 * relative to `prefix` (the directory's place in the repository: porcelain paths are the repository's). Pure.
 */
export function parseStatus(out: string, prefix: string): string[] {
  const paths = new Set<string>();
  for (const entry of out.split('\0')) {
    if (entry.length < 4) continue;
    const path = entry.slice(3);
    paths.add(path.startsWith(prefix) ? path.slice(prefix.length) : path);
  }
  return [...paths];
}
