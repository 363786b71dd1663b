import type { WebhookDelivery } from '../domain/types.js';
import type { Logger } from '../logger.js';
import { StoreUnavailableError, type TriggerStore } from '../store/store.js';

const MAX_ATTEMPTS = 3;

export interface InboxOptions {
  store: TriggerStore;
  logger: Logger;
  /** Routes one claimed delivery and settles it; a throw leaves it to the inbox (tried again, then failed). */
  process: (delivery: WebhookDelivery, payload: string) => Promise<void>;
  /** Settles a delivery whose processing threw: it keeps its payload, so a redelivery processes it again. */
  fail: (delivery: WebhookDelivery, err: unknown) => Promise<void>;
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
export class WebhookInbox {
  private readonly batch: number;
  private readonly busyPauseMs: number;
  private readonly claimMs: number;
  private readonly now: () => number;
  /** Wakes the worker when a claim someone else left runs out. */
  private expiry: NodeJS.Timeout | null = null;
  /** Delivery id -> failed attempts so far (this process). */
  private readonly attempts = new Map<string, number>();
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
    // A delivery still in progress at the deadline (a run slow to honour its cancel) is not waited for:
    // it stays claimed and queued, and is processed again once its claim runs out.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.running,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs + 100);
      }),
    ]);
    clearTimeout(timer);
  }

  private async work(): Promise<void> {
    const { store } = this.opts;
    while (true) {
      this.dirty = false;
      let items: WebhookDelivery[];
      try {
        items = await store.queuedWebhookDeliveries(this.batch, this.now());
      } catch (err) {
        this.later(err);
        return;
      }
      if (!items.length) {
        if (this.dirty) continue;
        await this.watchClaims();
        return;
      }
      for (const delivery of items) {
        if (performance.now() > this.deadline) return;
        const now = this.now();
        let payload: string | null;
        try {
          // Another daemon on the same store may have taken it meanwhile: then it is theirs.
          payload = await store.claimWebhookDelivery(delivery.id, now + this.claimMs, now);
        } catch (err) {
          this.later(err);
          return;
        }
        if (payload === null) continue;
        try {
          await this.opts.process(delivery, payload);
          this.attempts.delete(delivery.id);
        } catch (err) {
          if (!(await this.failed(delivery, err))) return;
        }
        // Let the event loop take the I/O that is ready (webhooks to answer) before the next one.
        if (this.opts.busy?.()) await new Promise<void>((resolve) => setTimeout(resolve, this.busyPauseMs));
        else await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  }

  /**
   * Processing threw: the delivery is tried again twice, 2 s and then 4 s later (its claim is shortened to
   * that), as a busy or briefly failing store should not lose it; then it is marked failed. False when the
   * store refuses even that (the worker backs off).
   */
  private async failed(delivery: WebhookDelivery, err: unknown): Promise<boolean> {
    const attempt = (this.attempts.get(delivery.id) ?? 0) + 1;
    this.opts.logger.error(
      { err, delivery_id: delivery.id, event: delivery.event, attempt },
      attempt < MAX_ATTEMPTS
        ? 'webhook delivery processing failed; trying it again'
        : 'webhook delivery processing failed',
    );
    try {
      if (attempt < MAX_ATTEMPTS) {
        this.attempts.set(delivery.id, attempt);
        await this.opts.store.updateWebhookDelivery(delivery.id, {
          claimedUntil: this.now() + 2_000 * attempt,
        });
      } else {
        this.attempts.delete(delivery.id);
        await this.opts.fail(delivery, err);
      }
      return true;
    } catch (storeErr) {
      // The store refuses writes: try again in a while rather than spin on the same delivery.
      this.later(storeErr);
      return false;
    }
  }

  /** With nothing to do: if a delivery waits on someone else's claim, look again when the claim runs out. */
  private async watchClaims(): Promise<void> {
    if (this.stopped || this.expiry) return;
    let at: number | null;
    try {
      at = await this.opts.store.nextWebhookClaimLapse(this.now());
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
    // An unreachable database is logged once per outage by the store.
    this.opts.logger[err instanceof StoreUnavailableError ? 'debug' : 'error'](
      { err },
      'webhook inbox: the store failed; retrying in 1 s',
    );
    if (this.stopped) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.notify();
    }, 1_000);
    this.retry.unref();
  }
}
