import { planTitle, type TitleShape } from '../../domain/plan-title.js';
import { flag, type Values } from './args.js';

// Plain text for terminals: API text cleaned of control characters, one-line cuts, tables and aligned
// fields, and printing an answer as JSON (--json) or as text.

export const out = (text: string): void => {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
};

/** Text from the API (some of it written by a model) made safe for a terminal: no escape sequences. */
export function clean(text: string): string {
  // C0 controls other than tab and newline, DEL, and C1 controls.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  return text.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '');
}

/** One line of at most `max` characters. */
export function oneLine(text: string, max = 60): string {
  const line = clean(text).replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A plan's title as the domain shapes it for `shape` (`planTitle`), without terminal control characters. */
export function terminalPlanTitle(markdown: string, shape: TitleShape): string {
  return clean(planTitle(markdown, shape));
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(headers: string[], rows: string[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => oneLine(c, 200)))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => [...(r[i] ?? '')].length)));
  return cells
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat(widths[i]! - [...c].length)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Aligned `key  value` lines; null and undefined values show as '-'. */
export function fields(entries: [string, unknown][]): string {
  const width = Math.max(...entries.map(([k]) => k.length));
  return entries
    .map(
      ([k, v]) =>
        `${k.padEnd(width)}  ${v === null || v === undefined || v === '' ? '-' : oneLine(String(v), 500)}`,
    )
    .join('\n');
}

export const dash = (v: unknown): string => (v === null || v === undefined || v === '' ? '-' : String(v));

/** Prints the raw JSON body when --json is given; returns whether it did. */
export function printedJson(values: Values, text: string): boolean {
  if (!flag(values, 'json')) return false;
  out(text);
  return true;
}

/** Prints an answer: its JSON body with --json, else the text `render` makes of it. */
export function printAnswer<T>(
  values: Values,
  res: { text: string; body: unknown },
  render: (body: T) => string,
): void {
  if (!printedJson(values, res.text)) out(render(res.body as T));
}

/**
 * Prints a listing answer: its JSON body with --json; else `empty` when it has no items, else a table with
 * one row per item, then `more` (the way to the next page) when it gives a line.
 */
export function printListing<T, B extends { items: T[] } = { items: T[] }>(
  values: Values,
  res: { text: string; body: unknown },
  spec: {
    empty: string;
    headers: string[];
    row: (item: T, now: number) => string[];
    more?: (body: B) => string | null;
  },
): void {
  if (printedJson(values, res.text)) return;
  const body = res.body as B;
  if (!body.items.length) {
    out(spec.empty);
    return;
  }
  const now = Date.now();
  out(
    table(
      spec.headers,
      body.items.map((item) => spec.row(item, now)),
    ),
  );
  const more = spec.more?.(body);
  if (more) out(more);
}
