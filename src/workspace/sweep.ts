import { chmod, lstat, readdir, unlink } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

// What a sandboxed command leaves in its tree stays on the host after the command is gone: a copy of bash
// with the set-user-ID bit (owned by the daemon's uid, or the sandbox's), a FIFO that blocks whoever opens
// it, a socket. Before anything on the host reads the tree again (a file tool, the next command, the commit),
// set-user-ID and set-group-ID bits are cleared and FIFOs, sockets and device nodes removed. The walk never
// follows a symbolic link. It runs when no process of the sandbox is left (its PID namespace ends with it),
// so nothing changes the tree under it.

export interface SweepReport {
  /** Paths (relative, `/`-separated) whose set-user-ID or set-group-ID bit was cleared. */
  cleared: string[];
  /** Paths of FIFOs, sockets and device nodes removed. */
  removed: string[];
  /** Bytes of the regular files in the tree (what the execution's worktree limit counts). */
  bytes: number;
}

const SET_ID = 0o6000;

export async function sweepTree(root: string): Promise<SweepReport> {
  const report: SweepReport = { cleared: [], removed: [], bytes: 0 };
  const rel = (p: string) => relative(root, p).split(sep).join('/') || '.';
  const visit = async (path: string): Promise<void> => {
    const s = await lstat(path).catch(() => null);
    if (s === null || s.isSymbolicLink()) return;
    if (s.isFIFO() || s.isSocket() || s.isBlockDevice() || s.isCharacterDevice()) {
      await unlink(path);
      report.removed.push(rel(path));
      return;
    }
    if (s.isFile()) report.bytes += s.size;
    if ((s.mode & SET_ID) !== 0) {
      await chmod(path, s.mode & 0o1777);
      report.cleared.push(rel(path));
    }
    if (!s.isDirectory()) return;
    const names = await readdir(path).catch(() => [] as string[]);
    await Promise.all(names.map((name) => visit(join(path, name))));
  };
  await visit(root);
  return report;
}

/** One line for the model and the log, or null when the sweep found nothing. */
export function describeSweep(r: SweepReport): string | null {
  const parts: string[] = [];
  const list = (paths: string[]) => paths.slice(0, 10).join(', ') + (paths.length > 10 ? ', …' : '');
  if (r.cleared.length > 0) parts.push(`cleared set-user-ID/set-group-ID bits on ${list(r.cleared)}`);
  if (r.removed.length > 0) parts.push(`removed FIFOs, sockets or device nodes ${list(r.removed)}`);
  return parts.length === 0 ? null : `drydock ${parts.join('; ')}: they never stay in a tree the host reads`;
}
