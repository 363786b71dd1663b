// Cutting a plan's markdown into pull request comments. GitHub refuses a comment body over 65,536
// characters, and a plan may be longer: it is split on line boundaries into parts that each fit, preferring
// not to split a fenced code block; when a fence must be split it is closed at the end of one part and
// reopened (same marker, same info string) at the start of the next, so every part renders on its own.

/** GitHub's limit on an issue or pull request comment body. */
export const GITHUB_COMMENT_LIMIT = 65_536;
/** Markdown per comment, leaving room for the header, the part label and the cut notice. */
export const COMMENT_PART_CHARS = 60_000;
/** Comments posted for one plan at most; the rest is cut with a note saying where to read all of it. */
export const MAX_COMMENT_PARTS = 5;

/** The smallest part size the splitter accepts (room for a reopened fence plus some text). */
const MIN_PART_CHARS = 1_000;
/** A reopened fence repeats the opener's info string up to this length. */
const MAX_REOPEN_INFO = 200;

interface Fence {
  char: '`' | '~';
  length: number;
  /** The line that reopens the fence at the start of the next part. */
  reopen: string;
  /** The line that closes it at the end of a part. */
  close: string;
  /** Size of the whole block, opener to closer (or to the end of the text when it is never closed). */
  size: number;
}

interface Unit {
  text: string;
  /** The fence this unit belongs to (its opener, body or closer), null outside any fence. */
  fence: Fence | null;
  role: 'open' | 'body' | 'close' | 'text';
}

const OPENER = /^([ \t]*)(`{3,}|~{3,})([^\r\n]*)/;

/** A fence opener: three or more backticks or tildes; a backtick fence's info string has no backtick. */
function opener(line: string): { char: '`' | '~'; length: number; info: string } | null {
  const m = OPENER.exec(line);
  if (!m) return null;
  const marker = m[2]!;
  const info = m[3]!.trim();
  if (marker[0] === '`' && info.includes('`')) return null;
  return { char: marker[0] as '`' | '~', length: marker.length, info };
}

function closes(line: string, fence: Fence): boolean {
  const m = OPENER.exec(line);
  return !!m && m[2]![0] === fence.char && m[2]!.length >= fence.length && m[3]!.trim() === '';
}

/** Lines with their terminators; a line longer than `max` is hard-cut into pieces (never inside a code point). */
function lines(text: string, max: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl === -1 ? text.length : nl + 1;
    let at = start;
    while (end - at > max) {
      let cut = at + max;
      const code = text.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1; // keep a surrogate pair together
      out.push(text.slice(at, cut));
      at = cut;
    }
    out.push(text.slice(at, end));
    start = end;
  }
  return out;
}

/** Classifies every line: inside which fence it sits and whether it opens or closes one. */
function scan(text: string, pieceMax: number): Unit[] {
  const units: Unit[] = [];
  let fence: Fence | null = null;
  let lineStart = true;
  for (const piece of lines(text, pieceMax)) {
    // Only a piece that starts a line can open or close a fence; the rest of a hard-cut line cannot.
    const whole = lineStart;
    lineStart = piece.endsWith('\n');
    if (fence) {
      if (whole && closes(piece, fence)) {
        fence.size += piece.length;
        units.push({ text: piece, fence, role: 'close' });
        fence = null;
      } else {
        fence.size += piece.length;
        units.push({ text: piece, fence, role: 'body' });
      }
      continue;
    }
    const open = whole && lineStart ? opener(piece) : null;
    if (open) {
      const marker = open.char.repeat(open.length);
      fence = {
        char: open.char,
        length: open.length,
        reopen: `${marker}${open.info.length <= MAX_REOPEN_INFO ? open.info : ''}\n`,
        close: `${marker}\n`,
        size: piece.length,
      };
      units.push({ text: piece, fence, role: 'open' });
    } else {
      units.push({ text: piece, fence: null, role: 'text' });
    }
  }
  return units;
}

/**
 * Splits markdown into parts of at most `maxChars` characters each, on line boundaries. A break never falls
 * inside a fenced code block when moving the whole block to the next part avoids it; otherwise the fence is
 * closed at the end of the part and reopened at the start of the next. A single line longer than a part is
 * hard-cut. Joined back (minus the added fence lines), the parts are the original text.
 */
export function splitMarkdown(markdown: string, maxChars: number = COMMENT_PART_CHARS): string[] {
  if (!Number.isInteger(maxChars) || maxChars < MIN_PART_CHARS) {
    throw new RangeError(`splitMarkdown: maxChars must be an integer >= ${MIN_PART_CHARS}`);
  }
  if (markdown.length <= maxChars) return [markdown];
  // Room for a reopened fence line at the start of a part and a closing one at its end.
  const fenceRoom = 2 * (MAX_REOPEN_INFO + 16);
  const units = scan(markdown, maxChars - fenceRoom);

  const parts: string[] = [];
  let current = '';
  // Where the fence open at the end of `current` began, when it began after other text in this part: the
  // block can then move whole to the next part instead of being split.
  let fenceAt = -1;
  for (const unit of units) {
    const inside = unit.role === 'body' || unit.role === 'close' ? unit.fence : null;
    const stillOpen = unit.role === 'open' || unit.role === 'body' ? unit.fence : null;
    const need = unit.text.length + (stillOpen ? stillOpen.close.length + 1 : 0);
    if (current.length > 0 && current.length + need > maxChars) {
      if (inside && fenceAt > 0 && inside.size + inside.close.length + 1 <= maxChars) {
        parts.push(current.slice(0, fenceAt));
        current = current.slice(fenceAt);
        fenceAt = -1;
      } else if (inside) {
        parts.push(`${current}${current.endsWith('\n') ? '' : '\n'}${inside.close}`);
        current = inside.reopen;
        fenceAt = -1;
      } else {
        parts.push(current);
        current = '';
        fenceAt = -1;
      }
    }
    if (unit.role === 'open') fenceAt = current.length;
    if (unit.role === 'close') fenceAt = -1;
    current += unit.text;
  }
  if (current.length > 0) parts.push(current);
  return parts;
}

/** Lines that would read as a `/drydock` command (see commands.ts) get a zero-width space in front. */
export function neutralizeCommands(text: string): string {
  // \s is exactly what String.prototype.trim removes, which is what the command parser ignores.
  return text.replace(/(^|\n)([^\S\n]*)(\/drydock)/gi, '$1$2\u200b$3');
}

export interface CommentPartsInput {
  /** Goes first in the first comment. */
  header: string;
  markdown: string;
  planId: string;
  /** Where a person reads the whole plan (named in the cut notice). */
  fullPlanAt: string;
  maxChars?: number;
  maxParts?: number;
}

/**
 * The comment bodies for a plan: the header, then the markdown in parts labelled "(part i of n)"; at most
 * `maxParts` comments, the last saying what was cut and where the whole plan is. Every body fits GitHub's
 * limit, and no line of any body reads as a `/drydock` command.
 */
export function commentParts(input: CommentPartsInput): string[] {
  const maxParts = input.maxParts ?? MAX_COMMENT_PARTS;
  const header = neutralizeCommands(input.header);
  // The header, a label and the cut notice must fit beside each part.
  const room = Math.min(input.maxChars ?? COMMENT_PART_CHARS, GITHUB_COMMENT_LIMIT - header.length - 1_000);
  const chunks = splitMarkdown(neutralizeCommands(input.markdown), Math.max(MIN_PART_CHARS, room));
  const total = chunks.length;
  const posted = chunks.slice(0, maxParts);
  return posted.map((chunk, i) => {
    const label = total > 1 ? `_(part ${i + 1} of ${total})_` : '';
    const top =
      i === 0 ? `${header}${label ? `\n\n${label}` : ''}` : `**drydock plan \`${input.planId}\`** ${label}`;
    let body = `${top}\n\n---\n\n${chunk}`;
    if (i === posted.length - 1 && total > posted.length) {
      const cut = total - posted.length;
      body +=
        `${chunk.endsWith('\n') ? '' : '\n'}\n---\n\n` +
        `_At most ${maxParts} comments are posted per plan: ${cut} more part${cut === 1 ? ' was' : 's were'} ` +
        `cut. Read all of plan \`${input.planId}\` at ${input.fullPlanAt}._\n`;
    }
    // Never reached with the sizes above; a last guard so GitHub never refuses a body for its length.
    return body.length <= GITHUB_COMMENT_LIMIT ? body : body.slice(0, GITHUB_COMMENT_LIMIT);
  });
}
