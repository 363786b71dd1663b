/**
 * A background worker's loop: one pass at a time, the next one after the wait the pass asks for, or at once
 * when something kicked the loop meanwhile. Passes never overlap: a kick during a pass runs one more pass
 * right after it, however many kicks came. The outbox workers (notifications, plan deliveries) run on it.
 */
export class PassLoop {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopping = true;

  constructor(
    private readonly opts: {
      /** One pass; returns how long to wait (ms) before the next one unless kicked. Must not throw. */
      pass: () => Promise<number>;
      /** Whether a waiting timer keeps the process alive (default: it does). */
      unref?: boolean;
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
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  /**
   * No pass starts any more; waits for the one in progress, at most `graceMs` when given (the pass goes on,
   * unawaited, after that).
   */
  async stop(graceMs?: number): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (graceMs === undefined) {
      await this.running;
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.running, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.opts.pass().then((wait) => {
        this.running = null;
        if (this.stopping) return;
        const next = this.again ? 0 : wait;
        this.again = false;
        this.schedule(next);
      });
    }, ms);
    if (this.opts.unref) this.timer.unref();
  }
}
