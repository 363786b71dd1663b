import type { ChildMessage } from './protocol.js';

// What every child needs: its parameters, a way to report, and a way to wait for a wall-clock instant.

export function childParams<T>(): T {
  const raw = process.argv[2];
  if (!raw || !process.send) throw new Error('bench child: run me through bench/scheduler/run.js');
  return JSON.parse(raw) as T;
}

export function report(message: ChildMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    process.send!(message, undefined, {}, (err) => (err ? reject(err) : resolve()));
  });
}

export function receive<T extends { type: string }>(type: T['type']): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (message: T) => {
      if (message?.type !== type) return;
      process.off('message', onMessage);
      resolve(message);
    };
    process.on('message', onMessage);
  });
}

/** One timer that wakes at `at` (ms since the epoch), or right away if that has passed. */
export function sleepUntil(at: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
}

/** Report, then leave without waiting for timers the measured system still holds. */
export async function finish(message: ChildMessage): Promise<never> {
  await report(message);
  process.exit(0);
}

export function fail(err: unknown): never {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}

export function cpuMs(usage: NodeJS.CpuUsage): { userMs: number; systemMs: number } {
  return { userMs: usage.user / 1000, systemMs: usage.system / 1000 };
}

/** Peak resident set size of this process so far, in bytes (resourceUsage reports kilobytes). */
export function maxRssBytes(): number {
  return process.resourceUsage().maxRSS * 1024;
}
