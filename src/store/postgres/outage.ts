import type { Logger } from '../../logger.js';

// Database outages as the store's operations meet them: one report when the first operation finds the database
// unreachable, one when the first operation begun after that is answered again. Between the two, failures are
// only counted, so that an outage is one warning in the log, not one per request, pass or run.

/** What the store tells of an outage (PostgresStoreOptions.onOutage). */
export type OutageEvent =
  | {
      kind: 'down';
      /** When the first operation failed (ms since the epoch). */
      at: number;
      /** Why it failed: the connection error (StoreUnavailableError.cause). */
      cause: unknown;
    }
  | {
      kind: 'back';
      /** When the first operation failed, and when the first one begun after it was answered. */
      start: number;
      end: number;
      durationMs: number;
      /** Operations (statements and transactions) that failed in between, the first included. */
      failed: number;
    };

/**
 * Follows the store's operations: `begin` before each, then `failed` (it found the database unreachable) or
 * `answered` (the database answered it, with rows or with an error of its own).
 *
 * Only an operation begun after the outage started ends it: one that began before and is answered late (a
 * statement in flight on a connection that outlived the first failure) says nothing of the database now, and
 * ending the outage on it would report one outage as two.
 */
export class OutageTracker {
  /** Operations begun so far: `begin` hands out the next number. */
  private begun = 0;
  private outage: { start: number; begunBefore: number; failed: number } | null = null;

  constructor(
    private readonly report: (event: OutageEvent) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether the last operations found the database unreachable (and none begun since was answered). */
  get down(): boolean {
    return this.outage !== null;
  }

  /** An operation begins; its number goes to `answered`. */
  begin(): number {
    this.begun += 1;
    return this.begun;
  }

  failed(cause: unknown): void {
    if (this.outage) {
      this.outage.failed += 1;
      return;
    }
    const start = this.now();
    this.outage = { start, begunBefore: this.begun, failed: 1 };
    this.emit({ kind: 'down', at: start, cause });
  }

  answered(op: number): void {
    const outage = this.outage;
    if (!outage || op <= outage.begunBefore) return;
    this.outage = null;
    const end = this.now();
    this.emit({
      kind: 'back',
      start: outage.start,
      end,
      durationMs: end - outage.start,
      failed: outage.failed,
    });
  }

  private emit(event: OutageEvent): void {
    try {
      this.report(event);
    } catch {
      // A reporter that throws must not fail the operation that reported.
    }
  }
}

/** Outages as log lines: a warning when the database stops answering, one line when it answers again. */
export function logOutages(logger: Logger): (event: OutageEvent) => void {
  return (event) => {
    if (event.kind === 'down') {
      const cause = event.cause as Error | undefined;
      logger.warn(
        { err: cause, start: new Date(event.at).toISOString() },
        `database unreachable: ${cause?.message ?? String(event.cause)}`,
      );
      return;
    }
    logger.info(
      {
        start: new Date(event.start).toISOString(),
        end: new Date(event.end).toISOString(),
        duration_ms: event.durationMs,
        failed_operations: event.failed,
      },
      'database reachable again',
    );
  };
}
