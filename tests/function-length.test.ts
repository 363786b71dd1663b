import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from '@babel/parser';
import { describe, expect, it } from 'vitest';

// Holds every function of src/ to at most 80 lines, first line to last. The files are parsed with a real
// TypeScript parser (@babel/parser, its typescript plugin), so a function is what the language says it
// is: a function declaration or expression, an arrow function, an object method, a class method,
// constructor, getter or setter. Nothing else is measured (interface members, type literals and tables
// held in constants are not functions).
//
// The one exception is a table: a function whose whole body is a single object or array literal, returned
// (`{ return { ... }; }`) or as an arrow's expression body (`() => ({ ... })`), optionally `as const` or
// `satisfies T`. A table has no control flow to read; the functions written inside it are measured on
// their own. A browser script held in a string is a string to this parser and is not measured.
//
// A function allowed over the limit would be listed in ALLOWED with the reason; the list is empty and may
// only shrink (an entry that is no longer over the limit fails too).

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');
const LIMIT = 80;

/** Functions allowed over the limit, keyed `path under src/#name` (see `nameOf`), each with its reason. */
const ALLOWED: Record<string, string> = {};

// ---- parsing

interface Loc {
  start: { line: number };
  end: { line: number };
}

interface AstNode {
  type: string;
  loc?: Loc | null;
  [field: string]: unknown;
}

const FUNCTION_TYPES = new Set([
  'FunctionDeclaration',
  'FunctionExpression',
  'ArrowFunctionExpression',
  'ObjectMethod',
  'ClassMethod',
  'ClassPrivateMethod',
]);

interface Measured {
  file: string;
  name: string;
  line: number;
  lines: number;
  table: boolean;
}

function isNode(value: unknown): value is AstNode {
  return typeof value === 'object' && value !== null && typeof (value as AstNode).type === 'string';
}

function children(node: AstNode): AstNode[] {
  const out: AstNode[] = [];
  for (const [field, value] of Object.entries(node)) {
    if (field === 'loc' || field.endsWith('Comments')) continue;
    if (Array.isArray(value)) out.push(...value.filter(isNode));
    else if (isNode(value)) out.push(value);
  }
  return out;
}

/** The name a key or binding is written with: `foo`, `'foo'`, `#foo`, `[computed]`. */
function keyName(key: unknown): string | null {
  if (!isNode(key)) return null;
  if (key.type === 'Identifier') return key.name as string;
  if (key.type === 'PrivateName') return `#${keyName(key.id)}`;
  if (key.type === 'StringLiteral' || key.type === 'NumericLiteral') return String(key.value);
  return '[computed]';
}

/** What a callee is written as, for naming a function passed to it: `app.get`, `describe`. */
function calleeText(callee: unknown): string {
  if (!isNode(callee)) return '?';
  if (callee.type === 'Identifier') return callee.name as string;
  if (callee.type === 'MemberExpression') return `${calleeText(callee.object)}.${keyName(callee.property)}`;
  if (callee.type === 'ThisExpression') return 'this';
  return callee.type;
}

/**
 * A function's own name, from its declaration or from where it stands: the variable, property, class
 * member or assignment it is the value of, or the call it is an argument of (`app.get(...)`).
 */
function ownName(fn: AstNode, parent: AstNode | null, grandparent: AstNode | null): string {
  if (fn.type === 'ObjectMethod' || fn.type === 'ClassMethod' || fn.type === 'ClassPrivateMethod') {
    const name = keyName(fn.key) ?? '?';
    return fn.kind === 'get' || fn.kind === 'set' ? `${fn.kind} ${name}` : name;
  }
  if (isNode(fn.id)) return keyName(fn.id) ?? '?';
  if (parent === null) return '(anonymous)';
  switch (parent.type) {
    case 'VariableDeclarator':
      return keyName(parent.id) ?? '?';
    case 'ObjectProperty':
    case 'ClassProperty':
    case 'ClassPrivateProperty':
      return keyName(parent.key) ?? '?';
    case 'AssignmentExpression':
      return calleeText(parent.left);
    case 'CallExpression':
    case 'NewExpression':
      return `${calleeText(parent.callee)}(…)`;
    case 'TSAsExpression':
    case 'TSSatisfiesExpression':
    case 'ParenthesizedExpression':
      return grandparent?.type === 'VariableDeclarator' ? (keyName(grandparent.id) ?? '?') : '(anonymous)';
    default:
      return '(anonymous)';
  }
}

function unwrap(node: unknown): unknown {
  let n = node;
  while (
    isNode(n) &&
    (n.type === 'TSAsExpression' ||
      n.type === 'TSSatisfiesExpression' ||
      n.type === 'ParenthesizedExpression')
  ) {
    n = n.expression;
  }
  return n;
}

function isLiteralTable(node: unknown): boolean {
  const n = unwrap(node);
  return isNode(n) && (n.type === 'ObjectExpression' || n.type === 'ArrayExpression');
}

/** A table: the whole body is one object or array literal, returned or as an arrow's expression body. */
function isTable(fn: AstNode): boolean {
  const body = fn.body;
  if (!isNode(body)) return false;
  if (body.type !== 'BlockStatement') return isLiteralTable(body);
  const statements = body.body as AstNode[];
  return (
    statements.length === 1 &&
    statements[0]!.type === 'ReturnStatement' &&
    isLiteralTable(statements[0]!.argument)
  );
}

/**
 * Every function of one file's source, named by the path of named functions and classes it sits in
 * (`Runner.execute`, `queueRoutes/app.get(…)`); a name repeated in the same scope gets `#2`, `#3`.
 */
function measure(file: string, text: string): Measured[] {
  const ast = parse(text, { sourceType: 'module', plugins: ['typescript'], sourceFilename: file });
  const found: Measured[] = [];
  const seen = new Map<string, number>();
  const visit = (node: AstNode, parent: AstNode | null, grandparent: AstNode | null, scope: string) => {
    let inner = scope;
    if (FUNCTION_TYPES.has(node.type) && node.loc) {
      const base = `${scope}${ownName(node, parent, grandparent)}`;
      const n = (seen.get(base) ?? 0) + 1;
      seen.set(base, n);
      const name = n === 1 ? base : `${base}#${n}`;
      found.push({
        file,
        name,
        line: node.loc.start.line,
        lines: node.loc.end.line - node.loc.start.line + 1,
        table: isTable(node),
      });
      inner = `${name}/`;
    } else if ((node.type === 'ClassDeclaration' || node.type === 'ClassExpression') && isNode(node.id)) {
      inner = `${scope}${keyName(node.id)}.`;
    }
    for (const child of children(node)) visit(child, node, parent, inner);
  };
  visit(ast.program as unknown as AstNode, null, null, '');
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function measureSrc(): Measured[] {
  return sourceFiles(SRC)
    .map((f) => relative(SRC, f))
    .sort()
    .flatMap((file) => measure(file, readFileSync(join(SRC, file), 'utf8')));
}

const key = (m: Measured) => `${m.file}#${m.name}`;

// ---- the checks

describe('the function measurement', () => {
  it('measures every kind of function, first line to last, and names it by where it stands', () => {
    const text = [
      'export function declared(a: number): number {', // 1
      '  const inner = (b: number) => {', // 2
      '    return b;', // 3
      '  };', // 4
      '  return inner(a);', // 5
      '}', // 6
      'class Runner {', // 7
      '  constructor(private readonly n: number) {}', // 8
      '  get size(): number { return this.n; }', // 9
      '  private async loop(): Promise<void> {', // 10
      '    items.map(function (x) { return x; });', // 11
      '  }', // 12
      '  field = async () => {', // 13
      '  };', // 14
      '}', // 15
      'const handlers = { on() { return 1; }, off: () => 2 };', // 16
      "app.get('/', async (c) => c);", // 17
      "app.get('/x', async (c) => c);", // 18
      'interface Shape { method(): void; }', // 19
    ].join('\n');
    const got = measure('x.ts', text).map((m) => [m.name, m.line, m.lines]);
    expect(got).toEqual([
      ['declared', 1, 6],
      ['declared/inner', 2, 3],
      ['Runner.constructor', 8, 1],
      ['Runner.get size', 9, 1],
      ['Runner.loop', 10, 3],
      ['Runner.loop/items.map(…)', 11, 1],
      ['Runner.field', 13, 2],
      ['on', 16, 1],
      ['off', 16, 1],
      ['app.get(…)', 17, 1],
      ['app.get(…)#2', 18, 1],
    ]);
  });

  it('takes as a table only a body that is one object or array literal', () => {
    const text = [
      'function a() { return { x: 1 }; }',
      'const b = () => ({ x: 1 }) as const;',
      'function c() { return [1, 2] satisfies number[]; }',
      'function d() { const t = { x: 1 }; return t; }',
      'function e() { return f({ x: 1 }); }',
      'const g = () => [1].map((x) => x);',
    ].join('\n');
    const tables = measure('x.ts', text)
      .filter((m) => m.table)
      .map((m) => m.name);
    expect(tables).toEqual(['a', 'b', 'c']);
  });
});

describe('the functions of src/', () => {
  const all = measureSrc();

  it('parses every file of src/', () => {
    expect(all.length).toBeGreaterThan(1000);
  });

  it(`has no function over ${LIMIT} lines but tables and the listed ones`, () => {
    const over = all.filter((m) => m.lines > LIMIT && !m.table);
    const unlisted = over.filter((m) => ALLOWED[key(m)] === undefined);
    const current = new Set(over.map(key));
    const gone = Object.keys(ALLOWED).filter((k) => !current.has(k));
    const report = [
      unlisted.length > 0
        ? `functions over ${LIMIT} lines (split them into named helpers):\n${unlisted
            .map((m) => `  src/${m.file}:${m.line} ${m.name} (${m.lines} lines)`)
            .join('\n')}`
        : '',
      gone.length > 0
        ? `allowed functions no longer over ${LIMIT} lines (delete them from ALLOWED):\n${gone.map((k) => `  ${k}`).join('\n')}`
        : '',
    ]
      .filter((s) => s !== '')
      .join('\n\n');
    expect(report, report).toBe('');
  });
});
