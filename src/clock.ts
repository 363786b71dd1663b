/** Time as drydock sees it. Injected everywhere so that tests can pin and advance it. */
export interface Clock {
  now(): number;
  /** Calls `fn` once after `ms`; returns a function that cancels it. */
  setTimer(fn: () => void, ms: number): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
};
