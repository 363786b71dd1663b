import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { isAbsolute, join } from 'node:path';

// Running ripgrep (`rg`, the Debian package `ripgrep`) for Grep, as Claude Code's Grep does. The program is
// found once on the daemon's PATH and run by its absolute path with an empty environment (no
// RIPGREP_CONFIG_PATH, no HOME, so no configuration and no global gitignore is read), stdin closed, its
// output read line by line up to a bound, and killed when the caller has enough, when the time is up or
// when the call is aborted.

/** What Grep answers when ripgrep is not installed. */
export const RIPGREP_MISSING =
  "Grep: ripgrep (rg) is not installed on drydock's host, so Grep cannot search; the operator installs the ripgrep package (Debian: apt-get install ripgrep). Read and Glob still work.";

/** The absolute path of `rg` on PATH (read when called), or null when there is none. */
export function findRipgrep(path = process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'): string | null {
  for (const dir of path.split(':')) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, 'rg');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

let found: string | null | undefined;

/** `findRipgrep` on the daemon's PATH, looked up once. */
export function daemonRipgrep(): string | null {
  found ??= findRipgrep();
  return found;
}

export interface RipgrepOptions {
  cwd: string;
  timeoutMs: number;
  /** Most bytes of standard output read; rg is killed past them. */
  maxOutputBytes: number;
  signal?: AbortSignal;
  /** Called with each line of standard output; false stops the search (rg is killed). */
  onLine: (line: string) => boolean;
}

export interface RipgrepRun {
  /** rg's exit code; null when it was killed or never started. */
  exitCode: number | null;
  /** The first STDERR_KEPT bytes of what rg wrote to standard error. */
  stderr: string;
  /** Why the search ended before rg did: the caller had enough, the time or output bound, an abort. */
  stopped?: 'enough' | 'time' | 'output' | 'aborted';
  /** The program could not be started (it is not there, or not executable). */
  missing?: boolean;
  /** Bytes of standard output read. */
  bytes: number;
}

const STDERR_KEPT = 8 * 1024;

/** Runs `program` with `args` (never through a shell) and feeds its output lines to `onLine`. */
export function runRipgrep(
  program: string,
  args: readonly string[],
  opts: RipgrepOptions,
): Promise<RipgrepRun> {
  return new Promise((resolve) => {
    const child = spawn(program, args, { cwd: opts.cwd, env: {}, stdio: ['ignore', 'pipe', 'pipe'] });
    const run: RipgrepRun = { exitCode: null, stderr: '', bytes: 0 };
    let pending = '';
    const stop = (why: NonNullable<RipgrepRun['stopped']>) => {
      if (run.stopped !== undefined) return;
      run.stopped = why;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop('time'), opts.timeoutMs);
    const onAbort = () => stop('aborted');
    if (opts.signal?.aborted) onAbort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (run.stopped !== undefined) return;
      run.bytes += Buffer.byteLength(chunk);
      if (run.bytes > opts.maxOutputBytes) return stop('output');
      pending += chunk;
      let from = 0;
      for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n', from)) {
        const line = pending.slice(from, nl);
        from = nl + 1;
        if (!opts.onLine(line)) {
          stop('enough');
          return;
        }
      }
      pending = pending.slice(from);
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (run.stderr.length < STDERR_KEPT) run.stderr = (run.stderr + chunk).slice(0, STDERR_KEPT);
    });
    const done = () => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve(run);
    };
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'EACCES') run.missing = true;
      else run.stderr ||= err.message;
      done();
    });
    child.on('close', (code) => {
      if (run.stopped === undefined && pending !== '') opts.onLine(pending);
      run.exitCode = code;
      done();
    });
  });
}
