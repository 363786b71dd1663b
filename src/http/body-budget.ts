/**
 * A shared allowance of request-body bytes held in memory before the request is authenticated (webhook bodies
 * whose signature is not checked yet). Every such body takes its bytes from here as it is read and gives them
 * back once it is verified or refused, so unauthenticated clients together never hold more than `capacity`.
 */
export class BodyBudget {
  #inFlight = 0;

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1)
      throw new RangeError(`BodyBudget: capacity must be a positive integer, got ${capacity}`);
  }

  /** Bytes currently held by open reservations. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** A reservation of no bytes yet; grow it with `cover`, and always `release` it (in a finally). */
  open(): BodyReservation {
    let held = 0;
    return {
      get held() {
        return held;
      },
      cover: (bytes) => {
        if (bytes <= held) return true;
        if (this.#inFlight + (bytes - held) > this.capacity) return false;
        this.#inFlight += bytes - held;
        held = bytes;
        return true;
      },
      release: () => {
        this.#inFlight -= held;
        held = 0;
      },
    };
  }
}

export interface BodyReservation {
  /** Bytes this reservation holds. */
  readonly held: number;
  /**
   * Makes the reservation hold at least `bytes`, taking the difference from the budget; false (and nothing
   * taken) when the budget cannot spare it.
   */
  cover(bytes: number): boolean;
  /** Gives every held byte back. Safe to call more than once. */
  release(): void;
}
