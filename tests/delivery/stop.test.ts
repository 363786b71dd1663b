import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { defaultConfig } from '../../src/config/load.js';
import { PlanDeliveryWorker } from '../../src/delivery/worker.js';
import { createLogger } from '../../src/logger.js';
import type { RunEvents } from '../../src/runs/events.js';
import { waitFor } from '../support/daemon.js';

// The delivery worker's pass when the daemon stops: stop() waits for a pass in progress only up to its
// grace, then the store closes. A pass cut off that way is not a failed pass (every step it completed was
// recorded; a claim it held lapses), and it must not be logged as one. A pass failing while the worker runs
// still is.

const CLOSED = 'Cannot use a pool after calling end on the pool';

/** A store whose first read of undecided plans waits for `release`, then fails as a closed pool does. */
function storeFailing(opts: { wait: boolean }) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let calls = 0;
  const store = {
    async releasePlanDeliveryClaims() {
      return 0;
    },
    async listUndecidedPlanDeliveries() {
      calls++;
      if (opts.wait) await released;
      throw new Error(CLOSED);
    },
    async duePlanDeliveries() {
      return [];
    },
    async nextPlanDeliveryAt() {
      return null;
    },
  };
  return { store, release, calls: () => calls };
}

function worker(store: object) {
  const lines: { level: number; msg: string }[] = [];
  const logger = createLogger('debug', { write: (line: string) => void lines.push(JSON.parse(line)) });
  const w = new PlanDeliveryWorker({
    store: store as never,
    clock: systemClock,
    config: defaultConfig(),
    logger,
    events: {} as RunEvents,
    github: null,
    githubAuth: null,
    pageUrl: (id) => `http://127.0.0.1/plans/${id}`,
    holder: 'r-test',
  });
  return { w, lines };
}

describe('the delivery worker at stop', () => {
  it('does not report a pass cut off by stop (the store closed under it) as a failure', async () => {
    const s = storeFailing({ wait: true });
    const { w, lines } = worker(s.store);
    w.start();
    await waitFor(async () => s.calls() > 0 || undefined, 5_000, 'the pass to start');
    await w.stop(20); // the grace runs out while the pass still waits on the store
    s.release(); // the store "closes": the pass's read fails
    await waitFor(
      async () => lines.some((l) => l.msg === 'delivery pass cut off by stop') || undefined,
      5_000,
      'the debug line',
    );
    expect(lines.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual([]);
  });

  it('reports a pass that fails while the worker runs', async () => {
    const s = storeFailing({ wait: false });
    const { w, lines } = worker(s.store);
    w.start();
    const warned = await waitFor(
      async () => lines.find((l) => l.level === 40 && l.msg === 'delivery pass failed'),
      5_000,
      'the warning',
    );
    await w.stop(1_000);
    expect(JSON.stringify(warned)).toContain(CLOSED);
  });
});
