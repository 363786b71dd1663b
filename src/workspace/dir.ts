import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { DomainError } from '../domain/errors.js';
import { type HiddenPaths, overlapOf } from './hidden.js';

/**
 * A workspace directory named by a person: an absolute path to an existing directory that neither holds nor
 * lies in one of drydock's hidden paths (hidden.ts), judged by its real path. A relative one is refused rather
 * than resolved against the daemon's own working directory, which the caller cannot see (the CLI resolves
 * relative paths against the caller's directory before sending them).
 */
export async function workspaceDir(path: string, hidden: HiddenPaths): Promise<string> {
  if (!isAbsolute(path)) {
    throw new DomainError(
      'invalid_workspace',
      `workspace "${path}" is not an absolute path: give the directory's full path (the daemon does not resolve paths against its own directory)`,
    );
  }
  const abs = resolve(path);
  if (!(await stat(abs).catch(() => null))?.isDirectory()) {
    throw new DomainError('invalid_workspace', `workspace ${abs} is not an existing directory`);
  }
  const why = exposure(hidden, abs, await realpath(abs));
  if (why !== null) throw new DomainError('invalid_workspace', why);
  return abs;
}

/**
 * Why the model of a session on `abs` (real path `real`) would see what drydock hides, with what to do; null
 * when it would not. The same words serve the start check (preflight.ts), which names whose workspace it is.
 */
export function exposure(hidden: HiddenPaths, abs: string, real: string): string | null {
  const named = real === abs ? abs : `${abs} (really ${real})`;
  if (real === '/') {
    return `workspace ${named} is the whole file system: it holds drydock's own files and every other workspace; name the repository's own directory`;
  }
  const overlap = overlapOf(hidden, real);
  if (overlap === null) return null;
  const { hidden: h, holds } = overlap;
  if (holds) {
    const fix = h.fix ? `${h.fix('it')}, or ` : '';
    return `workspace ${named} holds ${h.what} ${h.path}, which the model must never read or change: ${fix}name a directory that does not hold it`;
  }
  return `workspace ${named} lies inside ${h.what} ${h.path}, which the model must never read or change: name a directory outside it`;
}
