import { describe, expect, it } from 'vitest';
import { PlansVersion } from '../../src/store/postgres/versions.js';

// The plans version kept between reads (src/store/postgres/versions.ts), with a listener and a clock of the
// test's own: kept while the listener listens and nothing is heard, read again otherwise.

class FakeListener {
  listening = true;
  readonly heard: ((payload: string) => void)[] = [];
  onWake(_channel: string, fn: (payload: string) => void): () => void {
    this.heard.push(fn);
    return () => {};
  }
  notify(): void {
    for (const fn of this.heard) fn('');
  }
}

function setup(maxAgeMs = 1_000) {
  const listener = new FakeListener();
  let now = 1_000;
  let stored = 1;
  let reads = 0;
  let gate: Promise<void> | null = null;
  const version = new PlansVersion(
    async () => {
      reads += 1;
      const v = stored;
      if (gate) await gate;
      return v;
    },
    listener,
    () => now,
    maxAgeMs,
  );
  return {
    version,
    listener,
    reads: () => reads,
    store: (v: number) => {
      stored = v;
    },
    advance: (ms: number) => {
      now += ms;
    },
    hold: () => {
      let open!: () => void;
      gate = new Promise((r) => {
        open = r;
      });
      return () => {
        gate = null;
        open();
      };
    },
  };
}

describe('PlansVersion', () => {
  it('reads once while listening and nothing is heard, and again when a change is heard', async () => {
    const t = setup();
    expect(await t.version.get()).toBe(1);
    expect(await t.version.get()).toBe(1);
    expect(t.reads()).toBe(1);
    t.store(2);
    t.listener.notify();
    expect(await t.version.get()).toBe(2);
    expect(t.reads()).toBe(2);
  });

  it("reads again after this process's own write (changed) without waiting to hear it", async () => {
    const t = setup();
    await t.version.get();
    t.store(2);
    t.version.changed();
    expect(await t.version.get()).toBe(2);
  });

  it('keeps nothing while the listener is not listening', async () => {
    const t = setup();
    t.listener.listening = false;
    await t.version.get();
    await t.version.get();
    expect(t.reads()).toBe(2);
  });

  it('reads again once the version is maxAgeMs old on its clock, heard of or not', async () => {
    const t = setup(1_000);
    await t.version.get();
    t.advance(999);
    await t.version.get();
    expect(t.reads()).toBe(1);
    t.advance(1);
    t.store(5);
    expect(await t.version.get()).toBe(5);
    expect(t.reads()).toBe(2);
  });

  it('does not keep a read a change was heard during, and shares a read among the calls made meanwhile', async () => {
    const t = setup();
    const open = t.hold();
    const first = t.version.get();
    const second = t.version.get();
    t.store(2);
    t.listener.notify();
    open();
    expect(await first).toBe(1);
    expect(await second).toBe(1);
    expect(t.reads()).toBe(1);
    expect(await t.version.get()).toBe(2);
    expect(t.reads()).toBe(2);
  });
});
