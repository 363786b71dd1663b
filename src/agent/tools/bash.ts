import { type ChildProcess, spawn } from 'node:child_process';
import { isAbsolute } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { z } from 'zod';
import { toolDefinition } from './define.js';
import { errorCode } from './fs-errors.js';
import { parseInput } from './input.js';
import type { ToolResult } from './types.js';

// Bash runs one shell command in the workspace during the execute phase. Whether a call may run at all (a tool
// approval, or the allow-list in `auto` mode) is the executor's decision; this module only runs it, contained:
//   - `/bin/bash -c <command>` spawned (no extra shell) with stdin closed and exactly the environment given
//     (build it with `safeEnv`: nothing of the daemon's own environment is inherited), inside the sandbox when
//     `wrap` is given (see sandbox.ts: bwrap then runs bash in namespaces of its own);
//   - in a process group of its own, so that on timeout or abort the whole group gets SIGTERM and, after a
//     grace period, SIGKILL. Processes still in the group when the command ends are killed too: nothing it
//     started in the background outlives the call. (Unsandboxed, a process that leaves the group with setsid
//     escapes this; in the sandbox, killing bwrap ends its PID namespace and everything in it.)
//   - stdout and stderr merged in arrival order into one buffer that keeps only the head and the tail, so a
//     command that prints gigabytes costs a bounded amount of memory.

export const BASH_MAX_TIMEOUT_MS = 600_000;

export const bashInput = z.object({
  command: z
    .string()
    .min(1)
    .refine((c) => c.trim() !== '', 'command is blank')
    .refine((c) => !c.includes('\0'), 'command contains a NUL byte'),
  timeout: z.number().positive().max(BASH_MAX_TIMEOUT_MS).optional(),
  description: z.string().max(1_000).optional(),
  /** Claude Code's background commands; refused when true (see BACKGROUND_REFUSED). */
  run_in_background: z.boolean().optional(),
});
export type BashInput = z.infer<typeof bashInput>;

export const bashTool = toolDefinition({
  name: 'Bash',
  description: [
    'Runs a shell command with /bin/bash in the workspace root and returns its output (stdout and stderr together)',
    'and exit code. Stdin is closed: interactive commands fail or hang until the timeout.',
    'The default timeout is 2 minutes (at most 10 minutes with `timeout`); processes the command leaves running',
    'in the background are killed when it ends. Long output keeps its beginning and end only.',
    'Use Read, Glob and Grep rather than cat, find and grep, and Write or Edit to change files.',
  ],
  properties: {
    command: { type: 'string', description: 'The command to run.' },
    timeout: {
      type: 'number',
      description: `Timeout in milliseconds (at most ${BASH_MAX_TIMEOUT_MS}; default 120000).`,
    },
    description: {
      type: 'string',
      description: 'What the command does, in 5-10 words, shown to the person approving it.',
    },
    run_in_background: {
      type: 'boolean',
      description:
        'Not supported here: leave it out or false. Commands run in the foreground; give a longer `timeout` for slow ones.',
    },
  },
  required: ['command'],
});

/** Nothing may outlive a call (see above), so a command cannot be left running for later. */
export const BACKGROUND_REFUSED = `Bash: background commands are not supported (run_in_background); nothing was run. Run the command in the foreground instead, with a \`timeout\` long enough for it (at most ${BASH_MAX_TIMEOUT_MS} ms).`;

export interface BashOptions {
  /** The absolute path of the workspace root; commands start there. */
  cwd: string;
  /** Timeout when the call gives none (default 120 000 ms). */
  timeoutMs: number;
  /** The most a call's `timeout` may ask for (default 600 000 ms). */
  maxTimeoutMs: number;
  /** Most characters of output in the result (default 30 000); longer output keeps its head and tail. */
  maxOutputChars: number;
  /** The complete environment of the command (see `safeEnv`); nothing else is inherited. */
  env: Record<string, string>;
  /** The argv that runs the command confined (`Sandbox.wrap`); without it, `/bin/bash -c <command>`. */
  wrap?: (command: string) => string[];
  /** Told the process group's id once the command has started (for the call journal). */
  onSpawn?: (processGroup: number) => void;
}

export const DEFAULT_BASH_LIMITS: Readonly<
  Pick<BashOptions, 'timeoutMs' | 'maxTimeoutMs' | 'maxOutputChars'>
> = Object.freeze({ timeoutMs: 120_000, maxTimeoutMs: BASH_MAX_TIMEOUT_MS, maxOutputChars: 30_000 });

export type BashResult = ToolResult & { exitCode: number | null; timedOut: boolean };

/** Time between SIGTERM and SIGKILL when a command is stopped. */
export const KILL_GRACE_MS = 2_000;
/** How long to wait for the output pipes to close once the group is gone (a process that escaped the group). */
const DRAIN_MS = 1_000;

export async function runBash(input: unknown, opts: BashOptions, signal?: AbortSignal): Promise<BashResult> {
  const failed = (content: string): BashResult => ({
    content,
    isError: true,
    exitCode: null,
    timedOut: false,
  });
  const parsed = parseInput('Bash', bashInput, input);
  if (!parsed.ok) return failed(parsed.error);
  if (parsed.value.run_in_background === true) return failed(BACKGROUND_REFUSED);
  if (!isAbsolute(opts.cwd)) return failed('Bash: the working directory is not configured correctly');
  if (signal?.aborted) return failed('killed: aborted (the command was not started)');

  const maxTimeout = Math.max(1, opts.maxTimeoutMs);
  const timeoutMs = Math.ceil(Math.min(parsed.value.timeout ?? opts.timeoutMs, maxTimeout));
  try {
    return await run(parsed.value.command, opts, timeoutMs, signal);
  } catch (err) {
    return failed(
      `Bash: could not run the command (${errorCode(err) ?? (err instanceof Error ? err.name : 'error')})`,
    );
  }
}

function run(
  command: string,
  opts: BashOptions,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<BashResult> {
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      const argv = opts.wrap ? opts.wrap(command) : ['/bin/bash', '-c', command];
      child = spawn(argv[0]!, argv.slice(1), {
        cwd: opts.cwd,
        env: opts.env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
        windowsHide: true,
      });
    } catch (err) {
      resolve(notStarted(`Bash: could not start the command (${errorCode(err) ?? 'error'})`));
      return;
    }
    if (child.pid !== undefined) opts.onSpawn?.(child.pid);
    new CommandRun(child, new OutputBuffer(opts.maxOutputChars), timeoutMs, signal, resolve).start();
  });
}

const notStarted = (content: string): BashResult => ({
  content,
  isError: true,
  exitCode: null,
  timedOut: false,
});

/**
 * One spawned command until it settles: its output, the timeout or abort that stops its process group
 * (SIGTERM, then SIGKILL after the grace period), its exit, and the drain of pipes a leftover holds open.
 */
class CommandRun {
  private stopping: 'timeout' | 'abort' | undefined;
  private exited = false;
  private exitCode: number | null = null;
  private exitSignal: NodeJS.Signals | null = null;
  private settled = false;
  private timeoutTimer: NodeJS.Timeout | undefined;
  private graceTimer: NodeJS.Timeout | undefined;
  private graceOver = false;
  private drainTimer: NodeJS.Timeout | undefined;
  private openStreams = 2;
  private readonly onAbort = (): void => this.stop('abort');

  constructor(
    private readonly child: ChildProcess,
    private readonly output: OutputBuffer,
    private readonly timeoutMs: number,
    private readonly signal: AbortSignal | undefined,
    private readonly resolve: (result: BashResult) => void,
  ) {}

  start(): void {
    const { child } = this;
    this.timeoutTimer = setTimeout(() => this.stop('timeout'), this.timeoutMs);
    this.signal?.addEventListener('abort', this.onAbort, { once: true });
    for (const stream of [child.stdout, child.stderr]) {
      if (stream === null) {
        this.openStreams--;
        continue;
      }
      const decoder = new StringDecoder('utf8');
      stream.on('data', (chunk: Buffer) => this.output.push(decoder.write(chunk)));
      stream.on('error', () => undefined);
      stream.on('close', () => {
        this.output.push(decoder.end());
        this.openStreams--;
        if (this.openStreams === 0 && this.exited) this.finish(false);
      });
    }
    child.on('error', (err) => this.spawnFailed(err));
    child.on('exit', (code, sig) => this.exit(code, sig));
  }

  private killGroup(sig: NodeJS.Signals): void {
    if (this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, sig);
    } catch {
      // ESRCH: the group is already gone.
    }
  }

  private finish(incomplete: boolean): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timeoutTimer);
    clearTimeout(this.graceTimer);
    clearTimeout(this.drainTimer);
    this.signal?.removeEventListener('abort', this.onAbort);
    // A last sweep: whatever is left in the group (say a background job that closed its output) goes too.
    this.killGroup('SIGKILL');
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
    const { exitCode, exitSignal, stopping, timeoutMs } = this;
    this.resolve(result(this.output, { exitCode, exitSignal, stopping, timeoutMs, incomplete }));
  }

  private armDrain(): void {
    if (this.drainTimer !== undefined || this.settled) return;
    this.drainTimer = setTimeout(() => this.finish(true), DRAIN_MS);
  }

  private stop(why: 'timeout' | 'abort'): void {
    if (this.stopping !== undefined || this.settled) return;
    this.stopping = why;
    this.killGroup('SIGTERM');
    this.graceTimer = setTimeout(() => {
      this.graceOver = true;
      this.killGroup('SIGKILL');
      if (this.exited) this.armDrain();
    }, KILL_GRACE_MS);
  }

  /** Spawning failed (no pid), e.g. the working directory is gone. Kill errors are ignored above. */
  private spawnFailed(err: Error): void {
    if (this.child.pid !== undefined || this.settled) return;
    this.settled = true;
    clearTimeout(this.timeoutTimer);
    this.signal?.removeEventListener('abort', this.onAbort);
    this.resolve(
      notStarted(
        `Bash: could not start the command (${errorCode(err) ?? 'error'}; is the workspace still there?)`,
      ),
    );
  }

  private exit(code: number | null, sig: NodeJS.Signals | null): void {
    this.exited = true;
    this.exitCode = code;
    this.exitSignal = sig;
    if (this.openStreams === 0) {
      this.finish(false);
      return;
    }
    if (this.stopping === undefined) {
      // The command is done; anything it left running in the group would hold the output open. Kill it.
      this.killGroup('SIGKILL');
      this.armDrain();
    } else if (this.graceOver) {
      this.armDrain();
    }
    // While stopping, the grace period runs on: the pipes close when the rest of the group has exited, or
    // the grace timer kills it and then arms the drain.
  }
}

interface Outcome {
  exitCode: number | null;
  exitSignal: NodeJS.Signals | null;
  stopping: 'timeout' | 'abort' | undefined;
  timeoutMs: number;
  incomplete: boolean;
}

function result(output: OutputBuffer, o: Outcome): BashResult {
  const text = output.text().replace(/\n+$/, '');
  const parts = [text === '' ? '(no output)' : text];
  if (o.incomplete) {
    parts.push(
      '[output may be incomplete: a process the command started left its process group and kept the output open]',
    );
  }
  let status: string;
  if (o.stopping === 'timeout') {
    status = `timed out after ${o.timeoutMs} ms (the command and the processes it started were killed)`;
  } else if (o.stopping === 'abort') {
    status = 'killed: aborted';
  } else if (o.exitCode !== null) {
    status = `exit code ${o.exitCode}${LIMIT_HIT[o.exitCode] ?? ''}`;
  } else {
    status = `killed by signal ${o.exitSignal ?? 'unknown'}`;
  }
  parts.push(status);
  const timedOut = o.stopping === 'timeout';
  const isError = o.stopping !== undefined || o.exitCode !== 0;
  const base: BashResult = { content: parts.join('\n\n'), isError, exitCode: o.exitCode, timedOut };
  return output.omitted > 0 ? { ...base, truncated: true } : base;
}

/**
 * What an exit status of 128 + a limit's signal means (a shell reports a child killed by signal N so): the
 * sandbox sets the limits (execute.limits, sandbox.ts), and the model is told which one it hit.
 */
const LIMIT_HIT: Record<number, string> = {
  [128 + 24]: ' (SIGXCPU: a process passed its CPU-time limit, execute.limits.cpu_seconds)',
  [128 + 25]: ' (SIGXFSZ: a process wrote a file past its size limit, execute.limits.file_bytes)',
  [128 + 9]: ' (SIGKILL: a process was killed, for instance past its CPU-time limit)',
};

/** Characters set aside for the omission marker. */
const MARKER_RESERVE = 64;

/**
 * Output kept within `maxChars`: everything while it fits, then only the first half and a rolling last half,
 * counting what falls out in between. Never holds more than about 2 × maxChars characters.
 */
export class OutputBuffer {
  readonly #max: number;
  readonly #headKeep: number;
  readonly #tailKeep: number;
  #head = '';
  #tail: string[] = [];
  #tailChars = 0;
  #total = 0;
  #overflow = false;

  constructor(maxChars: number) {
    this.#max = Math.max(0, Math.floor(maxChars));
    const budget = Math.max(0, this.#max - MARKER_RESERVE);
    this.#headKeep = Math.ceil(budget / 2);
    this.#tailKeep = budget - this.#headKeep;
  }

  push(s: string): void {
    if (s === '') return;
    this.#total += s.length;
    if (!this.#overflow) {
      if (this.#head.length + s.length <= this.#max) {
        this.#head += s;
        return;
      }
      this.#overflow = true;
      const all = this.#head + s;
      this.#head = all.slice(0, this.#headKeep);
      this.#appendTail(all.slice(this.#headKeep));
      return;
    }
    this.#appendTail(s);
  }

  #appendTail(s: string): void {
    // A chunk longer than the tail keeps only its end; otherwise chunks pile up to 2 × tailKeep, then compact.
    const piece = s.length > this.#tailKeep ? s.slice(s.length - this.#tailKeep) : s;
    this.#tail.push(piece);
    this.#tailChars += piece.length;
    if (this.#tailChars > 2 * this.#tailKeep) {
      const joined = this.#tail.join('');
      const kept = joined.slice(joined.length - this.#tailKeep);
      this.#tail = [kept];
      this.#tailChars = kept.length;
    }
  }

  /** Characters currently held in memory. */
  get retained(): number {
    return this.#head.length + this.#tailChars;
  }

  /** Characters pushed in all. */
  get total(): number {
    return this.#total;
  }

  /** Characters left out of `text()`. */
  get omitted(): number {
    if (!this.#overflow) return 0;
    return this.#total - this.#shownHead().length - this.#shownTail().length;
  }

  text(): string {
    if (!this.#overflow) return this.#head;
    const head = this.#shownHead();
    const tail = this.#shownTail();
    const omitted = this.#total - head.length - tail.length;
    return `${head}\n[... ${omitted} characters omitted ...]\n${tail}`;
  }

  #shownHead(): string {
    const head = this.#head;
    // Never end on the first half of a surrogate pair.
    const last = head.charCodeAt(head.length - 1);
    return last >= 0xd800 && last <= 0xdbff ? head.slice(0, -1) : head;
  }

  #shownTail(): string {
    const joined = this.#tail.join('');
    let tail = joined.slice(Math.max(0, joined.length - this.#tailKeep));
    const first = tail.charCodeAt(0);
    if (first >= 0xdc00 && first <= 0xdfff) tail = tail.slice(1);
    return tail;
  }
}

// --- environment --------------------------------------------------------------------------------------------

/** Variables taken from the daemon's environment (anything else there is dropped). HOME is not one of them. */
const FROM_BASE = ['PATH', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'] as const;

/** Names never passed to a command, from the base or from `extra`. */
const SECRET_NAMES: readonly RegExp[] = [
  /^ANTHROPIC_API_KEY$/i,
  /^DRYDOCK_/i,
  /^GITHUB_/i,
  /^DATABASE_URL$/i,
  /TOKEN/i,
  /SECRET/i,
  /KEY/i,
  /PASSWORD/i,
  /PASSWD/i,
  /CREDENTIAL/i,
];

const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function isSecretName(name: string): boolean {
  return SECRET_NAMES.some((re) => re.test(name));
}

/**
 * The environment for commands. From `base` (untrusted: the daemon's own environment) only PATH (without empty
 * or relative entries, which would make a workspace file shadow a system command), LANG, LC_ALL, TZ and TMPDIR;
 * then `extra` (trusted, from the executor: typically `HOME`, set to the workspace or a temporary home, and git
 * identity). HOME is never taken from `base`: the daemon user's home holds credentials (~/.npmrc, ~/.ssh, ...).
 * Names that look like secrets (ANTHROPIC_API_KEY, DRYDOCK_*, GITHUB_*, DATABASE_URL, *TOKEN*, *SECRET*, *KEY*,
 * *PASSWORD*, *PASSWD*, *CREDENTIAL*) are dropped from both. TERM=dumb, GIT_TERMINAL_PROMPT=0 and CI=1 always.
 */
export function safeEnv(base: NodeJS.ProcessEnv, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  const put = (name: string, value: unknown): void => {
    if (typeof value !== 'string' || value.includes('\0')) return;
    if (!ENV_NAME.test(name) || isSecretName(name)) return;
    env[name] = value;
  };
  for (const name of FROM_BASE) {
    if (Object.hasOwn(base, name)) put(name, base[name]);
  }
  for (const [name, value] of Object.entries(extra)) put(name, value);
  env.PATH = cleanPath(env.PATH);
  env.TERM = 'dumb';
  env.GIT_TERMINAL_PROMPT = '0';
  env.CI = '1';
  return env;
}

function cleanPath(path: string | undefined): string {
  const entries = (path ?? '').split(':').filter((p) => p !== '' && isAbsolute(p));
  return entries.length > 0 ? entries.join(':') : DEFAULT_PATH;
}
