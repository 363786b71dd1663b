import { createContext, Script } from 'node:vm';

// Matching one file's text for Grep. A regular expression from the model can backtrack catastrophically
// (`(a+)+$`), and JavaScript cannot interrupt a running RegExp from the outside except through V8's
// execution timeout, so every file is matched inside `vm` with a timeout. The vm context is no sandbox here:
// the code it runs is our own; it is only the means to stop a runaway match.

/** Longer lines are matched on their first this many characters only (line mode). */
export const MAX_REGEX_LINE_CHARS = 10_000;

export class RegexTimeoutError extends Error {
  override name = 'RegexTimeoutError';
}

/** Runs synchronous functions with a time limit, reusing one vm context. */
export class TimeBoundRunner {
  readonly #context = createContext({ job: undefined as (() => void) | undefined });
  readonly #script = new Script('job()');

  run<T>(fn: () => T, timeoutMs: number): T {
    let result: T | undefined;
    this.#context.job = () => {
      result = fn();
    };
    try {
      this.#script.runInContext(this.#context, { timeout: Math.max(1, Math.floor(timeoutMs)) });
    } catch (err) {
      if ((err as { code?: unknown } | null)?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
        throw new RegexTimeoutError(`matching took longer than ${timeoutMs} ms`);
      }
      throw err;
    } finally {
      this.#context.job = undefined;
    }
    return result as T;
  }
}

export interface FileMatch {
  /** The file's lines, without line terminators. */
  lines: string[];
  /** 0-based indices of matching lines, ascending. */
  matched: number[];
  /** Lines longer than MAX_REGEX_LINE_CHARS that were matched on their start only. */
  longLines: number;
  /**
   * With `only` (Grep -o): the non-empty matched parts of each matching line, in order, keyed by line
   * index. A multiline match contributes each of its lines' parts to the line it is on.
   */
  pieces?: Map<number, string[]>;
}

export interface MatchOptions {
  multiline: boolean;
  /** Stop after this many matching lines. */
  stopAfter: number;
  /** Also collect the matched parts (Grep -o). */
  only?: boolean;
}

/**
 * Finds the lines of `text` that match. In line mode `regex` (without the g flag) is tested line by line;
 * in multiline mode `regex` must have the g flag and every line a match touches counts. Stops after
 * `stopAfter` matching lines. With `only`, also collects the matched parts (see FileMatch.pieces).
 */
export function matchText(text: string, regex: RegExp, opts: MatchOptions): FileMatch {
  const lines = text.split('\n');
  if (lines.length > 0 && lines.at(-1) === '') lines.pop(); // a final newline ends the last line
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.endsWith('\r')) lines[i] = line.slice(0, -1);
  }
  const only = opts.only === true;
  return opts.multiline
    ? matchMultiline(text, lines, regex, opts.stopAfter, only)
    : matchByLine(
        lines,
        regex,
        opts.stopAfter,
        only ? new RegExp(regex.source, `${regex.flags}g`) : undefined,
      );
}

function matchByLine(lines: string[], regex: RegExp, stopAfter: number, only?: RegExp): FileMatch {
  const matched: number[] = [];
  const pieces = only ? new Map<number, string[]>() : undefined;
  let longLines = 0;
  for (let i = 0; i < lines.length && matched.length < stopAfter; i++) {
    let line = lines[i]!;
    if (line.length > MAX_REGEX_LINE_CHARS) {
      longLines++;
      line = line.slice(0, MAX_REGEX_LINE_CHARS);
    }
    regex.lastIndex = 0;
    if (!regex.test(line)) continue;
    matched.push(i);
    if (only && pieces) {
      const parts: string[] = [];
      only.lastIndex = 0;
      for (let m = only.exec(line); m !== null; m = only.exec(line)) {
        // grep -o prints no empty matches; step past one so that exec moves on.
        if (m[0].length === 0) only.lastIndex++;
        else parts.push(m[0]);
      }
      pieces.set(i, parts);
    }
  }
  return { lines, matched, longLines, ...(pieces ? { pieces } : {}) };
}

function matchMultiline(
  text: string,
  lines: string[],
  regex: RegExp,
  stopAfter: number,
  only: boolean,
): FileMatch {
  if (lines.length === 0) return { lines, matched: [], longLines: 0, ...(only ? { pieces: new Map() } : {}) };
  const starts: number[] = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  const lineOf = (pos: number): number => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= pos) lo = mid;
      else hi = mid - 1;
    }
    return Math.min(lo, Math.max(0, lines.length - 1));
  };

  const hit = new Set<number>();
  const pieces = only ? new Map<number, string[]>() : undefined;
  regex.lastIndex = 0;
  for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
    const first = lineOf(m.index);
    const last = lineOf(m.index + Math.max(0, m[0].length - 1));
    for (let l = first; l <= last && hit.size < stopAfter; l++) hit.add(l);
    if (pieces) {
      // Each line of the match goes with the line it is on; a CR before a newline is a line terminator.
      m[0].split('\n').forEach((part, k) => {
        const line = first + k;
        const shown = part.endsWith('\r') ? part.slice(0, -1) : part;
        if (shown === '' || !hit.has(line)) return;
        const list = pieces.get(line);
        if (list) list.push(shown);
        else pieces.set(line, [shown]);
      });
    }
    if (hit.size >= stopAfter) break;
    if (m[0].length === 0) regex.lastIndex++; // step past an empty match
  }
  return {
    lines,
    matched: [...hit].sort((a, b) => a - b),
    longLines: 0,
    ...(pieces ? { pieces } : {}),
  };
}
