import type { PgListener } from './listen.js';

/** How long a plans version heard nothing against is used before it is read again (ms). */
export const PLANS_VERSION_MAX_AGE_MS = 1_000;

/**
 * The plans version (PlanStore.plansVersion) kept between reads: a listing asks for it on every request,
 * and on PostgreSQL each read is a round trip. A version read is used again until one of these:
 * - a `drydock_plans` notification (any process committed a plan or a decision, migration 000019), or the
 *   listener connecting again (it may have missed some);
 * - this process wrote (`changed`, told by PgDb.onWrite): its own write is seen by its next read, without
 *   waiting for the notification;
 * - `maxAgeMs` passed, in case notifications stop arriving without the connection being noticed lost.
 * A value is kept only when the listener was listening before the read began and still is after it, and
 * nothing changed meanwhile: any later commit is then heard. Otherwise every call reads.
 */
export class PlansVersion {
  private cached: { value: number; at: number } | null = null;
  /** Moved by every change heard of: a read that began before one is not kept. */
  private generation = 0;
  /** The read under way, shared by the calls made meanwhile (a read of the current generation). */
  private reading: { generation: number; value: Promise<number> } | null = null;
  private subscribed = false;

  constructor(
    private readonly read: () => Promise<number>,
    private readonly listener: Pick<PgListener, 'onWake' | 'listening'>,
    private readonly clock: () => number = Date.now,
    private readonly maxAgeMs = PLANS_VERSION_MAX_AGE_MS,
  ) {}

  /** Something changed, or may have: the next call reads. */
  changed(): void {
    this.generation += 1;
    this.cached = null;
  }

  async get(): Promise<number> {
    if (!this.subscribed) {
      // Subscribed on the first call (it makes the listener connect, if nothing did yet).
      this.subscribed = true;
      this.listener.onWake('plans', () => this.changed());
    }
    const now = this.clock();
    const c = this.cached;
    if (c && this.listener.listening && now >= c.at && now - c.at < this.maxAgeMs) return c.value;
    if (this.reading?.generation === this.generation) return this.reading.value;
    const generation = this.generation;
    const heard = this.listener.listening;
    const value = this.read();
    const reading = { generation, value };
    this.reading = reading;
    try {
      const v = await value;
      if (heard && this.listener.listening && generation === this.generation)
        this.cached = { value: v, at: now };
      return v;
    } finally {
      if (this.reading === reading) this.reading = null;
    }
  }
}
