import { randomBytes } from 'node:crypto';
import {
  chmod,
  copyFile,
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  realpath,
  rename,
  symlink,
  unlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';

// A plain workspace (not a git repository: Session.workspaceKind) executes on a copy drydock makes, never in
// place: the sandbox is given the copy, so nothing a command writes (a `.git` with a smudge filter, a hook, a
// set-user-ID file) lands in the directory people and later runs read. When the execution has succeeded, its
// changes are carried back as data: the contents of the regular files it changed or made, and the removal of
// the ones it deleted. Never a `.git` (of any depth), a symbolic link, a special file or a mode bit beyond
// 0777 minus set-ID; never through a symbolic link of the workspace; never over a file someone changed in the
// workspace while the execution ran (a conflict, reported).

/** Path components never copied either way: a repository's directory is never data of a plain workspace. */
const NEVER = new Set(['.git']);

const rel = (root: string, p: string) => relative(root, p).split(sep).join('/');

/** Copies `src` into a fresh `dest`: directories, regular files (with their times) and symbolic links. */
export async function copyWorkspace(
  src: string,
  dest: string,
  skip: (abs: string) => boolean,
): Promise<void> {
  const visit = async (from: string, to: string): Promise<void> => {
    const s = await lstat(from);
    if (s.isDirectory()) {
      await mkdir(to, { mode: 0o700 });
      for (const name of await readdir(from)) {
        const child = join(from, name);
        if (NEVER.has(name) || skip(child)) continue;
        await visit(child, join(to, name));
      }
      await chmod(to, s.mode & 0o777);
    } else if (s.isFile()) {
      await copyFile(from, to);
      await chmod(to, s.mode & 0o777);
    } else if (s.isSymbolicLink()) {
      await symlink(await readlink(from), to);
      return;
    } else {
      return; // FIFOs, sockets, devices: not data
    }
    await utimes(to, s.atime, s.mtime);
  };
  await visit(src, dest);
}

export interface CarriedBack {
  /** Files written or removed in the workspace (relative, `/`-separated). */
  changed: string[];
  /** What was not carried back, and why. */
  skipped: { path: string; why: string }[];
}

/**
 * Carries what the execution changed in `copy` (files modified at or after `since`, ms) back into
 * `workspace`, and removes there the files it deleted (those older than `since` that the copy no longer has).
 */
export async function carryBack(
  copy: string,
  workspace: string,
  since: number,
  skip: (abs: string) => boolean,
): Promise<CarriedBack> {
  const out: CarriedBack = { changed: [], skipped: [] };
  const top = await realpath(workspace);
  await carryFiles(copy, copy, top, since, out);
  await carryDeletions(copy, top, top, since, skip, out);
  out.changed.sort();
  return out;
}

async function carryFiles(copyRoot: string, dir: string, top: string, since: number, out: CarriedBack) {
  for (const name of await readdir(dir)) {
    if (NEVER.has(name)) continue;
    const from = join(dir, name);
    const path = rel(copyRoot, from);
    const s = await lstat(from);
    if (s.isDirectory()) await carryFiles(copyRoot, from, top, since, out);
    else if (!s.isFile()) {
      if (s.mtimeMs >= since) out.skipped.push({ path, why: 'not a regular file' });
    } else if (s.mtimeMs >= since) {
      const why = await writeBack(from, join(top, path), top, since, s.mode & 0o777);
      if (why === null) out.changed.push(path);
      else if (why !== 'same') out.skipped.push({ path, why });
    }
  }
}

/** Writes one file into the workspace; null when written, 'same' when it already had that content. */
async function writeBack(from: string, to: string, top: string, since: number, mode: number) {
  const parent = await realParent(to, top);
  if (parent === null) return 'its directory in the workspace leads outside it';
  const target = join(parent, to.slice(to.lastIndexOf(sep) + 1));
  const there = await lstat(target).catch(() => null);
  if (there && !there.isFile()) return 'the workspace has something else than a file there';
  if (there && there.mtimeMs >= since) return 'changed in the workspace while the execution ran';
  const content = await readFile(from);
  if (there && content.equals(await readFile(target))) return 'same';
  const temp = `${target}.drydock-${randomBytes(4).toString('hex')}`;
  await writeFile(temp, content, { mode, flag: 'wx' });
  await rename(temp, target);
  return null;
}

/** The real directory `file` goes in, made if missing, or null when it would lie outside `top`. */
async function realParent(file: string, top: string): Promise<string | null> {
  const wanted = dirname(file);
  await mkdir(wanted, { recursive: true }).catch(() => undefined);
  const real = await realpath(wanted).catch(() => null);
  if (real === null || (real !== top && !real.startsWith(top + sep))) return null;
  return real;
}

async function carryDeletions(
  copyRoot: string,
  top: string,
  dir: string,
  since: number,
  skip: (abs: string) => boolean,
  out: CarriedBack,
) {
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const here = join(dir, name);
    if (NEVER.has(name) || skip(here)) continue;
    const s = await lstat(here);
    const path = rel(top, here);
    const inCopy = await lstat(resolve(copyRoot, path)).catch(() => null);
    if (s.isDirectory()) {
      if (inCopy?.isDirectory()) await carryDeletions(copyRoot, top, here, since, skip, out);
      else if (inCopy === null) out.skipped.push({ path, why: 'a directory the execution removed is kept' });
    } else if (s.isFile() && inCopy === null && s.mtimeMs < since) {
      await unlink(here);
      out.changed.push(path);
    }
  }
}
