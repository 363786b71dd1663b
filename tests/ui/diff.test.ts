import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { highlight, languageOf, parseUnifiedDiff, renderDiff, unquotePath } from '../../src/ui/diff.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';

const tmp = tempDir('drydock-diff-');
afterAll(() => tmp.remove());

const ALLOWED_TAGS = new Set([
  'div',
  'p',
  'ul',
  'li',
  'a',
  'section',
  'h3',
  'code',
  'span',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
]);

/** Every tag in the markup is one the renderer writes, with no event handler or script URL. */
function expectInert(markup: string) {
  for (const m of markup.matchAll(/<\/?([a-zA-Z][\w-]*)([^>]*)>/g)) {
    expect(ALLOWED_TAGS.has(m[1]!.toLowerCase()), m[0]).toBe(true);
    expect(m[2], m[0]).not.toMatch(/\son\w+\s*=/i);
    expect(m[2], m[0]).not.toMatch(/javascript:/i);
  }
  // Nothing that a browser would read as markup is left unescaped outside of the tags counted above.
  expect(markup).not.toMatch(/<(script|img|iframe|style|svg)/i);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: checking they are gone
  expect(markup).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
}

/** The text a browser would show: tags dropped, entities decoded. */
const textOf = (markup: string) =>
  markup
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

const HOSTILE_NAME = '"><img src=x onerror=alert(1)>.js';

describe('a hostile diff from a real git repository renders inert', () => {
  const repo = join(tmp.path, 'hostile');
  const base = makeRepo(repo, {
    'page.html': '<p>old</p>\n',
    'gone.txt': 'bye\n',
    'old-name.md': 'same text\nin both\nplaces\nhere\n',
    'query.sql': 'select 1;\n-- a comment\n',
  });
  writeFileSync(
    join(repo, 'page.html'),
    '<p>old</p>\n<script>alert(document.cookie)</script>\n</td></tr></table><b>x</b>\n',
  );
  writeFileSync(
    join(repo, HOSTILE_NAME),
    `const s = "</code></td>";\x1b[31mred\x1b[0m\r\nlet x = 1;\r\n${'A'.repeat(50_000)}\n`,
  );
  rmSync(join(repo, 'gone.txt'));
  git(repo, 'mv', 'old-name.md', 'new <name>.md');
  writeFileSync(join(repo, 'query.sql'), 'select 2;\n');
  writeFileSync(join(repo, 'blob.bin'), Buffer.from([0, 1, 2, 3, 0, 255]));
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'hostile');
  const diff = git(repo, 'diff', '--no-color', '-M', base, 'HEAD');
  const files = parseUnifiedDiff(diff);
  const markup = renderDiff(files).value;

  it('parses every file with its status and counts', () => {
    const byPath = new Map(files.map((f) => [f.newPath ?? f.oldPath, f]));
    expect(byPath.get(HOSTILE_NAME)).toMatchObject({ status: 'added', additions: 3, deletions: 0 });
    expect(byPath.get('gone.txt')).toMatchObject({
      status: 'deleted',
      oldPath: 'gone.txt',
      newPath: null,
      deletions: 1,
    });
    expect(byPath.get('new <name>.md')).toMatchObject({
      status: 'renamed',
      oldPath: 'old-name.md',
      additions: 0,
    });
    expect(byPath.get('blob.bin')).toMatchObject({ status: 'added', binary: true, hunks: [] });
    // The removed SQL comment line `-- a comment` reads `--- a comment` in the diff: still a removed line.
    const sql = byPath.get('query.sql')!;
    expect(sql).toMatchObject({ status: 'modified', additions: 1, deletions: 2 });
    expect(sql.hunks[0]!.lines.map((l) => [l.kind, l.text])).toContainEqual(['del', '-- a comment']);
    expect(files).toHaveLength(6);
  });

  it('escapes markup, shows control characters and CR visibly, clips a huge line', () => {
    expectInert(markup);
    expect(markup).toContain('&lt;script&gt;alert(document.cookie)&lt;/script&gt;');
    expect(markup).toContain('&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;b&gt;x&lt;/b&gt;');
    expect(markup).toContain('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;.js');
    expect(textOf(markup)).toContain('const s = "</code></td>";␛[31mred␛[0m␍');
    expect(markup).toContain('more characters)');
    expect(markup.length).toBeLessThan(60_000);
    expect(markup).toContain('new &lt;name&gt;.md');
    expect(markup).toContain('Binary file');
  });

  it('marks lines with +/- and line numbers, not colour alone', () => {
    expect(markup).toMatch(
      /<tr class="diff-line diff-add"><td class="diff-ln"><\/td><td class="diff-ln">2<\/td><td class="diff-marker" aria-label="added">\+<\/td>/,
    );
    expect(markup).toMatch(
      /<td class="diff-ln">2<\/td><td class="diff-ln"><\/td><td class="diff-marker" aria-label="removed">-<\/td>/,
    );
    expect(markup).toContain('<span class="diff-mark diff-mark-new">new file</span>');
    expect(markup).toContain('<span class="diff-mark diff-mark-deleted">deleted</span>');
    expect(markup).toContain('<span class="diff-mark diff-mark-renamed">renamed</span>');
    expect(markup).toContain('<span class="diff-mark diff-mark-binary">binary</span>');
    expect(markup).toContain('6 files changed');
  });
});

describe('parseUnifiedDiff', () => {
  it('numbers old and new lines from the hunk header and keeps "no newline" notes', () => {
    const [f] = parseUnifiedDiff(
      [
        '--- a/x.txt',
        '+++ b/x.txt',
        '@@ -10,3 +10,3 @@ fn main',
        ' a',
        '-b',
        '+c',
        ' d',
        '\\ No newline at end of file',
        '',
      ].join('\n'),
    );
    expect(f!.hunks[0]!.header).toBe('@@ -10,3 +10,3 @@ fn main');
    expect(f!.hunks[0]!.lines).toEqual([
      { kind: 'context', text: 'a', oldNo: 10, newNo: 10 },
      { kind: 'del', text: 'b', oldNo: 11, newNo: null },
      { kind: 'add', text: 'c', oldNo: null, newNo: 11 },
      { kind: 'context', text: 'd', oldNo: 12, newNo: 12 },
      { kind: 'note', text: 'No newline at end of file', oldNo: null, newNo: null },
    ]);
  });

  it('reads quoted paths with octal UTF-8 escapes and mode-only changes', () => {
    expect(unquotePath('"a/caf\\303\\251 \\"x\\".txt"')).toBe('a/café "x".txt');
    const files = parseUnifiedDiff(
      [
        'diff --git a/run.sh b/run.sh',
        'old mode 100644',
        'new mode 100755',
        'diff --git "a/t\\tab" "b/t\\tab"',
        'new file mode 100644',
        'index 0000000..e69de29',
        '',
      ].join('\n'),
    );
    expect(files[0]).toMatchObject({
      oldPath: 'run.sh',
      newPath: 'run.sh',
      notes: ['old mode 100644', 'new mode 100755'],
    });
    expect(files[1]).toMatchObject({ newPath: 't\tab', status: 'added', hunks: [] });
    expect(renderDiff(files).value).toContain('t\tab');
  });

  it('ignores what is not a diff and renders an empty one as such', () => {
    expect(parseUnifiedDiff('hello\n<script>x</script>\n')).toEqual([]);
    expect(renderDiff([]).value).toContain('The diff is empty.');
  });
});

describe('syntax colouring', () => {
  it('colours strings, comments and keywords by extension, escaping every piece', () => {
    const ts = highlight('const a = "<b>" + 1; // </span><script>', languageOf('x.ts')).value;
    expect(ts).toBe(
      '<span class="tk-kw">const</span> a = <span class="tk-str">&quot;&lt;b&gt;&quot;</span> + <span class="tk-num">1</span>; <span class="tk-com">// &lt;/span&gt;&lt;script&gt;</span>',
    );
    expect(highlight('SELECT x -- note', languageOf('q.sql')).value).toBe(
      '<span class="tk-kw">SELECT</span> x <span class="tk-com">-- note</span>',
    );
    expect(highlight('def f(): # hi', languageOf('a.py')).value).toContain('<span class="tk-kw">def</span>');
    expect(highlight('<b>"x"</b>', languageOf('notes.txt')).value).toBe('&lt;b&gt;&quot;x&quot;&lt;/b&gt;');
    expect(highlight('"unterminated <i>', languageOf('a.js')).value).toBe(
      '<span class="tk-str">&quot;unterminated &lt;i&gt;</span>',
    );
  });

  it('shows bidirectional overrides instead of letting them reorder the line', () => {
    expect(highlight('a\u202eb', null).value).toBe('a⟨U+202E⟩b');
  });
});
