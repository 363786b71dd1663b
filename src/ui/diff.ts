import { html, type SafeHtml } from './html.js';

// Unified diffs (git's, or the ones text-diff.ts makes) parsed into files, hunks and lines, and rendered
// the way a code review shows them: one section per file with its path, marks and +/- counts, then a table
// of old and new line numbers, a +/- marker column (never colour alone) and the line's text. Every piece of
// text from the diff goes through the `html` template's escaping; the light syntax colouring below only
// wraps already-split text in spans of fixed class names. Control characters are shown as visible symbols.

export type LineKind = 'context' | 'add' | 'del' | 'note';

export interface DiffLine {
  kind: LineKind;
  text: string;
  oldNo: number | null;
  newNo: number | null;
}

export interface DiffHunk {
  header: string;
  lines: DiffLine[];
}

export interface DiffFile {
  oldPath: string | null;
  newPath: string | null;
  status: 'modified' | 'added' | 'deleted' | 'renamed' | 'copied';
  binary: boolean;
  /** Mode change, similarity, or "Binary files … differ" lines worth showing. */
  notes: string[];
  hunks: DiffHunk[];
  additions: number;
  deletions: number;
}

/** The path a file is known by: its new path, or the old one for a deletion. */
export const filePath = (f: DiffFile): string => f.newPath ?? f.oldPath ?? '(unnamed)';

/**
 * Undoes git's C-style quoting of a path (`"a/caf\303\251 \"x\".txt"`), octal escapes being UTF-8 bytes.
 * git quotes a path holding a double quote, backslash or control character (always) or a byte ≥ 0x80
 * (unless core.quotePath is false) by putting it in double quotes with C escapes (git-config(1),
 * core.quotePath: https://git-scm.com/docs/git-config#Documentation/git-config.txt-corequotePath).
 */
export function unquotePath(s: string): string {
  if (!s.startsWith('"') || !s.endsWith('"') || s.length < 2) return s;
  const bytes: number[] = [];
  const body = s.slice(1, -1);
  const simple: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch === '\\' && i + 1 < body.length) {
      const next = body[i + 1]!;
      const oct = /^[0-3][0-7]{2}/.exec(body.slice(i + 1, i + 4));
      if (oct) {
        bytes.push(Number.parseInt(oct[0], 8));
        i += 3;
        continue;
      }
      if (Object.hasOwn(simple, next)) {
        bytes.push(simple[next]!);
        i += 1;
        continue;
      }
    }
    bytes.push(...Buffer.from(ch, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** A path from a `---`/`+++` line or a rename line: unquoted, without its `a/`/`b/` prefix; null for /dev/null. */
function headerPath(raw: string, prefix: 'a/' | 'b/' | ''): string | null {
  // git ends a name holding a space with a tab (as diff(1) separates a timestamp); names with a tab it quotes.
  const trimmed = raw.startsWith('"')
    ? raw.slice(0, closingQuote(raw, 0) + 1) || raw
    : raw.replace(/\t.*$/, '');
  if (trimmed === '/dev/null') return null;
  const path = unquotePath(trimmed);
  return prefix && path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

/** The two paths of a `diff --git a/x b/x` line (used when no ---/+++ lines follow: binary, mode-only). */
function gitHeaderPaths(rest: string): [string, string] | null {
  if (rest.startsWith('"')) {
    const end = closingQuote(rest, 0);
    if (end < 0) return null;
    const first = rest.slice(0, end + 1);
    const second = rest.slice(end + 2);
    return [headerPath(first, 'a/') ?? '', headerPath(second, 'b/') ?? ''];
  }
  // Unquoted: `a/P b/P` with the same P when the file was not renamed.
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half) && rest.startsWith('a/') && rest.slice(half + 1).startsWith('b/')) {
    const a = rest.slice(2, half);
    if (a === rest.slice(half + 3)) return [a, a];
  }
  const at = rest.indexOf(' b/');
  if (at < 0 || !rest.startsWith('a/')) return null;
  const second = rest.slice(at + 1);
  return [rest.slice(2, at), second.startsWith('"') ? (headerPath(second, 'b/') ?? '') : second.slice(2)];
}

function closingQuote(s: string, open: number): number {
  for (let i = open + 1; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '"') return i;
  }
  return -1;
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * Parses a unified diff. Lenient: lines it does not understand outside a hunk are skipped. Inside a hunk the
 * counts of its header decide where it ends, so a removed line that reads `-- x` is never taken for a
 * `--- ` file header.
 */
export function parseUnifiedDiff(text: string): DiffFile[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const parser = new DiffParser();
  for (const line of lines) parser.line(line);
  return parser.done();
}

/** parseUnifiedDiff's state: the file and hunk being read, and how many lines the hunk's header has left. */
class DiffParser {
  private readonly files: DiffFile[] = [];
  private file: DiffFile | null = null;
  private hunk: DiffHunk | null = null;
  private oldLeft = 0;
  private newLeft = 0;
  private oldNo = 0;
  private newNo = 0;

  line(line: string): void {
    if (this.hunk && (this.oldLeft > 0 || this.newLeft > 0)) {
      if (this.hunkLine(this.hunk, line)) return;
      // A hunk shorter than its header said: fall through and read the line as a header.
      this.hunk = null;
    }
    if (this.hunk && line.startsWith('\\')) {
      this.hunk.lines.push({ kind: 'note', text: line.slice(2), oldNo: null, newNo: null });
      return;
    }
    if (line.startsWith('diff --git ')) {
      const file = this.start();
      const paths = gitHeaderPaths(line.slice('diff --git '.length));
      if (paths) [file.oldPath, file.newPath] = paths;
      return;
    }
    const m = HUNK.exec(line);
    if (m && this.file) {
      this.oldNo = Number(m[1]);
      this.newNo = Number(m[3]);
      this.oldLeft = m[2] === undefined ? 1 : Number(m[2]);
      this.newLeft = m[4] === undefined ? 1 : Number(m[4]);
      this.hunk = { header: line, lines: [] };
      this.file.hunks.push(this.hunk);
      return;
    }
    if (line.startsWith('--- ')) {
      // A plain unified diff has no `diff --git` line: `---` starts its file.
      const file = !this.file || this.file.hunks.length > 0 ? this.start() : this.file;
      const p = headerPath(line.slice(4), 'a/');
      file.oldPath = p;
      if (p === null) file.status = 'added';
      return;
    }
    if (this.file) fileHeader(this.file, line);
  }

  done(): DiffFile[] {
    for (const f of this.files) {
      if (f.status === 'added') f.oldPath = null;
      if (f.status === 'deleted') f.newPath = null;
    }
    return this.files;
  }

  private start(): DiffFile {
    const f: DiffFile = {
      oldPath: null,
      newPath: null,
      status: 'modified',
      binary: false,
      notes: [],
      hunks: [],
      additions: 0,
      deletions: 0,
    };
    this.files.push(f);
    this.file = f;
    this.hunk = null;
    return f;
  }

  /** A line inside a hunk its header's counts are not through with; false when it is not one of its lines. */
  private hunkLine(h: DiffHunk, line: string): boolean {
    const file = this.file!;
    const mark = line[0];
    const body = line.slice(1);
    if (mark === '+' && this.newLeft > 0) {
      h.lines.push({ kind: 'add', text: body, oldNo: null, newNo: this.newNo++ });
      this.newLeft--;
      file.additions++;
      return true;
    }
    if (mark === '-' && this.oldLeft > 0) {
      h.lines.push({ kind: 'del', text: body, oldNo: this.oldNo++, newNo: null });
      this.oldLeft--;
      file.deletions++;
      return true;
    }
    if ((mark === ' ' || line === '') && this.oldLeft > 0 && this.newLeft > 0) {
      h.lines.push({ kind: 'context', text: body, oldNo: this.oldNo++, newNo: this.newNo++ });
      this.oldLeft--;
      this.newLeft--;
      return true;
    }
    if (mark === '\\') {
      h.lines.push({ kind: 'note', text: line.slice(2), oldNo: null, newNo: null });
      return true;
    }
    return false;
  }
}

/** A header line of a file's section (after `diff --git` or `---`): its paths, status, binary, modes. */
function fileHeader(file: DiffFile, line: string): void {
  if (line.startsWith('+++ ')) {
    const p = headerPath(line.slice(4), 'b/');
    file.newPath = p;
    if (p === null) file.status = 'deleted';
  } else if (line.startsWith('new file mode')) {
    file.status = 'added';
  } else if (line.startsWith('deleted file mode')) {
    file.status = 'deleted';
  } else if (line.startsWith('rename from ')) {
    file.status = 'renamed';
    file.oldPath = headerPath(line.slice('rename from '.length), '');
  } else if (line.startsWith('rename to ')) {
    file.newPath = headerPath(line.slice('rename to '.length), '');
  } else if (line.startsWith('copy from ')) {
    file.status = 'copied';
    file.oldPath = headerPath(line.slice('copy from '.length), '');
  } else if (line.startsWith('copy to ')) {
    file.newPath = headerPath(line.slice('copy to '.length), '');
  } else if (line.startsWith('Binary files ') || line === 'GIT binary patch') {
    file.binary = true;
  } else if (/^(old mode|new mode|similarity index|dissimilarity index) /.test(line)) {
    file.notes.push(line);
  }
}

// --- rendering ---

export interface RenderOptions {
  /** Prefix of the ids of the file sections (several diffs on one page need different ones). */
  idPrefix?: string;
  /** Lines shown per file; the rest is summarised. */
  maxLinesPerFile?: number;
  /** Characters shown of one line; the rest is summarised. */
  maxLineChars?: number;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: showing them is the point
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/g;
/** C1 controls and the bidirectional overrides that can make code read otherwise than it runs. */
const INVISIBLE = /[\u0080-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Control characters as their visible Unicode "control pictures" (␛, ␍, ␀…), tabs kept; C1 controls and
 * bidirectional overrides as `⟨U+202E⟩`.
 */
export function visibleControls(text: string): string {
  return text
    .replace(CONTROL, (ch) => {
      const code = ch.charCodeAt(0);
      return String.fromCharCode(code === 0x7f ? 0x2421 : 0x2400 + code);
    })
    .replace(INVISIBLE, (ch) => `⟨U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`);
}

/** Multi-line text (command output, a diff stat) with line ends kept (CR as a line end) and other controls shown. */
export function visibleLines(text: string): string {
  return text.replace(/\r\n?/g, '\n').split('\n').map(visibleControls).join('\n');
}

/** A short summary of a line count for a heading: `+3 −1`. */
function counts(f: DiffFile) {
  return html`<span class="diff-counts"><span class="diff-count-add" aria-label="${f.additions} added lines">+${f.additions}</span> <span class="diff-count-del" aria-label="${f.deletions} removed lines">-${f.deletions}</span></span>`;
}

function marks(f: DiffFile) {
  const out: SafeHtml[] = [];
  if (f.status === 'added') out.push(html`<span class="diff-mark diff-mark-new">new file</span>`);
  if (f.status === 'deleted') out.push(html`<span class="diff-mark diff-mark-deleted">deleted</span>`);
  if (f.status === 'renamed') out.push(html`<span class="diff-mark diff-mark-renamed">renamed</span>`);
  if (f.status === 'copied') out.push(html`<span class="diff-mark diff-mark-renamed">copied</span>`);
  if (f.binary) out.push(html`<span class="diff-mark diff-mark-binary">binary</span>`);
  return out;
}

function pathLabel(f: DiffFile) {
  if (
    (f.status === 'renamed' || f.status === 'copied') &&
    f.oldPath &&
    f.newPath &&
    f.oldPath !== f.newPath
  ) {
    return html`<code>${visibleControls(f.oldPath)}</code> → <code>${visibleControls(f.newPath)}</code>`;
  }
  return html`<code>${visibleControls(filePath(f))}</code>`;
}

const MARKER: Record<LineKind, string> = { add: '+', del: '-', context: ' ', note: '\\' };
const KIND_LABEL: Record<LineKind, string> = {
  add: 'added',
  del: 'removed',
  context: 'unchanged',
  note: 'note',
};

/** One file: heading with path, marks and counts, then its hunks as a table. */
export function renderDiffFile(f: DiffFile, index: number, o: RenderOptions = {}): SafeHtml {
  const id = `${o.idPrefix ?? 'diff'}-file-${index}`;
  const maxLines = o.maxLinesPerFile ?? 2_000;
  const maxChars = o.maxLineChars ?? 1_000;
  const lang = languageOf(filePath(f));
  let shown = 0;
  let hidden = 0;
  const rows: SafeHtml[] = [];
  for (const h of f.hunks) {
    if (shown >= maxLines) {
      hidden += h.lines.length;
      continue;
    }
    rows.push(
      html`<tr class="diff-hunk"><td colspan="4"><code>${visibleControls(clip(h.header, maxChars))}</code></td></tr>`,
    );
    for (const l of h.lines) {
      if (shown >= maxLines) {
        hidden++;
        continue;
      }
      shown++;
      const text = clip(l.text, maxChars);
      rows.push(
        html`<tr class="diff-line diff-${l.kind}"><td class="diff-ln">${l.oldNo ?? ''}</td><td class="diff-ln">${l.newNo ?? ''}</td><td class="diff-marker" aria-label="${KIND_LABEL[l.kind]}">${MARKER[l.kind]}</td><td class="diff-code"><code>${l.kind === 'note' ? visibleControls(text) : highlight(text, lang)}</code></td></tr>`,
      );
    }
  }
  const body =
    f.hunks.length === 0
      ? html`<p class="muted">${f.binary ? 'Binary file: its content is not shown.' : 'No change to the text (a rename or mode change).'}</p>`
      : html`<table class="diff"><thead><tr><th scope="col">Old</th><th scope="col">New</th><th scope="col"><span class="visually-hidden">Change</span></th><th scope="col">Line</th></tr></thead>
<tbody>${rows}</tbody></table>${hidden > 0 && html`<p class="muted">${hidden} more lines of this file are not shown.</p>`}`;
  return html`<section class="diff-file" id="${id}" aria-labelledby="${id}-h">
<h3 class="diff-head" id="${id}-h">${pathLabel(f)} ${marks(f)} ${counts(f)}</h3>
${f.notes.length > 0 && html`<p class="muted diff-notes">${f.notes.map((n) => visibleControls(n)).join('; ')}</p>`}
${body}
</section>`;
}

/** Every file of a diff, with a list of them (path, marks, counts) linking to each. */
export function renderDiff(files: DiffFile[], o: RenderOptions = {}): SafeHtml {
  if (files.length === 0) return html`<p class="muted">The diff is empty.</p>`;
  const prefix = o.idPrefix ?? 'diff';
  const adds = files.reduce((n, f) => n + f.additions, 0);
  const dels = files.reduce((n, f) => n + f.deletions, 0);
  return html`<div class="diff-view">
<p class="diff-total">${files.length} file${files.length === 1 ? '' : 's'} changed, <span class="diff-count-add">+${adds}</span> <span class="diff-count-del">-${dels}</span></p>
<ul class="diff-files">${files.map(
    (f, i) =>
      html`<li><a href="#${prefix}-file-${i}">${visibleControls(filePath(f))}</a> ${marks(f)} ${counts(f)}</li>`,
  )}</ul>
${files.map((f, i) => renderDiffFile(f, i, o))}
</div>`;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)} … (${text.length - max} more characters)` : text;
}

// --- light syntax colouring ---

type Language = {
  line: string[];
  keywords: ReadonlySet<string>;
  backtick: boolean;
  caseless?: boolean;
} | null;

const C_LIKE_KEYWORDS = new Set(
  (
    'abstract as async await break case catch class const continue default defer delete do else enum export ' +
    'extends false final finally fn for from func function go if impl implements import in instanceof ' +
    'interface let match mod mut new nil null package private protected pub public return self static ' +
    'struct super switch this throw throws true try type typeof undefined use var void while yield'
  ).split(' '),
);
const HASH_KEYWORDS = new Set(
  (
    'and as assert async await break case class def del do done elif else end esac except export false ' +
    'fi finally for from function if import in is lambda local module nil None not or pass raise require ' +
    'return self then True False true until while with yield'
  ).split(' '),
);
const SQL_KEYWORDS = new Set(
  (
    'add alter and as asc begin by commit create default delete desc drop exists foreign from group having ' +
    'if in index insert into is join key left limit not null on or order primary references right ' +
    'rollback select set table transaction union unique update values where'
  ).split(' '),
);

const C_LIKE =
  /\.(c|cc|cpp|cs|css|cts|go|h|hpp|java|js|jsx|kt|mjs|cjs|mts|php|rs|scala|scss|swift|ts|tsx|json|jsonc)$/i;
const HASH =
  /(\.(bash|conf|ex|exs|pl|py|r|rb|sh|toml|yaml|yml|zsh)|(^|\/)(Dockerfile|Makefile|\.gitignore))$/i;

/** The colouring rules for a file, by its extension; null: plain text. */
export function languageOf(path: string): Language {
  if (C_LIKE.test(path))
    return { line: ['//'], keywords: C_LIKE_KEYWORDS, backtick: /\.[cm]?[jt]sx?$/i.test(path) };
  if (HASH.test(path)) return { line: ['#'], keywords: HASH_KEYWORDS, backtick: false };
  if (/\.sql$/i.test(path)) return { line: ['--'], keywords: SQL_KEYWORDS, backtick: false, caseless: true };
  return null;
}

const WORD = /[A-Za-z_$][\w$]*/y;
const NUMBER = /\d[\w.]*/y;

/**
 * One line split into strings, comments, keywords, numbers and the rest; each piece escaped by `html`
 * and wrapped in a span of a fixed class. Stateless per line: a block comment or string spanning lines is
 * coloured only on its first line, which is fine for a review's hint.
 */
export function highlight(text: string, lang: Language): SafeHtml {
  if (!lang) return html`${visibleControls(text)}`;
  const out: SafeHtml[] = [];
  let plain = '';
  const flush = () => {
    if (plain) out.push(html`${visibleControls(plain)}`);
    plain = '';
  };
  const span = (cls: string, piece: string) => {
    flush();
    out.push(html`<span class="${cls}">${visibleControls(piece)}</span>`);
  };
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (lang.line.some((c) => text.startsWith(c, i))) {
      span('tk-com', text.slice(i));
      break;
    }
    if (text.startsWith('/*', i) && lang.line[0] === '//') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      span('tk-com', text.slice(i, stop));
      i = stop;
      continue;
    }
    if (ch === '"' || ch === "'" || (ch === '`' && lang.backtick)) {
      let j = i + 1;
      while (j < text.length && text[j] !== ch) j += text[j] === '\\' ? 2 : 1;
      const stop = Math.min(text.length, j + 1);
      span('tk-str', text.slice(i, stop));
      i = stop;
      continue;
    }
    WORD.lastIndex = i;
    const w = WORD.exec(text);
    if (w) {
      if (lang.keywords.has(lang.caseless ? w[0].toLowerCase() : w[0])) span('tk-kw', w[0]);
      else plain += w[0];
      i += w[0].length;
      continue;
    }
    NUMBER.lastIndex = i;
    const n = NUMBER.exec(text);
    if (n) {
      span('tk-num', n[0]);
      i += n[0].length;
      continue;
    }
    plain += ch;
    i++;
  }
  flush();
  return html`${out}`;
}
