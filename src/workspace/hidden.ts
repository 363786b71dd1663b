import { realpathSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import type { Config } from '../config/schema.js';

// INVARIANT: nothing the model drives sees drydock's own files. Its data directory (the database, other plans'
// worktrees and checkouts), its work directory, its configuration file (API keys, webhook secrets) and the
// host's process files (/proc: the daemon's environment holds its keys) are visible to no command and to no
// file tool, whatever workspace a session names. One list, built here by `hiddenPaths`, is what the sandbox
// covers (services.ts hands `paths` to `new Sandbox({hidden})`) and what every file tool refuses
// (`Workspace`, its walks); a workspace that would hold one of them is refused where it is named (a session,
// a trigger: `workspace/dir.ts`) and at start (`preflight.ts`). A path is judged by its real path, so a
// symbolic link is no way around the list.

/** One path nothing the model drives may see. */
export interface HiddenPath {
  /** Absolute, as configured. */
  readonly path: string;
  /** What it is, in start-up errors: "data directory". */
  readonly name: string;
  /** What it is, in refusals the model or an API client reads: "drydock's data directory". */
  readonly what: string;
  /** What an operator does so that the directory `where` no longer holds it; null when only naming another does. */
  readonly fix: ((where: string) => string) | null;
}

/** A hidden path with its real path, resolved when asked (see `HiddenPaths.real`). */
export interface RealHidden extends HiddenPath {
  readonly real: string;
}

/** `p` is `parent` or lies below it (both absolute and normalised). */
export function isWithin(parent: string, p: string): boolean {
  return p === parent || p.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

/**
 * The real path of `p`; for a path that does not exist (yet), the real path of its nearest existing ancestor
 * with the rest appended, so that a directory made later is judged where it will be.
 */
export function realPathOf(p: string): string {
  const rest: string[] = [];
  let at = resolve(p);
  for (;;) {
    try {
      return join(realpathSync.native(at), ...rest);
    } catch {
      const parent = dirname(at);
      if (parent === at) return resolve(p);
      rest.unshift(basename(at));
      at = parent;
    }
  }
}

/** The one list of hidden paths of a daemon; see the invariant above. */
export class HiddenPaths {
  readonly entries: readonly HiddenPath[];
  /** The paths alone, in order: what the sandbox is given. The same frozen array for the daemon's life. */
  readonly paths: readonly string[];

  constructor(entries: readonly HiddenPath[]) {
    this.entries = Object.freeze(entries.map((e) => Object.freeze({ ...e, path: resolve(e.path) })));
    this.paths = Object.freeze(this.entries.map((e) => e.path));
  }

  /**
   * Each entry by its real path now. Resolved on every call, not once: the data and work directories may be
   * made after the list (preflight makes them), and a symbolic link may change where one lies.
   */
  real(): RealHidden[] {
    return this.entries.map((e) => ({ ...e, real: realPathOf(e.path) }));
  }

  /**
   * This list, and again each entry that lies inside the directory `from`, at the same place inside `to`: for
   * a checkout `to` of the repository `from` (a plan run's, agent/planning-base.ts), whose copies of hidden
   * files (a configuration file committed there by a workspace from before the check) stay hidden.
   */
  alsoIn(from: string, to: string): HiddenPaths {
    const realFrom = realPathOf(from);
    const copies = this.real().flatMap((h) =>
      h.real !== realFrom && isWithin(realFrom, h.real)
        ? [{ path: join(to, relative(realFrom, h.real)), name: h.name, what: h.what, fix: h.fix }]
        : [],
    );
    return copies.length === 0 ? this : new HiddenPaths([...this.entries, ...copies]);
  }

  /**
   * The entries strictly below `root` (a real path): what a file tool working in `root` refuses. One that
   * holds the root itself hides nothing of it, as in the sandbox, which mounts a workspace again inside a
   * hidden directory (an execution's worktree lives in the data directory).
   */
  below(root: string): RealHidden[] {
    return this.real().filter((h) => h.real !== root && isWithin(root, h.real));
  }
}

/** The process files of the host: the daemon's environment, memory and open files can be read there. */
const PROC = '/proc';

/**
 * The hidden paths of a daemon on `config`, reading `configFile` (if any). Built once by the composition
 * root (services.ts); everything else is handed that object.
 */
export function hiddenPaths(config: Pick<Config, 'data_dir' | 'work_dir'>, configFile?: string): HiddenPaths {
  const entries: HiddenPath[] = [
    {
      path: config.data_dir,
      name: 'data directory',
      what: "drydock's data directory",
      fix: (where) => `move data_dir (DRYDOCK_DATA_DIR, --data-dir) out of ${where}, with its contents`,
    },
  ];
  if (config.work_dir !== null) {
    entries.push({
      path: config.work_dir,
      name: 'work directory',
      what: "drydock's work directory",
      fix: (where) => `move work_dir (DRYDOCK_WORK_DIR) out of ${where}, with its contents`,
    });
  }
  if (configFile !== undefined) {
    entries.push({
      path: configFile,
      name: 'configuration file',
      what: "drydock's configuration file",
      fix: (where) => `move the configuration file (--config, DRYDOCK_CONFIG) out of ${where}`,
    });
  }
  entries.push({ path: PROC, name: 'process files', what: "the host's process files", fix: null });
  return new HiddenPaths(entries);
}

/** How a workspace and a hidden path overlap. */
export interface Overlap {
  hidden: RealHidden;
  /** true: the workspace holds the hidden path (or is it); false: the workspace lies inside it. */
  holds: boolean;
}

/** Where the workspace `dir` (a real path) and a hidden path overlap, or null when they do not. */
export function overlapOf(hidden: HiddenPaths, dir: string): Overlap | null {
  for (const h of hidden.real()) {
    if (isWithin(dir, h.real)) return { hidden: h, holds: true };
    if (isWithin(h.real, dir)) return { hidden: h, holds: false };
  }
  return null;
}
