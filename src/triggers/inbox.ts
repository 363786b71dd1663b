import type { WebhookDelivery } from '../domain/types.js';
import type { Logger } from '../logger.js';
import { PassLoop } from '../pass-loop.js';
import { StoreUnavailableError, type TriggerStore } from '../store/store.js';

const MAX_ATTEMPTS = 3;
/** After a store failure, the next look (ms). */
const RETRY_MS = 1_000;
/**
 * With nothing queued and no claim to wait for, the next look on its own (ms): a notice comes sooner for
 * every delivery this process records, so this only bounds how long another process's leftovers could wait.
 */
const IDLE_LOOK_MS = 60_000;

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
  /** Delivery id -> failed attempts so far (this process). */
  private readonly attempts = new Map<string, number>();
  /** One pass at a time; a notice during a pass runs one more right after it (src/pass-loop.ts). */
  private readonly loop = new PassLoop({ pass: () => this.work(), unref: true });
  private started = false;
  private stopped = false;
  private deadline = Number.POSITIVE_INFINITY;
  /** After a store failure, notices wait for the retry (performance.now() ms) rather than hit it again. */
  private backoffUntil = 0;

  constructor(private readonly opts: InboxOptions) {
    this.batch = opts.batch ?? 64;
    this.busyPauseMs = opts.busyPauseMs ?? 10;
    this.claimMs = opts.claimMs ?? 60_000;
    this.now = opts.now ?? Date.now;
  }

  /** Something was queued (or the daemon started): make sure the worker runs. */
  notify(): void {
    if (this.stopped) return;
    if (!this.started) {
      this.started = true;
      this.loop.start();
    } else if (performance.now() >= this.backoffUntil) this.loop.kick();
  }

  /**
   * Stops taking work. The worker goes on with what is queued until `graceMs` have passed, then stops
   * between two deliveries; the rest stays queued for the next start.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    this.deadline = performance.now() + graceMs;
    // A delivery still in progress at the deadline (a run slow to honour its cancel) is not waited for:
    // it stays claimed and queued, and is processed again once its claim runs out.
    await this.loop.stop(graceMs + 100);
    const left = this.deadline - performance.now();
    if (!this.started || left <= 0) return;
    // The loop ran its last pass (or had one due that no longer starts): what is queued now is still taken
    // within the grace, by one more pass here.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.work(),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, left + 100);
      }),
    ]);
    clearTimeout(timer);
  }

  /** One pass: the queued deliveries until none is left; returns the wait before the next look (ms). */
  private async work(): Promise<number> {
    const { store } = this.opts;
    while (true) {
      let items: WebhookDelivery[];
      try {
        items = await store.queuedWebhookDeliveries(this.batch, this.now());
      } catch (err) {
        return this.later(err);
      }
      if (!items.length) return this.untilClaimLapses();
      for (const delivery of items) {
        if (performance.now() > this.deadline) return IDLE_LOOK_MS;
        const now = this.now();
        let payload: string | null;
        try {
          // Another daemon on the same store may have taken it meanwhile: then it is theirs.
          payload = await store.claimWebhookDelivery(delivery.id, now + this.claimMs, now);
        } catch (err) {
          return this.later(err);
        }
        if (payload === null) continue;
        try {
          await this.opts.process(delivery, payload);
          this.attempts.delete(delivery.id);
        } catch (err) {
          const wait = await this.failed(delivery, err);
          if (wait !== null) return wait;
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
   * store refuses even that: then the wait before the worker looks again (it backs off), else null.
   */
  private async failed(delivery: WebhookDelivery, err: unknown): Promise<number | null> {
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
      return null;
    } catch (storeErr) {
      // The store refuses writes: try again in a while rather than spin on the same delivery.
      return this.later(storeErr);
    }
  }

  /**
   * With nothing to do: if a delivery waits on someone else's claim (or on a retry's shortened one), look
   * again when the claim runs out; else after IDLE_LOOK_MS, or at once on a notice.
   */
  private async untilClaimLapses(): Promise<number> {
    let at: number | null;
    try {
      at = await this.opts.store.nextWebhookClaimLapse(this.now());
    } catch {
      return RETRY_MS;
    }
    return at === null ? IDLE_LOOK_MS : Math.min(IDLE_LOOK_MS, Math.max(0, at - this.now()) + 5);
  }

  /** The store failed: the wait before the next look, during which notices are held back. */
  private later(err: unknown): number {
    // An unreachable database is logged once per outage by the store.
    this.opts.logger[err instanceof StoreUnavailableError ? 'debug' : 'error'](
      { err },
      'webhook inbox: the store failed; retrying in 1 s',
    );
    this.backoffUntil = performance.now() + RETRY_MS;
    return RETRY_MS;
  }
}
