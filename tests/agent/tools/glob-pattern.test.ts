import { describe, expect, it } from 'vitest';
import { compileGlob, GlobPatternError, normalizeGlob } from '../../../src/agent/tools/glob-pattern.js';

function matches(pattern: string, path: string): boolean {
  return compileGlob(pattern).regex.test(path);
}

describe('compileGlob', () => {
  it.each([
    ['*.ts', 'a.ts', true],
    ['*.ts', 'src/a.ts', false],
    ['*.ts', '.hidden.ts', true],
    ['*.ts', 'a.tsx', false],
    ['**/*.ts', 'a.ts', true],
    ['**/*.ts', 'src/deep/er/a.ts', true],
    ['**/*.ts', 'src/a.js', false],
    ['src/**', 'src/a', true],
    ['src/**', 'src/a/b/c', true],
    ['src/**', 'src', false],
    ['src/**', 'srcx/a', false],
    ['a/**/b', 'a/b', true],
    ['a/**/b', 'a/x/y/b', true],
    ['a/**/b', 'a/xb', false],
    ['**', 'any/thing/at/all', true],
    ['a**b', 'axxb', true],
    ['a**b', 'ax/xb', false],
    ['src/*.{ts,js}', 'src/a.ts', true],
    ['src/*.{ts,js}', 'src/a.js', true],
    ['src/*.{ts,js}', 'src/a.jsx', false],
    ['src/*.{ts,js}', 'src/x/a.ts', false],
    ['{src,lib}/**/*.ts', 'lib/x/a.ts', true],
    ['{a/b,c}/d', 'a/b/d', true],
    ['{a/b,c}/d', 'c/d', true],
    ['x.{a,{b,c}}', 'x.c', true],
    ['{**/*.md,*.txt}', 'docs/a.md', true],
    ['{**/*.md,*.txt}', 'docs/a.txt', false],
    ['?.ts', 'a.ts', true],
    ['?.ts', 'ab.ts', false],
    ['a?b', 'a/b', false],
    ['[abc].ts', 'b.ts', true],
    ['[abc].ts', 'd.ts', false],
    ['[a-c]x', 'bx', true],
    ['[!a-c]x', 'bx', false],
    ['[!a-c]x', 'dx', true],
    ['[^a-c]x', 'dx', true],
    ['a[!x]b', 'a/b', false],
    ['a[/]b', 'a/b', false],
    ['[]]', ']', true],
    ['[-a]', '-', true],
    ['[a-]', '-', true],
    ['\\*.ts', '*.ts', true],
    ['\\*.ts', 'a.ts', false],
    ['a+(b).ts', 'a+(b).ts', true],
    ['a.ts', 'abts', false],
    ['[abc', '[abc', true],
    ['{a,b', '{a,b', true],
    ['a}b', 'a}b', true],
    ['a,b', 'a,b', true],
    ['x,**', 'x,y', true],
    ['x,**', 'x,y/z', false],
    ['ünï/*.md', 'ünï/ä.md', true],
    ['?', '😀', true],
  ])('%s against %s is %s', (pattern, path, expected) => {
    expect(matches(pattern, path)).toBe(expected);
  });

  it('reports the literal base directory and the depth bound', () => {
    expect(compileGlob('src/lib/*.ts')).toMatchObject({ base: 'src/lib', maxDepth: 3 });
    expect(compileGlob('src/**/*.ts')).toMatchObject({ base: 'src', maxDepth: Number.POSITIVE_INFINITY });
    expect(compileGlob('*.ts')).toMatchObject({ base: '', maxDepth: 1 });
    expect(compileGlob('{a/b,c}/d')).toMatchObject({ base: '', maxDepth: Number.POSITIVE_INFINITY });
    expect(compileGlob('s[r]c/x')).toMatchObject({ base: '', maxDepth: 2 });
  });

  it('rejects patterns it cannot use', () => {
    expect(() => compileGlob('[z-a]')).toThrow(GlobPatternError);
    expect(() => compileGlob('x'.repeat(1001))).toThrow(GlobPatternError);
    expect(() => compileGlob(`${'{'.repeat(11)}a${'}'.repeat(11)}`)).toThrow(/nest/);
  });

  it('treats regex syntax in names literally', () => {
    expect(matches('a.b$^|(x)', 'a.b$^|(x)')).toBe(true);
    expect(matches('a.b', 'aXb')).toBe(false);
  });

  it('strips leading ./', () => {
    expect(normalizeGlob('./src/*.ts')).toBe('src/*.ts');
    expect(normalizeGlob('././x')).toBe('x');
    expect(normalizeGlob('*.ts')).toBe('*.ts');
  });
});
