import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseUnifiedDiff } from '../../src/ui/diff.js';
import { unifiedTextDiff } from '../../src/ui/text-diff.js';
import { tempDir } from '../support/harness.js';
import { mulberry32 } from '../support/prng.js';

const tmp = tempDir('drydock-text-diff-');
afterAll(() => tmp.remove());

/** Applies a diff to `before` with git (outside any repository, as patch(1) would) and returns the result. */
function applied(before: string, diff: string): string {
  const file = join(tmp.path, 'f.txt');
  writeFileSync(file, before);
  writeFileSync(join(tmp.path, 'p.diff'), diff);
  execFileSync(
    'git',
    ['apply', '--unsafe-paths', `--directory=${tmp.path.slice(1)}`, '--', join(tmp.path, 'p.diff')],
    {
      cwd: '/',
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    },
  );
  return readFileSync(file, 'utf8');
}

describe('unifiedTextDiff', () => {
  it('is empty for equal texts and names the file in its headers', () => {
    expect(unifiedTextDiff('a\n', 'a\n', { path: 'x' })).toBe('');
    expect(unifiedTextDiff('a\nb\n', 'a\nc\n', { path: 'src/x.ts' })).toBe(
      '--- a/src/x.ts\n+++ b/src/x.ts\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n',
    );
  });

  it('shows a new file as all added, against /dev/null', () => {
    const d = unifiedTextDiff('', 'one\ntwo\n', { path: 'new.txt', created: true });
    expect(d).toBe('--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n');
    const [file] = parseUnifiedDiff(d);
    expect(file).toMatchObject({ status: 'added', newPath: 'new.txt', additions: 2, deletions: 0 });
  });

  it('keeps only three lines of context and splits distant changes into hunks', () => {
    const before = `${Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n')}\n`;
    const after = before.replace('line 2\n', 'LINE 2\n').replace('line 28\n', 'LINE 28\n');
    const d = unifiedTextDiff(before, after, { path: 'f.txt' });
    expect(d.match(/^@@ /gm)).toHaveLength(2);
    expect(d).toContain('@@ -1,5 +1,5 @@');
    expect(d).toContain('@@ -25,6 +25,6 @@');
    expect(applied(before, d)).toBe(after);
  });

  it('marks a missing newline at the end of a file', () => {
    const d = unifiedTextDiff('a\nb', 'a\nb\n', { path: 'f.txt' });
    expect(d).toContain('-b\n\\ No newline at end of file\n+b\n');
    expect(applied('a\nb', d)).toBe('a\nb\n');
  });

  it('round-trips: git apply of the diff turns the old text into the new one (random texts)', () => {
    const rnd = mulberry32(1313);
    const text = () => {
      const lines = Array.from({ length: Math.floor(rnd() * 14) }, () => 'abcdef'[Math.floor(rnd() * 6)]!);
      return lines.join('\n') + (lines.length && rnd() < 0.7 ? '\n' : '');
    };
    let checked = 0;
    for (let i = 0; i < 150; i++) {
      const a = text();
      const b = text();
      const d = unifiedTextDiff(a, b, { path: 'f.txt' });
      if (a === b) {
        expect(d).toBe('');
        continue;
      }
      if (a === '') continue; // git apply wants a creation diff for an empty file
      expect(applied(a, d), `${JSON.stringify(a)} -> ${JSON.stringify(b)}\n${d}`).toBe(b);
      checked++;
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('falls back to remove-all/add-all past the edit limit and stays correct', () => {
    const a = `${Array.from({ length: 50 }, (_, i) => `a${i}`).join('\n')}\n`;
    const b = `${Array.from({ length: 50 }, (_, i) => `b${i}`).join('\n')}\n`;
    const d = unifiedTextDiff(a, b, { path: 'f.txt', maxEdits: 10 });
    expect(d.match(/^-/gm)?.length).toBe(51); // 50 lines and the --- header
    expect(applied(a, d)).toBe(b);
  });
});
