import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { call } from './http.js';
import { sleep } from './stats.js';

// The daemon as a user runs it: `node dist/src/cli/main.js serve` in a child process, configured by
// environment variables and a config file, on a fixed port so every restart keeps the URL. Its standard
// output and error go straight to a log file. Its resident set size is read from /proc/<pid>/status.

export interface RssSample {
  /** ms since the soak's time origin. */
  at: number;
  bytes: number;
}

export interface Lifetime {
  index: number;
  pid: number;
  spawnedAt: number;
  readyAt: number;
  endedAt: number | null;
  /** How it ended: the signal we sent, or 'unexpected' when it exited on its own. */
  end: 'SIGKILL' | 'SIGTERM' | 'unexpected' | null;
  exitCode: number | null;
  exitSignal: NodeJS.Signals | null;
  samples: RssSample[];
}

export interface DaemonOptions {
  cli: string;
  url: string;
  env: NodeJS.ProcessEnv;
  logFile: string;
  nodeArgs: string[];
  /** The soak's time origin (Date.now() at its start). */
  origin: number;
  sampleEveryMs: number;
}

export function readRss(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

export class Daemon {
  readonly lifetimes: Lifetime[] = [];
  private child: ChildProcess | null = null;
  private current: Lifetime | null = null;
  private exited: Promise<void> = Promise.resolve();
  private sampler: NodeJS.Timeout | null = null;
  private expectedExit = false;

  constructor(private readonly o: DaemonOptions) {}

  get up(): boolean {
    return this.child !== null;
  }

  get unexpectedExits(): number {
    return this.lifetimes.filter((l) => l.end === 'unexpected').length;
  }

  /** Spawns the daemon and waits until /readyz answers 200. */
  async start(timeoutMs = 60_000): Promise<Lifetime> {
    if (this.child) throw new Error('daemon already running');
    const fd = openSync(this.o.logFile, 'a');
    const child = spawn(process.execPath, [...this.o.nodeArgs, this.o.cli, 'serve'], {
      env: this.o.env,
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    const spawnedAt = Date.now() - this.o.origin;
    const life: Lifetime = {
      index: this.lifetimes.length + 1,
      pid: child.pid ?? -1,
      spawnedAt,
      readyAt: Number.NaN,
      endedAt: null,
      end: null,
      exitCode: null,
      exitSignal: null,
      samples: [],
    };
    this.lifetimes.push(life);
    this.child = child;
    this.current = life;
    this.expectedExit = false;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        life.endedAt = Date.now() - this.o.origin;
        life.exitCode = code;
        life.exitSignal = signal;
        if (!this.expectedExit) life.end = 'unexpected';
        if (this.child === child) {
          this.child = null;
          this.current = null;
        }
        resolve();
      });
    });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.child)
        throw new Error(`daemon exited during start (code ${life.exitCode}); see ${this.o.logFile}`);
      const r = await call(this.o.url, 'GET', '/readyz', { timeoutMs: 2_000 });
      if (r.ok && r.status === 200) break;
      if (Date.now() > deadline)
        throw new Error(`daemon not ready after ${timeoutMs} ms; see ${this.o.logFile}`);
      await sleep(100);
    }
    life.readyAt = Date.now() - this.o.origin;
    this.sample();
    this.sampler ??= setInterval(() => this.sample(), this.o.sampleEveryMs);
    return life;
  }

  /** One RSS reading of the running daemon, into its lifetime's samples. */
  sample(): void {
    const life = this.current;
    if (!life || !this.child) return;
    const bytes = readRss(life.pid);
    if (bytes !== null) life.samples.push({ at: Date.now() - this.o.origin, bytes });
  }

  /** Sends `signal` and waits for the exit. The last RSS reading is taken just before. */
  async stop(signal: 'SIGKILL' | 'SIGTERM', timeoutMs = 60_000): Promise<Lifetime> {
    const life = this.current;
    const child = this.child;
    if (!life || !child) throw new Error('daemon is not running');
    this.sample();
    this.expectedExit = true;
    life.end = signal;
    child.kill(signal);
    const timedOut = await Promise.race([this.exited.then(() => false), sleep(timeoutMs).then(() => true)]);
    if (timedOut) {
      child.kill('SIGKILL');
      await this.exited;
    }
    return life;
  }

  /** Freezes (SIGSTOP) or thaws (SIGCONT) the running daemon: a replica that stops answering without dying. */
  freeze(signal: 'SIGSTOP' | 'SIGCONT'): void {
    if (!this.child) throw new Error('daemon is not running');
    this.child.kill(signal);
  }

  /** The pid of the running daemon, or null. */
  get pid(): number | null {
    return this.child ? (this.current?.pid ?? null) : null;
  }

  close(): void {
    if (this.sampler) clearInterval(this.sampler);
    this.sampler = null;
    if (this.child) {
      this.expectedExit = true;
      this.child.kill('SIGKILL');
    }
  }
}
