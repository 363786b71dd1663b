import { lstat, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { toolDefinition, workspaceTool } from './define.js';
import { describeFsError } from './fs-errors.js';
import { compileGlob, GlobPatternError, MAX_GLOB_PATTERN_CHARS, normalizeGlob } from './glob-pattern.js';
import type { ToolLimits } from './limits.js';
import { fitLines } from './output.js';
import { errorResult, type ToolResult } from './types.js';
import { FileWalk } from './walk.js';
import { PathError, type Workspace } from './workspace.js';

export const globInput = z.object({
  pattern: z.string().min(1).max(MAX_GLOB_PATTERN_CHARS),
  path: z.string().optional(),
});
export type GlobInput = z.infer<typeof globInput>;

export const globTool = toolDefinition({
  name: 'Glob',
  description: [
    'Finds files by name pattern in the workspace, e.g. "**/*.ts" or "src/**/*.{js,jsx}".',
    'Returns matching file paths relative to the workspace, most recently modified first.',
    '`*` and `?` stay within one directory level, `**` spans any number of levels, `{a,b}` is either, `[abc]` one of.',
    '.git and node_modules directories are not searched, and symbolic links are not followed.',
    'Use Grep to search file contents.',
  ],
  properties: {
    pattern: { type: 'string', description: 'The glob pattern, relative to `path`.' },
    path: {
      type: 'string',
      description: 'Directory to search in, relative to the workspace. Defaults to the workspace root.',
    },
  },
  required: ['pattern'],
});

/** How many lstat calls run at once when ordering matches by modification time. */
const STAT_CONCURRENCY = 32;

export const runGlob = workspaceTool('Glob', globInput, glob);

async function glob(ws: Workspace, input: GlobInput, limits: ToolLimits): Promise<ToolResult> {
  const compiled = compilePattern(input.pattern);
  if ('isError' in compiled) return compiled;
  const dir = await searchDir(ws, input.path ?? '.');
  if (typeof dir !== 'string') return dir;
  const dirRel = ws.relative(dir);
  const toWorkspacePath = (rel: string): string => (dirRel === '.' ? rel : `${dirRel}/${rel}`);

  const baseSegments = compiled.base === '' ? [] : compiled.base.split('/');
  const start = await walkStart(dir, baseSegments);
  if (start === null) return { content: 'No files found', isError: false };
  const walk = new FileWalk(start, {
    maxFiles: limits.maxFilesScanned,
    maxDepth: compiled.maxDepth - baseSegments.length,
    relPrefix: compiled.base,
    hidden: (abs) => ws.isHidden(abs),
  });
  const matches: Match[] = [];
  for await (const file of walk.files()) {
    if (compiled.regex.test(file.rel))
      matches.push({ abs: file.abs, rel: toWorkspacePath(file.rel), mtimeMs: 0 });
  }
  await sortByMtime(matches);

  const shown = matches.slice(0, limits.maxGlobResults);
  const notes = globNotes(shown.length, matches.length, walk);
  if (shown.length === 0) {
    const fitted = fitLines(['No files found'], notes, limits.maxResultChars);
    return { content: fitted.content, isError: false, ...(walk.truncated ? { truncated: true } : {}) };
  }
  const fitted = fitLines(
    shown.map((m) => m.rel),
    notes,
    limits.maxResultChars,
  );
  const truncated = fitted.cut || matches.length > shown.length || walk.truncated;
  return { content: fitted.content, isError: false, ...(truncated ? { truncated: true } : {}) };
}

interface Match {
  abs: string;
  rel: string;
  mtimeMs: number;
}

/** The pattern compiled, or the refusal of a pattern that is empty, absolute, climbs up or does not parse. */
function compilePattern(raw: string): ReturnType<typeof compileGlob> | ToolResult {
  const pattern = normalizeGlob(raw);
  if (pattern === '') return errorResult('Glob: the pattern is empty');
  if (pattern.startsWith('/')) {
    return errorResult('Glob: the pattern must be relative; put the directory to search in `path`');
  }
  if (pattern.split('/').includes('..'))
    return errorResult('Glob: the pattern may not contain ".." segments');
  try {
    return compileGlob(pattern);
  } catch (err) {
    if (err instanceof GlobPatternError) return errorResult(`Glob: invalid pattern: ${err.message}`);
    throw err;
  }
}

/** The directory to search, absolute, or the refusal of a path outside the workspace or not a directory. */
async function searchDir(ws: Workspace, path: string): Promise<string | ToolResult> {
  try {
    const dir = await ws.resolve(path, { mustExist: true });
    if (!(await stat(dir)).isDirectory()) {
      return errorResult(`Glob: ${JSON.stringify(ws.relative(dir))} is not a directory`);
    }
    return dir;
  } catch (err) {
    if (err instanceof PathError) return errorResult(`Glob: ${err.message}`);
    return errorResult(`Glob: ${describeFsError(err, path)}`);
  }
}

// Start at the pattern's literal directories (`src/lib` of `src/lib/**/*.ts`), but only through real
// directories: the walk never follows symbolic links, so a link there means no match below it (null).
async function walkStart(dir: string, baseSegments: string[]): Promise<string | null> {
  let start = dir;
  for (const segment of baseSegments) {
    const next = join(start, segment);
    const st = await lstat(next).catch(() => undefined);
    if (st === undefined || !st.isDirectory()) return null;
    start = next;
  }
  return start;
}

/** Most recently modified first, then by path; a file gone since the walk sorts last. */
async function sortByMtime(matches: Match[]): Promise<void> {
  for (let i = 0; i < matches.length; i += STAT_CONCURRENCY) {
    await Promise.all(
      matches.slice(i, i + STAT_CONCURRENCY).map(async (m) => {
        const st = await lstat(m.abs).catch(() => undefined);
        m.mtimeMs = st?.mtimeMs ?? Number.NEGATIVE_INFINITY; // vanished since the walk: sorts last
      }),
    );
  }
  matches.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

/** What the result says it left out: matches beyond the cap, an unfinished walk, unreadable directories. */
function globNotes(shown: number, matched: number, walk: FileWalk): string[] {
  const notes: string[] = [];
  if (matched > shown) {
    notes.push(
      `showing the ${shown} most recently modified of ${matched} matching files; narrow the pattern or path to see the others`,
    );
  }
  if (walk.truncated) {
    notes.push(
      `search stopped after scanning ${walk.scanned} files, so some matches may be missing; narrow the pattern or path`,
    );
  }
  if (walk.unreadableDirs > 0) notes.push(`${walk.unreadableDirs} unreadable directories skipped`);
  return notes;
}
