import { createHarness, type Harness } from './harness.js';

// The cron loop on its own timer over the harness's fake clock: what the tests of which slots fire, and when,
// share.

/** A harness whose jitter is off: a slot fires at its minute, not somewhere in its window. */
export function unjitteredHarness(): Promise<Harness> {
  return createHarness({
    patch: (c) => {
      c.scheduler.jitter.enabled = false;
    },
  });
}

/** Lets the loop's async work (store calls, awaits) run after a timer fired. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

/**
 * Moves the fake clock on to `until` in 30 s steps (the longest the loop's timer waits), letting the loop's
 * work run after each step and once more at the end: the timer alone fires what falls due on the way.
 */
export async function advanceByTimer(h: Harness, until: number): Promise<void> {
  while (h.clock.now() < until) {
    h.clock.advance(30_000);
    await settle();
  }
  await settle();
}
