import { describe, expect, it } from 'vitest';
import { type DiffLine, diffHunks, diffLines, splitLines } from '../../src/plans/text-diff.js';
import { mulberry32 } from '../support/prng.js';
import { unifiedDiff } from '../support/unified-diff.js';

const ops = (lines: DiffLine[]) =>
  lines.map((l) => `${l.op === 'add' ? '+' : l.op === 'remove' ? '-' : ' '}${l.text}`);

/** The old text is the same and removed lines; the new text is the same and added lines. */
function expectConsistent(a: string, b: string, lines: DiffLine[]) {
  expect(lines.filter((l) => l.op !== 'add').map((l) => l.text)).toEqual(splitLines(a));
  expect(lines.filter((l) => l.op !== 'remove').map((l) => l.text)).toEqual(splitLines(b));
  let o = 0;
  let n = 0;
  for (const l of lines) {
    if (l.op !== 'add') expect(l.oldLine).toBe(++o);
    else expect(l.oldLine).toBeUndefined();
    if (l.op !== 'remove') expect(l.newLine).toBe(++n);
    else expect(l.newLine).toBeUndefined();
  }
}

/** The length of a longest common subsequence, by the textbook table: the reference for minimality. */
function lcs(a: string[], b: string[]): number {
  const t = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++)
      t[i]![j] = a[i - 1] === b[j - 1] ? t[i - 1]![j - 1]! + 1 : Math.max(t[i - 1]![j]!, t[i]![j - 1]!);
  return t[a.length]![b.length]!;
}

describe('diffLines', () => {
  it('marks nothing for identical texts and everything for empty ones', () => {
    expect(diffLines('a\nb\n', 'a\nb\n').every((l) => l.op === 'same')).toBe(true);
    expect(ops(diffLines('', 'x\ny\n'))).toEqual(['+x', '+y']);
    expect(ops(diffLines('x\ny\n', ''))).toEqual(['-x', '-y']);
    expect(diffLines('', '')).toEqual([]);
  });

  it('finds a changed line in the middle of a plan', () => {
    const a = '# Plan\n\n1. Add a cache\n2. Test it\n';
    const b = '# Plan\n\n1. Add an LRU cache\n2. Test it\n3. Document it\n';
    expect(ops(diffLines(a, b))).toEqual([
      ' # Plan',
      ' ',
      '-1. Add a cache',
      '+1. Add an LRU cache',
      ' 2. Test it',
      '+3. Document it',
    ]);
  });

  it('treats CRLF and LF line ends alike and ignores a missing final newline', () => {
    expect(diffLines('a\r\nb\r\n', 'a\nb').every((l) => l.op === 'same')).toBe(true);
  });

  it('is a shortest edit script: same lines equal the LCS, on 300 random pairs', () => {
    const rnd = mulberry32(13);
    const words = ['a', 'b', 'c', 'd', 'e'];
    const text = () =>
      Array.from({ length: Math.floor(rnd() * 12) }, () => words[Math.floor(rnd() * words.length)]!).join(
        '\n',
      );
    for (let i = 0; i < 300; i++) {
      const a = text();
      const b = text();
      const lines = diffLines(a, b);
      expectConsistent(a, b, lines);
      expect(lines.filter((l) => l.op === 'same').length).toBe(lcs(splitLines(a), splitLines(b)));
    }
  });

  it('gives up on the shortest script past the edit limit: all old removed, all new added', () => {
    const a = Array.from({ length: 50 }, (_, i) => `old ${i}`).join('\n');
    const b = Array.from({ length: 50 }, (_, i) => `new ${i}`).join('\n');
    const lines = diffLines(a, b, 10);
    expectConsistent(a, b, lines);
    expect(lines.slice(0, 50).every((l) => l.op === 'remove')).toBe(true);
    expect(lines.slice(50).every((l) => l.op === 'add')).toBe(true);
  });

  it('diffs two 3,000-line plans with a few changes quickly', () => {
    const a = Array.from({ length: 3000 }, (_, i) => `step ${i}`);
    const b = [...a];
    b[10] = 'changed';
    b.splice(1500, 5);
    b.push('appended');
    const started = performance.now();
    const lines = diffLines(a.join('\n'), b.join('\n'));
    expect(performance.now() - started).toBeLessThan(1000);
    expectConsistent(a.join('\n'), b.join('\n'), lines);
    expect(lines.filter((l) => l.op !== 'same')).toHaveLength(1 + 1 + 5 + 1);
  });
});

describe('diffHunks and unifiedDiff', () => {
  it('groups changes with three lines of context, as unified diff does', () => {
    const a = Array.from({ length: 20 }, (_, i) => `l${i + 1}`);
    const b = [...a];
    b[1] = 'L2';
    b[17] = 'L18';
    const hunks = diffHunks(diffLines(a.join('\n'), b.join('\n')));
    expect(hunks).toHaveLength(2);
    expect(unifiedDiff(hunks)).toBe(
      [
        '@@ -1,5 +1,5 @@',
        ' l1',
        '-l2',
        '+L2',
        ' l3',
        ' l4',
        ' l5',
        '@@ -15,6 +15,6 @@',
        ' l15',
        ' l16',
        ' l17',
        '-l18',
        '+L18',
        ' l19',
        ' l20',
      ].join('\n'),
    );
  });

  it('merges changes whose context overlaps into one hunk', () => {
    const a = Array.from({ length: 10 }, (_, i) => `l${i + 1}`);
    const b = [...a];
    b[2] = 'x';
    b[7] = 'y';
    const hunks = diffHunks(diffLines(a.join('\n'), b.join('\n')));
    expect(hunks).toHaveLength(1);
    expect(hunks[0]).toMatchObject({ oldStart: 1, oldLines: 10, newStart: 1, newLines: 10 });
  });

  it('numbers a hunk that only adds after the old text like diff -u (-n,0)', () => {
    const hunks = diffHunks(diffLines('', 'a\n'));
    expect(unifiedDiff(hunks)).toBe('@@ -0,0 +1,1 @@\n+a');
    expect(diffHunks(diffLines('same\n', 'same\n'))).toEqual([]);
  });
});
