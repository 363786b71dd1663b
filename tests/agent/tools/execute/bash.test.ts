import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  BACKGROUND_REFUSED,
  type BashOptions,
  DEFAULT_BASH_LIMITS,
  OutputBuffer,
  runBash,
  safeEnv,
} from '../../../../src/agent/tools/execute-tools.js';
import { type Fixture, makeFixture } from '../fixture.js';

let fx: Fixture;
let opts: BashOptions;

beforeEach(async () => {
  fx = await makeFixture('drydock-bash-');
  opts = { cwd: fx.ws.root, ...DEFAULT_BASH_LIMITS, env: safeEnv(process.env, { HOME: fx.ws.root }) };
});

afterEach(() => {
  vi.restoreAllMocks();
  fx.cleanup();
});

/** A string unique to one test, put in a command line so that `pgrep -f` can find its processes. */
function marker(): string {
  return `30.${randomInt(100_000, 999_999)}${randomInt(100_000, 999_999)}`;
}

function running(pattern: string): string[] {
  const r = spawnSync('pgrep', ['-f', pattern], { encoding: 'utf8' });
  return r.stdout.split('\n').filter((l) => l !== '');
}

/** Waits (briefly) until no process matches; killed processes may take a moment to be reaped. */
async function expectNoProcess(pattern: string): Promise<void> {
  for (let i = 0; i < 20 && running(pattern).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
  expect(running(pattern)).toEqual([]);
}

describe('Bash', () => {
  it('returns the output and exit code 0', async () => {
    const result = await runBash({ command: 'echo hello', description: 'say hello' }, opts);
    expect(result).toEqual({ content: 'hello\n\nexit code 0', isError: false, exitCode: 0, timedOut: false });
  });

  it('reports a non-zero exit code as an error', async () => {
    const result = await runBash({ command: 'echo failing; exit 3' }, opts);
    expect(result).toEqual({
      content: 'failing\n\nexit code 3',
      isError: true,
      exitCode: 3,
      timedOut: false,
    });
    const silent = await runBash({ command: 'false' }, opts);
    expect(silent.content).toBe('(no output)\n\nexit code 1');
  });

  it('captures stderr interleaved with stdout', async () => {
    const result = await runBash(
      { command: 'echo out1; sleep 0.1; echo err1 >&2; sleep 0.1; echo out2; ls /nonexistent-drydock-path' },
      opts,
    );
    expect(result.content).toMatch(/^out1\nerr1\nout2\nls: .*nonexistent-drydock-path.*\n\nexit code 2$/);
    expect(result.exitCode).toBe(2);
  });

  it('runs in the workspace root with stdin closed', async () => {
    expect((await runBash({ command: 'pwd' }, opts)).content).toBe(`${fx.ws.root}\n\nexit code 0`);
    fx.write('sub/file.txt', 'in the workspace\n');
    expect((await runBash({ command: 'cat sub/file.txt' }, opts)).content).toBe(
      'in the workspace\n\nexit code 0',
    );
    const stdin = await runBash({ command: 'cat; echo "read stdin: $?"' }, opts);
    expect(stdin.content).toBe('read stdin: 0\n\nexit code 0');
  });

  it('uses exactly the environment given, and safeEnv keeps secrets out', async () => {
    const planted: Record<string, string> = {
      ANTHROPIC_API_KEY: 'sk-ant-LEAKED-1',
      DRYDOCK_ADMIN_TOKEN: 'LEAKED-2',
      GITHUB_TOKEN: 'LEAKED-3',
      DATABASE_URL: 'postgres://user:LEAKED-4@db/x',
      AWS_SECRET_ACCESS_KEY: 'LEAKED-5',
      SMTP_PASSWORD: 'LEAKED-6',
      NPM_TOKEN: 'LEAKED-7',
      HOME: '/home/daemon-LEAKED-8',
      SOME_HARMLESS_VAR: 'LEAKED-9',
    };
    const saved = Object.fromEntries(Object.keys(planted).map((k) => [k, process.env[k]]));
    Object.assign(process.env, planted);
    try {
      const env = safeEnv(process.env, { HOME: fx.ws.root, GIT_AUTHOR_NAME: 'drydock' });
      const result = await runBash({ command: 'env' }, { ...opts, env });
      expect(result.isError).toBe(false);
      expect(result.content).not.toContain('LEAKED');
      for (const name of Object.keys(planted).filter((k) => k !== 'HOME')) {
        expect(result.content).not.toMatch(new RegExp(`^${name}=`, 'm'));
      }
      expect(result.content).toMatch(new RegExp(`^HOME=${fx.ws.root}$`, 'm'));
      expect(result.content).toMatch(/^TERM=dumb$/m);
      expect(result.content).toMatch(/^CI=1$/m);
      expect(result.content).toMatch(/^GIT_TERMINAL_PROMPT=0$/m);
      expect(result.content).toMatch(/^GIT_AUTHOR_NAME=drydock$/m);
      expect(result.content).toMatch(/^PATH=/m);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('inherits nothing beyond opts.env', async () => {
    const result = await runBash({ command: 'env' }, { ...opts, env: { ONLY_THIS: 'yes' } });
    const names = result.content
      .split('\n')
      .filter((l) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(l))
      .map((l) => l.slice(0, l.indexOf('=')));
    // bash itself sets PWD, SHLVL and _ (and OLDPWD on some versions).
    expect(names.filter((n) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(n))).toEqual(['ONLY_THIS']);
  });

  it('kills the command and its children on timeout', async () => {
    const m = marker();
    const started = Date.now();
    const result = await runBash({ command: `sleep ${m} & sleep ${m}; wait`, timeout: 500 }, opts);
    const elapsed = Date.now() - started;
    expect(result.timedOut).toBe(true);
    expect(result.isError).toBe(true);
    expect(result.exitCode).toBeNull();
    expect(result.content).toContain('timed out after 500 ms');
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(4_000);
    await expectNoProcess(`sleep ${m}`);
  });

  it('SIGKILLs a group that ignores SIGTERM after the grace period', async () => {
    const m = marker();
    const started = Date.now();
    const result = await runBash(
      { command: `trap "" TERM; echo ignoring; sleep ${m} & sleep ${m}; wait` },
      { ...opts, timeoutMs: 300 },
    );
    const elapsed = Date.now() - started;
    expect(result.timedOut).toBe(true);
    expect(result.content).toBe(
      'ignoring\n\ntimed out after 300 ms (the command and the processes it started were killed)',
    );
    expect(elapsed).toBeGreaterThanOrEqual(2_000);
    expect(elapsed).toBeLessThan(6_000);
    await expectNoProcess(`sleep ${m}`);
  });

  it('lets the input timeout lower or raise the default, capped at maxTimeoutMs', async () => {
    const lowered = await runBash({ command: 'sleep 5', timeout: 200 }, opts);
    expect(lowered.content).toContain('timed out after 200 ms');
    const raised = await runBash(
      { command: 'sleep 0.5; echo done', timeout: 5_000 },
      { ...opts, timeoutMs: 100 },
    );
    expect(raised.content).toBe('done\n\nexit code 0');
    const capped = await runBash({ command: 'sleep 5', timeout: 600_000 }, { ...opts, maxTimeoutMs: 250 });
    expect(capped.content).toContain('timed out after 250 ms');
  });

  it('does not leave background processes running after the command ends', async () => {
    const m = marker();
    const started = Date.now();
    const result = await runBash({ command: `sleep ${m} & echo started` }, opts);
    expect(result.content).toBe('started\n\nexit code 0');
    expect(Date.now() - started).toBeLessThan(3_000);
    await expectNoProcess(`sleep ${m}`);
  });

  it('keeps huge output bounded in memory and in the result', async () => {
    const original = OutputBuffer.prototype.push;
    let maxRetained = 0;
    let pushes = 0;
    vi.spyOn(OutputBuffer.prototype, 'push').mockImplementation(function (this: OutputBuffer, s: string) {
      original.call(this, s);
      pushes++;
      maxRetained = Math.max(maxRetained, this.retained);
    });
    const total = 50_000_000;
    const result = await runBash({ command: `yes | head -c ${total}` }, opts);
    expect(result.exitCode).toBe(0);
    expect(result.truncated).toBe(true);
    expect(pushes).toBeGreaterThan(100);
    expect(maxRetained).toBeLessThanOrEqual(2 * opts.maxOutputChars);
    expect(result.content.length).toBeLessThanOrEqual(opts.maxOutputChars + 50);
    const match = /\n\[\.\.\. (\d+) characters omitted \.\.\.\]\n/.exec(result.content);
    expect(match).not.toBeNull();
    const [head, tail] = result.content.split(match![0]) as [string, string];
    expect(head.startsWith('y\ny\ny\n')).toBe(true);
    expect(tail.endsWith('y\n\nexit code 0')).toBe(true);
    // Every character was counted: what is shown plus what was omitted is the whole output.
    const shownTail = tail.slice(0, -'\n\nexit code 0'.length);
    expect(head.length + Number(match![1]) + shownTail.length + 1).toBe(total);
  });

  it('stops the command when the signal aborts', async () => {
    const m = marker();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = Date.now();
    const result = await runBash(
      { command: `echo begun; sleep ${m} & sleep ${m}; wait` },
      opts,
      controller.signal,
    );
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(result).toMatchObject({ isError: true, timedOut: false, exitCode: null });
    expect(result.content).toBe('begun\n\nkilled: aborted');
    await expectNoProcess(`sleep ${m}`);
  });

  it('does not start a command when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await runBash({ command: `touch ${join(fx.ws.root, 'ran')}` }, opts, controller.signal);
    expect(result.content).toContain('killed: aborted');
    expect(result.isError).toBe(true);
    expect((await runBash({ command: 'ls' }, opts)).content).toBe('(no output)\n\nexit code 0');
  });

  it('decodes UTF-8 split across chunks', async () => {
    const result = await runBash({ command: "printf '\\xc3'; sleep 0.1; printf '\\xa9\\n'" }, opts);
    expect(result.content).toBe('é\n\nexit code 0');
  });

  it('reports a command killed by a signal', async () => {
    const result = await runBash({ command: 'kill -SEGV $$' }, opts);
    expect(result).toMatchObject({ isError: true, exitCode: null, timedOut: false });
    expect(result.content).toBe('(no output)\n\nkilled by signal SIGSEGV');
  });

  it('returns an error result, without the host path, when the workspace is gone', async () => {
    const result = await runBash({ command: 'echo hi' }, { ...opts, cwd: join(fx.base, 'gone') });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^Bash: could not start the command \(ENOENT/);
    expect(result.content).not.toContain(fx.base);
  });

  it('refuses run_in_background: true without running anything, and says to run in the foreground', async () => {
    const result = await runBash({ command: 'touch started.txt', run_in_background: true }, opts);
    expect(result).toEqual({
      content: BACKGROUND_REFUSED,
      isError: true,
      exitCode: null,
      timedOut: false,
    });
    expect(result.content).toMatch(/background commands are not supported/);
    expect(result.content).toMatch(/in the foreground .*`timeout`/);
    expect(existsSync(join(fx.root, 'started.txt'))).toBe(false);
  });

  it('runs with run_in_background: false, a description and unknown extra fields', async () => {
    const result = await runBash(
      {
        command: 'echo ran > ran.txt && echo ok',
        run_in_background: false,
        description: 'Write a marker file',
        dangerouslyDisableSandbox: false,
      },
      opts,
    );
    expect(result).toEqual({ content: 'ok\n\nexit code 0', isError: false, exitCode: 0, timedOut: false });
    expect(readFileSync(join(fx.root, 'ran.txt'), 'utf8')).toBe('ran\n');
  });

  it.each([
    [{}],
    [{ command: '' }],
    [{ command: '   ' }],
    [{ command: 'ls', timeout: 600_001 }],
    [{ command: 'ls', timeout: -1 }],
    [{ command: 'ls', run_in_background: 'yes' }],
    [{ command: 'ls', description: 42 }],
    [{ command: 'echo \0' }],
    [42],
  ])('returns an error result for invalid input %j', async (input) => {
    const result = await runBash(input, opts);
    expect(result).toMatchObject({ isError: true, exitCode: null, timedOut: false });
    expect(result.content).toMatch(/^Bash: invalid input/);
  });
});

describe('OutputBuffer', () => {
  it('keeps everything that fits', () => {
    const b = new OutputBuffer(100);
    b.push('a'.repeat(60));
    b.push('b'.repeat(40));
    expect(b.text()).toBe('a'.repeat(60) + 'b'.repeat(40));
    expect(b.omitted).toBe(0);
  });

  it('keeps the head and the tail and counts the rest, never holding more than 2x the cap', () => {
    const b = new OutputBuffer(1_000);
    let pushed = 0;
    for (let i = 0; i < 5_000; i++) {
      const chunk = `${`${i}`.padEnd(97, '.')}\n`;
      b.push(chunk);
      pushed += chunk.length;
      expect(b.retained).toBeLessThanOrEqual(2_000);
    }
    expect(b.total).toBe(pushed);
    const text = b.text();
    expect(text.length).toBeLessThanOrEqual(1_000);
    expect(text.startsWith('0....')).toBe(true);
    expect(text.endsWith(`${'4999'.padEnd(97, '.')}\n`)).toBe(true);
    const omitted = Number(/\[\.\.\. (\d+) characters omitted \.\.\.\]/.exec(text)![1]);
    expect(omitted).toBe(b.omitted);
    // Shown head + omitted + shown tail account for every character pushed.
    const [head, tail] = text.split(`\n[... ${omitted} characters omitted ...]\n`) as [string, string];
    expect(head.length + omitted + tail.length).toBe(pushed);
  });

  it('keeps only the end of one enormous chunk', () => {
    const b = new OutputBuffer(1_000);
    b.push(`${'x'.repeat(10_000_000)}END`);
    expect(b.retained).toBeLessThanOrEqual(2_000);
    expect(b.text().endsWith('xxEND')).toBe(true);
  });

  it('never splits a surrogate pair at the cuts', () => {
    const b = new OutputBuffer(100);
    b.push('😀'.repeat(500));
    const text = b.text();
    expect(text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(text).not.toMatch(/(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });
});
