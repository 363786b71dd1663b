import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, realpath, rename, stat, unlink } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { toolDefinition, type WorkspaceToolRun, workspaceTool } from './define.js';
import { describeFsError, errorCode } from './fs-errors.js';
import { filePathProperty } from './input.js';
import type { ExecLimits } from './limits.js';
import { formatBytes } from './text.js';
import { errorResult, type ToolResult } from './types.js';
import { PathError, type Workspace } from './workspace.js';

// Write and Edit change files in the workspace during the execute phase. Both go through the same rules:
// the path must resolve inside the workspace (symlinks included), nothing under `.git` may be touched, and the
// new content replaces the file atomically (a temp file beside it, then rename), so a symlink swapped in after
// the check is replaced rather than followed and a hard link to a file elsewhere is never written through.

export const writeInput = z.object({
  file_path: z.string().min(1),
  content: z.string(),
});
export type WriteInput = z.infer<typeof writeInput>;

export const writeTool = toolDefinition({
  name: 'Write',
  description: [
    'Writes a file in the workspace, creating it (and any missing parent directories) or replacing its whole content.',
    'To change part of an existing file prefer Edit, which sends only the changed text.',
    'Paths outside the workspace and anything under .git are refused.',
  ],
  properties: {
    file_path: filePathProperty,
    content: { type: 'string', description: 'The complete new content of the file.' },
  },
  required: ['file_path', 'content'],
});

/** A successful Write or Edit also says which file changed (workspace-relative), for the executor's records. */
export type ChangeResult = ToolResult & { changedPath?: string };

/** Mode bits kept when a file is replaced: permissions only, never setuid, setgid or sticky. */
const KEPT_MODE_BITS = 0o777;

export const runWrite: WorkspaceToolRun<ExecLimits, ChangeResult> = workspaceTool('Write', writeInput, write);

async function write(ws: Workspace, input: WriteInput, limits: ExecLimits): Promise<ChangeResult> {
  const { file_path, content } = input;

  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > limits.maxWriteBytes) {
    return errorResult(
      `Write: content is ${formatBytes(bytes)}, over the limit of ${formatBytes(limits.maxWriteBytes)} per file`,
    );
  }

  const target = await resolveForChange('Write', ws, file_path, false);
  if (!target.ok) return errorResult(target.error);
  const { abs, rel } = target;

  let existing: Stats | undefined;
  try {
    existing = await lstat(abs);
  } catch (err) {
    if (errorCode(err) !== 'ENOENT') return errorResult(`Write: ${describeWriteError(err, rel)}`);
  }
  if (existing?.isDirectory()) return errorResult(`Write: ${quoted(rel)} is a directory, not a file`);
  if (existing !== undefined && !existing.isFile()) {
    return errorResult(`Write: ${quoted(rel)} is not a regular file`);
  }

  if (existing === undefined) {
    const dir = await makeParentDirs(ws, abs, rel);
    if (!dir.ok) return errorResult(`Write: ${dir.error}`);
  }

  try {
    await replaceFile(
      abs,
      Buffer.from(content, 'utf8'),
      existing ? existing.mode & KEPT_MODE_BITS : undefined,
    );
  } catch (err) {
    return errorResult(`Write: ${describeWriteError(err, rel)}`);
  }
  const how = existing === undefined ? 'created' : 'overwrote';
  return { content: `Wrote ${bytes} bytes to ${shownPath(rel)} (${how})`, isError: false, changedPath: rel };
}

// --- shared with Edit ---------------------------------------------------------------------------------------

export type Resolved = { ok: true; abs: string; rel: string } | { ok: false; error: string };

/**
 * Resolves a path the model wants to change: inside the workspace (`Workspace.resolve` follows symlinks and
 * refuses any that lead out), and neither the path as given nor the file it really is may be under `.git`.
 */
export async function resolveForChange(
  tool: string,
  ws: Workspace,
  filePath: string,
  mustExist: boolean,
): Promise<Resolved> {
  // The path as written: `.git/hooks/x`, `sub/../.git/config`, `/abs/root/.git/HEAD`, and also a `.git` *file*
  // (a worktree's link to its repository), all refused before touching the disk.
  const lexical = lexicalRelative(ws, filePath);
  if (touchesGit(lexical)) return { ok: false, error: gitRefusal(tool, lexical) };
  let abs: string;
  try {
    abs = await ws.resolve(filePath, { mustExist });
  } catch (err) {
    if (err instanceof PathError) return { ok: false, error: `${tool}: ${err.message}` };
    throw err;
  }
  const rel = ws.relative(abs);
  // The real path: a symlink `hooks -> .git/hooks` inside the workspace leads into .git too.
  if (touchesGit(rel)) return { ok: false, error: gitRefusal(tool, rel) };
  if (rel === '.') return { ok: false, error: `${tool}: the workspace root is a directory, not a file` };
  // A git directory by another name: a bare clone in the tree, or a workspace that is (or lies in) one.
  if (await inGitDirectory(abs)) {
    return {
      ok: false,
      error: `${tool}: ${quoted(rel)} is inside a git directory; the repository's own files cannot be changed with ${tool} (use git commands through Bash if the plan requires it)`,
    };
  }
  return { ok: true, abs, rel };
}

/**
 * Whether a directory above the real path `abs` is a git directory, told by its shape as git itself tells it
 * (setup.c, is_git_directory): a HEAD file, and objects/ and refs/ or a commondir file (a worktree's
 * administrative directory). Every ancestor counts, above the workspace root too: a root inside a git
 * directory changes the repository's config and hooks with every write.
 */
async function inGitDirectory(abs: string): Promise<boolean> {
  const isDir = async (p: string) => (await stat(p).catch(() => null))?.isDirectory() === true;
  const isFile = async (p: string) => (await stat(p).catch(() => null))?.isFile() === true;
  for (let dir = dirname(abs); ; dir = dirname(dir)) {
    if (await isFile(join(dir, 'HEAD'))) {
      const store = (await isDir(join(dir, 'objects'))) && (await isDir(join(dir, 'refs')));
      if (store || (await isFile(join(dir, 'commondir')))) return true;
    }
    if (dirname(dir) === dir) return false;
  }
}

/**
 * The path as the model wrote it, relative to the root where that can be told without the file system (an
 * absolute path's directories above the workspace are not the model's to name, so a root that itself lies
 * under some `.git` directory does not count). Otherwise the path unchanged: the real path is checked as well.
 */
function lexicalRelative(ws: Workspace, p: string): string {
  if (!isAbsolute(p)) return p;
  try {
    return ws.relative(resolve(p));
  } catch {
    return '';
  }
}

/**
 * True when any segment of `p` is `.git` (in any letter case, as a case-insensitive file system would see it).
 * Stricter than "the first segment": a nested repository's hooks and config are off limits too.
 */
export function touchesGit(p: string): boolean {
  return p.split(/[/\\]/).some((segment) => segment.toLowerCase() === '.git');
}

function gitRefusal(tool: string, p: string): string {
  return `${tool}: ${quoted(p)} is inside .git; the repository's own files cannot be changed with ${tool} (use git commands through Bash if the plan requires it)`;
}

/**
 * Creates the missing directories above `abs` and checks that, once created, the parent really is the directory
 * `Workspace.resolve` computed (no symlink swapped in along the way).
 */
async function makeParentDirs(
  ws: Workspace,
  abs: string,
  rel: string,
): Promise<{ ok: true } | { ok: false; error: string }> {
  const parent = dirname(abs);
  try {
    await mkdir(parent, { recursive: true });
  } catch (err) {
    const code = errorCode(err);
    if (code === 'EEXIST' || code === 'ENOTDIR') {
      return { ok: false, error: `cannot create ${quoted(rel)}: a parent of it is a file, not a directory` };
    }
    return { ok: false, error: describeWriteError(err, rel) };
  }
  let real: string;
  try {
    real = await realpath(parent);
  } catch (err) {
    return { ok: false, error: describeWriteError(err, rel) };
  }
  if (real !== parent) {
    // The only way here is a symlink created between the check and the mkdir. Check where it leads.
    try {
      ws.relative(real);
    } catch {
      return {
        ok: false,
        error: `path ${quoted(rel)} is outside the workspace (it goes through a symbolic link)`,
      };
    }
    return { ok: false, error: `the parent directory of ${quoted(rel)} changed while writing; try again` };
  }
  return { ok: true };
}

/**
 * Writes `data` to a new temp file in the target's directory (never following a symlink there) and renames it
 * over `abs`. `mode` is the mode to keep when replacing an existing file; new files get 0666 minus the umask.
 */
export async function replaceFile(abs: string, data: Buffer, mode?: number): Promise<void> {
  const tmp = join(dirname(abs), `.drydock-write-${randomBytes(6).toString('hex')}.tmp`);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);
  const handle = await open(tmp, flags, 0o666);
  let renamed = false;
  try {
    try {
      await handle.writeFile(data);
      if (mode !== undefined) await handle.chmod(mode);
    } finally {
      await handle.close();
    }
    await rename(tmp, abs);
    renamed = true;
  } finally {
    if (!renamed) await unlink(tmp).catch(() => undefined);
  }
}

/** A sentence about a failed write naming only the workspace-relative path. */
export function describeWriteError(err: unknown, rel: string): string {
  switch (errorCode(err)) {
    case 'EROFS':
      return `cannot write ${quoted(rel)}: the file system is read-only`;
    case 'ENOSPC':
    case 'EDQUOT':
      return `cannot write ${quoted(rel)}: no space left on the device`;
    case 'EFBIG':
      return `cannot write ${quoted(rel)}: the file is too large`;
    case 'ENOENT':
    case 'ENOTDIR':
    case 'EISDIR':
    case 'EACCES':
    case 'EPERM':
    case 'ELOOP':
    case 'ENAMETOOLONG':
    case 'EMFILE':
    case 'ENFILE':
      return describeFsError(err, rel);
    default:
      return `cannot write ${quoted(rel)} (${errorCode(err) ?? 'unknown error'})`;
  }
}

export function quoted(p: string): string {
  return JSON.stringify(p.length > 200 ? `${p.slice(0, 200)}…` : p);
}

/** A path shown bare when it is plain text, quoted when it holds control characters or surrounding spaces. */
export function shownPath(rel: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this looks for
  return /[\u0000-\u001f\u007f]/.test(rel) || rel.trim() !== rel ? quoted(rel) : rel;
}
