import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_EXEC_LIMITS, type ExecLimits, runEdit } from '../../../../src/agent/tools/execute-tools.js';
import { expectNoLeak, type Fixture, makeFixture, OUTSIDE_SECRET } from '../fixture.js';

let fx: Fixture;
const limits: ExecLimits = { ...DEFAULT_EXEC_LIMITS };

beforeEach(async () => {
  fx = await makeFixture('drydock-edit-');
});

afterEach(() => {
  fx.cleanup();
});

async function edit(input: unknown, l: ExecLimits = limits) {
  const result = await runEdit(fx.ws, input, l);
  expectNoLeak(result.content, fx);
  return result;
}

const read = (rel: string) => readFileSync(join(fx.root, rel), 'utf8');

describe('Edit', () => {
  it('replaces a single occurrence and says where', async () => {
    fx.write('src/a.ts', 'const a = 1;\nconst b = 2;\n');
    const result = await edit({
      file_path: 'src/a.ts',
      old_string: 'const b = 2;',
      new_string: 'const b = 3;',
    });
    expect(result).toEqual({
      content: 'Edited src/a.ts: replaced 1 occurrence (at line 2)',
      isError: false,
      changedPath: 'src/a.ts',
    });
    expect(read('src/a.ts')).toBe('const a = 1;\nconst b = 3;\n');
  });

  it('refuses an ambiguous old_string without replace_all and leaves the file alone', async () => {
    fx.write('a.txt', 'foo\nbar\nfoo\nfoo\n');
    const result = await edit({ file_path: 'a.txt', old_string: 'foo', new_string: 'baz' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('occurs 3 times in "a.txt"');
    expect(result.content).toContain('more surrounding context');
    expect(result.content).toContain('replace_all');
    expect(result.changedPath).toBeUndefined();
    expect(read('a.txt')).toBe('foo\nbar\nfoo\nfoo\n');
    const also = await edit({ file_path: 'a.txt', old_string: 'foo', new_string: 'baz', replace_all: false });
    expect(also.isError).toBe(true);
  });

  it('replaces every occurrence with replace_all', async () => {
    fx.write('a.txt', 'foo\nbar\nfoo\nfoo\n');
    const result = await edit({
      file_path: 'a.txt',
      old_string: 'foo',
      new_string: 'baz',
      replace_all: true,
    });
    expect(result.content).toBe('Edited a.txt: replaced 3 occurrences (the first at line 1)');
    expect(read('a.txt')).toBe('baz\nbar\nbaz\nbaz\n');
  });

  it('counts non-overlapping occurrences', async () => {
    fx.write('a.txt', 'aaaa');
    const result = await edit({ file_path: 'a.txt', old_string: 'aa', new_string: 'b', replace_all: true });
    expect(result.content).toContain('replaced 2 occurrences');
    expect(read('a.txt')).toBe('bb');
  });

  it('keeps $ patterns in new_string literal', async () => {
    fx.write('a.txt', 'price: X\n');
    await edit({ file_path: 'a.txt', old_string: 'X', new_string: "$& $1 $$ $' $`" });
    expect(read('a.txt')).toBe("price: $& $1 $$ $' $`\n");
  });

  it('replace_all with a single occurrence is fine', async () => {
    fx.write('a.txt', 'one two');
    const result = await edit({ file_path: 'a.txt', old_string: 'two', new_string: '2', replace_all: true });
    expect(result.content).toBe('Edited a.txt: replaced 1 occurrence (at line 1)');
  });

  it('says when old_string is not found', async () => {
    fx.write('a.txt', '  indented\n');
    const result = await edit({ file_path: 'a.txt', old_string: 'indented\n  x', new_string: 'y' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('old_string was not found in "a.txt"');
    expect(read('a.txt')).toBe('  indented\n');
  });

  it('refuses identical strings and an empty old_string', async () => {
    fx.write('a.txt', 'same');
    const same = await edit({ file_path: 'a.txt', old_string: 'same', new_string: 'same' });
    expect(same.isError).toBe(true);
    expect(same.content).toContain('identical');
    const empty = await edit({ file_path: 'a.txt', old_string: '', new_string: 'x' });
    expect(empty.isError).toBe(true);
    expect(empty.content).toContain('old_string is empty');
    expect(read('a.txt')).toBe('same');
  });

  it('requires the file to exist', async () => {
    const result = await edit({ file_path: 'missing.ts', old_string: 'a', new_string: 'b' });
    expect(result).toEqual({ content: 'Edit: path "missing.ts" does not exist', isError: true });
  });

  it('refuses binary files and invalid UTF-8', async () => {
    fx.write('img.bin', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x41]));
    const bin = await edit({ file_path: 'img.bin', old_string: 'PNG', new_string: 'JPG' });
    expect(bin.isError).toBe(true);
    expect(bin.content).toContain('binary');
    fx.write('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const latin = await edit({ file_path: 'latin1.txt', old_string: 'caf', new_string: 'tea' });
    expect(latin.isError).toBe(true);
    expect(latin.content).toContain('not valid UTF-8');
    expect(readFileSync(join(fx.root, 'latin1.txt'))).toEqual(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
  });

  it('refuses paths outside the workspace and symlinks that lead out', async () => {
    const out = await edit({ file_path: '../outside/secret.ts', old_string: 'secret', new_string: 'x' });
    expect(out.isError).toBe(true);
    expect(out.content).toContain('outside the workspace');
    fx.link('link.ts', join(fx.outside, 'secret.ts'));
    const link = await edit({ file_path: 'link.ts', old_string: 'secret', new_string: 'x' });
    expect(link.isError).toBe(true);
    expect(link.content).toContain('outside the workspace');
    expect(readFileSync(join(fx.outside, 'secret.ts'), 'utf8')).toContain(`secret = '${OUTSIDE_SECRET}'`);
  });

  it('refuses files under .git', async () => {
    mkdirSync(join(fx.root, '.git'));
    writeFileSync(join(fx.root, '.git', 'config'), '[core]\n\tbare = false\n');
    const result = await edit({ file_path: '.git/config', old_string: 'bare = false', new_string: 'x' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('inside .git');
    expect(readFileSync(join(fx.root, '.git', 'config'), 'utf8')).toContain('bare = false');
  });

  it('refuses files over maxWriteBytes, before and after the edit', async () => {
    fx.write('big.txt', 'x'.repeat(20));
    const before = await edit(
      { file_path: 'big.txt', old_string: 'x', new_string: 'y', replace_all: true },
      {
        maxWriteBytes: 10,
      },
    );
    expect(before.isError).toBe(true);
    expect(before.content).toContain('Edit handles files up to 10 B');
    fx.write('grow.txt', 'ab');
    const after = await edit(
      { file_path: 'grow.txt', old_string: 'a', new_string: 'a'.repeat(20) },
      {
        maxWriteBytes: 10,
      },
    );
    expect(after.isError).toBe(true);
    expect(after.content).toContain('would be 21 B');
    expect(read('grow.txt')).toBe('ab');
  });

  it('keeps CRLF line endings, a BOM and the file mode', async () => {
    const abs = fx.write('win.txt', '\uFEFFline one\r\nline two\r\n');
    chmodSync(abs, 0o640);
    const result = await edit({
      file_path: 'win.txt',
      old_string: 'line one\nline two',
      new_string: 'one\ntwo',
    });
    expect(result.isError).toBe(false);
    expect(read('win.txt')).toBe('\uFEFFone\r\ntwo\r\n');
    expect(statSync(abs).mode & 0o777).toBe(0o640);
  });

  it('refuses a directory', async () => {
    mkdirSync(join(fx.root, 'dir'));
    const result = await edit({ file_path: 'dir', old_string: 'a', new_string: 'b' });
    expect(result).toEqual({ content: 'Edit: "dir" is a directory, not a file', isError: true });
  });

  it.each([
    [{ file_path: 'a.txt', old_string: 'a' }],
    [{ file_path: 'a.txt', old_string: 'a', new_string: 'b', replace_all: 'yes' }],
    [{ path: 'a.txt', old_string: 'a', new_string: 'b' }],
    [null],
  ])('returns an error result for invalid input %j', async (input) => {
    const result = await edit(input);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^Edit: invalid input/);
  });
});
