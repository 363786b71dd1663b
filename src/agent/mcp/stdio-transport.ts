import { type ChildProcess, spawn } from 'node:child_process';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

// The stdio transport of an MCP server drydock starts (MCP spec, "Transports", stdio: the client launches the
// server as a subprocess; newline-delimited JSON-RPC on its stdin and stdout; stderr is for logging). The SDK's
// own StdioClientTransport merges parts of the daemon's environment (HOME, PATH, USER, ...) into the server's
// and kills only its leader; this one spawns exactly the argv and environment given, in a process group of
// its own (the sandbox's bwrap is its leader, and killing bwrap ends the server's PID namespace), and keeps
// the tail of its stderr for the error of a server that fails.

/** Bytes of stderr kept (the tail). */
const STDERR_TAIL_BYTES = 8 * 1024;
/** Largest message the server may send on one line (the SDK's buffer default is 10 MiB as well). */
const MAX_LINE_BYTES = 10 * 1024 * 1024;
/** Time between SIGTERM and SIGKILL of the group at close. */
const KILL_GRACE_MS = 2_000;

export interface StdioLaunch {
  /** The program and its arguments (the sandbox's wrapped argv). */
  argv: string[];
  /** The whole environment of the spawned program; nothing else is inherited. */
  env: Record<string, string>;
  cwd: string;
}

export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  readonly #launch: StdioLaunch;
  readonly #buffer = new ReadBuffer({ maxBufferSize: MAX_LINE_BYTES });
  #child: ChildProcess | null = null;
  #stderr = Buffer.alloc(0);
  #stderrCut = false;
  #exit: string | null = null;
  #exited: Promise<void> = Promise.resolve();

  constructor(launch: StdioLaunch) {
    this.#launch = launch;
  }

  /** The last bytes the server wrote to stderr, as text. */
  get stderrTail(): string {
    const text = this.#stderr.toString('utf8');
    // Once the buffer dropped its start, its first line is a fragment: dropped whole, so that no part of a
    // secret cut by the boundary (which redaction could not recognise) is ever shown.
    if (!this.#stderrCut) return text;
    const nl = text.indexOf('\n');
    return nl < 0 ? '' : text.slice(nl + 1);
  }

  /** How the process ended ("exit 1", "signal SIGKILL", or the spawn error's code), or null while it runs. */
  get exit(): string | null {
    return this.#exit;
  }

  start(): Promise<void> {
    const [program, ...args] = this.#launch.argv;
    return new Promise((resolve, reject) => {
      const child = spawn(program!, args, {
        cwd: this.#launch.cwd,
        env: this.#launch.env,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        windowsHide: true,
      });
      this.#child = child;
      this.#exited = new Promise((done) => child.once('close', () => done()));
      child.once('error', (err: NodeJS.ErrnoException) => {
        this.#exit ??= `could not start (${err.code ?? err.message})`;
        reject(err);
        this.onerror?.(err);
      });
      child.once('spawn', () => resolve());
      child.once('exit', (code, signal) => {
        this.#exit ??= signal ? `signal ${signal}` : `exit ${code}`;
      });
      child.once('close', () => {
        this.#child = null;
        this.onclose?.();
      });
      child.stdin?.on('error', (err) => this.onerror?.(err));
      child.stdout?.on('data', (chunk: Buffer) => this.#read(chunk));
      child.stderr?.on('data', (chunk: Buffer) => {
        const all = Buffer.concat([this.#stderr, chunk]);
        if (all.length > STDERR_TAIL_BYTES) this.#stderrCut = true;
        this.#stderr = all.length > STDERR_TAIL_BYTES ? all.subarray(all.length - STDERR_TAIL_BYTES) : all;
      });
    });
  }

  #read(chunk: Buffer): void {
    try {
      this.#buffer.append(chunk);
    } catch (err) {
      this.onerror?.(err as Error);
      void this.close();
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.#buffer.readMessage();
      } catch (err) {
        // A line that is not JSON-RPC (a server that logs to stdout): reported, and the next line read.
        this.onerror?.(err as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (!stdin?.writable) return Promise.reject(new Error('the MCP server is not running'));
    return new Promise((resolve, reject) => {
      stdin.write(serializeMessage(message), (err) => (err ? reject(err) : resolve()));
    });
  }

  /** Ends the server: stdin closed, then SIGTERM to its group, then SIGKILL after a grace period. */
  async close(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    child.stdin?.end();
    this.#signal(child, 'SIGTERM');
    const grace = new Promise<void>((done) => {
      const timer = setTimeout(done, KILL_GRACE_MS);
      timer.unref();
      void this.#exited.then(() => clearTimeout(timer));
    });
    await Promise.race([this.#exited, grace]);
    // Whatever is left of the group goes, leader or not; pipes a process outside the group still holds are cut.
    this.#signal(child, 'SIGKILL');
    child.stdout?.destroy();
    child.stderr?.destroy();
    await this.#exited;
    this.#buffer.clear();
  }

  #signal(child: ChildProcess, signal: NodeJS.Signals): void {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // ESRCH: the group is gone already.
    }
  }
}
