import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';

// The built CLI in a child process (asynchronously: a daemon in the test's own process must keep serving).

export const CLI = join(packageRoot(), 'dist/src/cli/main.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts `drydock ...args` with only PATH, HOME and `env`; `done` resolves when it exits. */
export function startCli(
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; done: Promise<CliResult>; stdout(): string } {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (b) => {
    stdout += b;
  });
  child.stderr!.on('data', (b) => {
    stderr += b;
  });
  const done = new Promise<CliResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { child, done, stdout: () => stdout };
}

export const runCli = (args: string[], env: Record<string, string> = {}): Promise<CliResult> =>
  startCli(args, env).done;
