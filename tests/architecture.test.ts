import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Holds src/ to the layer order written in docs/ARCHITECTURE.md: imports point down, never up or sideways,
// and there is no import cycle between files or between folders. The order is read from the doc's
// ```layers block, so the doc is the one place it is written. Today's exceptions are listed below, each
// with the move that removes it; the list may only shrink (an entry that no longer occurs fails too).
//
// It also holds the doc's table of units ("What each unit owns") to the tree:
// - Every unit of the first column (`plans/`, `agent/mcp/`, `clock.ts`) exists under src/, and every
//   folder and root .ts file of src/ is a row of the table and a unit of the ```layers block.
// - A path in backticks (it ends in .ts or .sql, or holds a `/`: `policy.ts`, `postgres/listen.ts`,
//   `sql/`) names a file or folder inside the row's unit (a root file's row: inside src/). A path that
//   starts with a folder of src/ (`store/cursors.ts`) is read from src/; one that starts with
//   `migrations/`, `tests/` or `docs/` from the repository root.
// - An identifier in backticks (PascalCase or camelCase: `SlotTransition`, `composeStore`) is owned:
//   some file of the row's unit declares it at its top level (`[export] class|interface|type|function|
//   const|enum NAME`; an import or a re-export does not count). A name the row only mentions (another
//   unit's type, a method) is in NOT_OWNED for that row, with the reason; an entry the row no longer
//   mentions fails too.
// - Outside the table, a path in backticks that starts with `src/`, a folder of src/, `tests/`,
//   `migrations/`, `docs/` or `bench/` exists (but in the paragraph "Moved so far", which names old places).
// - The Tests section lists, as `- \`tests/<name>/\``, exactly the folders of tests/ that do not mirror a
//   folder of src/.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');
const DOC = join(ROOT, 'docs', 'ARCHITECTURE.md');

/**
 * Imports that break the rules today, keyed `from -> to` (paths under src/). Each value starts with the
 * item of the doc's "Not yet" list whose move removes it.
 */
const ALLOWED: Record<string, string> = {};

/**
 * Identifiers a row of the doc's table mentions but does not own, keyed by the row's first cell. Each value
 * says why the row names it. Keep it short: prefer wording in the doc that names what the row owns.
 */
const NOT_OWNED: Record<string, Record<string, string>> = {
  '`clock.ts`, `ids.ts`, `logger.ts`, `paths.ts`, `pass-loop.ts`': { wakeIn: 'a method of `PassLoop`' },
  '`store/`': {
    SlotTransition: "the domain's decision (domain/slot-transition.ts) that the store applies",
    onWake: 'a method of the store parts (wakes.ts)',
    advanceJobs: 'a method of the store parts (jobs.ts)',
    decidePlan: 'a method of the store parts (plans.ts)',
    fireTrigger: 'a method of the store parts (triggers.ts)',
    createScheduleTrigger: 'a method of the store parts (triggers.ts)',
    closeSession: 'a method of the store parts (sessions.ts)',
  },
  '`reactions/`': {
    PassLoop: 'the loop of src/pass-loop.ts the reactions run on',
    ReactionCursorStore: 'the store part holding the cursors, named with its file (store/cursors.ts)',
  },
  '`scheduler/`': {
    DecideFn: "the domain's type (domain/slot-transition.ts) that decide.ts implements",
    SlotTransition: "the domain's decision (domain/slot-transition.ts) that decide.ts returns",
  },
  '`plans/`': { PlanRecorder: "the domain's port (domain/plan-status.ts) that plans/ implements" },
};

// ---- scanning

interface Import {
  specifier: string;
  typeOnly: boolean;
}

/**
 * Every module a file names: `import ... from`, `export ... from`, `import '...'` (all at the start of a
 * line, as the formatter writes them; type-only ones too) and `import('...')` anywhere.
 */
function scanImports(text: string): Import[] {
  const found: Import[] = [];
  const statement = /^(import|export)\s+(type\s+)?([\w$*{},\s]*?)\s*from\s*(['"])([^'"\n]+)\4/gm;
  for (const m of text.matchAll(statement)) {
    const clause = (m[3] ?? '').trim();
    const named = /^\{([^}]*)\}$/.exec(clause);
    const allTypes =
      named !== null &&
      named[1]!
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')
        .every((s) => s.startsWith('type '));
    found.push({ specifier: m[5]!, typeOnly: m[2] !== undefined || allTypes });
  }
  for (const m of text.matchAll(/^import\s*(['"])([^'"\n]+)\1/gm)) {
    found.push({ specifier: m[2]!, typeOnly: false });
  }
  for (const m of text.matchAll(/\bimport\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g)) {
    found.push({ specifier: m[2]!, typeOnly: false });
  }
  return found;
}

/** Lines that open an import statement; each must be one the scanner understood. */
function importLines(text: string): number {
  return [...text.matchAll(/^import[\s{*'"]/gm)].length;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The file a relative specifier names (path under src/), or null for a package. Throws when it names none. */
function resolveSpecifier(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const target = resolve(dirname(join(SRC, from)), specifier);
  const candidates = [target.replace(/\.js$/, '.ts'), target, `${target}.ts`, join(target, 'index.ts')];
  const hit = candidates.find((c) => c.endsWith('.ts') && existsSync(c));
  if (hit === undefined) throw new Error(`src/${from}: cannot resolve import '${specifier}'`);
  const path = relative(SRC, hit);
  if (path.startsWith('..')) throw new Error(`src/${from}: import '${specifier}' leaves src/`);
  return path;
}

/** The unit a file belongs to: its folder under src/, or the file itself at the root of src/. */
function unitOf(path: string): string {
  const slash = path.indexOf('/');
  return slash === -1 ? path : path.slice(0, slash);
}

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

function importGraph(): { files: string[]; edges: Edge[]; unscanned: string[] } {
  const files = sourceFiles(SRC)
    .map((f) => relative(SRC, f))
    .sort();
  const edges: Edge[] = [];
  const unscanned: string[] = [];
  for (const from of files) {
    const text = readFileSync(join(SRC, from), 'utf8');
    const imports = scanImports(text);
    const statements = imports.length - [...text.matchAll(/\bimport\s*\(/g)].length;
    if (importLines(text) > statements) unscanned.push(from);
    const seen = new Map<string, Edge>();
    for (const i of imports) {
      const to = resolveSpecifier(from, i.specifier);
      if (to === null || to === from) continue;
      const known = seen.get(to);
      // One edge per pair of files; it is type-only when every import of that file is.
      if (known) known.typeOnly &&= i.typeOnly;
      else seen.set(to, { from, to, typeOnly: i.typeOnly });
    }
    edges.push(...seen.values());
  }
  return { files, edges, unscanned };
}

// ---- the layer order, from the doc

function docText(): string {
  return readFileSync(DOC, 'utf8');
}

/** Unit -> layer number, from the ```layers block of docs/ARCHITECTURE.md. */
function parseLayers(doc: string): Map<string, number> {
  const block = /^```layers\n([\s\S]*?)^```/m.exec(doc);
  if (block === null) throw new Error('docs/ARCHITECTURE.md has no ```layers block');
  const layers = new Map<string, number>();
  for (const line of block[1]!.split('\n')) {
    if (line.trim() === '') continue;
    const [level, ...units] = line.trim().split(/\s+/);
    if (!/^\d+$/.test(level!) || units.length === 0)
      throw new Error(`layers block: expected "<number> <unit> ...", got "${line}"`);
    for (const unit of units) {
      if (layers.has(unit)) throw new Error(`layers block: ${unit} is listed twice`);
      layers.set(unit, Number(level));
    }
  }
  return layers;
}

/** The bold tags of the doc's "Not yet" list (`- **tag** ...`). */
function notYetTags(doc: string): Set<string> {
  const section = /^## Not yet\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(doc);
  if (section === null) throw new Error('docs/ARCHITECTURE.md has no "## Not yet" section');
  return new Set([...section[1]!.matchAll(/^- \*\*([^*]+)\*\*/gm)].map((m) => m[1]!));
}

/** The layers of the doc's mermaid picture: node `L<n>["a · b"]` -> n -> [a, b]. */
function pictureLayers(doc: string): Map<number, string[]> {
  const block = /^```mermaid\n([\s\S]*?)^```/m.exec(doc);
  if (block === null) throw new Error('docs/ARCHITECTURE.md has no ```mermaid picture');
  const layers = new Map<number, string[]>();
  for (const m of block[1]!.matchAll(/L(\d+)\["([^"]*)"\]/g)) {
    layers.set(
      Number(m[1]),
      m[2]!.split('·').map((u) => u.trim()),
    );
  }
  return layers;
}

// ---- the table of units, from the doc

interface UnitRow {
  /** The first cell as written, e.g. "`auth/`, `metrics/`": the key of NOT_OWNED. */
  cell: string;
  /** Its units: `plans/`, `agent/mcp/`, `clock.ts`. */
  units: string[];
  /** The second cell. */
  owns: string;
}

/** The rows of the doc's table under "## What each unit owns". */
function unitRows(doc: string): UnitRow[] {
  const section = /^## What each unit owns\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(doc);
  if (section === null) throw new Error('docs/ARCHITECTURE.md has no "## What each unit owns" section');
  const rows: UnitRow[] = [];
  for (const m of section[1]!.matchAll(/^\| (.+?) \| (.*) \|$/gm)) {
    const cell = m[1]!;
    const units = [...cell.matchAll(/`([^`]+)`/g)].map((u) => u[1]!);
    if (units.length === 0) continue; // the header row
    rows.push({ cell, units, owns: m[2]! });
  }
  if (rows.length === 0) throw new Error('the "What each unit owns" table has no rows');
  return rows;
}

const backticked = (text: string): string[] => [
  ...new Set([...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!)),
];

/** `policy.ts`, `migrations/postgres/000003_wakeups.sql`, `postgres/listen.ts`, `agent/tools/`. */
function isPath(name: string): boolean {
  return /^[\w.-]+(\/[\w.-]+)*\/?$/.test(name) && (/\.(ts|sql)$/.test(name) || name.includes('/'));
}

/** `SlotTransition`, `RunEvents`, `composeStore`, `dataOf` (not `API_STATUS`, not `reconcile`). */
function isIdentifier(name: string): boolean {
  return /^[A-Z][a-z0-9]+([A-Z][a-z0-9]*)*$/.test(name) || /^[a-z][a-z0-9]*([A-Z][a-z0-9]*)+$/.test(name);
}

/** Every .ts file at a path under src/ (a folder: all its files, also in subfolders; a file: itself). */
function unitFiles(src: string, unit: string): string[] {
  const path = join(src, unit);
  if (!existsSync(path)) return [];
  return statSync(path).isDirectory() ? sourceFiles(path) : [path];
}

/** The names a file declares at its top level, exported or not (not the ones it imports or re-exports). */
function declaredNames(text: string): string[] {
  const definition =
    /^(?:export\s+)?(?:declare\s+)?(?:default\s+)?(?:abstract\s+)?(?:async\s+)?(?:class|interface|type|function\*?|const|let|enum)\s+([A-Za-z_$][\w$]*)/gm;
  return [...text.matchAll(definition)].map((m) => m[1]!);
}

/**
 * What is false in the doc's table about the tree at `root` (which holds src/): one line per problem,
 * naming the row and the name. `notOwned` is NOT_OWNED.
 */
function tableProblems(
  doc: string,
  root: string,
  notOwned: Record<string, Record<string, string>>,
): string[] {
  const src = join(root, 'src');
  const problems: string[] = [];
  const rows = unitRows(doc);
  const srcEntries = readdirSync(src, { withFileTypes: true });
  const srcFolders = new Set(srcEntries.filter((e) => e.isDirectory()).map((e) => e.name));
  const layers = parseLayers(doc);
  const tabled = new Set(rows.flatMap((r) => r.units));
  for (const e of srcEntries) {
    if (!e.isDirectory() && !e.name.endsWith('.ts')) continue;
    const unit = e.isDirectory() ? `${e.name}/` : e.name;
    if (!tabled.has(unit)) problems.push(`src/${unit} has no row in the table of units`);
    if (!layers.has(e.name)) problems.push(`src/${unit} is not in the \`\`\`layers block`);
  }
  for (const row of rows) {
    const where = `row ${row.cell}`;
    for (const unit of row.units) {
      const path = join(src, unit);
      const isFolder = unit.endsWith('/');
      if (!existsSync(path) || statSync(path).isDirectory() !== isFolder)
        problems.push(`${where}: the unit \`${unit}\` is not a ${isFolder ? 'folder' : 'file'} of src/`);
    }
    const bases = row.units.map((u) => (u.endsWith('/') ? join(src, u) : src));
    const names = backticked(row.owns);
    for (const name of names.filter(isPath)) {
      const first = name.slice(0, name.indexOf('/'));
      const candidates = [
        ...bases.map((b) => join(b, name)),
        ...(srcFolders.has(first) ? [join(src, name)] : []),
        ...(['migrations', 'tests', 'docs'].includes(first) ? [join(root, name)] : []),
      ];
      const found = candidates.some(
        (c) => existsSync(c) && (!name.endsWith('/') || statSync(c).isDirectory()),
      );
      if (!found) problems.push(`${where}: \`${name}\` is not a path inside ${row.units.join(', ')}`);
    }
    const mentioned = notOwned[row.cell] ?? {};
    const defined = new Set(
      row.units.flatMap((u) => unitFiles(src, u)).flatMap((f) => declaredNames(readFileSync(f, 'utf8'))),
    );
    for (const name of names.filter(isIdentifier)) {
      if (defined.has(name) || mentioned[name] !== undefined) continue;
      problems.push(
        `${where}: \`${name}\` is not defined by any file of ${row.units.join(', ')} ` +
          "(if the row only mentions it, add it to the row's NOT_OWNED entry with the reason)",
      );
    }
    for (const name of Object.keys(mentioned).filter((n) => !names.includes(n)))
      problems.push(`${where}: NOT_OWNED lists \`${name}\`, which the row no longer mentions: delete it`);
  }
  const cells = new Set(rows.map((r) => r.cell));
  for (const cell of Object.keys(notOwned).filter((c) => !cells.has(c)))
    problems.push(`NOT_OWNED has an entry for ${cell}, which is no row of the table: delete or rename it`);
  return problems;
}

/**
 * Paths the doc names outside the table that are not there: a path in backticks that starts with `src/`,
 * a folder of src/ (read from src/), or `tests/`, `migrations/`, `docs/`, `bench/` (from the repository
 * root). The paragraph that starts "Moved so far" names old places on purpose and is skipped.
 */
function proseProblems(doc: string, root: string): string[] {
  const src = join(root, 'src');
  const srcFolders = new Set(
    readdirSync(src, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name),
  );
  const prose = doc
    .split(/\n(?=\n)/)
    .filter((paragraph) => !paragraph.trimStart().startsWith('Moved so far'))
    .join('\n')
    .replace(/^\|.*\|$/gm, '');
  return backticked(prose)
    .filter(isPath)
    .filter((name) => {
      const first = name.slice(0, name.indexOf('/'));
      if (srcFolders.has(first)) return !existsSync(join(src, name));
      if (['src', 'tests', 'migrations', 'docs', 'bench'].includes(first))
        return !existsSync(join(root, name));
      return false;
    })
    .map((name) => `\`${name}\` (outside the table) is not a path of the repository`);
}

/** The folders the Tests section lists as `- \`tests/<name>/\``. */
function listedTestFolders(doc: string): string[] {
  const section = /^## Tests\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(doc);
  if (section === null) throw new Error('docs/ARCHITECTURE.md has no "## Tests" section');
  return [...section[1]!.matchAll(/^- `tests\/([\w.-]+)\/`/gm)].map((m) => m[1]!).sort();
}

/** What is false in the Tests section's list about the folders of tests/ that do not mirror src/. */
function testFolderProblems(doc: string, root: string): string[] {
  const folders = (dir: string) =>
    readdirSync(join(root, dir), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  const mirrored = new Set(folders('src'));
  const own = folders('tests').filter((f) => !mirrored.has(f));
  const listed = listedTestFolders(doc);
  return [
    ...own.filter((f) => !listed.includes(f)).map((f) => `tests/${f}/ is not listed in the Tests section`),
    ...listed
      .filter((f) => !own.includes(f))
      .map((f) =>
        mirrored.has(f)
          ? `the Tests section lists tests/${f}/, which mirrors src/${f}/: drop it from the list`
          : `the Tests section lists tests/${f}/, which does not exist`,
      ),
  ];
}

// ---- graph checks

/** Strongly connected components with more than one node (Tarjan), each sorted. */
function cycles(nodes: string[], next: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return found;
}

function adjacency(pairs: [string, string][]): Map<string, string[]> {
  const next = new Map<string, string[]>();
  for (const [a, b] of pairs) {
    const list = next.get(a) ?? [];
    if (!list.includes(b)) list.push(b);
    next.set(a, list);
  }
  return next;
}

const key = (e: Edge): string => `${e.from} -> ${e.to}`;

interface Violation {
  edge: Edge;
  why: string;
}

/**
 * Every import that breaks a rule: one that points up or sideways the layer order, or one inside a folder
 * that lies on a cycle of files (u -> v where v imports its way back to u). A cycle between folders always
 * has an edge that is not downward, so it shows as an "up" violation.
 */
function violations(edges: Edge[], layers: Map<string, number>): Violation[] {
  const found: Violation[] = [];
  const fileCycles = cycles(
    [...new Set(edges.flatMap((e) => [e.from, e.to]))].sort(),
    adjacency(edges.map((e) => [e.from, e.to])),
  );
  const component = new Map<string, number>();
  fileCycles.forEach((c, i) => {
    for (const f of c) component.set(f, i);
  });
  for (const e of edges) {
    const a = unitOf(e.from);
    const b = unitOf(e.to);
    const la = layers.get(a)!;
    const lb = layers.get(b)!;
    if (a !== b && lb >= la) {
      const how = lb > la ? 'up' : 'sideways';
      found.push({ edge: e, why: `${how}: ${a} (layer ${la}) imports ${b} (layer ${lb})` });
    } else if (component.has(e.from) && component.get(e.from) === component.get(e.to)) {
      found.push({ edge: e, why: `cycle of files: ${fileCycles[component.get(e.from)!]!.join(', ')}` });
    }
  }
  return found;
}

function show(v: Violation): string {
  const typeOnly = v.edge.typeOnly ? ' (type-only)' : '';
  return `  src/${v.edge.from} -> src/${v.edge.to}${typeOnly}\n      ${v.why}`;
}

// ---- the tests

describe('the import scanner', () => {
  it('finds static, type-only, multi-line, re-export, side-effect and dynamic imports', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "import { type C, type D } from './cd.js';",
      "import e, { type F } from './ef.js';",
      'import {',
      '  g,',
      '  h as i,',
      "} from './gh.js';",
      "import * as ns from './ns.js';",
      "import './side.js';",
      "export * from './all.js';",
      "export type { J } from './j.js';",
      "export { k as default } from './k.js';",
      "const m = await import('./lazy.js');",
      "import { z } from 'zod';",
      '// import { not } from "./comment.js"',
      "const s = 'text that says from \\'./nothing.js\\'';",
    ].join('\n');
    expect(scanImports(text)).toEqual([
      { specifier: './a.js', typeOnly: false },
      { specifier: '../b.js', typeOnly: true },
      { specifier: './cd.js', typeOnly: true },
      { specifier: './ef.js', typeOnly: false },
      { specifier: './gh.js', typeOnly: false },
      { specifier: './ns.js', typeOnly: false },
      { specifier: './all.js', typeOnly: false },
      { specifier: './j.js', typeOnly: true },
      { specifier: './k.js', typeOnly: false },
      { specifier: 'zod', typeOnly: false },
      { specifier: './side.js', typeOnly: false },
      { specifier: './lazy.js', typeOnly: false },
    ]);
    expect(importLines(text)).toBe(8);
  });

  it('reads the layers block of the doc', () => {
    const layers = parseLayers('x\n```layers\n 2  http  ui\n 0  domain  clock.ts\n```\n');
    expect([...layers]).toEqual([
      ['http', 2],
      ['ui', 2],
      ['domain', 0],
      ['clock.ts', 0],
    ]);
    expect(() => parseLayers('```layers\nhttp\n```\n')).toThrow(/expected "<number> <unit>/);
    expect(() => parseLayers('```layers\n1 a\n0 a\n```\n')).toThrow(/a is listed twice/);
  });
});

describe('the checker of the table of units', () => {
  // A small tree and a doc that is false once in each way the checker knows, beside claims that are true.
  const doc = [
    '```layers',
    ' 1  plans  clock.ts',
    ' 0  domain',
    '```',
    '## What each unit owns',
    '',
    '| unit | owns |',
    '|---|---|',
    "| `plans/` | terms (`policy.ts`, `approve`, `sql/`), the `mcp/` folder, `missing.ts`, `domain/types.ts`, the domain's `RunStatus` (re-exported), `Ghost`, `Store` |",
    '| `clock.ts` | the clock `Clock`, the `Later` type |',
    '| `ghost/` | nothing |',
    '',
    '## Tests',
    '',
    '- `tests/support/` helpers.',
    '- `tests/plans/` mirrors src/plans/.',
    '- `tests/gone/` was moved.',
    '',
    'Rules name `plans/policy.ts`, `src/clock.ts`, `plans/rules.ts` and `tests/nowhere/`, not `elsewhere/x.ts`.',
    '',
    'Moved so far: `tests/old/` → `tests/plans/`.',
    '',
  ].join('\n');
  const notOwned = {
    '`plans/`': { Store: 'taken, not owned' },
    '`clock.ts`': { Later: 'mentioned', Earlier: 'no longer mentioned' },
    '`old/`': { Old: 'a row that is gone' },
  };

  const tree = (): string => {
    const root = mkdtempSync(join(tmpdir(), 'drydock-arch-'));
    const file = (path: string, text: string): void => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    file('src/plans/policy.ts', 'export function approve(): void {}\n');
    file('src/plans/sql/query.ts', 'const q = 1;\n');
    file('src/plans/index.ts', "export type { RunStatus } from '../domain/types.js';\n");
    file('src/plans/mcp', 'a file, not a folder\n');
    file('src/domain/types.ts', 'export type RunStatus = string;\n');
    file('src/clock.ts', 'class Clock {}\n');
    file('src/extra.ts', 'export const extra = 1;\n');
    for (const dir of ['support', 'plans', 'extra']) mkdirSync(join(root, 'tests', dir), { recursive: true });
    return root;
  };

  it('names the row and the name of every false claim, and nothing that is true', () => {
    const root = tree();
    try {
      expect(tableProblems(doc, root, notOwned).sort()).toEqual(
        [
          'src/domain/ has no row in the table of units',
          'src/extra.ts has no row in the table of units',
          'src/extra.ts is not in the ```layers block',
          'row `plans/`: `mcp/` is not a path inside plans/',
          'row `plans/`: `missing.ts` is not a path inside plans/',
          "row `plans/`: `RunStatus` is not defined by any file of plans/ (if the row only mentions it, add it to the row's NOT_OWNED entry with the reason)",
          "row `plans/`: `Ghost` is not defined by any file of plans/ (if the row only mentions it, add it to the row's NOT_OWNED entry with the reason)",
          'row `clock.ts`: NOT_OWNED lists `Earlier`, which the row no longer mentions: delete it',
          'row `ghost/`: the unit `ghost/` is not a folder of src/',
          'NOT_OWNED has an entry for `old/`, which is no row of the table: delete or rename it',
        ].sort(),
      );
      expect(testFolderProblems(doc, root).sort()).toEqual(
        [
          'tests/extra/ is not listed in the Tests section',
          'the Tests section lists tests/plans/, which mirrors src/plans/: drop it from the list',
          'the Tests section lists tests/gone/, which does not exist',
        ].sort(),
      );
      expect(proseProblems(doc, root).sort()).toEqual(
        [
          '`plans/rules.ts` (outside the table) is not a path of the repository',
          '`tests/gone/` (outside the table) is not a path of the repository',
          '`tests/nowhere/` (outside the table) is not a path of the repository',
        ].sort(),
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('tells paths and identifiers from other words in backticks', () => {
    expect(
      ['policy.ts', 'postgres/listen.ts', 'sql/', 'migrations/postgres/000003_wakeups.sql'].every(isPath),
    ).toBe(true);
    expect(['/v1', 'store.js', 'worktrees/<plan>', 'CLAUDE.md', 'FOR SHARE'].some(isPath)).toBe(false);
    expect(['SlotTransition', 'Store', 'composeStore', 'dataOf', 'OpenAPI'].every(isIdentifier)).toBe(true);
    expect(
      ['API_STATUS', 'reconcile', 'GREATEST', 'mcp__<server>__<tool>', 'json_extract'].some(isIdentifier),
    ).toBe(false);
  });
});

describe('the architecture of src/ (docs/ARCHITECTURE.md)', () => {
  const { files, edges, unscanned } = importGraph();
  const doc = docText();
  const layers = parseLayers(doc);

  it('scans every import statement of src/', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(edges.length).toBeGreaterThan(files.length);
    expect(unscanned, 'files with an import statement the scanner could not read').toEqual([]);
  });

  it('draws the same layers in the picture as in the layers block', () => {
    const fromBlock = new Map<number, string[]>();
    for (const [unit, level] of layers) fromBlock.set(level, [...(fromBlock.get(level) ?? []), unit]);
    const sorted = (m: Map<number, string[]>) => [...m].map(([l, us]) => [l, [...us].sort()]).sort();
    expect(sorted(pictureLayers(doc))).toEqual(sorted(fromBlock));
  });

  it('places every folder and root file of src/ in a layer', () => {
    const unplaced = [...new Set(files.map(unitOf))].filter((u) => !layers.has(u));
    expect(unplaced, 'add these to the ```layers block of docs/ARCHITECTURE.md').toEqual([]);
  });

  it('has no import pointing up or sideways and no file cycle, but for the listed ones', () => {
    const found = violations(edges, layers);
    const unlisted = found.filter((v) => ALLOWED[key(v.edge)] === undefined);
    const current = new Set(found.map((v) => key(v.edge)));
    const gone = Object.keys(ALLOWED).filter((k) => !current.has(k));
    const report = [
      unlisted.length > 0 ? `imports that break the layer rules:\n${unlisted.map(show).join('\n')}` : '',
      gone.length > 0
        ? `allowed exceptions that no longer occur (delete them here and in the doc's "Not yet" list):\n${gone.map((k) => `  ${k}`).join('\n')}`
        : '',
    ]
      .filter((s) => s !== '')
      .join('\n\n');
    expect(report, report).toBe('');
  });

  it('has no cycle between files or between folders once the listed exceptions are gone', () => {
    const kept = edges.filter((e) => ALLOWED[key(e)] === undefined);
    const fileCycles = cycles(files, adjacency(kept.map((e) => [e.from, e.to])));
    const units = [...new Set(files.map(unitOf))].sort();
    const folderCycles = cycles(
      units,
      adjacency(
        kept.filter((e) => unitOf(e.from) !== unitOf(e.to)).map((e) => [unitOf(e.from), unitOf(e.to)]),
      ),
    );
    expect(fileCycles.map((c) => c.join(' <-> '))).toEqual([]);
    expect(folderCycles.map((c) => c.join(' <-> '))).toEqual([]);
  });

  it('keeps src/domain/ free of imports of ours', () => {
    const out = edges.filter((e) => unitOf(e.from) === 'domain' && unitOf(e.to) !== 'domain').map(key);
    expect(out).toEqual([]);
  });

  it('names, for every listed exception, an item of the doc\'s "Not yet" list', () => {
    const tags = notYetTags(doc);
    const unnamed = Object.entries(ALLOWED)
      .filter(([, fix]) => !tags.has(fix.slice(0, fix.indexOf(':'))))
      .map(([k, fix]) => `${k}: ${fix}`);
    expect(unnamed, `"Not yet" lists: ${[...tags].join(', ')}`).toEqual([]);
  });
});

describe('the table of units and the list of test folders (docs/ARCHITECTURE.md)', () => {
  const doc = docText();

  it('says only what is true of src/: its units, the paths and the identifiers each row owns', () => {
    const problems = tableProblems(doc, ROOT, NOT_OWNED);
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('names only paths that exist outside the table too', () => {
    const problems = proseProblems(doc, ROOT);
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('lists every folder of tests/ that does not mirror a folder of src/, and only those', () => {
    const problems = testFolderProblems(doc, ROOT);
    expect(problems, problems.join('\n')).toEqual([]);
  });
});
