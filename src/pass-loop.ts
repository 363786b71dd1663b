/**
 * A background worker's loop: one pass at a time, the next one after the wait the pass asks for, or at once
 * when something kicked the loop meanwhile. Passes never overlap: a kick during a pass runs one more pass
 * right after it, however many kicks came. The reactions to the event log (src/reactions/), the outbox
 * workers (notifications, plan deliveries), the deadline sweeps and the cron scheduler run on it.
 */
export class PassLoop {
  /** Cancels the waiting timer; null when none waits. */
  private cancelTimer: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopping = true;
  /** When the waiting timer fires (ms since the epoch); Infinity when none waits. */
  private dueAt = Number.POSITIVE_INFINITY;
  /** The soonest `wakeIn` asked for during a pass (ms from the pass's end). */
  private soonest = Number.POSITIVE_INFINITY;
  /** From the call of a pass to its end (set before the call: a pass may call wakeIn before its first await). */
  private passing = false;

  constructor(
    private readonly opts: {
      /** One pass; returns how long to wait (ms) before the next one unless kicked. Must not throw. */
      pass: () => Promise<number>;
      /** Whether a waiting timer keeps the process alive (default: it does). Without `clock` only. */
      unref?: boolean;
      /** Whose time the waits run on (default: the wall clock's timers); clock.ts's Clock fits. */
      clock?: { now(): number; setTimer(fn: () => void, ms: number): () => void };
    },
  ) {}

  /** Before start and from stop on. */
  get stopped(): boolean {
    return this.stopping;
  }

  start(): void {
    this.stopping = false;
    this.kick();
  }

  /** Runs a pass now, or right after the one in progress. Nothing once stopped. */
  kick(): void {
    if (this.stopping) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    // A pass already due (the timer of an earlier kick, not run yet) is not put off: under a stream of kicks
    // less than a timer's minimum delay apart, re-arming it on each would keep it from ever running.
    if (this.dueAt <= this.now()) return;
    this.schedule(0);
  }

  /**
   * Runs a pass within `ms` at the latest: sooner than the wait the last pass asked for (work a pass started
   * and did not wait for fell due for a retry). Nothing once stopped.
   */
  wakeIn(ms: number): void {
    if (this.stopping) return;
    if (this.passing) {
      this.soonest = Math.min(this.soonest, ms);
      return;
    }
    if (this.now() + ms < this.dueAt) this.schedule(ms);
  }

  /**
   * No pass starts any more; waits for the one in progress, at most `graceMs` when given (the pass goes on,
   * unawaited, after that).
   */
  async stop(graceMs?: number): Promise<void> {
    this.stopping = true;
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.dueAt = Number.POSITIVE_INFINITY;
    if (graceMs === undefined) {
      await this.running;
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.running, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
  }

  private schedule(ms: number): void {
    this.cancelTimer?.();
    this.dueAt = this.now() + ms;
    this.cancelTimer = this.setTimer(() => {
      this.cancelTimer = null;
      this.dueAt = Number.POSITIVE_INFINITY;
      this.passing = true;
      this.running = this.opts.pass().then((wait) => {
        this.running = null;
        this.passing = false;
        if (this.stopping) return;
        const next = this.again ? 0 : Math.min(wait, this.soonest);
        this.again = false;
        this.soonest = Number.POSITIVE_INFINITY;
        this.schedule(next);
      });
    }, ms);
  }

  private now(): number {
    return this.opts.clock ? this.opts.clock.now() : Date.now();
  }

  private setTimer(fn: () => void, ms: number): () => void {
    if (this.opts.clock) return this.opts.clock.setTimer(fn, ms);
    const timer = setTimeout(fn, ms);
    if (this.opts.unref) timer.unref();
    return () => clearTimeout(timer);
  }
}
