import { isFinishedRunStatus, type RunEvent } from '../domain/types.js';
import type { Store } from '../store/store.js';
import { RUN_FINISHED, type RunEvents } from './events.js';

/** Stored events are replayed in pages of this many. */
const PAGE = 500;
/** How long an ended run's stream waits for its receipt (run_finished) before giving up on it. */
const RECEIPT_WAIT_MS = 2_000;
/** How long a live stream may stay silent before a keep-alive. */
const KEEP_ALIVE_MS = 15_000;

/** Where a tail writes: each surface frames events its own way (the API names its frames, the UI does not). */
export interface TailSink {
  /** One event, in sequence order, each once. */
  event(e: RunEvent): Promise<void>;
  /** Nothing happened for a while: a comment keeps proxies from closing an idle stream. */
  keepAlive(): Promise<unknown>;
  /** The run ended and its receipt did not come: the tail stops without run_finished. */
  ended(): Promise<void>;
  /** Calls `listener` once the client goes away: the tail then stops. */
  onAbort(listener: () => void): void;
}

export interface TailSource {
  store: Pick<Store, 'getRun' | 'listEvents' | 'onWake'>;
  events: Pick<RunEvents, 'subscribe'>;
}

/**
 * What happens to events stored after run_finished (a decision or a delivery is logged on a run that has
 * ended): the API replays the whole stored log (`replay`), the web page stops at the receipt (`stop`).
 */
export type AfterFinish = 'replay' | 'stop';

/**
 * Replays a run's stored events after `after`, then follows it live until run_finished (or until the run
 * ended and no receipt came, or the client goes away). Both event streams (/v1 and /ui) are this loop.
 *
 * Live events come two ways: this process's own (pushed as they are appended), and another replica's (the
 * store wakes the tail, which reads them from the log). A run's events are numbered without gaps, so an
 * event pushed out of turn (another replica wrote the ones before it) is a sign to read the log first: the
 * stream stays in order and complete whoever appended.
 */
export async function tailEvents(
  { store, events }: TailSource,
  runId: string,
  after: number,
  sink: TailSink,
  afterFinish: AfterFinish,
): Promise<void> {
  let last = after;
  let aborted = false;
  let finished = false;
  const live: RunEvent[] = [];
  let wake: (() => void) | null = null;
  /** The log may hold events this process was not told of (another replica appended them). */
  let unread = false;
  // Subscribe BEFORE replaying the stored log, so no event falls between the two; seq skips repeats.
  const unsubscribe = events.subscribe(runId, (e) => {
    live.push(e);
    wake?.();
  });
  // '' after the listening connection came back: anything may have been missed.
  const unwake = store.onWake('events', (id) => {
    if (id !== runId && id !== '') return;
    unread = true;
    wake?.();
  });
  sink.onAbort(() => {
    aborted = true;
    wake?.();
  });
  const stopped = () => aborted || (finished && afterFinish === 'stop');
  const send = async (e: RunEvent) => {
    if (e.seq <= last || stopped()) return;
    last = e.seq;
    await sink.event(e);
    if (e.type === RUN_FINISHED) finished = true;
  };
  const readLog = async () => {
    unread = false;
    for (;;) {
      const page = await store.listEvents(runId, last, PAGE);
      for (const e of page) await send(e);
      if (page.length < PAGE || stopped()) break;
    }
  };
  try {
    await readLog();
    while (!finished && !aborted) {
      if (!live.length && !unread) {
        // An ended run writes its receipt right after its status changes: wait a little for it.
        const ended = isFinishedRunStatus((await store.getRun(runId))?.status ?? 'failed');
        await new Promise<void>((resolve) => {
          // An event may have come while the run's status was read: no wait then.
          if (live.length || unread || aborted) {
            resolve();
            return;
          }
          const t = setTimeout(resolve, ended ? RECEIPT_WAIT_MS : KEEP_ALIVE_MS);
          wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
        wake = null;
        if (!live.length && !unread && !finished && !aborted) {
          if (ended) {
            await sink.ended();
            break;
          }
          await sink.keepAlive();
        }
      }
      if (unread) await readLog();
      for (const e of live.splice(0)) {
        if (e.seq > last + 1) await readLog();
        await send(e);
      }
    }
  } finally {
    unsubscribe();
    unwake();
  }
}
