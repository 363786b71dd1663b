// A unified diff of two texts, line by line, for showing what a pending Write or Edit would change before it
// runs (git is not involved: the new text exists only in the tool call). Myers' O((N+M)·D) shortest edit
// script after the common head and tail are set aside; past `maxEdits` differences it gives up finding the
// shortest one and shows every old line removed and every new line added, which is still a true diff.

type Op = { kind: 'same' | 'del' | 'add'; line: string };

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

/** The shortest edit script between a and b, or null when it has more than `maxEdits` edits. */
function myers(a: string[], b: string[], maxEdits: number): Op[] | null {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d] holds v[-d..d] after step d: what backtracking from step d + 1 reads.
  const trace: Int32Array[] = [];
  for (let d = 0; d <= Math.min(max, maxEdits); d++) {
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)
          ? v[offset + k + 1]!
          : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace, d);
    }
    trace.push(v.slice(offset - d, offset + d + 1));
  }
  return null;
}

function backtrack(a: string[], b: string[], trace: Int32Array[], last: number): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  const at = (d: number, k: number) => trace[d]![k + d]!;
  for (let d = last; d > 0; d--) {
    const k = x - y;
    const down = k === -d || (k !== d && at(d - 1, k - 1) < at(d - 1, k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(d - 1, prevK);
    const prevY = prevX - prevK;
    const midX = down ? prevX : prevX + 1;
    while (x > midX) {
      ops.push({ kind: 'same', line: a[--x]! });
      y--;
    }
    if (down) ops.push({ kind: 'add', line: b[--y]! });
    else ops.push({ kind: 'del', line: a[--x]! });
    x = prevX;
    y = prevY;
  }
  while (x > 0) {
    ops.push({ kind: 'same', line: a[--x]! });
    y--;
  }
  return ops.reverse();
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
  const context = o.context ?? 3;
  const A = split(before);
  const B = split(after);
  let head = 0;
  while (head < A.length && head < B.length && A[head] === B[head]) head++;
  let tail = 0;
  while (
    tail < A.length - head &&
    tail < B.length - head &&
    A[A.length - 1 - tail] === B[B.length - 1 - tail]
  )
    tail++;
  const midA = A.slice(head, A.length - tail);
  const midB = B.slice(head, B.length - tail);
  const middle = myers(midA, midB, o.maxEdits ?? 2_000) ?? [
    ...midA.map((line): Op => ({ kind: 'del', line })),
    ...midB.map((line): Op => ({ kind: 'add', line })),
  ];
  const ops: Op[] = [
    ...A.slice(0, head).map((line): Op => ({ kind: 'same', line })),
    ...middle,
    ...A.slice(A.length - tail).map((line): Op => ({ kind: 'same', line })),
  ];
  return render(ops, context, o);
}

function render(ops: Op[], context: number, o: TextDiffOptions): string {
  const changed = ops.flatMap((op, i) => (op.kind === 'same' ? [] : [i]));
  if (!changed.length) return '';
  // Group changes whose contexts touch into one hunk.
  const groups: [number, number][] = [];
  for (const i of changed) {
    const g = groups.at(-1);
    if (g && i - g[1] <= 2 * context + 1) g[1] = i;
    else groups.push([i, i]);
  }
  // Line numbers where each op starts.
  const oldAt: number[] = [];
  const newAt: number[] = [];
  let on = 1;
  let nn = 1;
  for (const op of ops) {
    oldAt.push(on);
    newAt.push(nn);
    if (op.kind !== 'add') on++;
    if (op.kind !== 'del') nn++;
  }
  const out = [o.created ? '--- /dev/null' : `--- a/${o.path}`, `+++ b/${o.path}`];
  for (const [first, last] of groups) {
    const from = Math.max(0, first - context);
    const to = Math.min(ops.length - 1, last + context);
    const slice = ops.slice(from, to + 1);
    const oldCount = slice.filter((op) => op.kind !== 'add').length;
    const newCount = slice.filter((op) => op.kind !== 'del').length;
    const oldStart = oldCount === 0 ? oldAt[from]! - 1 : oldAt[from]!;
    const newStart = newCount === 0 ? newAt[from]! - 1 : newAt[from]!;
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (let i = from; i <= to; i++) {
      const op = ops[i]!;
      const mark = op.kind === 'same' ? ' ' : op.kind === 'del' ? '-' : '+';
      if (op.line.endsWith('\n')) out.push(`${mark}${op.line.slice(0, -1)}`, '\\ No newline at end of file');
      else out.push(`${mark}${op.line}`);
    }
  }
  return `${out.join('\n')}\n`;
}
