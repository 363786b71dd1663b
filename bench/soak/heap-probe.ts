import { appendFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';

// Opt-in (`--heap`): preloaded into the daemon with `node --expose-gc --import <this file>`. Every
// SOAK_HEAP_EVERY_MS it forces a full garbage collection and appends one JSON line to SOAK_HEAP_FILE: the live
// heap after that collection, external memory and RSS. The live heap after a full GC is what a leak grows;
// RSS also carries heap the collector has not returned yet. The timer is unref'd: it never keeps the daemon up.

const file = process.env.SOAK_HEAP_FILE;
const every = Number(process.env.SOAK_HEAP_EVERY_MS ?? 30_000);
const gc = (globalThis as { gc?: () => void }).gc;

if (file) {
  const t0 = Date.now();
  setInterval(() => {
    gc?.();
    const m = process.memoryUsage();
    const h = getHeapStatistics();
    appendFileSync(
      file,
      `${JSON.stringify({
        at: Date.now(),
        pid: process.pid,
        uptimeMs: Date.now() - t0,
        gc: gc !== undefined,
        heapUsed: h.used_heap_size,
        heapTotal: h.total_heap_size,
        external: m.external,
        arrayBuffers: m.arrayBuffers,
        rss: m.rss,
      })}\n`,
    );
  }, every).unref();
}
