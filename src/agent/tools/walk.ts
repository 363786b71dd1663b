import type { Dirent } from 'node:fs';
import { opendir } from 'node:fs/promises';
import { join } from 'node:path';

/** Directories no search descends into: version-control internals and installed dependencies. */
export const SKIPPED_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules']);

export interface WalkedFile {
  abs: string;
  /** Relative to the directory the walk started in, `/`-separated. */
  rel: string;
}

export interface WalkOptions {
  /** Stop after yielding this many files; `truncated` then tells whether any were left. */
  maxFiles: number;
  /** Most path segments of a yielded `rel` (1 = only files directly in the start directory). */
  maxDepth?: number;
  /** Prefix for `rel`, for a walk that starts below the directory paths should be relative to. */
  relPrefix?: string;
  /**
   * drydock's hidden paths (`Workspace.isHidden`): neither yielded nor entered, as if absent. The walk's
   * paths are real paths (it starts at one and follows no link), so asking by path is asking by real path.
   */
  hidden?: (abs: string) => boolean;
}

/**
 * Walks regular files below a directory in name order, depth first. Symbolic links are never followed, to
 * files or directories alike, so a walk cannot leave the tree it started in. Hidden paths are left out
 * silently, and unreadable directories are skipped and counted.
 */
export class FileWalk {
  scanned = 0;
  truncated = false;
  unreadableDirs = 0;

  constructor(
    private readonly start: string,
    private readonly opts: WalkOptions,
  ) {}

  async *files(): AsyncGenerator<WalkedFile> {
    const maxDepth = this.opts.maxDepth ?? Number.POSITIVE_INFINITY;
    const hidden = this.opts.hidden ?? (() => false);
    if (maxDepth < 1 || hidden(this.start)) return;
    const prefix = this.opts.relPrefix ?? '';
    const stack: { abs: string; rel: string; depth: number }[] = [{ abs: this.start, rel: prefix, depth: 0 }];
    while (stack.length > 0) {
      const dir = stack.pop()!;
      const entries = await this.#list(dir.abs);
      if (entries === undefined) continue;
      const subdirs: { abs: string; rel: string; depth: number }[] = [];
      for (const entry of entries) {
        const rel = dir.rel === '' ? entry.name : `${dir.rel}/${entry.name}`;
        if (hidden(join(dir.abs, entry.name))) continue;
        if (entry.isFile()) {
          if (this.scanned >= this.opts.maxFiles) {
            this.truncated = true;
            return;
          }
          this.scanned++;
          yield { abs: join(dir.abs, entry.name), rel };
        } else if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name) && dir.depth + 1 < maxDepth) {
          subdirs.push({ abs: join(dir.abs, entry.name), rel, depth: dir.depth + 1 });
        }
        // Symbolic links, sockets, FIFOs and devices are left alone.
      }
      for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i]!);
    }
  }

  /** The entries of one directory sorted by name; at most `maxFiles` + 1 of them, to bound memory. */
  async #list(abs: string): Promise<Dirent[] | undefined> {
    const entries: Dirent[] = [];
    try {
      const dir = await opendir(abs);
      for await (const entry of dir) {
        entries.push(entry);
        if (entries.length > this.opts.maxFiles) {
          this.truncated = true;
          break; // leaving the loop closes the handle
        }
      }
    } catch {
      this.unreadableDirs++;
      return undefined;
    }
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}
