import { stat } from 'node:fs/promises';
import type { FootprintGlob, PlanFootprint } from '../domain/footprint.js';
import type { ConversationMessage } from '../domain/types.js';
import { MEMORY_FALLBACK, MEMORY_FILES } from './memory.js';
import { normalizeGlob } from './tools/glob-pattern.js';
import { globInput, grepInput, PathError, PLAN_TOOLS, readInput, type Workspace } from './tools/index.js';

// A plan's footprint (domain/footprint.ts), worked out when the plan is proposed from the tool calls of its
// whole conversation (every round of it, each call as stored before it ran) with the tools' own input schemas
// and path resolution (`Workspace.resolve`: the real path, so a symbolic link counts as the file it leads to).
// Conservative by construction: whatever drydock cannot bound makes the footprint unknown (null), and a plan
// without one is stale as soon as its workspace moves.

/** Plan tools that read nothing of the workspace. Any other plan tool must be handled below. */
const READS_NOTHING = new Set(['AskUserQuestion', 'ExitPlanMode']);
const PLAN_TOOL_NAMES = new Set(PLAN_TOOLS.map((t) => t.name));
/** At most this many path-like words of a plan's text are looked at (a plan is at most 100,000 characters). */
const MAX_NAMED = 2000;

/** What could not be bounded: the footprint is unknown. */
class Unbounded extends Error {}

interface Acc {
  files: Set<string>;
  dirs: Set<string>;
  globs: Map<string, FootprintGlob>;
}

/**
 * The footprint of a plan whose conversation is `messages` and whose text is `markdown`, in workspace `ws`:
 * the files Read read, the directories Grep searched (a file Grep searched counts as itself), Glob's directory
 * and pattern, the files and directories the plan's text names (what it says it will change, as far as a
 * path in its words tells), and the project memory files. Null when a call read in a way drydock cannot bound:
 * an MCP tool (its reads are its server's), a plan tool this module does not know, a path outside the
 * workspace or one of drydock's hidden paths.
 */
export async function planFootprint(
  ws: Workspace,
  messages: readonly ConversationMessage[],
  markdown: string,
): Promise<PlanFootprint | null> {
  const acc: Acc = { files: new Set([...MEMORY_FILES, MEMORY_FALLBACK]), dirs: new Set(), globs: new Map() };
  try {
    for (const m of messages) {
      if (m.role !== 'assistant') continue;
      for (const block of m.content) await addCall(ws, acc, block);
    }
  } catch (err) {
    if (err instanceof Unbounded || err instanceof PathError) return null;
    throw err;
  }
  await addNamed(ws, acc, markdown);
  return {
    files: [...acc.files].sort(),
    dirs: [...acc.dirs].sort(),
    globs: [...acc.globs.values()].sort((a, b) => (a.dir + a.pattern < b.dir + b.pattern ? -1 : 1)),
  };
}

/** One content block of an assistant message: a tool call adds what it read. */
async function addCall(ws: Workspace, acc: Acc, block: unknown): Promise<void> {
  const use = block as { type?: unknown; name?: unknown; input?: unknown };
  if (use.type !== 'tool_use' || typeof use.name !== 'string') return;
  const name = use.name;
  if (name === 'Read') {
    const input = readInput.safeParse(use.input);
    // An input the tool refused read nothing.
    if (input.success) acc.files.add(ws.relative(await ws.resolve(input.data.file_path)));
  } else if (name === 'Grep') {
    const input = grepInput.safeParse(use.input);
    if (input.success) acc.dirs.add(ws.relative(await ws.resolve(input.data.path ?? '.')));
  } else if (name === 'Glob') {
    const input = globInput.safeParse(use.input);
    if (!input.success) return;
    const dir = ws.relative(await ws.resolve(input.data.path ?? '.'));
    const pattern = normalizeGlob(input.data.pattern);
    acc.globs.set(`${dir}\0${pattern}`, { dir, pattern });
  } else if (name.startsWith('mcp__')) {
    throw new Unbounded(`${name} reads what its server reads`);
  } else if (PLAN_TOOL_NAMES.has(name) && !READS_NOTHING.has(name)) {
    throw new Unbounded(`${name} is a plan tool whose reads are not known here`);
  }
  // Any other name was refused by the plan phase's gate: it ran nothing.
}

/** The workspace paths a plan's text names: files, and directories (anything below them counts). */
async function addNamed(ws: Workspace, acc: Acc, markdown: string): Promise<void> {
  for (const word of namedPaths(markdown).slice(0, MAX_NAMED)) {
    let abs: string;
    try {
      abs = await ws.resolve(word);
    } catch {
      continue; // Not a path of this workspace: nothing the execution could change.
    }
    const rel = ws.relative(abs);
    if (rel === '.') continue;
    const isDir = await stat(abs).then(
      (s) => s.isDirectory(),
      () => word.endsWith('/'),
    );
    (isDir ? acc.dirs : acc.files).add(rel);
  }
}

/** Characters around a path in prose or markdown: spaces, quotes, code ticks, brackets, list punctuation. */
const SEPARATORS = /[\s`'"()<>[\]{},;*|]+/;
const PATH_LIKE = /^\/?(?:\.\/)?[\w@+-][\w.@+-]*(?:\/[\w.@+-]+)*\/?$/;
const EXTENSION = /\.[A-Za-z][A-Za-z0-9]{0,9}$/;

/**
 * The words of `markdown` that look like paths: with a `/` in them or a file extension (`src/a.ts`,
 * `README.md`, `docs/`), a trailing `:12` line number or sentence punctuation taken off. A word that is not a
 * path of the workspace does no harm: only a change to that very path would count.
 */
export function namedPaths(markdown: string): string[] {
  const found = new Set<string>();
  for (const raw of markdown.split(SEPARATORS)) {
    const word = raw.replace(/(?::\d+(?:-\d+)?)+$/, '').replace(/[.:!?]+$/, '');
    if (word.length < 3 || word.length > 500 || !PATH_LIKE.test(word)) continue;
    if (word.includes('/') || EXTENSION.test(word)) found.add(word);
  }
  return [...found];
}
