import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Holds src/ to the layer order written in docs/ARCHITECTURE.md: imports point down, never up or sideways,
// and there is no import cycle between files or between folders. The order is read from the doc's
// ```layers block, so the doc is the one place it is written. Today's exceptions are listed below, each
// with the move that removes it; the list may only shrink (an entry that no longer occurs fails too).

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');
const DOC = join(ROOT, 'docs', 'ARCHITECTURE.md');

/**
 * Imports that break the rules today, keyed `from -> to` (paths under src/). Each value starts with the
 * item of the doc's "Not yet" list whose move removes it.
 */
const ALLOWED: Record<string, string> = {};

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
