// Glob patterns compiled to regular expressions over `/`-separated relative paths.
//
//   *        any run of characters except `/`
//   ?        one character except `/`
//   **       as a whole path segment: zero or more directories (`**/x`, `a/**/b`, `a/**`); elsewhere like `*`
//   [abc]    one of the characters; ranges `[a-z]`; negation `[!abc]` or `[^abc]`; never matches `/`
//   {a,b}    either alternative; alternatives may nest and hold any of the above, `/` included
//   \x       the character x itself
//
// `*` and `?` match a leading dot too (hidden files are not special). Matching is case-sensitive.

export class GlobPatternError extends Error {
  override name = 'GlobPatternError';
}

export interface CompiledGlob {
  /** Anchored; tested against a whole relative path such as `src/a/b.ts`. */
  regex: RegExp;
  /** Leading directories with no special characters (`src/lib` for `src/lib/**` + `/*.ts`); '' if none. */
  base: string;
  /** Most path segments a match can have; Infinity when `**` (or a `{...}` holding `/`) makes it unbounded. */
  maxDepth: number;
}

export const MAX_GLOB_PATTERN_CHARS = 1000;
const MAX_BRACE_DEPTH = 10;

const REGEX_SYNTAX = new Set('^$\\.*+?()[]{}|/');
const CLASS_SYNTAX = new Set('\\]^-[');

function escapeChar(c: string): string {
  return REGEX_SYNTAX.has(c) ? `\\${c}` : c;
}

/** Index of the `]` closing the class that opens at `open`, or -1 if it never closes (then `[` is literal). */
function classEnd(p: string, open: number): number {
  let i = open + 1;
  if (p[i] === '!' || p[i] === '^') i++;
  if (p[i] === ']') i++; // a `]` first in the class is a member, not the end
  for (; i < p.length; i++) {
    if (p[i] === '\\') i++;
    else if (p[i] === ']') return i;
  }
  return -1;
}

/** For each `{` that has a matching `}`, the index of that `}`; braces without a partner are literal. */
function matchBraces(p: string): Map<number, number> {
  const pairs = new Map<number, number>();
  const open: number[] = [];
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') {
      i++;
    } else if (c === '[') {
      const end = classEnd(p, i);
      if (end !== -1) i = end;
    } else if (c === '{') {
      open.push(i);
    } else if (c === '}') {
      const start = open.pop();
      if (start !== undefined) pairs.set(start, i);
    }
  }
  return pairs;
}

class Compiler {
  #i = 0;
  readonly #braces: Map<number, number>;

  constructor(readonly p: string) {
    this.#braces = matchBraces(p);
  }

  compile(): string {
    const out = this.#sequence(0);
    if (this.#i !== this.p.length) throw new GlobPatternError(`unexpected "${this.p[this.#i]}"`);
    return out;
  }

  /** Parses until the end, or (inside braces) until the `,` or `}` that ends the current alternative. */
  #sequence(braceDepth: number): string {
    const p = this.p;
    let out = '';
    while (this.#i < p.length) {
      const c = p[this.#i]!;
      if (braceDepth > 0 && (c === ',' || c === '}')) break;
      if (c === '\\') {
        const next = p[this.#i + 1];
        out += escapeChar(next ?? '\\');
        this.#i += next === undefined ? 1 : 2;
      } else if (c === '*') {
        out += this.#star(braceDepth);
      } else if (c === '?') {
        out += '[^/]';
        this.#i++;
      } else if (c === '[') {
        out += this.#charClass();
      } else if (c === '{' && this.#braces.has(this.#i)) {
        out += this.#alternatives(braceDepth);
      } else {
        out += escapeChar(c);
        this.#i++;
      }
    }
    return out;
  }

  #star(braceDepth: number): string {
    const p = this.p;
    const start = this.#i;
    while (p[this.#i] === '*') this.#i++;
    if (this.#i - start === 1) return '[^/]*';
    const prev = start === 0 ? undefined : p[start - 1];
    const next = p[this.#i];
    const startsSegment =
      prev === undefined || prev === '/' || (braceDepth > 0 && (prev === '{' || prev === ','));
    const endsSegment =
      next === undefined || next === '/' || (braceDepth > 0 && (next === ',' || next === '}'));
    if (!startsSegment || !endsSegment) return '[^/]*';
    if (next === '/') {
      this.#i++; // `**/` is zero or more whole directories, the slash included
      return '(?:[^/]+/)*';
    }
    return '.+';
  }

  #charClass(): string {
    const p = this.p;
    const open = this.#i;
    const end = classEnd(p, open);
    if (end === -1) {
      this.#i++;
      return '\\[';
    }
    let i = open + 1;
    let negated = false;
    if (p[i] === '!' || p[i] === '^') {
      negated = true;
      i++;
    }
    let body = '';
    for (; i < end; i++) {
      let c = p[i]!;
      if (c === '\\' && i + 1 < end) c = p[++i]!;
      // A `-` between two members makes a range; anywhere else it is a member.
      if (c === '-' && body !== '' && i + 1 < end && p[i - 1] !== '\\') body += '-';
      else body += CLASS_SYNTAX.has(c) ? `\\${c}` : c;
    }
    this.#i = end + 1;
    if (body === '') throw new GlobPatternError('empty character class "[]"');
    return negated ? `[^/${body}]` : `(?!/)[${body}]`;
  }

  #alternatives(braceDepth: number): string {
    if (braceDepth >= MAX_BRACE_DEPTH)
      throw new GlobPatternError(`braces nest deeper than ${MAX_BRACE_DEPTH}`);
    this.#i++; // the `{`
    const alternatives: string[] = [];
    for (;;) {
      alternatives.push(this.#sequence(braceDepth + 1));
      const c = this.p[this.#i];
      this.#i++;
      if (c === '}') break;
      // Otherwise a `,`: matchBraces guaranteed a closing `}` further on.
    }
    return `(?:${alternatives.join('|')})`;
  }
}

const SPECIAL = /[*?[{\\]/;

/** Compiles a glob (see the top of this file). Throws GlobPatternError for patterns it cannot use. */
export function compileGlob(pattern: string): CompiledGlob {
  if (pattern.length > MAX_GLOB_PATTERN_CHARS) {
    throw new GlobPatternError(`pattern is longer than ${MAX_GLOB_PATTERN_CHARS} characters`);
  }
  const compiler = new Compiler(pattern);
  let source: string;
  let regex: RegExp;
  try {
    source = compiler.compile();
    regex = new RegExp(`^${source}$`, 'su');
  } catch (err) {
    if (err instanceof GlobPatternError) throw err;
    // e.g. a reversed range `[z-a]`
    throw new GlobPatternError(err instanceof Error ? err.message : String(err));
  }

  const segments = pattern.split('/');
  const baseSegments: string[] = [];
  for (const segment of segments.slice(0, -1)) {
    if (SPECIAL.test(segment) || segment === '' || segment === '.' || segment === '..') break;
    baseSegments.push(segment);
  }
  const unbounded =
    pattern.includes('**') || [...matchBraces(pattern)].some(([s, e]) => pattern.slice(s, e).includes('/'));
  return {
    regex,
    base: baseSegments.join('/'),
    maxDepth: unbounded ? Number.POSITIVE_INFINITY : segments.length,
  };
}

/** Removes leading `./` (models often write `./src/**`), so the pattern is relative to the search directory. */
export function normalizeGlob(pattern: string): string {
  let p = pattern;
  while (p.startsWith('./')) p = p.slice(2).replace(/^\/+/, '');
  return p;
}
