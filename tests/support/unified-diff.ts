import type { DiffHunk } from '../../src/plans/text-diff.js';

/** Hunks as unified-diff text (`@@ -a,b +c,d @@`, then ` `, `-` and `+` lines): what tests compare them by. */
export function unifiedDiff(hunks: DiffHunk[]): string {
  const out: string[] = [];
  for (const h of hunks) {
    out.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`);
    for (const l of h.lines) out.push(`${l.op === 'add' ? '+' : l.op === 'remove' ? '-' : ' '}${l.text}`);
  }
  return out.join('\n');
}
