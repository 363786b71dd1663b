import { type FileHandle, open, stat } from 'node:fs/promises';
import { z } from 'zod';
import { toolDefinition, workspaceTool } from './define.js';
import { describeFsError } from './fs-errors.js';
import { filePathProperty } from './input.js';
import type { ToolLimits } from './limits.js';
import { BINARY_SNIFF_BYTES, cutLine, formatBytes, looksBinary } from './text.js';
import { errorResult, type ToolResult } from './types.js';
import { PathError, READ_FLAGS, type Workspace } from './workspace.js';

export const readInput = z.object({
  file_path: z.string().min(1),
  offset: z.number().int().min(0).optional(),
  limit: z.number().int().min(1).optional(),
  /** Claude Code's PDF page range ("1-5"); accepted so that the call is answered, not refused (see read). */
  pages: z.string().max(100).optional(),
});
export type ReadInput = z.infer<typeof readInput>;

export const readTool = toolDefinition({
  name: 'Read',
  description: [
    'Reads a text file in the workspace and returns its lines numbered like `cat -n` (line number, a tab, the line).',
    'By default it returns up to 2000 lines from the start; for long files pass `offset` and `limit` to read a part.',
    'Very long lines are cut. Directories, binary files and PDFs cannot be read: use Glob to list files.',
  ],
  properties: {
    file_path: filePathProperty,
    offset: { type: 'number', description: 'Line number to start reading at (1 = the first line).' },
    limit: { type: 'number', description: 'How many lines to read.' },
    pages: {
      type: 'string',
      description:
        'Page range of a PDF, e.g. "1-5". PDFs cannot be read in this workspace; for part of a text file use offset and limit instead.',
    },
  },
  required: ['file_path'],
});

/** Bytes read from the file per call; only a few chunks are ever in memory. */
const CHUNK_BYTES = 64 * 1024;
/** Characters set aside for the note that ends a cut result. */
const NOTE_RESERVE = 400;
const NEWLINE = 0x0a;
const PDF_MAGIC = Buffer.from('%PDF-');

interface Shown {
  no: number;
  text: string;
}

export const runRead = workspaceTool('Read', readInput, read);

async function read(ws: Workspace, input: ReadInput, limits: ToolLimits): Promise<ToolResult> {
  const { file_path } = input;

  let abs: string;
  try {
    abs = await ws.resolve(file_path, { mustExist: true });
  } catch (err) {
    if (err instanceof PathError) return errorResult(`Read: ${err.message}`);
    throw err;
  }
  const rel = ws.relative(abs);
  const name = JSON.stringify(rel);

  let handle: FileHandle | undefined;
  try {
    const st = await stat(abs);
    if (st.isDirectory())
      return errorResult(`Read: ${name} is a directory, not a file; use Glob to list its files`);
    if (!st.isFile()) return errorResult(`Read: ${name} is not a regular file`);
    handle = await open(abs, READ_FLAGS);
    const fst = await handle.stat();
    if (!fst.isFile()) return errorResult(`Read: ${name} is not a regular file`);
    if (/\.pdf$/i.test(rel)) return pdfRefused(name, input);
    return await readLines(handle, fst.size, name, input, limits);
  } catch (err) {
    return errorResult(`Read: ${describeFsError(err, rel)}`);
  } finally {
    await handle?.close();
  }
}

/** `pages` as given, without surrounding blanks; an empty string counts as not given. */
const pagesOf = (input: ReadInput): string => input.pages?.trim() ?? '';

// Claude Code reads PDFs page by page (`pages`); drydock shows text only. Both answers say what to do
// instead, so that a model used to `pages` is not left guessing.
function pdfRefused(name: string, input: ReadInput): ToolResult {
  const also = pagesOf(input) === '' ? '' : ', so `pages` cannot be used either';
  return errorResult(
    `Read: ${name} is a PDF file; PDFs cannot be read in this workspace (Read shows text files only)${also}`,
  );
}

function pagesRefused(name: string): ToolResult {
  return errorResult(
    `Read: pages applies to PDF files only; ${name} is not a PDF: use offset and limit to read part of a text file`,
  );
}

/**
 * Streams the file chunk by chunk: lines before `offset` are only counted, and reading stops as soon as the
 * requested lines, `maxReadBytes` from the first requested line on, or the output budget is reached. A line
 * keeps at most enough bytes to show `maxLineChars` characters, so memory stays bounded whatever the file.
 */
async function readLines(
  handle: FileHandle,
  size: number,
  name: string,
  input: ReadInput,
  limits: ToolLimits,
): Promise<ToolResult> {
  if (size === 0)
    return pagesOf(input) === '' ? { content: `(${name} is empty)`, isError: false } : pagesRefused(name);

  const startLine = Math.max(1, input.offset ?? 1);
  const scan = new LineScan(limits, startLine, input.limit ?? limits.defaultReadLines);
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let position = 0; // file offset of the next chunk
  let lastByte = NEWLINE;
  while (position < size) {
    const { bytesRead } = await handle.read(chunk, 0, Math.min(CHUNK_BYTES, size - position), position);
    if (bytesRead === 0) break; // the file shrank
    if (position === 0) {
      const refused = firstChunkRefusal(chunk.subarray(0, bytesRead), name, input);
      if (refused) return refused;
    }
    position += bytesRead;
    lastByte = chunk[bytesRead - 1]!;
    if (scan.scanChunk(chunk, bytesRead, position < size)) break;
  }
  scan.finishLastLine();

  const { shown, stop } = scan;
  if (shown.length === 0 && stop === undefined) {
    const lines = lastByte === NEWLINE ? scan.lineNo - 1 : scan.lineNo;
    return {
      content: `(${name} has ${lines} line${lines === 1 ? '' : 's'}; offset ${startLine} is past the end)`,
      isError: false,
    };
  }
  const body = shown.map((s) => s.text).join('\n');
  if (stop === undefined) return { content: body, isError: false };
  const atLeast = linesAtLeast(stop, chunk, position < size);
  const note = truncationNote(scan, stop, atLeast, size, limits);
  return { content: `${body}\n\n${note}`, isError: false, truncated: true };
}

/** Why the first chunk shows the file cannot be read as text: a PDF, `pages` given, or a binary file. */
function firstChunkRefusal(head: Buffer, name: string, input: ReadInput): ToolResult | null {
  if (head.length >= PDF_MAGIC.length && head.subarray(0, PDF_MAGIC.length).equals(PDF_MAGIC)) {
    return pdfRefused(name, input);
  }
  if (pagesOf(input) !== '') return pagesRefused(name);
  if (looksBinary(head.subarray(0, Math.min(head.length, BINARY_SNIFF_BYTES)))) {
    return errorResult(
      `Read: ${name} is a binary file (it has a NUL byte in its first 8 KiB); Read shows text only`,
    );
  }
  return null;
}

/**
 * Why the scan stopped before the end of the file, the number of newlines before the stopping point, and
 * the unscanned bytes of the chunk in memory (counted for the "at least N lines" note).
 */
interface Stop {
  why: 'lines' | 'bytes' | 'output';
  newlines: number;
  from: number;
  to: number;
}

/** One scan of readLines: the lines shown so far and the line being collected. */
class LineScan {
  readonly shown: Shown[] = [];
  stop: Stop | undefined;
  /** The line the scan is in. */
  lineNo = 1;
  private outputChars = 0;
  /** Bytes (newlines included) from the start of startLine on. */
  private consumed = 0;
  /** Kept bytes of the line being collected. */
  private parts: Buffer[] = [];
  private kept = 0;
  private lineBytes = 0;
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  private readonly outputBudget: number;
  /** Enough bytes for maxLineChars characters of any UTF-8 text, plus a partial character at the cut. */
  private readonly keepBytes: number;

  constructor(
    private readonly limits: ToolLimits,
    readonly startLine: number,
    readonly maxLines: number,
  ) {
    this.outputBudget = Math.max(0, limits.maxResultChars - NOTE_RESERVE);
    this.keepBytes = limits.maxLineChars * 4 + 4;
  }

  /**
   * Scans the first `bytesRead` bytes of `chunk`; true when the scan is over (`stop` says why when it ended
   * before the end of the file). `moreInFile`: the file goes on after this chunk.
   */
  scanChunk(chunk: Buffer, bytesRead: number, moreInFile: boolean): boolean {
    const { limits } = this;
    let from = 0;
    while (from < bytesRead) {
      const nl = chunk.indexOf(NEWLINE, from);
      const end = nl === -1 || nl >= bytesRead ? bytesRead : nl;
      if (this.lineNo < this.startLine) {
        if (end === bytesRead) break;
        this.lineNo++;
        from = end + 1;
        continue;
      }
      // Collecting: bytes from..end belong to line lineNo, within what is left of maxReadBytes.
      const room = Math.max(0, limits.maxReadBytes - this.consumed);
      const take = Math.min(end - from, room);
      this.collect(chunk, from, take);
      if (take < end - from) {
        // maxReadBytes ran out inside this line. Show it only if it is a long line anyway (its start is all
        // a later call could show), or if nothing else is shown (so that the caller always makes progress).
        const newlines = this.lineNo - 1;
        if ((this.kept >= this.keepBytes || this.shown.length === 0) && this.finishLine(false)) this.lineNo++;
        this.stop = { why: 'bytes', newlines, from: from + take, to: bytesRead };
        return true;
      }
      if (end === bytesRead) break; // the line goes on in the next chunk
      this.consumed += 1;
      if (!this.finishLine(true)) {
        this.stop = { why: 'output', newlines: this.lineNo, from: end + 1, to: bytesRead };
        return true;
      }
      this.lineNo++;
      from = end + 1;
      const more = from < bytesRead || moreInFile;
      if (this.shown.length >= this.maxLines || this.consumed >= limits.maxReadBytes) {
        if (more) {
          const why = this.shown.length >= this.maxLines ? 'lines' : 'bytes';
          this.stop = { why, newlines: this.lineNo - 1, from, to: bytesRead };
        }
        return true;
      }
    }
    return false;
  }

  /** The last line when it has no newline at the end. */
  finishLastLine(): void {
    if (this.stop === undefined && this.lineNo >= this.startLine && (this.kept > 0 || this.lineBytes > 0)) {
      if (!this.finishLine(true)) this.stop = { why: 'output', newlines: this.lineNo - 1, from: 0, to: 0 };
    }
  }

  /** `take` bytes of the line being collected, from `from`: counted, and kept up to keepBytes. */
  private collect(chunk: Buffer, from: number, take: number): void {
    if (this.kept < this.keepBytes && take > 0) {
      const keep = Math.min(take, this.keepBytes - this.kept);
      this.parts.push(Buffer.from(chunk.subarray(from, from + keep)));
      this.kept += keep;
    }
    this.lineBytes += take;
    this.consumed += take;
  }

  /** Adds the collected line to the output; false when it does not fit the output budget. */
  private finishLine(complete: boolean): boolean {
    const { kept, lineBytes, lineNo, outputBudget } = this;
    let text = this.decoder.decode(Buffer.concat(this.parts, kept));
    const partial = lineBytes > kept || !complete;
    if (!partial && text.endsWith('\r')) text = text.slice(0, -1);
    if (lineNo === 1 && text.startsWith('\uFEFF')) text = text.slice(1);
    const total = !partial
      ? `${text.length} characters`
      : complete
        ? formatBytes(lineBytes)
        : `at least ${formatBytes(lineBytes)}`;
    let formatted = `${String(lineNo).padStart(6)}\t${cutLine(text, this.limits.maxLineChars, total, partial)}`;
    this.parts = [];
    this.kept = 0;
    this.lineBytes = 0;
    if (this.shown.length > 0 && this.outputChars + formatted.length + 1 > outputBudget) return false;
    if (formatted.length > outputBudget) formatted = `${formatted.slice(0, outputBudget)}…`;
    this.shown.push({ no: lineNo, text: formatted });
    this.outputChars += formatted.length + 1;
    return true;
  }
}

/**
 * A lower bound on the file's line count from what is already in memory; reading on just to count lines
 * would defeat the point of stopping.
 */
function linesAtLeast(stop: Stop, chunk: Buffer, moreInFile: boolean): number {
  let newlines = stop.newlines;
  let i = chunk.indexOf(NEWLINE, stop.from);
  let afterLast = stop.from;
  while (i !== -1 && i < stop.to) {
    newlines++;
    afterLast = i + 1;
    i = chunk.indexOf(NEWLINE, i + 1);
  }
  return newlines + (afterLast < stop.to || moreInFile || stop.to === 0 ? 1 : 0);
}

/** The note that ends a cut result: which limit, which lines are shown, and the offset to read on from. */
function truncationNote(
  scan: LineScan,
  stop: Stop,
  atLeast: number,
  size: number,
  limits: ToolLimits,
): string {
  const firstShown = scan.shown[0]?.no ?? scan.startLine;
  const lastShown = scan.shown.at(-1)?.no ?? scan.startLine - 1;
  const why =
    stop.why === 'lines'
      ? `limit of ${scan.maxLines} lines`
      : stop.why === 'bytes'
        ? `read limit of ${formatBytes(limits.maxReadBytes)}`
        : `output limit of ${limits.maxResultChars} characters`;
  return `[... truncated (${why}): showing lines ${firstShown}-${lastShown} of at least ${atLeast}; the file is ${formatBytes(size)}; use offset=${lastShown + 1} to read more]`;
}
