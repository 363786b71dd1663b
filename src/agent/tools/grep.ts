import { type FileHandle, open, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { z } from 'zod';
import { toolDefinition, workspaceTool } from './define.js';
import { FILE_TYPES, fileTypeFilter } from './file-types.js';
import { describeFsError } from './fs-errors.js';
import { compileGlob, GlobPatternError, MAX_GLOB_PATTERN_CHARS, normalizeGlob } from './glob-pattern.js';
import { MAX_REGEX_LINE_CHARS, matchText, RegexTimeoutError, TimeBoundRunner } from './grep-match.js';
import type { ToolLimits } from './limits.js';
import { fitLines } from './output.js';
import { BINARY_SNIFF_BYTES, cutLine, formatBytes, looksBinary } from './text.js';
import { errorResult, type ToolResult } from './types.js';
import { FileWalk } from './walk.js';
import { PathError, READ_FLAGS, type Workspace } from './workspace.js';

/** One vm context for every search: its `run` is synchronous, so searches cannot interleave on it. */
const RUNNER = new TimeBoundRunner();
const LITERAL = /^[^\\^$.*+?()[\]{}|]*$/;

const MAX_PATTERN_CHARS = 10_000;
const MAX_CONTEXT_LINES = 100;
/** Whole-search caps on top of ToolLimits, so that many mid-sized files cannot add up to minutes of work. */
const MAX_TOTAL_BYTES = 128 * 1024 * 1024;
const TIME_BUDGET_MS = 20_000;
/** A file whose matching takes longer is skipped; after MAX_TIMEOUTS such files the search gives up. */
const FILE_TIMEOUT_MS = 1_000;
const MAX_TIMEOUTS = 3;

const contextLines = z.number().int().min(0).max(MAX_CONTEXT_LINES).optional();

export const grepInput = z.object({
  pattern: z.string().min(1).max(MAX_PATTERN_CHARS),
  path: z.string().optional(),
  glob: z.string().min(1).max(MAX_GLOB_PATTERN_CHARS).optional(),
  type: z.string().optional(),
  output_mode: z.enum(['content', 'files_with_matches', 'count']).optional(),
  '-i': z.boolean().optional(),
  '-n': z.boolean().optional(),
  '-A': contextLines,
  '-B': contextLines,
  '-C': contextLines,
  /** Claude Code's long name for -C; -C wins when both are given. */
  context: contextLines,
  '-o': z.boolean().optional(),
  head_limit: z.number().int().min(0).optional(),
  offset: z.number().int().min(0).optional(),
  multiline: z.boolean().optional(),
});
export type GrepInput = z.infer<typeof grepInput>;

export const grepTool = toolDefinition({
  name: 'Grep',
  description: [
    'Searches file contents in the workspace with a regular expression (JavaScript RegExp syntax, e.g. "function\\s+\\w+").',
    'Filter files with `glob` (e.g. "*.ts", "**/*.{ts,tsx}") or `type` (e.g. "js", "py", "rust").',
    'output_mode "files_with_matches" (default) lists matching files, most recently modified first;',
    '"content" shows matching lines (with -n line numbers and -A/-B/-C context, or only the matched parts with -o);',
    '"count" shows matching lines per file. Page through long output with head_limit and offset.',
    'Binary files, files over 1 MiB, .git and node_modules are skipped. Use Glob to find files by name.',
  ],
  properties: {
    pattern: { type: 'string', description: 'The regular expression to search for.' },
    path: {
      type: 'string',
      description: 'File or directory to search, relative to the workspace. Defaults to the workspace root.',
    },
    glob: {
      type: 'string',
      description:
        'Only search files matching this glob, e.g. "*.js" or "src/**/*.{ts,tsx}". Without a "/" it matches file names at any depth.',
    },
    type: {
      type: 'string',
      description: `Only search files of this type: ${Object.keys(FILE_TYPES).join(', ')}.`,
    },
    output_mode: {
      type: 'string',
      enum: ['content', 'files_with_matches', 'count'],
      description: 'What to return; defaults to "files_with_matches".',
    },
    '-i': { type: 'boolean', description: 'Case-insensitive search.' },
    '-n': { type: 'boolean', description: 'Show line numbers (content mode only); defaults to true.' },
    '-A': { type: 'number', description: 'Lines of context after each match (content mode only).' },
    '-B': { type: 'number', description: 'Lines of context before each match (content mode only).' },
    '-C': {
      type: 'number',
      description: 'Lines of context before and after each match (content mode only).',
    },
    context: { type: 'number', description: 'The same as -C.' },
    '-o': {
      type: 'boolean',
      description:
        'Show only the matched parts of lines, each on its own line, without context (content mode only).',
    },
    head_limit: {
      type: 'number',
      description:
        'Return only the first N lines or entries of the output, like `| head -N`. 0 means no limit.',
    },
    offset: {
      type: 'number',
      description:
        'Skip the first N lines or entries of the output before applying head_limit, like `| tail -n +N+1 | head -M`. Defaults to 0.',
    },
    multiline: {
      type: 'boolean',
      description: 'Let the pattern span lines: `.` matches newlines too. Defaults to false.',
    },
  },
  required: ['pattern'],
});

type ReadOutcome =
  | { kind: 'text'; text: string; bytes: number; mtimeMs: number }
  | { kind: 'binary' | 'large' | 'unreadable' };

/** Reads a regular file whole if it is at most `maxBytes` and does not look binary. */
async function readTextFile(abs: string, maxBytes: number): Promise<ReadOutcome> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(abs, READ_FLAGS);
    const st = await handle.stat();
    if (!st.isFile()) return { kind: 'unreadable' };
    if (st.size > maxBytes) return { kind: 'large' };
    const buf = Buffer.allocUnsafe(st.size);
    let filled = 0;
    while (filled < st.size) {
      const { bytesRead } = await handle.read(buf, filled, st.size - filled, filled);
      if (bytesRead === 0) break; // the file shrank
      filled += bytesRead;
    }
    const data = buf.subarray(0, filled);
    if (looksBinary(data.subarray(0, BINARY_SNIFF_BYTES))) return { kind: 'binary' };
    return { kind: 'text', text: data.toString('utf8'), bytes: filled, mtimeMs: st.mtimeMs };
  } catch {
    return { kind: 'unreadable' };
  } finally {
    await handle?.close();
  }
}

function compileRegex(pattern: string, ignoreCase: boolean, multiline: boolean): RegExp | string {
  let source = pattern;
  let caseless = ignoreCase;
  // ripgrep's inline flag, which models often write; JavaScript (before Node 23) has no inline flags.
  if (source.startsWith('(?i)')) {
    source = source.slice(4);
    caseless = true;
  }
  const flags = `${caseless ? 'i' : ''}${multiline ? 'gms' : ''}`;
  try {
    return new RegExp(source, flags);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

export const runGrep = workspaceTool('Grep', grepInput, grep);

async function grep(ws: Workspace, args: GrepInput, limits: ToolLimits): Promise<ToolResult> {
  const mode = args.output_mode ?? 'files_with_matches';
  const multiline = args.multiline ?? false;

  const regex = compileRegex(args.pattern, args['-i'] ?? false, multiline);
  if (typeof regex === 'string') return errorResult(`Grep: invalid regular expression: ${regex}`);

  let globTest: ((rel: string) => boolean) | undefined;
  if (args.glob !== undefined) {
    const glob = normalizeGlob(args.glob);
    try {
      const { regex: globRegex } = compileGlob(glob);
      // Like ripgrep: a glob without a "/" matches the file name at any depth.
      globTest = glob.includes('/') ? (rel) => globRegex.test(rel) : (rel) => globRegex.test(basename(rel));
    } catch (err) {
      if (err instanceof GlobPatternError) return errorResult(`Grep: invalid glob: ${err.message}`);
      throw err;
    }
  }
  let typeTest: ((name: string) => boolean) | undefined;
  if (args.type !== undefined) {
    typeTest = fileTypeFilter(args.type);
    if (typeTest === undefined) {
      return errorResult(
        `Grep: unknown type ${JSON.stringify(args.type)}; known types: ${Object.keys(FILE_TYPES).join(', ')}`,
      );
    }
  }

  const path = args.path ?? '.';
  let target: string;
  let isDir: boolean;
  try {
    target = await ws.resolve(path, { mustExist: true });
    const st = await stat(target);
    isDir = st.isDirectory();
    if (!isDir && !st.isFile())
      return errorResult(`Grep: ${JSON.stringify(ws.relative(target))} is not a regular file`);
  } catch (err) {
    if (err instanceof PathError) return errorResult(`Grep: ${err.message}`);
    return errorResult(`Grep: ${describeFsError(err, path)}`);
  }
  const targetRel = ws.relative(target);

  const walk = isDir
    ? new FileWalk(target, { maxFiles: limits.maxFilesScanned, hidden: (abs) => ws.isHidden(abs) })
    : undefined;
  async function* candidates(): AsyncGenerator<{ abs: string; shown: string }> {
    if (walk === undefined) {
      // An explicitly named file is searched whatever the filters say, as ripgrep does.
      yield { abs: target, shown: targetRel };
      return;
    }
    for await (const file of walk.files()) {
      if (globTest !== undefined && !globTest(file.rel)) continue;
      if (typeTest !== undefined && !typeTest(basename(file.rel))) continue;
      yield { abs: file.abs, shown: targetRel === '.' ? file.rel : `${targetRel}/${file.rel}` };
    }
  }

  const onlyMatching = mode === 'content' && args['-o'] === true;
  const around = args['-C'] ?? args.context;
  // Like grep -o: context lines are not shown with the matched parts.
  const contextAsked = Math.max(args['-A'] ?? 0, args['-B'] ?? 0, around ?? 0) > 0;
  const after = onlyMatching ? 0 : (args['-A'] ?? around ?? 0);
  const before = onlyMatching ? 0 : (args['-B'] ?? around ?? 0);
  const lineNumbers = args['-n'] ?? true;
  const headLimit =
    args.head_limit !== undefined && args.head_limit > 0 ? args.head_limit : Number.POSITIVE_INFINITY;
  // Entries before `offset` are produced and counted but not kept, as `| tail -n +N` would.
  const offset = args.offset ?? 0;
  // The match caps leave room for what offset skips, so that paging can reach past them.
  const maxMatches = limits.maxGrepMatches + offset;

  // A pattern without regex metacharacters cannot backtrack: match it directly, without the vm timeout.
  const literal = LITERAL.test(args.pattern);
  const startedAt = performance.now();
  let bytesRead = 0;
  const skipped = { binary: 0, large: 0, unreadable: 0, slow: 0, failed: 0 };
  let longLines = 0;
  let stoppedBy: 'bytes' | 'time' | 'slow' | undefined;
  let matchCapHit = false;
  let headCut = false;

  const contentLines: string[] = [];
  let contentEntries = 0;
  /** Counts one content entry and keeps it when it lies in the page (offset, head_limit); false past the page. */
  const addEntry = (entry: () => string): boolean => {
    if (contentEntries >= offset + headLimit) {
      headCut = true;
      return false;
    }
    if (contentEntries >= offset) contentLines.push(entry());
    contentEntries++;
    return true;
  };
  let matchedLines = 0;
  const files: { shown: string; count: number; mtimeMs: number }[] = [];

  search: for await (const file of candidates()) {
    if (bytesRead >= MAX_TOTAL_BYTES) {
      stoppedBy = 'bytes';
      break;
    }
    const remainingMs = TIME_BUDGET_MS - (performance.now() - startedAt);
    if (remainingMs <= 0) {
      stoppedBy = 'time';
      break;
    }
    const outcome = await readTextFile(file.abs, limits.maxFileBytesForGrep);
    if (outcome.kind !== 'text') {
      skipped[outcome.kind]++;
      continue;
    }
    bytesRead += outcome.bytes;

    const stopAfter =
      mode === 'files_with_matches'
        ? 1
        : mode === 'count'
          ? Number.POSITIVE_INFINITY
          : maxMatches - matchedLines;
    const matchOptions = { multiline, stopAfter, only: onlyMatching };
    let found: ReturnType<typeof matchText>;
    try {
      found = literal
        ? matchText(outcome.text, regex, matchOptions)
        : RUNNER.run(
            () => matchText(outcome.text, regex, matchOptions),
            Math.min(FILE_TIMEOUT_MS, remainingMs),
          );
    } catch (err) {
      if (!(err instanceof RegexTimeoutError)) {
        // e.g. a RangeError when the regex engine runs out of backtracking stack on this file
        skipped.failed++;
        continue;
      }
      skipped.slow++;
      if (skipped.slow >= MAX_TIMEOUTS) {
        stoppedBy = 'slow';
        break;
      }
      if (performance.now() - startedAt >= TIME_BUDGET_MS) {
        stoppedBy = 'time';
        break;
      }
      continue;
    }
    longLines += found.longLines;
    if (found.matched.length === 0) continue;

    if (mode !== 'content') {
      files.push({ shown: file.shown, count: found.matched.length, mtimeMs: outcome.mtimeMs });
      if (files.length >= maxMatches) {
        matchCapHit = true;
        break;
      }
      continue;
    }

    matchedLines += found.matched.length;
    if (found.pieces) {
      // -o: every matched part is an entry of its own, always with ':' (it is a match, never context).
      for (const i of found.matched) {
        for (const piece of found.pieces.get(i) ?? []) {
          const added = addEntry(() => {
            const text = cutLine(piece, limits.maxLineChars, `${piece.length} characters`);
            return lineNumbers ? `${file.shown}:${i + 1}:${text}` : `${file.shown}:${text}`;
          });
          if (!added) break search;
        }
      }
      if (matchedLines >= maxMatches) {
        matchCapHit = true;
        break;
      }
      continue;
    }
    // Merge each match with its context into runs of consecutive lines, as ripgrep prints them.
    const isMatch = new Set(found.matched);
    const runs: [number, number][] = [];
    for (const m of found.matched) {
      const from = Math.max(0, m - before);
      const to = Math.min(found.lines.length - 1, m + after);
      const last = runs.at(-1);
      if (last !== undefined && from <= last[1] + 1) last[1] = Math.max(last[1], to);
      else runs.push([from, to]);
    }
    for (const [from, to] of runs) {
      if ((before > 0 || after > 0) && contentLines.length > 0) contentLines.push('--');
      for (let i = from; i <= to; i++) {
        const added = addEntry(() => {
          const line = found.lines[i]!;
          const sep = isMatch.has(i) ? ':' : '-';
          const text = cutLine(line, limits.maxLineChars, `${line.length} characters`);
          return lineNumbers ? `${file.shown}${sep}${i + 1}${sep}${text}` : `${file.shown}${sep}${text}`;
        });
        if (!added) break search;
      }
    }
    if (matchedLines >= maxMatches) {
      matchCapHit = true;
      break;
    }
  }

  const notes: string[] = [];
  let lines: string[];
  if (mode === 'content') {
    lines = contentLines;
    if (contentLines.at(-1) === '--') contentLines.pop();
    if (offset > 0 && contentEntries > 0) {
      if (contentLines.length === 0) {
        lines = [
          `No lines at offset ${offset}: the output has ${contentEntries} line${contentEntries === 1 ? '' : 's'}`,
        ];
      } else if (!headCut) {
        notes.push(`skipped the first ${offset} line${offset === 1 ? '' : 's'} (offset)`);
      }
    }
    if (headCut) {
      notes.push(
        offset > 0
          ? `output limited to lines ${offset + 1}-${offset + headLimit} by offset and head_limit; use offset=${offset + headLimit} for more`
          : `output limited to the first ${headLimit} lines by head_limit`,
      );
    }
    if (matchCapHit)
      notes.push(`stopped at ${matchedLines} matching lines; narrow the pattern, path or glob`);
    if (onlyMatching && contextAsked) notes.push('context lines are not shown with -o');
  } else {
    if (mode === 'files_with_matches') {
      files.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.shown < b.shown ? -1 : a.shown > b.shown ? 1 : 0));
    }
    const end = Number.isFinite(headLimit) ? offset + headLimit : files.length;
    const shown = files.slice(offset, end);
    headCut = end < files.length;
    const total = files.reduce((sum, f) => sum + f.count, 0);
    const plural = files.length === 1 ? '' : 's';
    if (mode === 'files_with_matches') {
      lines = files.length === 0 ? [] : [`Found ${files.length} file${plural}`, ...shown.map((f) => f.shown)];
    } else {
      lines = shown.map((f) => `${f.shown}:${f.count}`);
      if (files.length > 0) {
        if (shown.length > 0) lines.push('');
        lines.push(`Found ${total} matching line${total === 1 ? '' : 's'} in ${files.length} file${plural}`);
      }
    }
    if (offset > 0 && files.length > 0) {
      if (shown.length === 0)
        notes.push(
          `no files at offset ${offset}: there ${files.length === 1 ? 'is' : 'are'} ${files.length}`,
        );
      else if (headCut)
        notes.push(
          `showing files ${offset + 1}-${offset + shown.length} of ${files.length} (offset and head_limit); use offset=${offset + shown.length} for more`,
        );
      else notes.push(`showing files ${offset + 1}-${files.length} of ${files.length} (offset)`);
    } else if (headCut) {
      notes.push(`showing the first ${shown.length} of ${files.length} files (head_limit)`);
    }
    if (matchCapHit)
      notes.push(`stopped after ${files.length} matching files; narrow the pattern, path or glob`);
  }
  if (lines.length === 0) lines = ['No matches found'];

  if (walk?.truncated) {
    notes.push(
      `search stopped after scanning ${walk.scanned} files, so matches may be missing; narrow the path, glob or type`,
    );
  }
  if (stoppedBy === 'bytes')
    notes.push(`search stopped after reading ${formatBytes(bytesRead)}; narrow the path, glob or type`);
  if (stoppedBy === 'time')
    notes.push(`search stopped after ${TIME_BUDGET_MS / 1000} s; narrow the path, glob or type`);
  if (skipped.slow > 0) {
    notes.push(
      `${skipped.slow} file${skipped.slow === 1 ? '' : 's'} skipped because matching took over ${FILE_TIMEOUT_MS} ms${stoppedBy === 'slow' ? ', so the search was abandoned' : ''}; simplify the pattern (nested quantifiers such as (a+)+ backtrack badly)`,
    );
  }
  if (skipped.failed > 0) {
    notes.push(
      `${skipped.failed} file${skipped.failed === 1 ? '' : 's'} skipped because the pattern could not be matched on them`,
    );
  }
  if (skipped.binary > 0)
    notes.push(`${skipped.binary} binary file${skipped.binary === 1 ? '' : 's'} skipped`);
  if (skipped.large > 0) {
    notes.push(
      `${skipped.large} file${skipped.large === 1 ? '' : 's'} larger than ${formatBytes(limits.maxFileBytesForGrep)} skipped; use Read with offset and limit on them`,
    );
  }
  const unreadable = skipped.unreadable + (walk?.unreadableDirs ?? 0);
  if (unreadable > 0)
    notes.push(`${unreadable} unreadable file${unreadable === 1 ? '' : 's'} or directories skipped`);
  if (longLines > 0) {
    notes.push(
      `${longLines} line${longLines === 1 ? '' : 's'} longer than ${MAX_REGEX_LINE_CHARS} characters matched on their first ${MAX_REGEX_LINE_CHARS} characters only`,
    );
  }

  const fitted = fitLines(lines, notes, limits.maxResultChars);
  const truncated =
    fitted.cut || headCut || matchCapHit || stoppedBy !== undefined || walk?.truncated === true;
  return { content: fitted.content, isError: false, ...(truncated ? { truncated: true } : {}) };
}
