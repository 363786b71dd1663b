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
}

/**
 * Finds the lines of `text` that match. In line mode `regex` (without the g flag) is tested line by line;
 * in multiline mode `regex` must have the g flag and every line a match touches counts. Stops after
 * `stopAfter` matching lines.
 */
export function matchText(text: string, regex: RegExp, multiline: boolean, stopAfter: number): FileMatch {
  const lines = text.split('\n');
  if (lines.length > 0 && lines.at(-1) === '') lines.pop(); // a final newline ends the last line
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.endsWith('\r')) lines[i] = line.slice(0, -1);
  }
  return multiline ? matchMultiline(text, lines, regex, stopAfter) : matchByLine(lines, regex, stopAfter);
}

function matchByLine(lines: string[], regex: RegExp, stopAfter: number): FileMatch {
  const matched: number[] = [];
  let longLines = 0;
  for (let i = 0; i < lines.length && matched.length < stopAfter; i++) {
    let line = lines[i]!;
    if (line.length > MAX_REGEX_LINE_CHARS) {
      longLines++;
      line = line.slice(0, MAX_REGEX_LINE_CHARS);
    }
    regex.lastIndex = 0;
    if (regex.test(line)) matched.push(i);
  }
  return { lines, matched, longLines };
}

function matchMultiline(text: string, lines: string[], regex: RegExp, stopAfter: number): FileMatch {
  if (lines.length === 0) return { lines, matched: [], longLines: 0 };
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
  regex.lastIndex = 0;
  for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
    const first = lineOf(m.index);
    const last = lineOf(m.index + Math.max(0, m[0].length - 1));
    for (let l = first; l <= last && hit.size < stopAfter; l++) hit.add(l);
    if (hit.size >= stopAfter) break;
    if (m[0].length === 0) regex.lastIndex++; // step past an empty match
  }
  return { lines, matched: [...hit].sort((a, b) => a - b), longLines: 0 };
}
