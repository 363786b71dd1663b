import type { GrepFile, GrepLine } from './grep-json.js';
import { cutLine } from './text.js';

// Grep's result text from the files ripgrep matched, paged by offset and head_limit like `| tail -n +N |
// head -M`, in the format Claude Code's Grep shows (`path:line:text`, `path-line-text` for context, `--`
// between groups; a file list; `path:count`).

export interface Page {
  offset: number;
  /** POSITIVE_INFINITY for no limit (head_limit 0). */
  headLimit: number;
  /** Matching lines (content) or files (the other modes) collected at most: the cap plus the offset. */
  maxMatches: number;
}

export interface Shown {
  lines: string[];
  notes: string[];
  /** Something was left out: by head_limit or by the match cap. */
  cut: boolean;
}

const s = (n: number) => (n === 1 ? '' : 's');

/** Content mode: matching lines with their context, or (-o) the matched parts. */
export class ContentOutput {
  readonly #lines: string[] = [];
  #entries = 0;
  #matched = 0;
  #headCut = false;
  #capHit = false;

  constructor(
    private readonly page: Page,
    private readonly opts: {
      lineNumbers: boolean;
      onlyMatching: boolean;
      context: boolean;
      maxLineChars: number;
    },
  ) {}

  /** Adds a file's lines; false when the page or the cap is full and the search can stop. */
  add(file: GrepFile): boolean {
    let previous: number | null = null;
    for (const line of file.lines) {
      if (line.match && this.#matched >= this.page.maxMatches) {
        this.#capHit = true;
        return false;
      }
      if (line.match) this.#matched++;
      if (this.opts.onlyMatching) {
        if (!line.match) continue;
        for (const piece of line.pieces)
          if (!this.#entry(() => this.#format(file.path, line, piece))) return false;
        continue;
      }
      const gap = previous === null || line.number !== previous + 1;
      if (this.opts.context && gap && this.#lines.length > 0) this.#lines.push('--');
      previous = line.number;
      if (!this.#entry(() => this.#format(file.path, line, line.text))) return false;
    }
    return true;
  }

  #format(path: string, line: GrepLine, text: string): string {
    const sep = line.match || this.opts.onlyMatching ? ':' : '-';
    const cut = cutLine(text, this.opts.maxLineChars, `${text.length} characters`);
    return this.opts.lineNumbers ? `${path}${sep}${line.number}${sep}${cut}` : `${path}${sep}${cut}`;
  }

  /** Counts one entry and keeps it when it lies in the page; false past the page. */
  #entry(make: () => string): boolean {
    if (this.#entries >= this.page.offset + this.page.headLimit) {
      this.#headCut = true;
      return false;
    }
    if (this.#entries >= this.page.offset) this.#lines.push(make());
    this.#entries++;
    return true;
  }

  finish(): Shown {
    const { offset, headLimit } = this.page;
    let lines = this.#lines;
    if (lines.at(-1) === '--') lines.pop();
    const notes: string[] = [];
    if (offset > 0 && this.#entries > 0) {
      if (lines.length === 0) {
        lines = [`No lines at offset ${offset}: the output has ${this.#entries} line${s(this.#entries)}`];
      } else if (!this.#headCut) notes.push(`skipped the first ${offset} line${s(offset)} (offset)`);
    }
    if (this.#headCut) {
      notes.push(
        offset > 0
          ? `output limited to lines ${offset + 1}-${offset + headLimit} by offset and head_limit; use offset=${offset + headLimit} for more`
          : `output limited to the first ${headLimit} lines by head_limit`,
      );
    }
    if (this.#capHit)
      notes.push(`stopped at ${this.#matched} matching lines; narrow the pattern, path or glob`);
    return { lines, notes, cut: this.#headCut || this.#capHit };
  }
}

interface Matched {
  path: string;
  count: number;
  mtimeMs: number;
}

/** files_with_matches (newest first) and count modes. */
export class FileOutput {
  readonly #files: Matched[] = [];
  #capHit = false;

  constructor(
    private readonly page: Page,
    private readonly mode: 'files_with_matches' | 'count',
    private readonly mtimeOf: (path: string) => number,
  ) {}

  add(file: GrepFile): boolean {
    const mtimeMs = this.mode === 'files_with_matches' ? this.mtimeOf(file.path) : 0;
    this.#files.push({ path: file.path, count: file.matchedLines, mtimeMs });
    if (this.#files.length < this.page.maxMatches) return true;
    this.#capHit = true;
    return false;
  }

  finish(): Shown {
    const files = this.#files;
    const { offset, headLimit } = this.page;
    if (this.mode === 'files_with_matches') {
      files.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    }
    const end = Number.isFinite(headLimit) ? offset + headLimit : files.length;
    const shown = files.slice(offset, end);
    const headCut = end < files.length;
    const lines = this.#lines(shown);
    const notes = pageNotes(files.length, offset, shown.length, headCut);
    if (this.#capHit)
      notes.push(`stopped after ${files.length} matching files; narrow the pattern, path or glob`);
    return { lines, notes, cut: headCut || this.#capHit };
  }

  #lines(shown: Matched[]): string[] {
    const files = this.#files;
    if (files.length === 0) return [];
    if (this.mode === 'files_with_matches')
      return [`Found ${files.length} file${s(files.length)}`, ...shown.map((f) => f.path)];
    const total = files.reduce((sum, f) => sum + f.count, 0);
    const lines = shown.map((f) => `${f.path}:${f.count}`);
    if (shown.length > 0) lines.push('');
    lines.push(`Found ${total} matching line${s(total)} in ${files.length} file${s(files.length)}`);
    return lines;
  }
}

function pageNotes(total: number, offset: number, shown: number, headCut: boolean): string[] {
  if (offset > 0 && total > 0) {
    if (shown === 0) return [`no files at offset ${offset}: there ${total === 1 ? 'is' : 'are'} ${total}`];
    if (headCut) {
      return [
        `showing files ${offset + 1}-${offset + shown} of ${total} (offset and head_limit); use offset=${offset + shown} for more`,
      ];
    }
    return [`showing files ${offset + 1}-${total} of ${total} (offset)`];
  }
  return headCut ? [`showing the first ${shown} of ${total} files (head_limit)`] : [];
}
