// What every benchmark child needs: its parameters, a way to report, and a way to receive an order. Shared
// by the benchmarks; each one's protocol.ts defines the messages.

/** What a child reports over IPC: each benchmark's protocol.ts defines its own union. */
type ChildMessage = { type: string };

export function childParams<T>(): T {
  const raw = process.argv[2];
  if (!raw || !process.send) throw new Error("bench child: run me through its benchmark's run.js");
  return JSON.parse(raw) as T;
}

export function report(message: ChildMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    process.send!(message, undefined, {}, (err) => (err ? reject(err) : resolve()));
  });
}

/** Calls `handle` for every message from the parent, one at a time, in order. */
export function onOrders<T extends { type: string }>(handle: (order: T) => Promise<void>): void {
  let chain = Promise.resolve();
  process.on('message', (order: T) => {
    chain = chain.then(() => handle(order)).catch(fail);
  });
}

/** Report, then leave without waiting for anything the measured system still holds open. */
export async function finish(message: ChildMessage): Promise<never> {
  await report(message);
  process.exit(0);
}

export function fail(err: unknown): never {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}

export function cpuMs(since?: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
}

/** Peak resident set size of this process so far, in bytes (resourceUsage reports kilobytes). */
export function maxRssBytes(): number {
  return process.resourceUsage().maxRSS * 1024;
}
