import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runGlob } from '../../../src/agent/tools/glob.js';
import { expectNoLeak, type Fixture, makeFixture } from './fixture.js';

let fx: Fixture;
const T = 1_700_000_000; // a base mtime, seconds

beforeEach(async () => {
  fx = await makeFixture('drydock-glob-');
  fx.write('README.md', '# x\n', T + 1);
  fx.write('src/index.ts', 'x\n', T + 50);
  fx.write('src/a.js', 'x\n', T + 40);
  fx.write('src/a.jsx', 'x\n', T + 30);
  fx.write('src/lib/deep.ts', 'x\n', T + 60);
  fx.write('src/lib/b1.ts', 'x\n', T + 10);
  fx.write('src/lib/b22.ts', 'x\n', T + 20);
  fx.write('.github/workflows/ci.yml', 'x\n', T + 5);
  fx.write('.git/hooks/pre-commit.ts', 'x\n', T + 99);
  fx.write('node_modules/pkg/index.ts', 'x\n', T + 99);
  fx.write('src/node_modules/nested.ts', 'x\n', T + 99);
});

afterEach(() => fx.cleanup());

async function glob(input: unknown, limits = fx.limits) {
  const result = await runGlob(fx.ws, input, limits);
  expectNoLeak(result.content, fx);
  return result;
}

describe('Glob', () => {
  it('finds **/*.ts newest first, skipping .git and node_modules', async () => {
    expect(await glob({ pattern: '**/*.ts' })).toEqual({
      content: ['src/lib/deep.ts', 'src/index.ts', 'src/lib/b22.ts', 'src/lib/b1.ts'].join('\n'),
      isError: false,
    });
  });

  it('matches braces in one directory only', async () => {
    expect((await glob({ pattern: 'src/*.{ts,js}' })).content).toBe('src/index.ts\nsrc/a.js');
  });

  it('matches ? as exactly one character', async () => {
    expect((await glob({ pattern: 'src/lib/b?.ts' })).content).toBe('src/lib/b1.ts');
    expect((await glob({ pattern: 'src/lib/b??.ts' })).content).toBe('src/lib/b22.ts');
  });

  it('matches character classes and hidden directories', async () => {
    expect((await glob({ pattern: 'src/lib/b[0-9].ts' })).content).toBe('src/lib/b1.ts');
    expect((await glob({ pattern: '**/*.yml' })).content).toBe('.github/workflows/ci.yml');
  });

  it('keeps *.ts to the search directory itself', async () => {
    expect((await glob({ pattern: '*.md' })).content).toBe('README.md');
    expect((await glob({ pattern: '*.ts' })).content).toBe('No files found');
  });

  it('searches below path and shows paths relative to the workspace', async () => {
    expect((await glob({ pattern: '*.ts', path: 'src/lib' })).content).toBe(
      'src/lib/deep.ts\nsrc/lib/b22.ts\nsrc/lib/b1.ts',
    );
    expect((await glob({ pattern: '**/*.ts', path: join(fx.root, 'src', 'lib') })).content).toBe(
      'src/lib/deep.ts\nsrc/lib/b22.ts\nsrc/lib/b1.ts',
    );
    expect((await glob({ pattern: './lib/*.ts', path: 'src' })).content).toBe(
      'src/lib/deep.ts\nsrc/lib/b22.ts\nsrc/lib/b1.ts',
    );
  });

  it('searches inside node_modules when asked to explicitly', async () => {
    expect((await glob({ pattern: '**/*.ts', path: 'node_modules' })).content).toBe(
      'node_modules/pkg/index.ts',
    );
  });

  it('does not follow a symlinked directory pointing outside, nor list symlinks', async () => {
    fx.link('link', fx.outside);
    fx.link('src/also-link', fx.outside);
    fx.link('src/file-link.ts', join(fx.outside, 'secret.ts'));
    const all = await glob({ pattern: '**' });
    expect(all.content).not.toMatch(/link/);
    expect(all.content.split('\n')).toHaveLength(8);
    expect((await glob({ pattern: 'link/*.ts' })).content).toBe('No files found');
    expect((await glob({ pattern: 'link/**' })).content).toBe('No files found');
    expect((await glob({ pattern: '*', path: 'link' })).content).toBe(
      'Glob: path "link" is outside the workspace (it goes through a symbolic link)',
    );
  });

  it('caps the results at maxGlobResults, keeping the newest', async () => {
    for (let i = 0; i < 30; i++) fx.write(`many/f${String(i).padStart(2, '0')}.txt`, 'x', T + 100 + i);
    const result = await glob({ pattern: 'many/*.txt' }, { ...fx.limits, maxGlobResults: 5 });
    expect(result.truncated).toBe(true);
    expect(result.content).toBe(
      [
        'many/f29.txt',
        'many/f28.txt',
        'many/f27.txt',
        'many/f26.txt',
        'many/f25.txt',
        '',
        '[showing the 5 most recently modified of 30 matching files; narrow the pattern or path to see the others]',
      ].join('\n'),
    );
  });

  it('stops the walk at maxFilesScanned with a note', async () => {
    const result = await glob({ pattern: '**' }, { ...fx.limits, maxFilesScanned: 3 });
    expect(result.truncated).toBe(true);
    expect(result.content.split('\n\n')[0]!.split('\n')).toHaveLength(3);
    expect(result.content).toContain(
      '[search stopped after scanning 3 files, so some matches may be missing',
    );
  });

  it('keeps the result within maxResultChars', async () => {
    for (let i = 0; i < 50; i++) fx.write(`long/${'n'.repeat(80)}${i}.txt`, 'x');
    const result = await glob({ pattern: 'long/*' }, { ...fx.limits, maxResultChars: 1000 });
    expect(result.content.length).toBeLessThanOrEqual(1000);
    expect(result.truncated).toBe(true);
    expect(result.content).toMatch(/more lines not shown: output is limited to 1000 characters\]$/);
  });

  it('refuses paths outside the workspace and non-directories', async () => {
    expect(await glob({ pattern: '*', path: '../outside' })).toEqual({
      content: 'Glob: path "../outside" is outside the workspace',
      isError: true,
    });
    expect((await glob({ pattern: '*', path: '/etc' })).isError).toBe(true);
    expect(await glob({ pattern: '*', path: 'README.md' })).toEqual({
      content: 'Glob: "README.md" is not a directory',
      isError: true,
    });
    expect(await glob({ pattern: '*', path: 'missing' })).toEqual({
      content: 'Glob: path "missing" does not exist',
      isError: true,
    });
  });

  it('refuses absolute and .. patterns, bad globs and bad input', async () => {
    expect((await glob({ pattern: '/etc/*' })).content).toMatch(/must be relative/);
    expect((await glob({ pattern: '../outside/*' })).content).toMatch(/may not contain "\.\."/);
    expect((await glob({ pattern: '[z-a]' })).content).toMatch(/^Glob: invalid pattern/);
    expect((await glob({})).content).toMatch(/^Glob: invalid input\n {2}- pattern:/);
    expect((await glob({ pattern: 7 })).content).toMatch(/^Glob: invalid input\n {2}- pattern:/);
    for (const r of [await glob({ pattern: '/etc/*' }), await glob({})]) expect(r.isError).toBe(true);
  });

  it('finds nothing in an empty directory', async () => {
    mkdirSync(join(fx.root, 'empty'));
    expect(await glob({ pattern: '**', path: 'empty' })).toEqual({
      content: 'No files found',
      isError: false,
    });
  });
});
