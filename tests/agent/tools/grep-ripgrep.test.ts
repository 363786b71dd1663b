import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runGrep } from '../../../src/agent/tools/grep.js';
import { GREP_ABORTED } from '../../../src/agent/tools/grep-search.js';
import { findRipgrep, RIPGREP_MISSING, runRipgrep } from '../../../src/agent/tools/ripgrep.js';
import { Workspace } from '../../../src/agent/tools/workspace.js';
import { hiddenPaths } from '../../../src/workspace/hidden.js';
import { testConfig } from '../../support/harness.js';
import { expectNoLeak, type Fixture, makeFixture } from './fixture.js';

// Grep runs ripgrep (the real `rg` on PATH, Debian's ripgrep package): its syntax and flags as Claude Code's
// Grep passes them, and the attacks on the boundary a program of its own opens.

let fx: Fixture;
const RG = findRipgrep();

beforeEach(async () => {
  fx = await makeFixture('drydock-rg-');
});
afterEach(() => fx.cleanup());

async function grep(input: unknown, ws = fx.ws) {
  const result = await runGrep(ws, input, fx.limits);
  expectNoLeak(result.content, fx);
  return result;
}

describe('Grep takes ripgrep syntax', () => {
  it('is run by ripgrep found on PATH', () => {
    expect(RG).toMatch(/\/rg$/);
  });

  it('inline flags, Unicode classes and word boundaries', async () => {
    fx.write('words.txt', 'Äpfel und Birnen\nsword word words\nnothing\n');
    const content = { output_mode: 'content', path: 'words.txt' } as const;
    expect((await grep({ ...content, pattern: '(?i)BIRNEN' })).content).toBe('words.txt:1:Äpfel und Birnen');
    expect((await grep({ ...content, pattern: '\\p{Lu}\\p{Ll}+', '-o': true })).content).toBe(
      'words.txt:1:Äpfel\nwords.txt:1:Birnen',
    );
    expect((await grep({ ...content, pattern: '\\bword\\b', '-o': true })).content).toBe('words.txt:2:word');
    expect((await grep({ ...content, pattern: '(?-i)äpfel', '-i': true })).content).toBe('No matches found');
  });

  it('multiline with (?s) and without: a newline in the pattern needs multiline, as in ripgrep', async () => {
    fx.write('block.txt', 'x\nBEGIN one\ntwo\nEND three\ny\n');
    const base = { output_mode: 'content', path: 'block.txt' } as const;
    expect((await grep({ ...base, pattern: '(?s)BEGIN.+?END', multiline: true })).content).toBe(
      'block.txt:2:BEGIN one\nblock.txt:3:two\nblock.txt:4:END three',
    );
    // multiline alone makes `.` match newlines (rg -U --multiline-dotall), as Claude Code's Grep does
    expect((await grep({ ...base, pattern: 'one.two', multiline: true })).content).toBe(
      'block.txt:2:BEGIN one\nblock.txt:3:two',
    );
    const refused = await grep({ ...base, pattern: 'one\\ntwo' });
    expect(refused.isError).toBe(true);
    expect(refused.content).toMatch(/^Grep: ripgrep refused the search: .*multiline/s);
  });

  it('head_limit defaults to 250 lines or files; 0 lifts it', async () => {
    fx.write('many.txt', 'hit\n'.repeat(300));
    const lines = await grep({ pattern: 'hit', output_mode: 'content' });
    expect(lines.content.split('\n').slice(0, 250)).toEqual(
      Array.from({ length: 250 }, (_, i) => `many.txt:${i + 1}:hit`),
    );
    expect(lines.content).toMatch(/\n\n\[output limited to the first 250 lines by head_limit\]$/);
    expect(lines.truncated).toBe(true);
    const all = await grep({ pattern: 'hit', output_mode: 'content', head_limit: 0 });
    expect(all.content.split('\n')).toHaveLength(300);
    for (let i = 0; i < 260; i++) fx.write(`f/${String(i).padStart(3, '0')}.txt`, 'hit\n', 1_700_000_000 + i);
    const files = await grep({ pattern: 'hit', path: 'f' });
    expect(files.content.split('\n').slice(0, 2)).toEqual(['Found 260 files', 'f/259.txt']);
    expect(files.content).toMatch(/\[showing the first 250 of 260 files \(head_limit\)\]$/);
  });

  it('searches dotfiles and leaves version-control directories and node_modules out', async () => {
    fx.write('.env.example', 'KEY=needle\n');
    for (const dir of ['.git', '.svn', '.hg', '.jj', 'node_modules', 'sub/.git'])
      fx.write(`${dir}/x`, 'needle\n');
    expect((await grep({ pattern: 'needle' })).content).toBe('Found 1 file\n.env.example');
  });
});

describe('Grep on ripgrep: the boundary holds', () => {
  it('never follows a link, to a file or a directory outside, at any depth', async () => {
    fx.link('a/b/out-dir', fx.outside);
    fx.link('a/out-file.ts', join(fx.outside, 'secret.ts'));
    fx.link('a/loop', '..');
    for (const input of [
      { pattern: 'TOP-SECRET', output_mode: 'content' },
      { pattern: 'TOP-SECRET', path: 'a', glob: '**/*' },
      { pattern: 'TOP-SECRET', path: 'a/b', output_mode: 'count' },
    ]) {
      expect((await grep(input)).content).toBe('No matches found');
    }
  });

  it('a pattern that looks like a flag stays a pattern', async () => {
    fx.link('linked', fx.outside);
    fx.write('flags.txt', '--files\n-L\n--pre=/bin/sh\n');
    fx.write('other.txt', 'nothing\n');
    const content = { output_mode: 'content' } as const;
    expect((await grep({ ...content, pattern: '--files' })).content).toBe('flags.txt:1:--files');
    expect((await grep({ ...content, pattern: '--pre=/bin/sh' })).content).toBe('flags.txt:3:--pre=/bin/sh');
    // -L would follow the link to the secret
    expect((await grep({ ...content, pattern: '-L' })).content).toBe('flags.txt:2:-L');
    expect((await grep({ ...content, pattern: '-e' })).content).toBe('No matches found');
  });

  it('a path or glob that looks like a flag stays a path or a glob', async () => {
    // A directory named like ripgrep's --follow and -L, holding a link out: searched as a directory.
    fx.link('-L/out', fx.outside);
    fx.link('--follow/out', fx.outside);
    fx.write('-L/in.txt', 'TOP-SECRET-lookalike\n');
    expect((await grep({ pattern: 'TOP-SECRET', path: '-L' })).content).toBe('Found 1 file\n-L/in.txt');
    expect((await grep({ pattern: 'TOP-SECRET', path: '--follow' })).content).toBe('No matches found');
    fx.link('top-link', fx.outside);
    expect((await grep({ pattern: 'TOP-SECRET', glob: '--follow' })).content).toBe('No matches found');
    expect((await grep({ pattern: 'TOP-SECRET', glob: '-L' })).content).toBe('No matches found');
  });

  it('reads no configuration from the environment and no ignore file from the tree', async () => {
    fx.link('out', fx.outside);
    const config = join(fx.base, 'ripgreprc');
    writeFileSync(config, '--follow\n--no-hidden\n');
    const before = process.env.RIPGREP_CONFIG_PATH;
    process.env.RIPGREP_CONFIG_PATH = config;
    try {
      fx.write('.gitignore', '*\n');
      fx.write('.ignore', '*\n');
      fx.write('.rgignore', '*\n');
      fx.write('src/a.ts', 'needle\n');
      fx.write('.hidden.ts', 'needle\n');
      expect((await grep({ pattern: 'needle', output_mode: 'count' })).content).toBe(
        '.hidden.ts:1\nsrc/a.ts:1\n\nFound 2 matching lines in 2 files',
      );
      expect((await grep({ pattern: 'TOP-SECRET' })).content).toBe('No matches found');
    } finally {
      if (before === undefined) delete process.env.RIPGREP_CONFIG_PATH;
      else process.env.RIPGREP_CONFIG_PATH = before;
    }
  });

  it("drydock's hidden paths stay hidden whatever glob or path, even with glob characters in their names", async () => {
    const data = join(fx.root, 'sub', 'd[a]ta*{x}');
    const work = join(fx.root, 'work!');
    const configFile = join(fx.root, 'sub', 'drydock.yaml');
    mkdirSync(join(data, 'worktrees'), { recursive: true });
    writeFileSync(join(data, 'drydock.db'), 'needle in the database\n');
    writeFileSync(join(data, 'worktrees', 'plan.txt'), 'needle in a worktree\n');
    mkdirSync(work);
    writeFileSync(join(work, 'pr.txt'), 'needle in a checkout\n');
    writeFileSync(configFile, 'api_key: needle\n');
    fx.write('sub/ok.txt', 'needle\n');
    symlinkSync(data, join(fx.root, 'data-link'));
    const hidden = hiddenPaths(
      testConfig(data, (c) => {
        c.work_dir = work;
      }),
      configFile,
    );
    const ws = await Workspace.open(fx.root, hidden);
    for (const input of [
      { pattern: 'needle' },
      { pattern: 'needle', path: 'sub', output_mode: 'content' },
      { pattern: 'needle', glob: '**/*' },
      { pattern: 'needle', glob: '**/drydock.*' },
      { pattern: 'needle', glob: 'sub/d[[]a]ta*/**' },
      { pattern: 'needle', glob: '**/worktrees/**' },
      { pattern: 'needle', glob: 'work!/**' },
      { pattern: 'needle', glob: '*.txt', type: 'txt' },
      { pattern: 'needle', path: 'sub', glob: '!ok.txt' },
    ]) {
      const r = await grep(input, ws);
      expect(r.isError, JSON.stringify(input)).toBe(false);
      expect(r.content, JSON.stringify(input)).not.toMatch(
        /database|worktree|checkout|drydock\.yaml|api_key/,
      );
    }
    expect((await grep({ pattern: 'needle', output_mode: 'content' }, ws)).content).toBe(
      'sub/ok.txt:1:needle',
    );
    for (const path of ['sub/d[a]ta*{x}', 'data-link', 'work!', 'sub/drydock.yaml']) {
      const r = await grep({ pattern: 'needle', path }, ws);
      expect(r.isError, path).toBe(true);
      expect(r.content).toMatch(/drydock's (data directory|work directory|configuration file)/);
    }
  });

  it('says ripgrep is missing, as Bash says the sandbox is, instead of failing obscurely', async () => {
    fx.write('a.txt', 'needle\n');
    for (const rg of [null, join(fx.base, 'no-such-rg')]) {
      expect(await runGrep(fx.ws, { pattern: 'needle' }, fx.limits, rg)).toEqual({
        content: RIPGREP_MISSING,
        isError: true,
      });
    }
    expect(RIPGREP_MISSING).toMatch(/apt-get install ripgrep/);
    // a path refusal still comes first
    expect((await runGrep(fx.ws, { pattern: 'x', path: '../outside' }, fx.limits, null)).content).toMatch(
      /outside the workspace/,
    );
    expect(findRipgrep('/nonexistent:relative/bin')).toBeNull();
  });
});

describe('Grep stops with its run', () => {
  it('kills ripgrep when the run is aborted, and says so', async () => {
    // A program that never ends stands in for rg: without the run's signal it would run to the time bound.
    const forever = join(fx.root, 'rg-forever');
    writeFileSync(forever, '#!/bin/sh\nexec sleep 600\n');
    chmodSync(forever, 0o755);
    fx.write('a.txt', 'text\n');
    const controller = new AbortController();
    const searching = runGrep(fx.ws, { pattern: 'text' }, fx.limits, forever, controller.signal);
    controller.abort();
    expect(await searching).toEqual({ content: GREP_ABORTED, isError: true });
  });
});

describe('runRipgrep bounds the program it runs', () => {
  // /bin/sh stands in for rg here: a program that never ends, or never stops writing.
  const opts = { cwd: '/', timeoutMs: 60_000, maxOutputBytes: 1 << 20, onLine: () => true };

  it('kills it when the time is up', async () => {
    const run = await runRipgrep('/bin/sh', ['-c', 'exec sleep 600'], { ...opts, timeoutMs: 50 });
    expect(run).toMatchObject({ stopped: 'time', exitCode: null });
  });

  it('kills it past the output bound, when the caller has enough, and on abort', async () => {
    const flood = await runRipgrep('/bin/sh', ['-c', 'exec yes'], { ...opts, maxOutputBytes: 100_000 });
    expect(flood.stopped).toBe('output');
    expect(flood.bytes).toBeGreaterThan(100_000);
    let seen = 0;
    const enough = await runRipgrep('/bin/sh', ['-c', 'exec yes'], { ...opts, onLine: () => ++seen < 3 });
    expect(enough.stopped).toBe('enough');
    expect(seen).toBe(3);
    const controller = new AbortController();
    const aborted = await runRipgrep('/bin/sh', ['-c', 'exec yes'], {
      ...opts,
      signal: controller.signal,
      onLine: () => {
        controller.abort();
        return true;
      },
    });
    expect(aborted.stopped).toBe('aborted');
  });

  it('gives it an empty environment and no stdin', async () => {
    const lines: string[] = [];
    const run = await runRipgrep('/bin/sh', ['-c', 'env | wc -l; cat | wc -c'], {
      ...opts,
      onLine: (l) => lines.push(l.trim()) > 0,
    });
    expect(run.exitCode).toBe(0);
    // sh itself sets PWD (and may set SHLVL, _); nothing of the daemon's environment comes through
    expect(Number(lines[0])).toBeLessThanOrEqual(3);
    expect(lines[1]).toBe('0');
  });
});

describe('unreadable files', () => {
  it('are skipped and counted when the daemon cannot read them', async () => {
    fx.write('ok.txt', 'needle\n');
    const locked = fx.write('locked/x.txt', 'needle\n');
    chmodSync(locked, 0);
    chmodSync(join(fx.root, 'locked'), 0);
    try {
      const r = await grep({ pattern: 'needle' });
      if (process.getuid?.() === 0) {
        // root reads them anyway
        expect(r.content).toBe('Found 2 files\nlocked/x.txt\nok.txt');
      } else {
        expect(r.content).toBe('Found 1 file\nok.txt\n\n[1 unreadable file or directories skipped]');
      }
    } finally {
      chmodSync(join(fx.root, 'locked'), 0o755);
    }
  });
});
