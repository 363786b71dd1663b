import { afterEach, describe, expect, it } from 'vitest';
import { PassLoop } from '../src/pass-loop.js';
import { FakeClock } from './support/fake-clock.js';

// The background workers' loop, on real timers with short waits.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A loop whose passes are recorded and can be held open until released. */
function recorder(wait = 60_000) {
  const log: string[] = [];
  let active = 0;
  let release: (() => void) | null = null;
  let hold = false;
  const loop = new PassLoop({
    pass: async () => {
      active += 1;
      log.push(active > 1 ? 'overlap' : 'pass');
      if (hold) await new Promise<void>((resolve) => (release = resolve));
      active -= 1;
      return wait;
    },
  });
  return {
    loop,
    log,
    hold: () => (hold = true),
    release: () => {
      hold = false;
      release?.();
    },
  };
}

let stop: (() => Promise<void>) | null = null;
afterEach(async () => {
  await stop?.();
});

describe('PassLoop', () => {
  it('runs a pass on start, then waits as long as the pass asked', async () => {
    const r = recorder(60_000);
    stop = () => r.loop.stop();
    r.loop.start();
    await sleep(30);
    expect(r.log).toEqual(['pass']);
    await sleep(50);
    expect(r.log).toEqual(['pass']);
  });

  it('runs again after the wait the pass returned', async () => {
    const r = recorder(20);
    stop = () => r.loop.stop();
    r.loop.start();
    await sleep(150);
    expect(r.log.length).toBeGreaterThanOrEqual(3);
    expect(r.log).not.toContain('overlap');
  });

  it('a stream of kicks does not put off the pass they asked for', async () => {
    const clock = new FakeClock(0);
    let passes = 0;
    const loop = new PassLoop({
      pass: async () => {
        passes += 1;
        return 60_000;
      },
      // As Node's timers: none fires sooner than a millisecond after it was set.
      clock: { now: () => clock.now(), setTimer: (fn, ms) => clock.setTimer(fn, Math.max(1, ms)) },
    });
    stop = () => loop.stop();
    loop.start();
    clock.advance(1);
    await new Promise((resolve) => setImmediate(resolve)); // the start's pass ended: the loop waits 60 s
    expect(passes).toBe(1);
    // Kicks 0.9 ms apart, the event loop too busy in between to run a timer.
    for (let t = 1; t < 11; t += 0.9) {
      clock.set(t);
      loop.kick();
    }
    clock.advance(0);
    expect(passes).toBe(2);
  });

  it('folds kicks during a pass into one more pass right after it, never overlapping', async () => {
    const r = recorder(60_000);
    stop = () => r.loop.stop();
    r.hold();
    r.loop.start();
    await sleep(20);
    r.loop.kick();
    r.loop.kick();
    r.loop.kick();
    await sleep(20);
    expect(r.log).toEqual(['pass']);
    r.release();
    await sleep(30);
    expect(r.log).toEqual(['pass', 'pass']);
    await sleep(30);
    expect(r.log).toEqual(['pass', 'pass']);
  });

  it('a kick while waiting runs a pass at once', async () => {
    const r = recorder(60_000);
    stop = () => r.loop.stop();
    r.loop.start();
    await sleep(20);
    r.loop.kick();
    await sleep(20);
    expect(r.log).toEqual(['pass', 'pass']);
  });

  it('stop waits for the pass in progress, and nothing runs after it', async () => {
    const r = recorder(0);
    r.hold();
    r.loop.start();
    await sleep(20);
    let stopped = false;
    const stopping = r.loop.stop().then(() => (stopped = true));
    await sleep(20);
    expect(stopped).toBe(false);
    r.release();
    await stopping;
    const passes = r.log.length;
    r.loop.kick();
    await sleep(30);
    expect(r.log.length).toBe(passes);
  });

  it('stop with a grace gives up waiting after it', async () => {
    const r = recorder();
    stop = async () => r.release();
    r.hold();
    r.loop.start();
    await sleep(20);
    const started = Date.now();
    await r.loop.stop(50);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(r.log).toEqual(['pass']);
  });

  it('wakeIn brings the next pass forward from a long wait, also when asked during a pass', async () => {
    let passes = 0;
    let onPass: (() => void) | null = null;
    const next = () => new Promise<void>((resolve) => (onPass = resolve));
    let during: (() => void) | null = null;
    const loop = new PassLoop({
      pass: async () => {
        passes += 1;
        during?.();
        during = null;
        onPass?.();
        return 60_000;
      },
    });
    stop = () => loop.stop();
    let first = next();
    loop.start();
    await first;
    first = next();
    loop.wakeIn(0);
    await first;
    expect(passes).toBe(2);
    // Asked during the third pass: the fourth follows it instead of the pass's 60 s.
    during = () => loop.wakeIn(0);
    first = next();
    loop.kick();
    await first;
    first = next();
    await first;
    expect(passes).toBe(4);
    await loop.stop();
    loop.wakeIn(0);
    expect(passes).toBe(4);
  });
});
