import { errorResult, type ToolResult } from './types.js';

// Node's fs errors carry absolute paths in their messages ("ENOENT: no such file or directory, open
// '/srv/ws/x'"). Tool results must not reveal the workspace root, so they describe errors by code only.

export function errorCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = (err as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/** A sentence about `err` that names `shown` (a workspace-relative or model-supplied path) and nothing else. */
export function describeFsError(err: unknown, shown: string): string {
  const what = JSON.stringify(shown.length > 200 ? `${shown.slice(0, 200)}…` : shown);
  switch (errorCode(err)) {
    case 'ENOENT':
      return `${what} does not exist`;
    case 'ENOTDIR':
      return `${what} does not exist (a parent of it is not a directory)`;
    case 'EISDIR':
      return `${what} is a directory`;
    case 'EACCES':
    case 'EPERM':
      return `permission denied for ${what}`;
    case 'ELOOP':
      return `${what} goes through too many symbolic links`;
    case 'ENAMETOOLONG':
      return `${what} is too long a path`;
    case 'EMFILE':
    case 'ENFILE':
      return `too many open files while reading ${what}; try again`;
    default:
      return `cannot read ${what} (${errorCode(err) ?? 'unknown error'})`;
  }
}

/**
 * The error result text for an error a tool did not expect. Tools never throw into the agent loop (one bad
 * call must not fail the run), and the message is left out because it may hold host paths.
 */
export function unexpectedError(tool: string, err: unknown): string {
  const code = errorCode(err);
  const kind = code ?? (err instanceof Error ? err.name : typeof err);
  return `${tool}: failed unexpectedly (${kind}); try again or use another tool`;
}

/** A tool's work, with anything it did not foresee turned into an error result instead of a throw. */
export async function guard<R extends ToolResult>(
  tool: string,
  work: () => Promise<R>,
): Promise<R | ToolResult> {
  try {
    return await work();
  } catch (err) {
    return errorResult(unexpectedError(tool, err));
  }
}
