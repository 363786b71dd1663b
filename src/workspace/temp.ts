import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The temporary directories a drydock process makes: git's empty HOME, the HOME of unconfined commands, the
// sandbox's probe, the egress proxy's sockets, an MCP server's sockets and home, the index a delivery replays
// an execution's change in. Each is named `<prefix><pid>-<random>`, so that a process
// removes its own when it stops, and one starting later removes those of processes that are gone (killed,
// or the machine stopped) instead of leaving one per process for ever.

export const TEMP_PREFIXES = [
  'drydock-git-home-',
  'drydock-home-',
  'drydock-sandbox-probe-',
  'drydock-egress-',
  'drydock-mcp-',
  'drydock-replay-',
] as const;

export type TempPrefix = (typeof TEMP_PREFIXES)[number];

/** A new private (0700) directory in the system's temporary directory, named for this process. */
export function privateTempDir(prefix: TempPrefix): string {
  return mkdtempSync(join(tmpdir(), `${prefix}${process.pid}-`));
}

/** The process that made a temporary directory, from its name; null when the name is not one of ours. */
function ownerPid(name: string): number | null {
  for (const prefix of TEMP_PREFIXES) {
    if (!name.startsWith(prefix)) continue;
    const m = /^(\d+)-/.exec(name.slice(prefix.length));
    return m ? Number(m[1]) : null;
  }
  return null;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes our temporary directories that `which` selects by their maker's pid (and only those this uid owns:
 * another user's daemon keeps its own). Returns their names.
 */
function removeWhere(which: (pid: number) => boolean, dir = tmpdir()): string[] {
  const removed: string[] = [];
  const uid = process.getuid?.();
  for (const name of readdirSync(dir)) {
    const pid = ownerPid(name);
    if (pid === null || !which(pid)) continue;
    const path = join(dir, name);
    try {
      if (uid !== undefined && statSync(path).uid !== uid) continue;
      rmSync(path, { recursive: true, force: true });
      removed.push(name);
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
  return removed;
}

/** At start: the directories of drydock processes that are no longer running. */
export const removeStaleTempDirs = (dir?: string): string[] =>
  removeWhere((pid) => pid !== process.pid && !alive(pid), dir);

/** When stopping: this process's own directories. */
export const removeOwnTempDirs = (dir?: string): string[] => removeWhere((pid) => pid === process.pid, dir);
