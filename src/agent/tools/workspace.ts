import { constants, realpathSync, statSync } from 'node:fs';
import { lstat, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { type HiddenPaths, isWithin, type RealHidden } from '../../workspace/hidden.js';
import { describeFsError, errorCode } from './fs-errors.js';

/**
 * Flags for opening a file of the workspace to read it. O_NOFOLLOW: the path is already a real path, so a
 * symlink there now means it was swapped in since. O_NONBLOCK: never hang on a FIFO that appeared between the
 * stat and the open.
 */
export const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** A path the model supplied that the tools refuse. The message is safe to show the model. */
export class PathError extends Error {
  override name = 'PathError';
}

/** The most characters of a model-supplied path echoed back in an error message. */
const SHOWN_PATH_CHARS = 200;

function shown(p: string): string {
  const cut = p.length > SHOWN_PATH_CHARS ? `${p.slice(0, SHOWN_PATH_CHARS)}…` : p;
  return JSON.stringify(cut);
}

/**
 * The directory an agent run may look at. Every path from the model goes through `resolve`, which returns the
 * real (symlink-free) path of something inside the workspace and outside drydock's hidden paths, or throws a
 * PathError; the walks of Glob and Grep skip what `isHidden` names.
 */
export class Workspace {
  /** The real path of the workspace directory. Never shown to the model. */
  readonly root: string;
  /** The root as given (absolute), so absolute paths the model copied from it are accepted too. */
  readonly #givenRoot: string;
  /**
   * Directories an absolute path may name for the root (as given and by real path): a git workspace whose
   * plan run reads a checkout of its commit (agent/planning-base.ts) takes the workspace's own absolute paths
   * for the checkout's. Only a path's spelling is translated; what it resolves to is held to the root.
   */
  readonly #aliases: readonly string[];
  /** The daemon's hidden paths that lie below the root, by real path (see src/workspace/hidden.ts). */
  readonly #hidden: readonly RealHidden[];

  /**
   * Throws if `root` does not exist or is not a directory. Prefer `Workspace.open` in async code. `hidden`
   * is the daemon's one list (PhaseDeps.hidden): what lies below the root of it is refused by every tool.
   */
  constructor(root: string, hidden?: HiddenPaths, alias?: string) {
    this.#givenRoot = resolve(root);
    this.root = realpathSync.native(this.#givenRoot);
    if (!statSync(this.root).isDirectory()) throw new Error(`Workspace: ${root} is not a directory`);
    this.#hidden = hidden?.below(this.root) ?? [];
    this.#aliases = alias === undefined ? [] : aliasesOf(alias);
  }

  static async open(root: string, hidden?: HiddenPaths, alias?: string): Promise<Workspace> {
    // Checked asynchronously first, so the constructor's synchronous calls find the answers cached.
    if (!(await stat(await realpath(resolve(root)))).isDirectory()) {
      throw new Error(`Workspace: ${root} is not a directory`);
    }
    return new Workspace(root, hidden, alias);
  }

  /** Whether the real path `abs` is one of drydock's hidden paths or lies below one. */
  isHidden(abs: string): boolean {
    return this.#hidden.some((h) => isWithin(h.real, abs));
  }

  /** The hidden paths below the root, workspace-relative with `/` separators (what Grep tells ripgrep to skip). */
  hiddenBelow(): string[] {
    return this.#hidden.map((h) => this.relative(h.real));
  }

  /** Throws the refusal for a real path that `isHidden`; `name` is the path as the model wrote it. */
  #refuseHidden(name: string, real: string): void {
    const h = this.#hidden.find((entry) => isWithin(entry.real, real));
    if (h === undefined) return;
    throw new PathError(
      `path ${shown(name)} is ${h.real === real ? '' : 'inside '}${h.what}, which the model must never read or change`,
    );
  }

  /**
   * Resolves a model-supplied path (relative to the root, or absolute) to a real path inside the workspace.
   * A lexical check comes first (`..` and absolute paths outside), then the real path of the target, or of
   * its nearest existing ancestor when it does not exist yet, must be the root or below it, so a symlink
   * anywhere along the way cannot lead out. `~` has no special meaning: `~/x` is a directory named `~`.
   */
  async resolve(p: string, opts: { mustExist?: boolean } = {}): Promise<string> {
    if (typeof p !== 'string' || p.trim() === '') throw new PathError('path is empty');
    if (p.includes('\0')) throw new PathError(`path ${shown(p.replaceAll('\0', '\\0'))} contains a NUL byte`);

    const abs = this.#lexical(p);
    // From here on messages name an absolute path by its workspace-relative form: never show the root.
    const name = isAbsolute(p) ? this.relative(abs) : p;
    let real: string;
    try {
      real = await realpath(abs);
    } catch (err) {
      const code = errorCode(err);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new PathError(describeFsError(err, name));
      const missing = await this.#resolveMissing(name, abs);
      // Refused as hidden before "does not exist": a model should not learn which hidden files exist.
      this.#refuseHidden(name, missing);
      if (opts.mustExist === true) throw new PathError(`path ${shown(name)} does not exist`);
      return missing;
    }
    if (!isWithin(this.root, real)) {
      throw new PathError(`path ${shown(name)} is outside the workspace (it goes through a symbolic link)`);
    }
    this.#refuseHidden(name, real);
    return real;
  }

  /** The workspace-relative form of a path `resolve` returned, with `/` separators; the root is `.`. */
  relative(abs: string): string {
    const resolved = resolve(abs);
    if (!isWithin(this.root, resolved)) throw new PathError('path is outside the workspace');
    const rel = relative(this.root, resolved);
    if (rel === '') return '.';
    return sep === '/' ? rel : rel.split(sep).join('/');
  }

  /** The absolute, normalised form of `p` under the real root, or a PathError if it lies outside lexically. */
  #lexical(p: string): string {
    if (!isAbsolute(p)) {
      const abs = resolve(this.root, p);
      if (!isWithin(this.root, abs)) throw new PathError(`path ${shown(p)} is outside the workspace`);
      return abs;
    }
    const abs = resolve(p);
    if (isWithin(this.root, abs)) return abs;
    // An absolute path under the root as configured (say /tmp/ws when the real root is /private/tmp/ws).
    if (isWithin(this.#givenRoot, abs)) return join(this.root, relative(this.#givenRoot, abs));
    const alias = this.#aliases.find((a) => isWithin(a, abs));
    if (alias !== undefined) return join(this.root, relative(alias, abs));
    throw new PathError(`path ${shown(p)} is outside the workspace`);
  }

  /** Where a path that does not exist would be: its nearest existing ancestor's real path and the rest. */
  async #resolveMissing(p: string, abs: string): Promise<string> {
    // Walk up to the nearest ancestor that exists (as a link or otherwise). If that entry cannot be resolved
    // it is a dangling or looping symlink: refuse it rather than guess where a later write would land.
    const rest: string[] = [];
    let current = abs;
    for (;;) {
      try {
        await lstat(current);
        break;
      } catch (err) {
        const code = errorCode(err);
        if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new PathError(describeFsError(err, p));
        const parent = dirname(current);
        // The root itself exists, so this only triggers if it vanished under us.
        if (parent === current) throw new PathError(`path ${shown(p)} does not exist`);
        rest.unshift(basename(current));
        current = parent;
      }
    }
    let realAncestor: string;
    try {
      realAncestor = await realpath(current);
    } catch (err) {
      const code = errorCode(err);
      if (code === 'ENOENT' || code === 'ELOOP') {
        throw new PathError(`path ${shown(p)} goes through a broken symbolic link`);
      }
      throw new PathError(describeFsError(err, p));
    }
    if (!isWithin(this.root, realAncestor)) {
      throw new PathError(`path ${shown(p)} is outside the workspace (it goes through a symbolic link)`);
    }
    return join(realAncestor, ...rest);
  }
}

/** `dir` as given (absolute) and by its real path, when it has one. */
function aliasesOf(dir: string): string[] {
  const given = resolve(dir);
  try {
    const real = realpathSync.native(given);
    return real === given ? [given] : [given, real];
  } catch {
    return [given];
  }
}
