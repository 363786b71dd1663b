import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runRead } from '../../../src/agent/tools/read.js';
import { expectNoLeak, type Fixture, makeFixture } from './fixture.js';

let fx: Fixture;

beforeEach(async () => {
  fx = await makeFixture('drydock-read-');
});

afterEach(() => {
  vi.restoreAllMocks();
  fx.cleanup();
});

async function read(input: unknown, limits = fx.limits) {
  const result = await runRead(fx.ws, input, limits);
  expectNoLeak(result.content, fx);
  return result;
}

function numbered(from: number, lines: string[]): string {
  return lines.map((l, i) => `${String(from + i).padStart(6)}\t${l}`).join('\n');
}

/** Spies on FileHandle#read and reports how many bytes were read and the largest single request. */
async function spyOnReads(): Promise<() => Promise<{ bytes: number; largestRequest: number }>> {
  const probe = await open(join(fx.outside, 'passwd'));
  const proto = Object.getPrototypeOf(probe) as { read: (...args: any[]) => Promise<{ bytesRead: number }> };
  await probe.close();
  const spy = vi.spyOn(proto, 'read');
  return async () => {
    let bytes = 0;
    let largestRequest = 0;
    for (const call of spy.mock.calls) largestRequest = Math.max(largestRequest, Number(call[2] ?? 0));
    for (const r of spy.mock.results) bytes += ((await r.value) as { bytesRead: number }).bytesRead;
    return { bytes, largestRequest };
  };
}

describe('Read', () => {
  it('numbers lines like cat -n', async () => {
    fx.write('a.txt', 'alpha\nbeta\n\ngamma\n');
    const result = await read({ file_path: 'a.txt' });
    expect(result).toEqual({ content: numbered(1, ['alpha', 'beta', '', 'gamma']), isError: false });
    expect(result.content.split('\n')[0]).toBe('     1\talpha');
  });

  it('shows a last line without a newline, drops CR of CRLF and a leading BOM', async () => {
    fx.write('crlf.txt', '\uFEFFone\r\ntwo\r\nthree');
    expect((await read({ file_path: 'crlf.txt' })).content).toBe(numbered(1, ['one', 'two', 'three']));
  });

  it('reads from offset for limit lines and says how to continue', async () => {
    fx.write('ten.txt', Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n'));
    const result = await read({ file_path: 'ten.txt', offset: 3, limit: 2 });
    expect(result.truncated).toBe(true);
    expect(result.content).toBe(
      `${numbered(3, ['line 3', 'line 4'])}\n\n[... truncated (limit of 2 lines): showing lines 3-4 of at least 10; the file is 70 B; use offset=5 to read more]`,
    );
    expect((await read({ file_path: 'ten.txt', offset: 9 })).content).toBe(
      numbered(9, ['line 9', 'line 10']),
    );
    expect((await read({ file_path: 'ten.txt', offset: 0, limit: 1 })).content).toMatch(/^ {5}1\tline 1\n/);
  });

  it('says when offset is past the end', async () => {
    fx.write('three.txt', 'a\nb\nc\n');
    expect(await read({ file_path: 'three.txt', offset: 4 })).toEqual({
      content: '("three.txt" has 3 lines; offset 4 is past the end)',
      isError: false,
    });
  });

  it('reads defaultReadLines lines by default, with a truncation note', async () => {
    fx.write('many.txt', Array.from({ length: 250 }, (_, i) => `row ${i + 1}`).join('\n'));
    const result = await read({ file_path: 'many.txt' }, { ...fx.limits, defaultReadLines: 100 });
    const lines = result.content.split('\n');
    expect(lines[99]).toBe('   100\trow 100');
    expect(lines.at(-1)).toBe(
      '[... truncated (limit of 100 lines): showing lines 1-100 of at least 250; the file is 1.8 KiB; use offset=101 to read more]',
    );
    expect(result.truncated).toBe(true);
  });

  it('cuts long lines with a marker', async () => {
    fx.write('long.txt', `${'x'.repeat(5000)}\nshort\n`);
    const result = await read({ file_path: 'long.txt' });
    expect(result.content).toBe(
      `     1\t${'x'.repeat(2000)}… [line cut after 2000 characters; the whole line is 5000 characters]\n     2\tshort`,
    );
  });

  it('never splits a surrogate pair or a multi-byte character across chunks', async () => {
    fx.write('emoji.txt', `${'😀'.repeat(3000)}\n`);
    const cut = (await read({ file_path: 'emoji.txt' }, { ...fx.limits, maxLineChars: 2001 })).content;
    expect(cut).toMatch(
      /^ {5}1\t(😀){1000}… \[line cut after 2000 characters; the whole line is 11\.7 KiB\]$/,
    );
    // 'é' is 2 bytes: 40 000 of them straddle the 64 KiB chunk boundary.
    fx.write('accents.txt', `${'é'.repeat(40_000)}\nend\n`);
    const whole = (
      await read(
        { file_path: 'accents.txt' },
        { ...fx.limits, maxLineChars: 50_000, maxResultChars: 100_000 },
      )
    ).content;
    expect(whole).toBe(numbered(1, ['é'.repeat(40_000), 'end']));
  });

  it('keeps the result within maxResultChars', async () => {
    fx.write('wide.txt', Array.from({ length: 3000 }, (_, i) => `${i}`.padEnd(100, '.')).join('\n'));
    const result = await read({ file_path: 'wide.txt' });
    expect(result.content.length).toBeLessThanOrEqual(fx.limits.maxResultChars);
    expect(result.truncated).toBe(true);
    expect(result.content).toMatch(
      /\[\.\.\. truncated \(output limit of 30000 characters\): showing lines 1-(\d+) of at least \d+;.*use offset=\d+ to read more\]$/,
    );
    const last = Number(/showing lines 1-(\d+)/.exec(result.content)![1]);
    expect(result.content).toContain(`${String(last).padStart(6)}\t${`${last - 1}`.padEnd(100, '.')}`);
  });

  it('stops at maxReadBytes and continues from offset', async () => {
    fx.write('bytes.txt', Array.from({ length: 100 }, (_, i) => `${i + 1}`.padEnd(99, '-')).join('\n'));
    const limits = { ...fx.limits, maxReadBytes: 1000 };
    const first = await read({ file_path: 'bytes.txt' }, limits);
    expect(first.content).toContain('read limit of 1000 B): showing lines 1-10 of at least 100');
    const next = await read({ file_path: 'bytes.txt', offset: 11 }, limits);
    expect(next.content.startsWith(`    11\t11${'-'.repeat(97)}`)).toBe(true);
    expect(next.content).toContain('showing lines 11-20');
  });

  it('reads a 50 MB file in bounded chunks, returning a bounded result', async () => {
    const block = Buffer.from(
      Array.from({ length: 10_486 }, (_, i) => `line ${i}`.padEnd(99, ' ')).join('\n'),
    );
    const abs = fx.write('huge.log', '');
    for (let i = 0; i < 50; i++) appendFileSync(abs, block);

    const reads = await spyOnReads();
    const rssBefore = process.memoryUsage().rss;
    const result = await read({ file_path: 'huge.log' });
    const { bytes, largestRequest } = await reads();
    expect(result.truncated).toBe(true);
    expect(result.content.length).toBeLessThanOrEqual(fx.limits.maxResultChars);
    expect(result.content).toMatch(/the file is 50\.0 MiB; use offset=\d+ to read more\]$/);
    expect(bytes).toBeLessThan(256 * 1024);
    expect(largestRequest).toBeLessThanOrEqual(64 * 1024);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(30 * 1024 * 1024);
  });

  it('skips to a far offset of a 50 MB file with bounded memory', async () => {
    const block = Buffer.from(`${'y'.repeat(99)}\n`.repeat(10_000));
    const abs = fx.write('huge.txt', '');
    for (let i = 0; i < 50; i++) appendFileSync(abs, block);
    const reads = await spyOnReads();
    const result = await read({ file_path: 'huge.txt', offset: 400_000, limit: 3 });
    const { largestRequest } = await reads();
    expect(result.content.split('\n').slice(0, 3)).toEqual([
      `400000\t${'y'.repeat(99)}`,
      `400001\t${'y'.repeat(99)}`,
      `400002\t${'y'.repeat(99)}`,
    ]);
    expect(largestRequest).toBeLessThanOrEqual(64 * 1024);
  });

  it('reads a 50 MB single-line file only up to maxReadBytes', async () => {
    const abs = fx.write('one-line.min.js', '');
    const block = Buffer.alloc(1024 * 1024, 'z');
    for (let i = 0; i < 50; i++) appendFileSync(abs, block);
    const reads = await spyOnReads();
    const result = await read({ file_path: 'one-line.min.js' });
    const { bytes } = await reads();
    expect(bytes).toBeLessThanOrEqual(256 * 1024 + 64 * 1024);
    expect(result.content).toMatch(
      /^ {5}1\tz{2000}… \[line cut after 2000 characters; the whole line is at least 256\.0 KiB\]/,
    );
    expect(result.content).toContain(
      'showing lines 1-1 of at least 1; the file is 50.0 MiB; use offset=2 to read more',
    );
  });

  it('refuses binary files', async () => {
    fx.write('image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
    const result = await read({ file_path: 'image.png' });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/"image.png" is a binary file/);
  });

  it('refuses directories, missing files and FIFOs', async () => {
    mkdirSync(join(fx.root, 'src'));
    expect(await read({ file_path: 'src' })).toEqual({
      content: 'Read: "src" is a directory, not a file; use Glob to list its files',
      isError: true,
    });
    expect((await read({ file_path: '.' })).isError).toBe(true);
    expect(await read({ file_path: 'nope.txt' })).toEqual({
      content: 'Read: path "nope.txt" does not exist',
      isError: true,
    });
    execFileSync('mkfifo', [join(fx.root, 'fifo')]);
    expect(await read({ file_path: 'fifo' })).toEqual({
      content: 'Read: "fifo" is not a regular file',
      isError: true,
    });
  });

  it('answers pages (a PDF page range) with a clear error for a text file, nothing read', async () => {
    fx.write('notes.md', 'alpha\nbeta\n');
    expect(await read({ file_path: 'notes.md', pages: '1-3' })).toEqual({
      content:
        'Read: pages applies to PDF files only; "notes.md" is not a PDF: use offset and limit to read part of a text file',
      isError: true,
    });
    fx.write('empty.txt', '');
    expect((await read({ file_path: 'empty.txt', pages: '2' })).content).toMatch(
      /^Read: pages applies to PDF/,
    );
    // An empty range counts as not given.
    expect(await read({ file_path: 'notes.md', pages: '' })).toEqual({
      content: numbered(1, ['alpha', 'beta']),
      isError: false,
    });
    // Path errors come first.
    expect((await read({ file_path: 'nope.md', pages: '1' })).content).toBe(
      'Read: path "nope.md" does not exist',
    );
  });

  it('says PDFs cannot be read, by name or by content, with or without pages', async () => {
    fx.write('spec.pdf', '%PDF-1.7\nplain enough to pass as text\n');
    fx.write('renamed.dat', '%PDF-1.4\n1 0 obj\n');
    fx.write('empty.PDF', '');
    expect(await read({ file_path: 'spec.pdf' })).toEqual({
      content:
        'Read: "spec.pdf" is a PDF file; PDFs cannot be read in this workspace (Read shows text files only)',
      isError: true,
    });
    expect(await read({ file_path: 'spec.pdf', pages: '1-2' })).toEqual({
      content:
        'Read: "spec.pdf" is a PDF file; PDFs cannot be read in this workspace (Read shows text files only), so `pages` cannot be used either',
      isError: true,
    });
    expect((await read({ file_path: 'renamed.dat', pages: '1' })).content).toMatch(
      /^Read: "renamed.dat" is a PDF file; PDFs cannot be read/,
    );
    expect((await read({ file_path: 'empty.PDF' })).content).toMatch(/^Read: "empty.PDF" is a PDF file/);
  });

  it('says an empty file is empty', async () => {
    fx.write('empty.txt', '');
    expect(await read({ file_path: 'empty.txt' })).toEqual({
      content: '("empty.txt" is empty)',
      isError: false,
    });
  });

  describe('adversarial paths', () => {
    beforeEach(() => {
      fx.write('inside.txt', 'inside\n');
      fx.write('~/x', 'tilde\n');
      fx.link('passwd-link', '/etc/passwd');
      fx.link('secret-link', join(fx.outside, 'passwd'));
      fx.link('link', fx.outside);
    });

    it.each([
      ['../../etc/passwd', 'Read: path "../../etc/passwd" is outside the workspace'],
      ['/etc/passwd', 'Read: path "/etc/passwd" is outside the workspace'],
      ['a/../../x', 'Read: path "a/../../x" is outside the workspace'],
      ['../outside/passwd', 'Read: path "../outside/passwd" is outside the workspace'],
      ['passwd-link', 'Read: path "passwd-link" is outside the workspace (it goes through a symbolic link)'],
      ['secret-link', 'Read: path "secret-link" is outside the workspace (it goes through a symbolic link)'],
      ['link/passwd', 'Read: path "link/passwd" is outside the workspace (it goes through a symbolic link)'],
      [
        'link/secret.ts',
        'Read: path "link/secret.ts" is outside the workspace (it goes through a symbolic link)',
      ],
      ['inside.txt\0', 'Read: path "inside.txt\\\\0" contains a NUL byte'],
    ])('refuses %j', async (file_path, message) => {
      expect(await read({ file_path })).toEqual({ content: message, isError: true });
    });

    it('allows an absolute path inside the workspace and shows it relative', async () => {
      expect(await read({ file_path: join(fx.root, 'inside.txt') })).toEqual({
        content: '     1\tinside',
        isError: false,
      });
      expect(await read({ file_path: join(fx.root, 'missing.txt') })).toEqual({
        content: 'Read: path "missing.txt" does not exist',
        isError: true,
      });
      fx.link('inner-link', join(fx.outside, 'secret.ts'));
      expect(await read({ file_path: join(fx.root, 'inner-link') })).toEqual({
        content: 'Read: path "inner-link" is outside the workspace (it goes through a symbolic link)',
        isError: true,
      });
    });

    it('treats ~/x literally, inside the workspace', async () => {
      expect(await read({ file_path: '~/x' })).toEqual({ content: '     1\ttilde', isError: false });
    });
  });

  it('rejects bad input with a message naming the field', async () => {
    const missing = await read({});
    expect(missing.isError).toBe(true);
    expect(missing.content).toMatch(/^Read: invalid input\n {2}- file_path: /);
    expect((await read({ file_path: 'a', pages: 3 })).content).toMatch(/^Read: invalid input\n {2}- pages: /);
    expect((await read({ file_path: 'a', offset: -1 })).content).toMatch(/offset/);
    expect((await read({ file_path: 'a', limit: 0 })).content).toMatch(/limit/);
    expect((await read({ file_path: 'a', limit: 1.5 })).content).toMatch(/limit/);
    expect((await read('a.txt')).isError).toBe(true);
    expect((await read(null)).isError).toBe(true);
  });
});
