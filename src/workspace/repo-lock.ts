import { randomBytes } from 'node:crypto';
import { link, open, rename, rm, stat, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

// The lock that drydock processes sharing a repository (replicas on one volume) take around the git changes
// they make to it: `worktree add` in one process while another is writing a new worktree's administrative
// files fails outright ("failed to read .git/worktrees/<name>/commondir"), and git's own lock files do not
// cover that. A file created with O_EXCL in the repository's common git directory: creation is atomic on a
// local file system and on NFS v3 and later (open(2), O_EXCL). Its holder touches it while it holds it, so a
// holder that died (SIGKILL, a lost host) leaves a file that goes stale and is taken over.

export const LOCK_FILE = 'drydock.lock';
/** How often a holder touches the file. */
const TOUCH_MS = 5_000;
/** A file untouched this long was left by a holder that died. */
export const STALE_MS = 30_000;
/** How long a waiter waits in all before it gives up (a holder's changes include a fetch of up to 120 s). */
const GIVE_UP_MS = 10 * 60_000;

export class RepoLockTimeout extends Error {}

/** Takes the lock of the git directory `dir`, waiting while another process holds it; the release. */
export function lockRepository(dir: string): Promise<() => Promise<void>> {
  return lockFile(join(dir, LOCK_FILE));
}

/**
 * Takes the lock file at `path` (the same protocol: O_EXCL, touched while held, a stale one taken over),
 * waiting while another process holds it; the release. `onWait` is called once when the first attempt finds
 * the lock held. For a lock that must exist before its repository does (the clone cache, repo-cache.ts).
 */
export async function lockFile(path: string, onWait?: () => void): Promise<() => Promise<void>> {
  const started = Date.now();
  let told = false;
  for (let attempt = 0; ; attempt++) {
    if (await create(path)) return held(path);
    if (await takeStale(path)) continue;
    if (!told) {
      told = true;
      onWait?.();
    }
    if (Date.now() - started > GIVE_UP_MS) {
      throw new RepoLockTimeout(
        `another drydock has held ${path} for over ${GIVE_UP_MS / 60_000} minutes; if no drydock is changing this repository, remove the file`,
      );
    }
    const wait = Math.min(25 * 2 ** attempt, 1_000) * (0.5 + Math.random() / 2);
    await new Promise((r) => setTimeout(r, wait));
  }
}

async function create(path: string): Promise<boolean> {
  try {
    const file = await open(path, 'wx');
    await file.writeFile(`${process.pid}@${hostname()} ${new Date().toISOString()}\n`);
    await file.close();
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/**
 * A stale file is moved aside under a name of its own, then removed: of several waiters that found it stale
 * only one moves it (rename is atomic), and none removes a lock another has just created in its place.
 */
async function takeStale(path: string): Promise<boolean> {
  const st = await stat(path).catch(() => null);
  if (!st) return true; // released meanwhile: try again at once
  if (Date.now() - st.mtimeMs < STALE_MS) return false;
  const aside = `${path}.stale-${randomBytes(6).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch {
    return true; // another waiter moved it first
  }
  const moved = await stat(aside).catch(() => null);
  if (moved && Date.now() - moved.mtimeMs < STALE_MS) {
    // What was moved is a live lock another waiter created after our look: it goes back (link(2) fails
    // rather than replace a file there), and this waiter waits on.
    await link(aside, path).catch(() => undefined);
    await rm(aside, { force: true });
    return false;
  }
  await rm(aside, { force: true });
  return true;
}

function held(path: string): () => Promise<void> {
  const timer = setInterval(() => {
    const now = new Date();
    void utimes(path, now, now).catch(() => undefined);
  }, TOUCH_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await rm(path, { force: true });
  };
}
