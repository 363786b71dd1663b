import type { Clock } from '../../src/clock.js';

/** A clock that moves only when told. Timers fire, in due order, as `advance` passes their time. */
export class FakeClock implements Clock {
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private seq = 0;

  constructor(private t: number) {}

  now(): number {
    return this.t;
  }

  setTimer(fn: () => void, ms: number): () => void {
    const id = ++this.seq;
    this.timers.push({ at: this.t + Math.max(0, ms), fn, id });
    return () => {
      this.timers = this.timers.filter((x) => x.id !== id);
    };
  }

  /** Moves time forward by `ms`, firing timers that fall due on the way. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.timers[0];
      if (!next || next.at > end) break;
      this.timers.shift();
      this.t = Math.max(this.t, next.at);
      next.fn();
    }
    this.t = end;
  }

  set(t: number): void {
    this.t = t;
  }

  get pendingTimers(): number {
    return this.timers.length;
  }
}
