import { commonGitDir, git } from './git.js';

/** A regular file of a commit's tree, as git stores it. */
export interface CommitFile {
  /** Its path in the commit, as asked. */
  path: string;
  /** Its size in bytes. */
  size: number;
  /** Its content as UTF-8 text, or null when it is larger than the `maxBytes` asked for (not read at all). */
  text: string | null;
}

const FULL_SHA = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;

/**
 * The regular files among `paths` in the tree of `commit`, read from the object database of the repository
 * `repo` lies in, never from a work tree: git runs on the repository's git directory alone (no work tree, so
 * no attributes, filters or `.git` file of a tree are read; git.ts hardens the rest). A path that is not a
 * regular file in that tree (missing, a symbolic link, a submodule, a directory, or below a symbolic link:
 * git does not follow links inside a tree) is left out. Files over `maxBytes` come back without their text.
 */
export async function commitFiles(
  repo: string,
  commit: string,
  paths: readonly string[],
  maxBytes: number,
): Promise<CommitFile[]> {
  if (!FULL_SHA.test(commit)) throw new Error(`not a full commit id: ${JSON.stringify(commit)}`);
  const gitDir = await commonGitDir(repo);
  const opts = { bare: true, timeoutMs: 30_000 };
  // `<mode> <type> <object>\t<path>` per entry, NUL-terminated; `--` so no path is taken for an option.
  const listing = await git(gitDir, ['ls-tree', '-z', '--long', `${commit}^{tree}`, '--', ...paths], opts);
  const found = new Map<string, { object: string; size: number }>();
  for (const entry of listing.split('\0')) {
    const m = /^(\d{6}) (\w+) ([0-9a-f]+) +(\d+|-)\t(.*)$/s.exec(entry);
    const regular = m?.[2] === 'blob' && (m[1] === '100644' || m[1] === '100755');
    if (!m || !regular) continue;
    found.set(m[5]!, { object: m[3]!, size: Number(m[4]) });
  }
  const files: CommitFile[] = [];
  for (const path of paths) {
    const f = found.get(path);
    if (!f) continue;
    const text = f.size > maxBytes ? null : await git(gitDir, ['cat-file', 'blob', f.object], opts);
    files.push({ path, size: f.size, text });
  }
  return files;
}
