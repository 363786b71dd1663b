import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** What a benchmark child reports over IPC: each benchmark's protocol.ts defines its own union. */
type ChildMessage = { type: string };

/**
 * One part of a benchmark in its own process: `node <execArgv> <script> <params as JSON>`, reporting over
 * IPC. Messages are buffered, so a message that arrives before anyone waits for it is not lost. Shared by
 * the benchmarks; each passes the URL of its own child script.
 */
export class Child {
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly proc: ChildProcess;
  private readonly inbox: ChildMessage[] = [];
  private readonly waiters: {
    types: readonly string[];
    resolve: (m: ChildMessage) => void;
    reject: (e: Error) => void;
  }[] = [];
  private exitReason: string | null = null;

  constructor(
    readonly name: string,
    script: URL,
    params: object,
    execArgv: readonly string[] = [],
  ) {
    const path = fileURLToPath(script);
    this.proc = spawn(process.execPath, [...execArgv, path, JSON.stringify(params)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.proc.on('message', (message: ChildMessage) => {
      const i = this.waiters.findIndex((w) => w.types.includes(message.type));
      if (i < 0) {
        this.inbox.push(message);
        return;
      }
      this.waiters.splice(i, 1)[0]!.resolve(message);
    });
    this.exited = new Promise((resolve) => {
      this.proc.on('exit', (code, signal) => {
        this.exitReason = signal ? `killed by ${signal}` : `exited with code ${code}`;
        for (const w of this.waiters.splice(0)) {
          w.reject(new Error(`${this.name} ${this.exitReason} before sending ${w.types.join(' or ')}`));
        }
        resolve({ code, signal });
      });
    });
  }

  /** The next message of one of these types. */
  next<T extends ChildMessage>(...types: T['type'][]): Promise<T> {
    const i = this.inbox.findIndex((m) => types.includes(m.type));
    if (i >= 0) return Promise.resolve(this.inbox.splice(i, 1)[0] as T);
    if (this.exitReason) {
      return Promise.reject(
        new Error(`${this.name} ${this.exitReason} before sending ${types.join(' or ')}`),
      );
    }
    return new Promise((resolve, reject) => {
      this.waiters.push({ types, resolve: (m) => resolve(m as T), reject });
    });
  }

  send(message: object): void {
    if (this.exitReason === null) this.proc.send(message);
  }

  kill(): void {
    if (this.exitReason === null) this.proc.kill();
  }
}

export type Settled<T> = { ok: true; value: T } | { ok: false; error: Error };

export function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error: error instanceof Error ? error : new Error(String(error)) }),
  );
}
