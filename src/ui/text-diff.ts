// A unified diff of two texts, for showing what a pending Write or Edit would change before it runs (git is
// not involved: the new text exists only in the tool call). The line diff is src/plans/text-diff.ts; this
// adds the file headers and git's "\ No newline at end of file" marks, and keeps `\r` so the result applies
// with `git apply`.

import { diffHunks, diffLineLists, MAX_EDITS } from '../plans/text-diff.js';

/**
 * The lines of a text. A last line without a newline keeps a trailing `\n` (no other line can hold one), so
 * that it differs from the same text with a newline and the diff marks it.
 */
function split(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  else lines[lines.length - 1] += '\n';
  return lines;
}

export interface TextDiffOptions {
  /** The path shown in the headers. */
  path: string;
  /** The file does not exist yet: the old side is /dev/null. */
  created?: boolean;
  /** Unchanged lines around each change (default 3). */
  context?: number;
  /** Differences past which the shortest script is not searched for (default 2,000). */
  maxEdits?: number;
}

/** A unified diff (`--- a/p`, `+++ b/p`, hunks) from `before` to `after`; '' when they are equal. */
export function unifiedTextDiff(before: string, after: string, o: TextDiffOptions): string {
  if (before === after) return '';
  const hunks = diffHunks(
    diffLineLists(split(before), split(after), o.maxEdits ?? MAX_EDITS),
    o.context ?? 3,
  );
  if (!hunks.length) return '';
  const out = [o.created ? '--- /dev/null' : `--- a/${o.path}`, `+++ b/${o.path}`];
  for (const h of hunks) {
    // A side with no line in the hunk starts at the line before it, as git writes `-0,0`.
    out.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`);
    for (const l of h.lines) {
      const mark = l.op === 'same' ? ' ' : l.op === 'remove' ? '-' : '+';
      if (l.text.endsWith('\n')) out.push(`${mark}${l.text.slice(0, -1)}`, '\\ No newline at end of file');
      else out.push(`${mark}${l.text}`);
    }
  }
  return `${out.join('\n')}\n`;
}
