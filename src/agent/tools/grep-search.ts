import { lstatSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isWithin } from '../../workspace/hidden.js';
import { describeFsError } from './fs-errors.js';
import { literalGlob, rgArgs } from './grep-args.js';
import type { GrepInput } from './grep-input.js';
import { type GrepFile, RgJsonReader } from './grep-json.js';
import { ContentOutput, FileOutput, type Page } from './grep-output.js';
import type { ToolLimits } from './limits.js';
import { fitLines } from './output.js';
import { RIPGREP_MISSING, type RipgrepRun, runRipgrep } from './ripgrep.js';
import { formatBytes } from './text.js';
import { errorResult, type ToolResult } from './types.js';
import { PathError, type Workspace } from './workspace.js';

// One Grep search: where (a path the Workspace resolved), ripgrep run on it, its results kept to the
// workspace and to drydock's rules, the page the model asked for.

/** Whole-search bounds on top of ToolLimits. */
const TIME_BUDGET_MS = 20_000;
const MAX_OUTPUT_BYTES = 128 * 1024 * 1024;
/** Claude Code's default head_limit: 250 lines or files; 0 for no limit. */
export const DEFAULT_HEAD_LIMIT = 250;

type Target = { rel: string; file: boolean; bytes: number };

/** The path to search, resolved by the Workspace (inside it, not hidden, no link out), or the refusal. */
async function targetOf(ws: Workspace, path: string): Promise<Target | ToolResult> {
  try {
    const abs = await ws.resolve(path, { mustExist: true });
    const st = await stat(abs);
    if (!st.isDirectory() && !st.isFile())
      return errorResult(`Grep: ${JSON.stringify(ws.relative(abs))} is not a regular file`);
    return { rel: ws.relative(abs), file: st.isFile(), bytes: st.size };
  } catch (err) {
    if (err instanceof PathError) return errorResult(`Grep: ${err.message}`);
    return errorResult(`Grep: ${describeFsError(err, path)}`);
  }
}

function pageOf(args: GrepInput, limits: ToolLimits): Page {
  const limit = args.head_limit ?? DEFAULT_HEAD_LIMIT;
  const offset = args.offset ?? 0;
  // The match cap leaves room for what offset skips, so that paging can reach past it.
  return {
    offset,
    headLimit: limit > 0 ? limit : Number.POSITIVE_INFINITY,
    maxMatches: limits.maxGrepMatches + offset,
  };
}

/** The output the mode asks for. */
function outputOf(ws: Workspace, args: GrepInput, limits: ToolLimits) {
  const page = pageOf(args, limits);
  const mode = args.output_mode ?? 'files_with_matches';
  if (mode !== 'content') {
    const mtimeOf = (rel: string) => {
      try {
        return lstatSync(join(ws.root, rel)).mtimeMs;
      } catch {
        return 0;
      }
    };
    return new FileOutput(page, mode, mtimeOf);
  }
  const { before, after } = contextOf(args);
  return new ContentOutput(page, {
    lineNumbers: args['-n'] ?? true,
    onlyMatching: args['-o'] === true,
    context: before > 0 || after > 0,
    maxLineChars: limits.maxLineChars,
  });
}

/** Lines of context: -A and -B over -C, -C over its long name `context`; none with -o (like grep -o). */
function contextOf(args: GrepInput): { before: number; after: number; asked: boolean } {
  const around = args['-C'] ?? args.context;
  const asked = Math.max(args['-A'] ?? 0, args['-B'] ?? 0, around ?? 0) > 0;
  if (args.output_mode !== 'content' || args['-o'] === true) return { before: 0, after: 0, asked };
  return { before: args['-B'] ?? around ?? 0, after: args['-A'] ?? around ?? 0, asked };
}

/** What a search stopped by the run's abort (a cancel, a lost claim) answers; the model never sees it. */
export const GREP_ABORTED = 'Grep: the search was stopped: the run was canceled';

/** Runs the search; ToolResult on a refusal or on an error ripgrep reported. */
export async function searchWorkspace(
  ws: Workspace,
  args: GrepInput,
  limits: ToolLimits,
  rg: string | null,
  signal?: AbortSignal,
): Promise<ToolResult> {
  const target = await targetOf(ws, args.path ?? '.');
  if ('content' in target) return target;
  if (rg === null) return errorResult(RIPGREP_MISSING);
  if (target.file && target.bytes > limits.maxFileBytesForGrep) {
    return { content: `No matches found\n\n[${tooLarge(1, limits)}]`, isError: false };
  }
  const output = outputOf(ws, args, limits);
  const reader = new RgJsonReader((file) => !shownFile(ws, file) || output.add(file));
  const { before, after } = contextOf(args);
  const argv = rgArgs({
    pattern: args.pattern,
    target: target.rel,
    ...(args.glob !== undefined ? { glob: args.glob } : {}),
    ...(args.type !== undefined ? { type: args.type } : {}),
    ignoreCase: args['-i'] === true,
    multiline: args.multiline === true,
    before,
    after,
    firstMatchOnly: (args.output_mode ?? 'files_with_matches') === 'files_with_matches',
    maxFileBytes: limits.maxFileBytesForGrep,
    hidden: ws.hiddenBelow(),
  });
  const run = await runRipgrep(rg, argv, {
    cwd: ws.root,
    timeoutMs: TIME_BUDGET_MS,
    maxOutputBytes: MAX_OUTPUT_BYTES,
    onLine: (line) => reader.line(line),
    ...(signal ? { signal } : {}),
  });
  if (run.missing) return errorResult(RIPGREP_MISSING);
  if (run.stopped === 'aborted') return errorResult(GREP_ABORTED);
  const failed = failure(ws, run, reader, args);
  if (failed) return failed;
  const shown = output.finish();
  const contextWithO = args.output_mode === 'content' && args['-o'] === true && contextOf(args).asked;
  const notes = [...shown.notes, ...searchNotes(run, reader, contextWithO)];
  const lines = shown.lines.length === 0 ? ['No matches found'] : shown.lines;
  const fitted = fitLines(lines, notes, limits.maxResultChars);
  const truncated = fitted.cut || shown.cut || run.stopped === 'time' || run.stopped === 'output';
  return { content: fitted.content, isError: false, ...(truncated ? { truncated: true } : {}) };
}

/**
 * Whether a file ripgrep reported may be shown: inside the workspace and outside drydock's hidden paths.
 * ripgrep was told to leave the hidden paths out; this is the second, independent check.
 */
function shownFile(ws: Workspace, file: GrepFile): boolean {
  if (file.path.startsWith('/') || file.path.split('/').includes('..')) return false;
  const abs = join(ws.root, file.path);
  return isWithin(ws.root, abs) && !ws.isHidden(abs);
}

/** ripgrep's own error (a bad pattern, glob or type) when it stopped with one before searching. */
function failure(ws: Workspace, run: RipgrepRun, reader: RgJsonReader, args: GrepInput): ToolResult | null {
  if (run.exitCode !== 2 || reader.finished || run.stopped !== undefined) return null;
  // Relative paths are all ripgrep was given; the root is scrubbed all the same, and a message naming a
  // hidden path (one of the exclusions) is not shown at all.
  const text = run.stderr.split(ws.root).join('.').trim();
  if (ws.hiddenBelow().some((rel) => text.includes(literalGlob(rel))))
    return errorResult('Grep: ripgrep refused the search');
  if (/regex parse error|error parsing regex|regex.*exceeds/i.test(text))
    return errorResult(`Grep: invalid regular expression (ripgrep syntax): ${text}`);
  if (/error parsing glob/i.test(text)) return errorResult(`Grep: invalid glob: ${text}`);
  if (/unrecognized file type/i.test(text)) {
    return errorResult(
      `Grep: unknown type ${JSON.stringify(args.type)}; ripgrep's types include c, cpp, go, java, js, json, md, py, rust, sh, ts, yaml (rg --type-list)`,
    );
  }
  // e.g. a \n in the pattern without multiline: ripgrep's message says what to do
  return errorResult(
    `Grep: ripgrep refused the search: ${text.slice(0, 2000) || `exit code ${run.exitCode}`}`,
  );
}

function tooLarge(n: number, limits: ToolLimits): string {
  return `${n} file${n === 1 ? '' : 's'} larger than ${formatBytes(limits.maxFileBytesForGrep)} skipped; use Read with offset and limit on them`;
}

function searchNotes(run: RipgrepRun, reader: RgJsonReader, contextWithO: boolean): string[] {
  const notes: string[] = [];
  if (contextWithO) notes.push('context lines are not shown with -o');
  if (run.stopped === 'time')
    notes.push(`search stopped after ${TIME_BUDGET_MS / 1000} s; narrow the path, glob or type`);
  if (run.stopped === 'output')
    notes.push(
      `search stopped after ${formatBytes(MAX_OUTPUT_BYTES)} of results; narrow the pattern, path or glob`,
    );
  if (reader.binary > 0) notes.push(`${reader.binary} binary file${reader.binary === 1 ? '' : 's'} skipped`);
  // Messages ripgrep printed while it went on (a file or directory it could not read).
  const unreadable =
    run.exitCode === 2 && reader.finished ? run.stderr.split('\n').filter((l) => l.trim()).length : 0;
  if (unreadable > 0)
    notes.push(`${unreadable} unreadable file${unreadable === 1 ? '' : 's'} or directories skipped`);
  return notes;
}
