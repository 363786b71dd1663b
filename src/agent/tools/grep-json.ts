// Reading ripgrep's --json output (one JSON message a line: begin, match, context, end per file, then
// summary) into one record per file. A file's record is handed on at its `end` message, so a file ripgrep
// found to be binary after some matches (`binary_offset`) is dropped whole.

/** A line of a file as Grep shows it. */
export interface GrepLine {
  /** 1-based. */
  number: number;
  text: string;
  match: boolean;
  /** The matched parts on this line (for -o), in order. */
  pieces: string[];
}

export interface GrepFile {
  /** As ripgrep printed it, without a leading `./`: relative to the workspace root. */
  path: string;
  /** Matching and context lines in order, each once. */
  lines: GrepLine[];
  /** Matching lines ripgrep counted. */
  matchedLines: number;
}

type Data = { text?: unknown; bytes?: unknown } | undefined;

/** The text of one of ripgrep's arbitrary-data objects: `{text}`, or `{bytes}` (base64) when not UTF-8. */
function textOf(d: Data): string {
  if (typeof d?.text === 'string') return d.text;
  if (typeof d?.bytes === 'string') return Buffer.from(d.bytes, 'base64').toString('utf8');
  return '';
}

function stripTerminator(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

interface Submatch {
  match?: Data;
  start?: unknown;
}

/** Parses ripgrep's JSON lines; `onFile` gets each file's record and returns false to stop. */
export class RgJsonReader {
  /** Files dropped because ripgrep found a NUL byte in them. */
  binary = 0;
  /** Whether ripgrep's closing `summary` came: the search ran to its end. */
  finished = false;
  #file: { path: string; lines: Map<number, GrepLine>; matchedLines: number } | null = null;

  constructor(private readonly onFile: (file: GrepFile) => boolean) {}

  /** One line of output; false once `onFile` asked to stop. */
  line(raw: string): boolean {
    let msg: { type?: unknown; data?: Record<string, unknown> };
    try {
      msg = JSON.parse(raw);
    } catch {
      return true; // not a message: ignored
    }
    const data = msg.data ?? {};
    switch (msg.type) {
      case 'begin':
        this.#file = { path: shownPath(textOf(data.path as Data)), lines: new Map(), matchedLines: 0 };
        return true;
      case 'match':
      case 'context':
        this.#add(data, msg.type === 'match');
        return true;
      case 'end':
        return this.#end(data);
      case 'summary':
        this.finished = true;
        return true;
      default:
        return true;
    }
  }

  #add(data: Record<string, unknown>, match: boolean): void {
    const file = this.#file;
    const first = typeof data.line_number === 'number' ? data.line_number : null;
    if (file === null || first === null) return;
    const block = textOf(data.lines as Data);
    const texts = block.split('\n');
    if (texts.length > 1 && texts.at(-1) === '') texts.pop();
    texts.forEach((t, k) => {
      const number = first + k;
      const known = file.lines.get(number);
      if (known) known.match ||= match;
      else file.lines.set(number, { number, text: stripTerminator(t), match, pieces: [] });
      if (match && !known?.match) file.matchedLines++;
    });
    if (match) this.#pieces(file.lines, first, block, data.submatches);
  }

  /** Each matched part goes with the line it is on; a part spanning lines is split at the newlines. */
  #pieces(lines: Map<number, GrepLine>, first: number, block: string, submatches: unknown): void {
    if (!Array.isArray(submatches)) return;
    const bytes = Buffer.from(block);
    for (const s of submatches as Submatch[]) {
      const start = typeof s.start === 'number' ? s.start : 0;
      let line = first + countNewlines(bytes.subarray(0, start));
      for (const part of textOf(s.match).split('\n')) {
        const shown = stripTerminator(part);
        if (shown !== '') lines.get(line)?.pieces.push(shown);
        line++;
      }
    }
  }

  #end(data: Record<string, unknown>): boolean {
    const file = this.#file;
    this.#file = null;
    if (file === null) return true;
    if (typeof data.binary_offset === 'number') {
      this.binary++;
      return true;
    }
    if (file.matchedLines === 0) return true;
    const lines = [...file.lines.values()].sort((a, b) => a.number - b.number);
    return this.onFile({ path: file.path, lines, matchedLines: file.matchedLines });
  }
}

function countNewlines(b: Uint8Array): number {
  let n = 0;
  for (const c of b) if (c === 0x0a) n++;
  return n;
}

/** ripgrep prints the paths it was given as given: `./src/a.ts` becomes `src/a.ts`. */
function shownPath(p: string): string {
  let s = p;
  while (s.startsWith('./')) s = s.slice(2);
  return s === '' ? '.' : s;
}
