import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runGrep } from '../../../src/agent/tools/grep.js';
import { expectNoLeak, type Fixture, makeFixture } from './fixture.js';

let fx: Fixture;
const T = 1_700_000_000;

beforeEach(async () => {
  fx = await makeFixture('drydock-grep-');
  fx.write(
    'src/app.ts',
    ['import x from "y";', 'function hello() {', '  return "Hello";', '}', ''].join('\n'),
    T + 10,
  );
  fx.write('src/util.tsx', ['export const HELLO = 1;', 'const other = 2;', ''].join('\n'), T + 30);
  fx.write('lib/plain.js', ['// nothing here', 'hello world', ''].join('\n'), T + 20);
  fx.write('docs/notes.md', 'no match\n', T);
  fx.write('node_modules/dep/index.js', 'hello from a dependency\n');
  fx.write('.git/HEAD', 'hello ref\n');
});

afterEach(() => fx.cleanup());

async function grep(input: unknown, limits = fx.limits) {
  const result = await runGrep(fx.ws, input, limits);
  expectNoLeak(result.content, fx);
  return result;
}

describe('Grep output modes', () => {
  it('lists files with matches by default, newest first', async () => {
    expect(await grep({ pattern: 'hello' })).toEqual({
      content: 'Found 2 files\nlib/plain.js\nsrc/app.ts',
      isError: false,
    });
  });

  it('ignores case with -i', async () => {
    expect((await grep({ pattern: 'hello', '-i': true })).content).toBe(
      'Found 3 files\nsrc/util.tsx\nlib/plain.js\nsrc/app.ts',
    );
    expect((await grep({ pattern: '(?i)hello' })).content).toBe(
      'Found 3 files\nsrc/util.tsx\nlib/plain.js\nsrc/app.ts',
    );
  });

  it('shows matching lines with line numbers in content mode', async () => {
    expect((await grep({ pattern: 'hello', output_mode: 'content', '-i': true })).content).toBe(
      [
        'lib/plain.js:2:hello world',
        'src/app.ts:2:function hello() {',
        'src/app.ts:3:  return "Hello";',
        'src/util.tsx:1:export const HELLO = 1;',
      ].join('\n'),
    );
    expect((await grep({ pattern: 'world', output_mode: 'content', '-n': false })).content).toBe(
      'lib/plain.js:hello world',
    );
  });

  it('counts matching lines per file', async () => {
    expect((await grep({ pattern: 'hello', output_mode: 'count', '-i': true })).content).toBe(
      ['lib/plain.js:1', 'src/app.ts:2', 'src/util.tsx:1', '', 'Found 4 matching lines in 3 files'].join(
        '\n',
      ),
    );
  });

  it('shows context lines with -A, -B and -C, separating groups', async () => {
    expect((await grep({ pattern: 'return', output_mode: 'content', '-B': 1 })).content).toBe(
      ['src/app.ts-2-function hello() {', 'src/app.ts:3:  return "Hello";'].join('\n'),
    );
    expect((await grep({ pattern: 'return', output_mode: 'content', '-A': 1 })).content).toBe(
      ['src/app.ts:3:  return "Hello";', 'src/app.ts-4-}'].join('\n'),
    );
    // adjacent context merges into one group
    expect(
      (await grep({ pattern: '^import|^}', output_mode: 'content', '-C': 1, path: 'src/app.ts' })).content,
    ).toBe(
      [
        'src/app.ts:1:import x from "y";',
        'src/app.ts-2-function hello() {',
        'src/app.ts-3-  return "Hello";',
        'src/app.ts:4:}',
      ].join('\n'),
    );
    fx.write('seven.txt', 'one\ntwo\nthree\nfour\nfive\nsix\nseven\n');
    expect(
      (await grep({ pattern: 'one|seven', output_mode: 'content', '-C': 1, path: 'seven.txt' })).content,
    ).toBe(['seven.txt:1:one', 'seven.txt-2-two', '--', 'seven.txt-6-six', 'seven.txt:7:seven'].join('\n'));
    expect((await grep({ pattern: 'hello world|^const', output_mode: 'content', '-A': 1 })).content).toBe(
      ['lib/plain.js:2:hello world', '--', 'src/util.tsx:2:const other = 2;'].join('\n'),
    );
    // -A overrides -C for the lines after
    expect((await grep({ pattern: 'return', output_mode: 'content', '-C': 1, '-A': 0 })).content).toBe(
      ['src/app.ts-2-function hello() {', 'src/app.ts:3:  return "Hello";'].join('\n'),
    );
  });

  it('matches across lines with multiline', async () => {
    const input = { pattern: 'hello\\(\\) \\{\\s+return', output_mode: 'content' };
    expect((await grep(input)).content).toBe('No matches found');
    expect((await grep({ ...input, multiline: true })).content).toBe(
      'src/app.ts:2:function hello() {\nsrc/app.ts:3:  return "Hello";',
    );
    expect((await grep({ pattern: 'x.*?y', multiline: true, output_mode: 'count' })).content).toMatch(
      /^src\/app.ts:1$/m,
    );
  });

  it('says when nothing matches', async () => {
    expect(await grep({ pattern: 'zebra' })).toEqual({ content: 'No matches found', isError: false });
  });
});

describe('Grep options from Claude Code: -o, context, offset', () => {
  it('-o shows only the matched parts, each on its own line, every match of a line', async () => {
    fx.write('pairs.txt', 'a=1, b=22\nnone here\nc=333\n');
    expect(
      (await grep({ pattern: '[a-z]=\\d+', path: 'pairs.txt', output_mode: 'content', '-o': true })).content,
    ).toBe(['pairs.txt:1:a=1', 'pairs.txt:1:b=22', 'pairs.txt:3:c=333'].join('\n'));
    expect(
      (
        await grep({
          pattern: '\\d+',
          path: 'pairs.txt',
          output_mode: 'content',
          '-o': true,
          '-n': false,
          '-i': true,
        })
      ).content,
    ).toBe(['pairs.txt:1', 'pairs.txt:22', 'pairs.txt:333'].join('\n'));
    // a literal pattern (matched without the vm) behaves the same
    expect(
      (await grep({ pattern: 'b=', path: 'pairs.txt', output_mode: 'content', '-o': true })).content,
    ).toBe('pairs.txt:1:b=');
  });

  it('-o leaves out context lines and says so; it does not change the other modes', async () => {
    fx.write('pairs.txt', 'x\na=1\ny\n');
    expect(
      (await grep({ pattern: '\\d', path: 'pairs.txt', output_mode: 'content', '-o': true, '-C': 1 }))
        .content,
    ).toBe('pairs.txt:2:1\n\n[context lines are not shown with -o]');
    expect(
      (await grep({ pattern: '\\d', path: 'pairs.txt', output_mode: 'count', '-o': true })).content,
    ).toBe('pairs.txt:1\n\nFound 1 matching line in 1 file');
  });

  it('-o with multiline shows each line of a match under its own line number', async () => {
    expect(
      (
        await grep({
          pattern: 'hello\\(\\) \\{\\s+return',
          output_mode: 'content',
          multiline: true,
          '-o': true,
        })
      ).content,
    ).toBe('src/app.ts:2:hello() {\nsrc/app.ts:3:  return');
  });

  it('context is -C by its long name; -C wins over it, -A and -B over both', async () => {
    fx.write('seven.txt', 'one\ntwo\nthree\nfour\nfive\nsix\nseven\n');
    const base = { pattern: 'four', output_mode: 'content', path: 'seven.txt' };
    expect((await grep({ ...base, context: 1 })).content).toBe(
      ['seven.txt-3-three', 'seven.txt:4:four', 'seven.txt-5-five'].join('\n'),
    );
    expect((await grep({ ...base, context: 2, '-C': 1 })).content).toBe(
      ['seven.txt-3-three', 'seven.txt:4:four', 'seven.txt-5-five'].join('\n'),
    );
    expect((await grep({ ...base, context: 2, '-A': 0 })).content).toBe(
      ['seven.txt-2-two', 'seven.txt-3-three', 'seven.txt:4:four'].join('\n'),
    );
  });

  it('offset skips the first entries of content output, before head_limit, and says how to go on', async () => {
    fx.write('ten.txt', Array.from({ length: 10 }, (_, i) => `needle ${i + 1}`).join('\n'));
    const base = { pattern: 'needle', output_mode: 'content', path: 'ten.txt' };
    expect((await grep({ ...base, offset: 7 })).content).toBe(
      [
        'ten.txt:8:needle 8',
        'ten.txt:9:needle 9',
        'ten.txt:10:needle 10',
        '',
        '[skipped the first 7 lines (offset)]',
      ].join('\n'),
    );
    const page = await grep({ ...base, offset: 3, head_limit: 2 });
    expect(page.content).toBe(
      [
        'ten.txt:4:needle 4',
        'ten.txt:5:needle 5',
        '',
        '[output limited to lines 4-5 by offset and head_limit; use offset=5 for more]',
      ].join('\n'),
    );
    expect(page.truncated).toBe(true);
    expect((await grep({ ...base, offset: 10 })).content).toBe(
      'No lines at offset 10: the output has 10 lines',
    );
    // with -o, every matched part is one entry
    expect((await grep({ ...base, pattern: '\\d+', '-o': true, offset: 8 })).content).toBe(
      'ten.txt:9:9\nten.txt:10:10\n\n[skipped the first 8 lines (offset)]',
    );
  });

  it('offset counts context lines and leaves no separator at the start', async () => {
    fx.write('seven.txt', 'one\ntwo\nthree\nfour\nfive\nsix\nseven\n');
    expect(
      (await grep({ pattern: 'one|seven', output_mode: 'content', '-C': 1, path: 'seven.txt', offset: 1 }))
        .content,
    ).toBe(
      [
        'seven.txt-2-two',
        '--',
        'seven.txt-6-six',
        'seven.txt:7:seven',
        '',
        '[skipped the first 1 line (offset)]',
      ].join('\n'),
    );
    expect(
      (await grep({ pattern: 'one|seven', output_mode: 'content', '-C': 1, path: 'seven.txt', offset: 2 }))
        .content,
    ).toBe(['seven.txt-6-six', 'seven.txt:7:seven', '', '[skipped the first 2 lines (offset)]'].join('\n'));
  });

  it('offset pages through file lists and counts', async () => {
    for (let i = 0; i < 5; i++) fx.write(`many/m${i}.txt`, 'needle\n', T + 100 + i);
    expect((await grep({ pattern: 'needle', offset: 1, head_limit: 2 })).content).toBe(
      'Found 5 files\nmany/m3.txt\nmany/m2.txt\n\n[showing files 2-3 of 5 (offset and head_limit); use offset=3 for more]',
    );
    expect((await grep({ pattern: 'needle', offset: 3 })).content).toBe(
      'Found 5 files\nmany/m1.txt\nmany/m0.txt\n\n[showing files 4-5 of 5 (offset)]',
    );
    expect((await grep({ pattern: 'needle', output_mode: 'count', offset: 4 })).content).toBe(
      'many/m4.txt:1\n\nFound 5 matching lines in 5 files\n\n[showing files 5-5 of 5 (offset)]',
    );
    expect((await grep({ pattern: 'needle', offset: 9 })).content).toBe(
      'Found 5 files\n\n[no files at offset 9: there are 5]',
    );
  });

  it('offset reaches past the match cap', async () => {
    fx.write('lots.txt', Array.from({ length: 50 }, (_, i) => `hit ${i + 1}`).join('\n'));
    const result = await grep(
      { pattern: 'hit', output_mode: 'content', path: 'lots.txt', offset: 10, head_limit: 2 },
      { ...fx.limits, maxGrepMatches: 5 },
    );
    expect(result.content.split('\n').slice(0, 2)).toEqual(['lots.txt:11:hit 11', 'lots.txt:12:hit 12']);
  });
});

describe('Grep filters and limits', () => {
  it('filters files by glob, matching names at any depth without a slash', async () => {
    expect((await grep({ pattern: 'hello', '-i': true, glob: '*.ts' })).content).toBe(
      'Found 1 file\nsrc/app.ts',
    );
    expect((await grep({ pattern: 'hello', '-i': true, glob: '*.{ts,tsx}' })).content).toBe(
      'Found 2 files\nsrc/util.tsx\nsrc/app.ts',
    );
    expect((await grep({ pattern: 'hello', '-i': true, glob: '**/*.{ts,tsx}' })).content).toBe(
      'Found 2 files\nsrc/util.tsx\nsrc/app.ts',
    );
    expect((await grep({ pattern: 'hello', '-i': true, glob: 'lib/*.js' })).content).toBe(
      'Found 1 file\nlib/plain.js',
    );
    expect((await grep({ pattern: 'hello', glob: '[z-a]' })).content).toMatch(/^Grep: invalid glob/);
  });

  it('filters files by type', async () => {
    expect((await grep({ pattern: 'hello', '-i': true, type: 'ts' })).content).toBe(
      'Found 2 files\nsrc/util.tsx\nsrc/app.ts',
    );
    expect((await grep({ pattern: 'hello', '-i': true, type: 'js' })).content).toBe(
      'Found 1 file\nlib/plain.js',
    );
    const unknown = await grep({ pattern: 'hello', type: 'cobol' });
    expect(unknown.isError).toBe(true);
    // ripgrep's own types: more than drydock's old list
    expect(unknown.content).toMatch(/^Grep: unknown type "cobol"; ripgrep's types include c, cpp/);
    fx.write('lib/app.exs', 'hello elixir\n');
    expect((await grep({ pattern: 'hello', type: 'elixir' })).content).toBe('Found 1 file\nlib/app.exs');
  });

  it('searches a path: a directory below the root, or a single file', async () => {
    expect((await grep({ pattern: 'hello', '-i': true, path: 'src' })).content).toBe(
      'Found 2 files\nsrc/util.tsx\nsrc/app.ts',
    );
    expect((await grep({ pattern: 'hello', path: 'lib/plain.js', output_mode: 'content' })).content).toBe(
      'lib/plain.js:2:hello world',
    );
    expect((await grep({ pattern: 'hello', path: join(fx.root, 'lib') })).content).toBe(
      'Found 1 file\nlib/plain.js',
    );
    expect((await grep({ pattern: 'hello', path: 'node_modules' })).content).toBe(
      'Found 1 file\nnode_modules/dep/index.js',
    );
  });

  it('refuses an invalid regular expression', async () => {
    const result = await grep({ pattern: 'foo(bar' });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(
      /^Grep: invalid regular expression \(ripgrep syntax\): regex parse error:/,
    );
    expect(result.content).toMatch(/unclosed group/);
    // look-around is not ripgrep syntax either
    expect((await grep({ pattern: 'a(?=b)' })).content).toMatch(/^Grep: invalid regular expression/);
  });

  it('skips binary and oversized files', async () => {
    fx.write(
      'bin/blob.dat',
      Buffer.concat([Buffer.from('hello'), Buffer.from([0, 1, 2]), Buffer.from('hello')]),
    );
    // a NUL byte after the first matches (past ripgrep's first buffer): found binary after matching
    fx.write('bin/late.dat', Buffer.concat([Buffer.from('hello\n'.repeat(20_000)), Buffer.from([0])]));
    fx.write('big/huge.txt', `hello\n${'x'.repeat(2048)}\n`);
    const limits = { ...fx.limits, maxFileBytesForGrep: 200_000 };
    // ripgrep leaves out silently the binary files it sees at once and the files over the limit; a file
    // found binary after some matches is dropped whole and counted
    fx.write('big/huge.txt', `hello\n${'x'.repeat(300_000)}\n`);
    const result = await grep({ pattern: 'hello', glob: '!bin/late.dat' }, limits);
    expect(result.content).toBe(['Found 2 files', 'lib/plain.js', 'src/app.ts'].join('\n'));
    expect((await grep({ pattern: 'hello', path: 'bin', output_mode: 'content' }, limits)).content).toBe(
      'No matches found\n\n[1 binary file skipped]',
    );
    // named explicitly: a binary file is still not shown, a large one is said to be too large
    expect(
      (await grep({ pattern: 'hello', path: 'bin/blob.dat', output_mode: 'content' }, limits)).content,
    ).toBe('No matches found\n\n[1 binary file skipped]');
    expect((await grep({ pattern: 'hello', path: 'big/huge.txt' }, limits)).content).toBe(
      'No matches found\n\n[1 file larger than 195.3 KiB skipped; use Read with offset and limit on them]',
    );
  });

  it('applies head_limit to output lines and file lists', async () => {
    for (let i = 0; i < 10; i++) fx.write(`many/m${i}.txt`, 'needle\nneedle\n', T + 100 + i);
    const content = await grep({ pattern: 'needle', output_mode: 'content', head_limit: 3 });
    expect(content.content).toBe(
      'many/m0.txt:1:needle\nmany/m0.txt:2:needle\nmany/m1.txt:1:needle\n\n[output limited to the first 3 lines by head_limit]',
    );
    expect(content.truncated).toBe(true);
    expect((await grep({ pattern: 'needle', head_limit: 2 })).content).toBe(
      'Found 10 files\nmany/m9.txt\nmany/m8.txt\n\n[showing the first 2 of 10 files (head_limit)]',
    );
    expect((await grep({ pattern: 'needle', output_mode: 'count', head_limit: 1 })).content).toBe(
      'many/m0.txt:2\n\nFound 20 matching lines in 10 files\n\n[showing the first 1 of 10 files (head_limit)]',
    );
    expect((await grep({ pattern: 'needle', head_limit: 0 })).content).toMatch(
      /^Found 10 files\n(many\/m\d\.txt\n){9}many\/m0\.txt$/,
    );
  });

  it('caps matching lines at maxGrepMatches', async () => {
    fx.write('lots.txt', 'hit\n'.repeat(50));
    const capped = await grep(
      { pattern: 'hit', output_mode: 'content' },
      { ...fx.limits, maxGrepMatches: 5 },
    );
    expect(capped.content.split('\n').slice(0, 5)).toEqual(
      Array.from({ length: 5 }, (_, i) => `lots.txt:${i + 1}:hit`),
    );
    expect(capped.content).toMatch(/\[stopped at 5 matching lines; narrow the pattern, path or glob\]$/);
    expect(capped.truncated).toBe(true);
    for (let i = 0; i < 8; i++) fx.write(`files/f${i}.txt`, 'hit\n');
    const files = await grep({ pattern: 'hit', path: 'files' }, { ...fx.limits, maxGrepMatches: 5 });
    expect(files.content).toMatch(/^Found 5 files\n/);
    expect(files.content).toMatch(/\[stopped after 5 matching files; narrow the pattern, path or glob\]$/);
  });

  it('cuts long lines in content mode and matches huge lines whole', async () => {
    fx.write('wide.txt', `${'a'.repeat(3000)}needle\n${'b'.repeat(20_000)}needle\n`);
    const result = await grep({ pattern: 'needle', path: 'wide.txt', output_mode: 'content' });
    expect(result.content).toBe(
      [
        `wide.txt:1:${'a'.repeat(2000)}… [line cut after 2000 characters; the whole line is 3006 characters]`,
        `wide.txt:2:${'b'.repeat(2000)}… [line cut after 2000 characters; the whole line is 20006 characters]`,
      ].join('\n'),
    );
  });

  it('answers a pattern that backtracks catastrophically in JavaScript (ripgrep matches in linear time)', async () => {
    for (let i = 0; i < 5; i++) fx.write(`redos/${i}.txt`, `${'a'.repeat(40)}!\n${'a'.repeat(40)}\n`);
    const result = await grep({ pattern: '(a+)+$', path: 'redos', output_mode: 'count' });
    expect(result).toEqual({
      content: [0, 1, 2, 3, 4]
        .map((i) => `redos/${i}.txt:1`)
        .concat('', 'Found 5 matching lines in 5 files')
        .join('\n'),
      isError: false,
    });
  });

  it('refuses paths outside the workspace', async () => {
    fx.link('link', fx.outside);
    for (const path of ['../outside', '/etc', 'link', 'link/secret.ts', '../../etc/passwd']) {
      const result = await grep({ pattern: 'SECRET', path, output_mode: 'content' });
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(/^Grep: path ".*" is outside the workspace/);
    }
    // and a walk from the root does not follow the link
    expect((await grep({ pattern: 'TOP-SECRET', output_mode: 'content' })).content).toBe('No matches found');
  });

  it('rejects bad input', async () => {
    expect((await grep({})).content).toMatch(/^Grep: invalid input\n {2}- pattern:/);
    expect((await grep({ pattern: 'x', output_mode: 'lines' })).content).toMatch(/output_mode/);
    expect((await grep({ pattern: 'x', '-C': -1 })).content).toMatch(/-C/);
    expect((await grep({ pattern: 'x', context: -1 })).content).toMatch(/- context:/);
    expect((await grep({ pattern: 'x', offset: 1.5 })).content).toMatch(/- offset:/);
    expect((await grep({ pattern: 'x', '-o': 'yes' })).content).toMatch(/- -o:/);
    expect((await grep({ pattern: 'x', '-i': 'yes' })).isError).toBe(true);
  });
});
