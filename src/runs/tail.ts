import { isFinishedRunStatus, type RunEvent } from '../domain/types.js';
import type { Store } from '../store/store.js';
import { RUN_FINISHED, type RunEvents } from './events.js';

/** Stored events are replayed in pages of this many. */
const PAGE = 500;
/** How long an ended run's stream waits for its receipt (run_finished) before giving up on it. */
const RECEIPT_WAIT_MS = 2_000;
/** How long a live stream may stay silent before a keep-alive. */
const KEEP_ALIVE_MS = 15_000;
/**
 * How long the tail waits, with nothing pushed and no wake-up, before it reads the log anyway. Wake-ups of
 * another replica's events ride on the store's notifications (PostgreSQL LISTEN), which are lost while the
 * listening connection is down (for seconds after a database restart; always behind a pooler in
 * transaction mode). Reading the log after every 2 s of silence bounds how late such a stream is, at the
 * cost of one indexed read of an empty page per idle stream every 2 s; a stream that is busy (events pushed
 * or woken for) never waits that long, so it never polls.
 */
const POLL_MS = 2_000;

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
 * stream stays in order and complete whoever appended. A wake-up may be lost (the store's listening
 * connection is down): the log is also read after every POLL_MS of silence, and once more before the tail
 * gives up on an ended run's receipt, so a lost wake-up only delays events, never drops them.
 */
export async function tailEvents(
  source: TailSource,
  runId: string,
  after: number,
  sink: TailSink,
  afterFinish: AfterFinish,
): Promise<void> {
  const tail = new Tail(source.store, runId, after, sink, afterFinish);
  // Subscribe BEFORE replaying the stored log, so no event falls between the two; seq skips repeats.
  const unsubscribe = source.events.subscribe(runId, (e) => tail.pushed(e));
  // '' after the listening connection came back: anything may have been missed.
  const unwake = source.store.onWake('events', (id) => {
    if (id === runId || id === '') tail.woken();
  });
  sink.onAbort(() => tail.abort());
  try {
    await tail.follow();
  } finally {
    unsubscribe();
    unwake();
  }
}

/** One stream's tail: what it sent last, the events pushed to it, and whether the log holds unread ones. */
class Tail {
  private last: number;
  private aborted = false;
  private finished = false;
  private readonly live: RunEvent[] = [];
  private wake: (() => void) | null = null;
  /** The log may hold events this process was not told of (another replica appended them). */
  private unread = false;
  /** How long nothing was written to the sink, in waits of the loop below (for keep-alives). */
  private silentMs = 0;

  constructor(
    private readonly store: TailSource['store'],
    private readonly runId: string,
    after: number,
    private readonly sink: TailSink,
    private readonly afterFinish: AfterFinish,
  ) {
    this.last = after;
  }

  pushed(e: RunEvent): void {
    this.live.push(e);
    this.wake?.();
  }

  woken(): void {
    this.unread = true;
    this.wake?.();
  }

  abort(): void {
    this.aborted = true;
    this.wake?.();
  }

  async follow(): Promise<void> {
    await this.readLog();
    while (!this.finished && !this.aborted) {
      if (!this.live.length && !this.unread && (await this.idle())) break;
      if (this.unread) await this.readLog();
      for (const e of this.live.splice(0)) {
        if (e.seq > this.last + 1) await this.readLog();
        await this.send(e);
      }
    }
  }

  /**
   * Nothing to send: waits to be woken, else reads the log anyway (a wake-up of another replica's events may
   * have been lost) and keeps the stream alive. True when the run ended and its receipt did not come.
   */
  private async idle(): Promise<boolean> {
    // An ended run's receipt is written with its end (a run ended by an older version wrote it just
    // after): the log is read once more, a little later, before the tail gives up on it.
    const ended = isFinishedRunStatus((await this.store.getRun(this.runId))?.status ?? 'failed');
    const waitMs = ended ? RECEIPT_WAIT_MS : POLL_MS;
    const woken = await this.waitForNews(waitMs);
    if (woken || this.aborted) return false;
    const before = this.last;
    await this.readLog();
    if (this.last !== before || this.finished) return false;
    if (ended) {
      await this.sink.ended();
      return true;
    }
    this.silentMs += waitMs;
    if (this.silentMs >= KEEP_ALIVE_MS) {
      this.silentMs = 0;
      await this.sink.keepAlive();
    }
    return false;
  }

  /** True when woken (an event pushed, the log written, the client gone) within `waitMs`. */
  private async waitForNews(waitMs: number): Promise<boolean> {
    const woken = await new Promise<boolean>((resolve) => {
      // An event may have come while the run's status was read: no wait then.
      if (this.live.length || this.unread || this.aborted) {
        resolve(true);
        return;
      }
      const t = setTimeout(() => resolve(false), waitMs);
      this.wake = () => {
        clearTimeout(t);
        resolve(true);
      };
    });
    this.wake = null;
    return woken;
  }

  private stopped(): boolean {
    return this.aborted || (this.finished && this.afterFinish === 'stop');
  }

  private async send(e: RunEvent): Promise<void> {
    if (e.seq <= this.last || this.stopped()) return;
    this.last = e.seq;
    this.silentMs = 0;
    await this.sink.event(e);
    if (e.type === RUN_FINISHED) this.finished = true;
  }

  private async readLog(): Promise<void> {
    this.unread = false;
    for (;;) {
      const page = await this.store.listEvents(this.runId, this.last, PAGE);
      for (const e of page) await this.send(e);
      if (page.length < PAGE || this.stopped()) break;
    }
  }
}
