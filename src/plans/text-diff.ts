// A line diff of two texts (Myers' O((N+M)·D) algorithm), for showing what a revision round changed in a
// plan. Written here rather than taken from a package: plans are at most a few thousand lines, the whole
// need is one function and a hunk grouping, and the popular diff packages bring far more (word, JSON,
// patch parsing) than a reviewer's "what changed in round 2" needs.

export type DiffOp = 'same' | 'add' | 'remove';

export interface DiffLine {
  op: DiffOp;
  text: string;
  /** 1-based line number in the old text (absent on an added line). */
  oldLine?: number;
  /** 1-based line number in the new text (absent on a removed line). */
  newLine?: number;
}

export interface DiffHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: DiffLine[];
}

/**
 * Beyond this many edits the shortest script is not searched for: the texts are reported as all of the old
 * removed and all of the new added. Bounds time and memory (the search keeps one vector per edit) on two
 * unrelated plans, where a minimal diff would tell a reviewer nothing anyway.
 */
export const MAX_EDITS = 2_000;

/** Splits a text into lines; a final newline does not make an empty last line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Every line of both texts in order, each marked same, add or remove: a shortest edit script. */
export function diffLines(oldText: string, newText: string, maxEdits = MAX_EDITS): DiffLine[] {
  return diffLineLists(splitLines(oldText), splitLines(newText), maxEdits);
}

/** `diffLines` over texts already split (by callers that keep `\r` or mark a missing final newline). */
export function diffLineLists(a: string[], b: string[], maxEdits = MAX_EDITS): DiffLine[] {
  // The common head and tail are cheap to match and are most of a revision.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  const middle = shortestEdit(a.slice(head, a.length - tail), b.slice(head, b.length - tail), maxEdits);

  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  const same = (text: string) => out.push({ op: 'same', text, oldLine: ++i, newLine: ++j });
  for (let k = 0; k < head; k++) same(a[k]!);
  for (const step of middle) {
    if (step.op === 'same') same(step.text);
    else if (step.op === 'remove') out.push({ op: 'remove', text: step.text, oldLine: ++i });
    else out.push({ op: 'add', text: step.text, newLine: ++j });
  }
  for (let k = a.length - tail; k < a.length; k++) same(a[k]!);
  return out;
}

type Step = { op: DiffOp; text: string };

/**
 * Myers' greedy search: for each number of edits d, the furthest x reached on every diagonal k = x - y
 * (x indexes `a`, y indexes `b`). Round d writes only diagonals of d's parity and reads only the other
 * parity, so one vector is updated in place; the part of it that round d touched (k in [-d-1, d+1]) is
 * kept to walk the path back afterwards.
 */
function shortestEdit(a: string[], b: string[], maxEdits: number): Step[] {
  const n = a.length;
  const m = b.length;
  if (n === 0) return b.map((text) => ({ op: 'add', text }));
  if (m === 0) return a.map((text) => ({ op: 'remove', text }));
  const max = Math.min(n + m, maxEdits);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  /** trace[d][k + d + 1]: the furthest x on diagonal k after round d. */
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    for (let k = -d; k <= d; k += 2) {
      // Down (an insertion) from diagonal k+1, or right (a deletion) from k-1: whichever got further.
      let x =
        k === -d || (k !== d && v[k - 1 + offset]! < v[k + 1 + offset]!)
          ? v[k + 1 + offset]!
          : v[k - 1 + offset]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[k + offset] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    trace.push(v.slice(offset - d - 1, offset + d + 2));
  }
  if (found < 0) {
    return [
      ...a.map((text): Step => ({ op: 'remove', text })),
      ...b.map((text): Step => ({ op: 'add', text })),
    ];
  }

  // Walk back from (n, m): each round d ends with a snake that began one edit after round d-1's point.
  const steps: Step[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const prev = trace[d - 1]!;
    const at = (k: number) => prev[k + d]!; // round d-1's vector, indexed k + (d-1) + 1
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY && (down ? y > prevY + 1 : x > prevX + 1)) {
      steps.push({ op: 'same', text: a[--x]! });
      y--;
    }
    if (down) steps.push({ op: 'add', text: b[--y]! });
    else steps.push({ op: 'remove', text: a[--x]! });
  }
  while (x > 0 && y > 0) {
    steps.push({ op: 'same', text: a[--x]! });
    y--;
  }
  return steps.reverse();
}

/**
 * The changed lines with `context` unchanged lines around each change, grouped as unified-diff hunks.
 * Identical texts give no hunks.
 */
export function diffHunks(lines: DiffLine[], context = 3): DiffHunk[] {
  const changed = lines.map((l, i) => (l.op === 'same' ? -1 : i)).filter((i) => i >= 0);
  if (changed.length === 0) return [];
  const hunks: DiffHunk[] = [];
  let start = Math.max(0, changed[0]! - context);
  let end = Math.min(lines.length, changed[0]! + context + 1);
  const close = () => {
    const slice = lines.slice(start, end);
    // Where the hunk begins in each text: the line numbers of its first line, or, for a hunk that holds no
    // line of one side, the line before it (as unified diff writes `-0,0`).
    const oldStart =
      slice.find((l) => l.oldLine !== undefined)?.oldLine ?? lineBefore(lines, start, 'oldLine');
    const newStart =
      slice.find((l) => l.newLine !== undefined)?.newLine ?? lineBefore(lines, start, 'newLine');
    hunks.push({
      oldStart,
      oldLines: slice.filter((l) => l.op !== 'add').length,
      newStart,
      newLines: slice.filter((l) => l.op !== 'remove').length,
      lines: slice,
    });
  };
  for (const i of changed.slice(1)) {
    if (i - context <= end) {
      end = Math.min(lines.length, i + context + 1);
    } else {
      close();
      start = i - context;
      end = Math.min(lines.length, i + context + 1);
    }
  }
  close();
  return hunks;
}

function lineBefore(lines: DiffLine[], index: number, side: 'oldLine' | 'newLine'): number {
  for (let i = index - 1; i >= 0; i--) {
    const n = lines[i]![side];
    if (n !== undefined) return n;
  }
  return 0;
}
