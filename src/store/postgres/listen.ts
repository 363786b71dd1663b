import pg from 'pg';
import type { WakeChannel, WakeStore } from '../wakes.js';
import type { PgDb } from './db.js';

// Wake-ups from other processes on the same database (WakeStore.onWake): one connection of the store's own,
// outside the pool, LISTENs on the channels that migrations/postgres/000003_wakeups.sql NOTIFYs on.
//
// node-postgres facts this module relies on (https://node-postgres.com, pg 8 source in node_modules/pg/lib):
// - LISTEN needs one connection that stays open: a pooled client goes back to the pool and its connection may
//   be given to anyone or closed, so the listener is a `new pg.Client(config)` of its own (apis/client).
// - A notification arrives on that client as a 'notification' event ({ processId, channel, payload }),
//   whatever query (if any) is running (client.js _handleNotification).
// - A client that loses its connection (the backend was terminated, the server restarted, the network cut)
//   emits 'error' and then 'end'; an 'error' event without a listener is thrown by the EventEmitter and ends
//   the process, so the 'error' listener is attached before `connect()`. An error while connecting rejects
//   `connect()` instead (client.js _handleErrorWhileConnecting). A client cannot be connected twice: a lost
//   connection means a new Client.
// - `client.end()` on a client never connected, or already ended, resolves at once (client.js end).
// - Several statements in one query text without parameters go as one simple query (LISTEN a; LISTEN b).
//
// PostgreSQL facts (docs: sql-notify, sql-listen): a notification is delivered to the listening sessions when
// the notifying transaction commits (never for one that rolls back); notifications of one transaction on one
// channel with the same payload are folded into one; the payload is shorter than 8000 bytes. A session that
// is not connected receives nothing: what was notified while the listener was down is lost, so after
// connecting again every listener is woken once with '' to look again.
//
// How soon it connects again: after a lost connection it waits 1 s, 2 s, 4 s ... (a database that is down is not
// hammered), but the store's pool tells it whenever a statement is answered (`poolAnswered`, wired by
// `listenerOf`; the daemon's sweeps run statements every few seconds): the database is back, so it connects at
// once, at most once a second, and its waits start again from the first. Wake-ups are back within about a
// second of the database answering, however long the outage was.

const PREFIX = 'drydock_';
/**
 * The channels listened on: the WakeStore's, and the store's own `plans` (migrations/postgres/
 * 000019_plans_version.sql: a plan or a decision was written), which keeps the plans version (versions.ts).
 */
export type ListenChannel = WakeChannel | 'plans';
const CHANNELS: readonly ListenChannel[] = ['runs', 'events', 'inbox', 'outbox', 'plans'];

/** Waits before connecting again: 1 s, 2 s, 4 s, ... at most 30 s. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;
/** Connection attempts made because the pool was answered start at least this far apart. */
const ANSWERED_GAP_MS = 1_000;

export interface PgListenerOptions {
  /** The store's connection options (PgDb.connection); application_name is set to `drydock-listen`. */
  connection: pg.ClientConfig;
  /** Told when the listening connection fails or is lost, or a listener throws (default: ignored). */
  onError?: (err: Error) => void;
  /** The first wait before connecting again (default 1 s); it doubles up to `maxRetryMs` (default 30 s). */
  firstRetryMs?: number;
  maxRetryMs?: number;
}

/** The wait before connecting again after `failures` failed or lost connections in a row (0: the first). */
export function retryDelay(failures: number, firstMs = FIRST_RETRY_MS, maxMs = MAX_RETRY_MS): number {
  return Math.min(firstMs * 2 ** Math.min(failures, 30), maxMs);
}

/** The application_name of the listening connection (pg_stat_activity shows it). */
export const LISTEN_APPLICATION_NAME = 'drydock-listen';

/**
 * One listening connection, made on the first subscription and made again (with a growing wait) whenever it
 * is lost, until `close()`. Nothing of it throws to the caller: connection failures go to `onError`.
 */
export class PgListener {
  private readonly listeners = new Map<ListenChannel, Set<(payload: string) => void>>();
  private readonly config: pg.ClientConfig;
  private readonly onError: (err: Error) => void;
  private readonly firstRetryMs: number;
  private readonly maxRetryMs: number;
  /** The current client, connecting or listening; null while waiting to connect again, and once closed. */
  private client: pg.Client | null = null;
  private retry: NodeJS.Timeout | null = null;
  /** When the waiting `retry` fires (ms since the epoch). */
  private retryAt = 0;
  /** When the last connection attempt started (ms since the epoch). */
  private attemptedAt = 0;
  /** Failed or lost connections since the last one that listened. */
  private failures = 0;
  private started = false;
  /** Whether `poolAnswered` moved a connection attempt forward since the connection was lost. */
  private jumped = false;
  /** A connection failed or was lost since the last one listened: the next one to listen wakes everyone. */
  private unheard = false;
  private closed = false;
  /**
   * Whether the connection is listening now: its LISTEN was answered and it was not lost since. While it
   * is, every transaction that commits later is heard (hints the store may keep a value by, versions.ts).
   */
  listening = false;

  constructor(opts: PgListenerOptions) {
    this.config = { ...opts.connection, application_name: LISTEN_APPLICATION_NAME };
    this.onError = opts.onError ?? (() => {});
    this.firstRetryMs = opts.firstRetryMs ?? FIRST_RETRY_MS;
    this.maxRetryMs = opts.maxRetryMs ?? MAX_RETRY_MS;
  }

  onWake(channel: ListenChannel, listener: (payload: string) => void): () => void {
    if (this.closed) return () => {};
    // Each subscription is its own, even of the same function twice.
    const own = (payload: string) => listener(payload);
    const set = this.listeners.get(channel) ?? new Set();
    this.listeners.set(channel, set);
    set.add(own);
    if (!this.started) {
      this.started = true;
      this.connect();
    }
    return () => {
      set.delete(own);
    };
  }

  /**
   * The store's pool had a statement answered: the database is there. Waiting to connect again, the listener
   * connects now (or a second after its last attempt, if that was less), and later waits start again from
   * the first. Listening or connecting already, nothing changes.
   */
  poolAnswered(): void {
    // Once per lost connection: a database that answers the pool but refuses this connection (its
    // max_connections reached) is then tried again with the growing waits, not every second.
    if (this.closed || this.retry === null || this.jumped) return;
    this.jumped = true;
    this.failures = 0;
    const at = Math.max(Date.now(), this.attemptedAt + ANSWERED_GAP_MS);
    if (at >= this.retryAt) return;
    clearTimeout(this.retry);
    this.connectIn(at - Date.now());
  }

  /** Ends the connection, or the wait before the next one; no wake is delivered after it. */
  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    this.listeners.clear();
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const client = this.client;
    this.client = null;
    // A client still connecting is ended too: its connect() then rejects, which connect() below ignores.
    if (client) await client.end().catch(() => {});
  }

  private connect(): void {
    this.attemptedAt = Date.now();
    let client: pg.Client;
    try {
      client = new pg.Client(this.config);
    } catch (err) {
      // A connection string pg cannot read: reported, and tried again like a failed connect.
      this.unheard = true;
      this.report(err as Error);
      this.retryLater();
      return;
    }
    this.client = client;
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('the listening connection ended')));
    client.on('notification', (msg) => this.dispatch(msg.channel, msg.payload ?? ''));
    void (async () => {
      try {
        await client.connect();
        await client.query(CHANNELS.map((c) => `LISTEN ${PREFIX}${c}`).join('; '));
      } catch (err) {
        this.lost(client, err as Error);
        return;
      }
      if (this.client !== client) return;
      this.listening = true;
      // Not the first attempt: changes may have gone unheard meanwhile.
      const again = this.unheard;
      this.failures = 0;
      this.jumped = false;
      this.unheard = false;
      if (again) this.wakeAll();
    })();
  }

  /** The client failed or its connection is gone: drop it and connect again after a wait (once per client). */
  private lost(client: pg.Client, err: Error): void {
    if (this.client !== client) return;
    this.client = null;
    this.listening = false;
    this.unheard = true;
    this.jumped = false;
    client.end().catch(() => {});
    this.report(err);
    this.retryLater();
  }

  /** Connects again after the next wait of the backoff, unless closed by then. */
  private retryLater(): void {
    if (this.closed) return;
    const wait = retryDelay(this.failures, this.firstRetryMs, this.maxRetryMs);
    this.failures += 1;
    this.connectIn(wait);
  }

  private connectIn(wait: number): void {
    this.retryAt = Date.now() + wait;
    this.retry = setTimeout(() => {
      this.retry = null;
      if (!this.closed) this.connect();
    }, wait);
    // The wait alone does not keep the process alive.
    this.retry.unref();
  }

  private dispatch(name: string, payload: string): void {
    if (!name.startsWith(PREFIX)) return;
    const channel = name.slice(PREFIX.length) as ListenChannel;
    for (const listener of [...(this.listeners.get(channel) ?? [])]) this.call(listener, payload);
  }

  /** Wakes every listener of every channel once with '': what was notified while disconnected is lost. */
  private wakeAll(): void {
    const all = [...this.listeners.values()].flatMap((set) => [...set]);
    for (const listener of all) this.call(listener, '');
  }

  private call(listener: (payload: string) => void, payload: string): void {
    try {
      listener(payload);
    } catch (err) {
      this.report(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private report(err: Error): void {
    try {
      this.onError(err);
    } catch {
      // A reporter that throws must not break the listener.
    }
  }
}

/**
 * The listener of the store on `db`: it connects with the pool's options, ends when `db` is closed, and is told
 * of every statement the pool had answered (so that it listens again as soon as the database is back).
 */
export function listenerOf(
  db: Pick<PgDb, 'connection' | 'onAnswer' | 'onClose'>,
  opts: Omit<PgListenerOptions, 'connection'> = {},
): PgListener {
  const listener = new PgListener({ ...opts, connection: db.connection });
  db.onClose(() => listener.close());
  db.onAnswer(() => listener.poolAnswered());
  return listener;
}

/** The store's WakeStore part: its only method is onWake (composeStore makes every method a store method). */
export class PgWakes implements WakeStore {
  constructor(private readonly listener: PgListener) {}

  onWake(channel: WakeChannel, listener: (payload: string) => void): () => void {
    return this.listener.onWake(channel, listener);
  }
}
