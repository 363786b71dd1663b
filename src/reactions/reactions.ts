import type { Clock } from '../clock.js';
import type { LoggedEvent } from '../domain/types.js';
import type { Logger } from '../logger.js';
import { PassLoop } from '../pass-loop.js';
import type { ReactionCursorStore } from '../store/cursors.js';
import { type RunStore, StoreUnavailableError } from '../store/store.js';

/**
 * A reaction to what happened: a consumer of the stored run event log. It is handed each event of its types
 * after its durable cursor, in log order, one at a time, AT LEAST ONCE: a crash between the effect and the
 * cursor's move hands the event over again, so `react` must make its effect idempotent (look before acting,
 * write under a unique key, or send something that is harmless twice).
 */
export interface Reaction {
  /** Its cursor's name in the store (reaction_cursors.name): never rename one that ran. */
  readonly name: string;
  /** The event types it reacts to. */
  readonly types: readonly string[];
  /**
   * The effect of one event. Throwing keeps the cursor at that event: it is handed over again after a backoff,
   * and no later event of this reaction is handed over meanwhile. Throw PermanentReactionError for a failure
   * that no retry mends: it is logged, and the event is passed.
   */
  react(event: LoggedEvent): Promise<void>;
}

/** A failure no retry mends (GitHub refused the request as invalid, the target is gone): the event is passed. */
export class PermanentReactionError extends Error {
  override name = 'PermanentReactionError';
}

export interface ReactionsOptions {
  store: RunStore & ReactionCursorStore;
  clock: Clock;
  logger: Logger;
  /** This daemon's name among replicas: it holds a reaction's cursor for a pass. */
  holder: string;
  reactions: readonly Reaction[];
  /** How often the log is read when nothing woke the loop (another replica's events, a lost wake-up). */
  pollMs?: number;
  /** How long a pass holds a reaction's cursor; each event done extends it. A dead holder's lapses then. */
  holdMs?: number;
  /** Backoff of a failing effect: first wait, doubled per attempt up to the longest. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** [0, 1): the jitter of retry waits (tests pin it). */
  random?: () => number;
}

/** Events read per store read. */
const BATCH = 100;
/** With nothing to react to, the cursor is moved over other events only once this many have piled up. */
const SKIP_AHEAD = 500;

export const REACTION_DEFAULTS = {
  pollMs: 2_000,
  holdMs: 60_000,
  retryBaseMs: 1_000,
  retryMaxMs: 5 * 60_000,
};

interface Retry {
  rowid: number;
  attempts: number;
  dueAt: number;
}

/**
 * Runs every reaction on one PassLoop: woken by the daemon's own events (`onEvent`, for
 * RunEvents.subscribeAll) and by another replica's (`kick`, from the store's wake-ups), and reading the log
 * every `pollMs` anyway.
 *
 * Several daemons on one database: a reaction runs on one replica at a time. Its pass first holds the
 * reaction's cursor row (holder, held_until: a lease), and only the holder moves the cursor; a daemon that
 * died holding it is taken over once the hold lapses, at once by the same replica restarting. Effects stay
 * idempotent all the same, since a holder that stalled past its hold may finish an effect another replica
 * then repeats.
 */
export class Reactions {
  private readonly loop = new PassLoop({ pass: () => this.pass(), unref: true });
  private readonly retries = new Map<string, Retry>();
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Reactions kicked while in a pass: they get another right after it. */
  private readonly again = new Set<string>();
  private runningOnce = false;
  private readonly watched: Set<string>;
  private readonly o: Required<Omit<ReactionsOptions, 'random'>> & { random: () => number };

  constructor(opts: ReactionsOptions) {
    this.o = { ...REACTION_DEFAULTS, random: Math.random, ...opts };
    this.watched = new Set(opts.reactions.flatMap((r) => r.types));
    const names = opts.reactions.map((r) => r.name);
    if (new Set(names).size !== names.length)
      throw new Error(`Reactions: a name twice in ${names.join(', ')}`);
  }

  /**
   * Before the daemon appends events of its own: a reaction without a cursor (its first start) starts at the
   * log's end. The past is not reacted to; what start-up must catch up on is `reconcile`'s (ExecutionSettler).
   */
  async init(): Promise<void> {
    const { store, clock, logger } = this.o;
    let end: number | null = null;
    for (const r of this.o.reactions) {
      if ((await store.reactionCursor(r.name)) !== null) continue;
      end ??= await store.eventLogEnd();
      await store.placeReactionCursor(r.name, end, clock.now());
      logger.info({ reaction: r.name, cursor: end }, 'reaction starts at the end of the event log');
    }
  }

  start(): void {
    this.loop.start();
  }

  /** Looks at the log now (or right after the pass under way). */
  kick(): void {
    this.loop.kick();
  }

  /** For RunEvents.subscribeAll: wakes the loop for an event some reaction reacts to. Never throws. */
  readonly onEvent = (event: { type: string }): void => {
    if (this.watched.has(event.type)) this.kick();
  };

  /**
   * No pass starts any more; waits (at most `graceMs`) for the one under way, which stops between two
   * events, then lets go of the holds so another replica may go on at once.
   */
  async stop(graceMs?: number): Promise<void> {
    await this.loop.stop(graceMs);
    let timer: NodeJS.Timeout | undefined;
    const running = Promise.all([...this.inFlight.values()]);
    await (graceMs === undefined
      ? running
      : Promise.race([running, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]));
    clearTimeout(timer);
    for (const r of this.o.reactions) {
      // A reaction still in its effect keeps its hold: it lapses on its own.
      if (this.inFlight.has(r.name)) continue;
      await this.o.store.releaseReaction(r.name, this.o.holder).catch(() => {});
    }
  }

  /** One pass over every reaction, outside the loop, waiting for all of it (a test's step). */
  async runOnce(): Promise<void> {
    this.runningOnce = true;
    try {
      await this.pass();
      await Promise.all([...this.inFlight.values()]);
    } finally {
      this.runningOnce = false;
    }
  }

  /**
   * Starts the pass of each reaction not in one already, without waiting for it: a slow effect (GitHub asking
   * to wait a minute) holds up its own reaction only. A reaction that was in a pass when the loop was kicked
   * gets another as soon as it ends. Returns the wait before the next look: the nearest retry, else pollMs.
   */
  private async pass(): Promise<number> {
    const { clock, pollMs } = this.o;
    let wait = pollMs;
    for (const r of this.o.reactions) {
      const retry = this.retries.get(r.name);
      if (retry) wait = Math.min(wait, retry.dueAt - clock.now());
      if (this.halted) continue;
      if (this.inFlight.has(r.name)) {
        this.again.add(r.name);
        continue;
      }
      const run = this.passOf(r)
        .then((next) => void this.retryAt(r, next))
        .catch((err: unknown) => {
          // An unreachable database is logged once per outage by the store.
          this.o.logger[err instanceof StoreUnavailableError ? 'debug' : 'warn'](
            { reaction: r.name, err: messageOf(err) },
            'reaction: a pass failed (retried at the next one)',
          );
        })
        .finally(() => {
          this.inFlight.delete(r.name);
          if (this.again.delete(r.name)) this.kick();
        });
      this.inFlight.set(r.name, run);
    }
    return Math.max(0, wait);
  }

  /** A pass that ended on a retry: the loop wakes when it is due (it may be sleeping on a longer wait). */
  private retryAt(r: Reaction, wait: number): void {
    if (this.retries.has(r.name) && wait < this.o.pollMs) this.loop.wakeIn(wait);
  }

  /** Stopped, and not in a test's pass (runOnce runs while the loop is stopped). */
  private get halted(): boolean {
    return this.loop.stopped && !this.runningOnce;
  }

  /** One reaction's pass; the wait it asks for before the next. */
  private async passOf(r: Reaction): Promise<number> {
    const { store, clock, holder, holdMs, pollMs } = this.o;
    const retry = this.retries.get(r.name);
    if (retry && retry.dueAt > clock.now()) return retry.dueAt - clock.now();
    // A look without writing first: most wake-ups find nothing for most reactions.
    const seen = await store.reactionCursor(r.name);
    if (seen === null) return pollMs; // init() places it; a store reset under a running daemon is not ours
    const peek = await store.eventsAfter(seen, r.types, 1);
    if (peek.events.length === 0 && peek.end - seen < SKIP_AHEAD) return pollMs;

    let cursor = await store.holdReaction(r.name, holder, clock.now(), clock.now() + holdMs);
    if (cursor === null) return pollMs; // another replica runs it now
    for (;;) {
      const { events, end } = await store.eventsAfter(cursor, r.types, BATCH);
      for (const event of events) {
        if (this.halted) return pollMs;
        const wait = await this.reactTo(r, event);
        if (wait !== null) return wait;
        if (!(await this.advance(r, event.rowid))) return pollMs;
        cursor = event.rowid;
        // On SQLite every await above settles without leaving the event loop's turn: a batch would hold
        // the HTTP server off for all of its events. Let the waiting I/O in between.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      if (events.length < BATCH) {
        if (end > cursor) await this.advance(r, end);
        return pollMs;
      }
    }
  }

  private advance(r: Reaction, to: number): Promise<boolean> {
    const now = this.o.clock.now();
    return this.o.store.advanceReaction(r.name, this.o.holder, to, now + this.o.holdMs, now);
  }

  /** The effect of one event: null once done (or passed for good), else the wait before it is tried again. */
  private async reactTo(r: Reaction, event: LoggedEvent): Promise<number | null> {
    const { logger, clock } = this.o;
    const fields = { reaction: r.name, event: event.type, event_rowid: event.rowid, run_id: event.runId };
    try {
      await r.react(event);
      this.retries.delete(r.name);
      return null;
    } catch (err) {
      if (err instanceof PermanentReactionError) {
        this.retries.delete(r.name);
        logger.warn({ ...fields, err: messageOf(err) }, 'reaction failed for good: the event is passed');
        return null;
      }
      const before = this.retries.get(r.name);
      const attempts = before?.rowid === event.rowid ? before.attempts + 1 : 1;
      const exp = Math.min(this.o.retryMaxMs, this.o.retryBaseMs * 2 ** Math.min(attempts - 1, 30));
      const delay = Math.round(exp / 2 + (exp / 2) * this.o.random());
      this.retries.set(r.name, { rowid: event.rowid, attempts, dueAt: clock.now() + delay });
      logger[err instanceof StoreUnavailableError ? 'debug' : 'warn'](
        { ...fields, attempt: attempts, retry_in_ms: delay, err: messageOf(err) },
        'reaction failed; will retry',
      );
      return delay;
    }
  }
}

/** What of an error may be logged: its message (the GitHub client's are scrubbed of the token). */
function messageOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 500);
}
