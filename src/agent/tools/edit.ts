import { type FileHandle, open, stat } from 'node:fs/promises';
import { z } from 'zod';
import { toolDefinition, type WorkspaceToolRun, workspaceTool } from './define.js';
import { filePathProperty } from './input.js';
import type { ExecLimits } from './limits.js';
import { formatBytes } from './text.js';
import { errorResult } from './types.js';
import { READ_FLAGS, type Workspace } from './workspace.js';
import {
  type ChangeResult,
  describeWriteError,
  quoted,
  replaceFile,
  resolveForChange,
  shownPath,
} from './write.js';

export const editInput = z.object({
  file_path: z.string().min(1),
  old_string: z.string(),
  new_string: z.string(),
  replace_all: z.boolean().optional(),
});
export type EditInput = z.infer<typeof editInput>;

export const editTool = toolDefinition({
  name: 'Edit',
  description: [
    'Replaces exact text in an existing file in the workspace.',
    '`old_string` must appear in the file exactly as given (whitespace and indentation included); Read the file first.',
    'If it appears more than once, include more surrounding lines to make it unique, or set `replace_all` to true to replace every occurrence.',
    'To create a file use Write. Binary files and anything under .git cannot be edited.',
  ],
  properties: {
    file_path: filePathProperty,
    old_string: { type: 'string', description: 'The text to replace, exactly as it appears in the file.' },
    new_string: {
      type: 'string',
      description: 'The text to put in its place (must differ from old_string).',
    },
    replace_all: {
      type: 'boolean',
      description: 'Replace every occurrence of old_string (default false: it must occur exactly once).',
    },
  },
  required: ['file_path', 'old_string', 'new_string'],
});

export const runEdit: WorkspaceToolRun<ExecLimits, ChangeResult> = workspaceTool('Edit', editInput, edit);

async function edit(ws: Workspace, input: EditInput, limits: ExecLimits): Promise<ChangeResult> {
  const { file_path, old_string, new_string } = input;
  const replaceAll = input.replace_all === true;

  if (old_string === '') {
    return errorResult(
      'Edit: old_string is empty; give the exact text to replace (to create a file use Write)',
    );
  }
  if (old_string === new_string) {
    return errorResult('Edit: old_string and new_string are identical; there is nothing to change');
  }

  const target = await resolveForChange('Edit', ws, file_path, true);
  if (!target.ok) return errorResult(target.error);
  const { abs, rel } = target;
  const name = quoted(rel);

  const loaded = await load(abs, rel, limits);
  if (!loaded.ok) return errorResult(`Edit: ${loaded.error}`);
  const { text, mode } = loaded;

  let oldText = old_string;
  let newText = new_string;
  let count = countOccurrences(text, oldText);
  if (count === 0 && text.includes('\r\n') && oldText.includes('\n') && !oldText.includes('\r')) {
    // The model saw the file through Read, which shows lines without their CR: match the file's line endings.
    oldText = oldText.replaceAll('\n', '\r\n');
    newText = newText.replaceAll('\r\n', '\n').replaceAll('\n', '\r\n');
    count = countOccurrences(text, oldText);
  }
  if (count === 0) {
    return errorResult(
      `Edit: old_string was not found in ${name}; Read the file and copy the text exactly, including whitespace and indentation`,
    );
  }
  if (count > 1 && !replaceAll) {
    return errorResult(
      `Edit: old_string occurs ${count} times in ${name}; include more surrounding context to make it unique, or set replace_all to true to replace every occurrence`,
    );
  }

  const first = text.indexOf(oldText);
  // split/join and slicing, never String#replace: `$&` and friends in new_string must stay literal.
  const updated = replaceAll
    ? text.split(oldText).join(newText)
    : text.slice(0, first) + newText + text.slice(first + oldText.length);
  const data = Buffer.from(updated, 'utf8');
  if (data.length > limits.maxWriteBytes) {
    return errorResult(
      `Edit: the edited file would be ${formatBytes(data.length)}, over the limit of ${formatBytes(limits.maxWriteBytes)} per file`,
    );
  }

  try {
    await replaceFile(abs, data, mode);
  } catch (err) {
    return errorResult(`Edit: ${describeWriteError(err, rel)}`);
  }
  const line = lineOf(text, first);
  const what = count === 1 ? '1 occurrence' : `${count} occurrences`;
  const where = count === 1 ? `at line ${line}` : `the first at line ${line}`;
  return {
    content: `Edited ${shownPath(rel)}: replaced ${what} (${where})`,
    isError: false,
    changedPath: rel,
  };
}

type Loaded = { ok: true; text: string; mode: number } | { ok: false; error: string };

/** Reads a regular, UTF-8, NUL-free file of at most maxWriteBytes. */
async function load(abs: string, rel: string, limits: ExecLimits): Promise<Loaded> {
  const name = quoted(rel);
  let handle: FileHandle | undefined;
  try {
    const st = await stat(abs);
    if (st.isDirectory()) return { ok: false, error: `${name} is a directory, not a file` };
    if (!st.isFile()) return { ok: false, error: `${name} is not a regular file` };
    handle = await open(abs, READ_FLAGS);
    const fst = await handle.stat();
    if (!fst.isFile()) return { ok: false, error: `${name} is not a regular file` };
    if (fst.size > limits.maxWriteBytes) {
      return {
        ok: false,
        error: `${name} is ${formatBytes(fst.size)}; Edit handles files up to ${formatBytes(limits.maxWriteBytes)}`,
      };
    }
    const buf = await readAtMost(handle, limits.maxWriteBytes + 1);
    if (buf.length > limits.maxWriteBytes) {
      return { ok: false, error: `${name} grew past ${formatBytes(limits.maxWriteBytes)} while being read` };
    }
    if (buf.includes(0))
      return { ok: false, error: `${name} is a binary file (it has a NUL byte); Edit changes text only` };
    let text: string;
    try {
      // ignoreBOM: keep a byte order mark as part of the text so that it is written back unchanged.
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(buf);
    } catch {
      return { ok: false, error: `${name} is not valid UTF-8 text; Edit changes UTF-8 text only` };
    }
    return { ok: true, text, mode: fst.mode & 0o777 };
  } catch (err) {
    return { ok: false, error: describeWriteError(err, rel) };
  } finally {
    await handle?.close();
  }
}

async function readAtMost(handle: FileHandle, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total < max) {
    const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, max - total));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, total);
    if (bytesRead === 0) break;
    chunks.push(chunk.subarray(0, bytesRead));
    total += bytesRead;
  }
  return Buffer.concat(chunks, total);
}

/** Non-overlapping occurrences, counted left to right as split() will replace them. */
function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) count++;
  return count;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}
