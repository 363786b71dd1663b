import type { Logger } from '../logger.js';
import type { Store } from '../store/store.js';
import type { Delivery } from '../store/types.js';

export interface InboxOptions {
  store: Store;
  logger: Logger;
  /** Routes one queued delivery and settles it; a throw leaves it to the inbox to mark failed. */
  process: (delivery: Delivery, payload: string) => Promise<void>;
  /** Settles a delivery whose processing threw: it keeps its payload, so a redelivery processes it again. */
  fail: (delivery: Delivery, err: unknown) => Promise<void>;
  /** Deliveries read from the store at a time. */
  batch?: number;
  /**
   * Whether webhooks are being answered right now. Answering comes first: while it is true the inbox takes
   * one delivery every `busyPauseMs`, so a burst is answered at full speed and the inbox still moves; when
   * it is false the inbox takes one delivery a turn of the event loop, at full speed when nothing else runs.
   */
  busy?: () => boolean;
  busyPauseMs?: number;
  /**
   * How long a claim on a delivery holds (default 60 s). A delivery is claimed before it is processed, so
   * daemons sharing the store never both process it; one left claimed by a process that died waits this
   * long, then any inbox takes it.
   */
  claimMs?: number;
  now?: () => number;
}

/**
 * The webhook inbox. A delivery is answered as soon as it is recorded `queued`, with its verified body; this
 * worker then processes the queued deliveries one at a time in arrival order, giving way to webhooks being
 * answered (see `busy`), so a burst is answered at once while the work behind it proceeds. The store is the
 * queue: what a stopped or crashed process left queued is processed at the next start.
 */
export class DeliveryInbox {
  private readonly batch: number;
  private readonly busyPauseMs: number;
  private readonly claimMs: number;
  private readonly now: () => number;
  /** Wakes the worker when a claim someone else left runs out. */
  private expiry: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  /** Set by notify(); cleared when the worker looks at the store again. */
  private dirty = false;
  private stopped = false;
  private deadline = Number.POSITIVE_INFINITY;
  private retry: NodeJS.Timeout | null = null;

  constructor(private readonly opts: InboxOptions) {
    this.batch = opts.batch ?? 64;
    this.busyPauseMs = opts.busyPauseMs ?? 10;
    this.claimMs = opts.claimMs ?? 60_000;
    this.now = opts.now ?? Date.now;
  }

  /** Something was queued (or the daemon started): make sure the worker runs. */
  notify(): void {
    this.dirty = true;
    if (this.running || this.stopped || this.retry) return;
    this.running = this.work().finally(() => {
      this.running = null;
    });
  }

  /**
   * Stops taking work. The worker goes on with what is queued until `graceMs` have passed, then stops
   * between two deliveries; the rest stays queued for the next start.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    this.deadline = performance.now() + graceMs;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    if (this.expiry) clearTimeout(this.expiry);
    this.expiry = null;
    await this.running;
  }

  private async work(): Promise<void> {
    while (true) {
      this.dirty = false;
      let items: { delivery: Delivery; payload: string }[];
      try {
        items = await this.opts.store.queuedDeliveries(this.batch, this.now());
      } catch (err) {
        this.later(err);
        return;
      }
      if (!items.length) {
        if (this.dirty) continue;
        await this.watchClaims();
        return;
      }
      for (const { delivery, payload } of items) {
        if (performance.now() > this.deadline) return;
        try {
          const now = this.now();
          // Another daemon on the same store may have taken it meanwhile.
          if (!(await this.opts.store.claimDelivery(delivery.id, now + this.claimMs, now))) continue;
          await this.opts.process(delivery, payload);
        } catch (err) {
          this.opts.logger.error(
            { err, delivery_id: delivery.id, event: delivery.event },
            'webhook delivery processing failed',
          );
          try {
            await this.opts.fail(delivery, err);
          } catch (failErr) {
            // The store refuses writes: try again in a while rather than spin on the same delivery.
            this.later(failErr);
            return;
          }
        }
        // Let the event loop take the I/O that is ready (webhooks to answer) before the next one.
        if (this.opts.busy?.()) await new Promise<void>((resolve) => setTimeout(resolve, this.busyPauseMs));
        else await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  }

  /** With nothing to do: if a delivery waits on someone else's claim, look again when the claim runs out. */
  private async watchClaims(): Promise<void> {
    if (this.stopped || this.expiry) return;
    let at: number | null;
    try {
      at = await this.opts.store.nextClaimExpiry(this.now());
    } catch {
      return;
    }
    if (at === null) return;
    this.expiry = setTimeout(
      () => {
        this.expiry = null;
        this.notify();
      },
      Math.max(0, at - this.now()) + 5,
    );
    this.expiry.unref();
  }

  private later(err: unknown): void {
    this.opts.logger.error({ err }, 'webhook inbox: the store failed; retrying in 1 s');
    if (this.stopped) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.notify();
    }, 1_000);
    this.retry.unref();
  }
}
