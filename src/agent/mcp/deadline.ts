import type { Clock } from '../../clock.js';

/** An AbortSignal that fires when `parent` does or after `ms` of the clock, whichever comes first. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** Whether it fired because the time ran out (not because of the parent). */
  timedOut(): boolean;
  /** Stops the timer and forgets the parent. */
  clear(): void;
}

export function deadline(clock: Clock, ms: number, parent: AbortSignal): Deadline {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort(parent.reason);
  const cancel = clock.setTimer(() => {
    timedOut = true;
    controller.abort(new Error(`timed out after ${ms} ms`));
  }, ms);
  if (parent.aborted) onAbort();
  else parent.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    clear: () => {
      cancel();
      parent.removeEventListener('abort', onAbort);
    },
  };
}
