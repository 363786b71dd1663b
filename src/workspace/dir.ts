import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { DomainError } from '../domain/errors.js';

/**
 * A workspace directory named by a person: an absolute path to an existing directory. A relative one is
 * refused rather than resolved against the daemon's own working directory, which the caller cannot see
 * (the CLI resolves relative paths against the caller's directory before sending them).
 */
export async function workspaceDir(path: string): Promise<string> {
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
  return abs;
}
