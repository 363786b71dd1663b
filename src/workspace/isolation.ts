import { spawn } from 'node:child_process';

// Where drydock's own programs run when they must read a tree a sandboxed command could have written (git
// add over an execution's worktree, for one). Such a tree can hold a nested repository with a clean filter,
// a `.gitattributes`, a `.gitmodules` with `update = !cmd`, a hook: git over it may run any of them. So it
// runs with the sandbox of the commands themselves (src/agent/sandbox.ts implements `Isolation`): no network,
// no secret, only the paths it is given. What comes out is data (a commit id, a pack of objects) that the
// host checks before it takes it.

export interface IsolatedRun {
  /** Where the program starts. */
  cwd: string;
  /** Mounted read-only at the same path. */
  readOnly: string[];
  /** Mounted read-write at the same path. */
  writable: string[];
  /** The program's whole environment. */
  env: Record<string, string>;
  /** Its standard input. */
  input?: string | Buffer;
  timeoutMs: number;
  /** More bytes of standard output than this fail the run. */
  maxStdout: number;
}

export interface IsolatedOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  /** The head of standard error. */
  stderr: string;
}

export interface Isolation {
  /** Runs `argv` (an absolute program and its arguments) where only the paths given exist. */
  run(argv: readonly string[], opts: IsolatedRun): Promise<IsolatedOutcome>;
  /** Makes a directory drydock made writable to what runs (a root daemon's sandbox runs as another uid). */
  handOver(path: string): Promise<void>;
}

/** Spawns argv with exactly `env`; collects stdout (bounded) and the head of stderr. */
export function runCollect(
  argv: readonly string[],
  env: Record<string, string>,
  opts: { input?: string | Buffer; timeoutMs: number; maxStdout: number; cwd?: string },
): Promise<IsolatedOutcome> {
  return new Promise((done, fail) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: opts.timeoutMs,
      killSignal: 'SIGKILL',
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => {
      size += b.length;
      if (size > opts.maxStdout) child.kill('SIGKILL');
      else chunks.push(b);
    });
    child.stderr.on('data', (b: Buffer) => {
      if (stderr.length < 8_000) stderr += b.toString('utf8');
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
    child.on('error', fail);
    child.on('close', (code, signal) => {
      if (size > opts.maxStdout) fail(new Error(`its output passed ${opts.maxStdout} bytes`));
      else done({ code, signal, stdout: Buffer.concat(chunks), stderr });
    });
  });
}

/**
 * No sandbox: the operator turned it off (`execute.sandbox: off`: commands run unconfined too), or it does
 * not work here (then no command ran, and only Write and Edit, which refuse `.git`, wrote the tree). The
 * program still gets only the environment given.
 */
export const unconfined: Isolation = {
  run: (argv, opts) => runCollect(argv, opts.env, opts),
  handOver: async () => undefined,
};
