import pg from 'pg';
import { POSTGRES } from '../sql/dialect.js';
import { StoreUnavailableError } from '../store.js';
import { type OutageEvent, OutageTracker } from './outage.js';

// The PostgreSQL database as every part of the store uses it: a pool of connections, statements prepared once
// per connection, transactions that retry when PostgreSQL aborts them to resolve a conflict, and the helpers
// that build a listing's query.
//
// node-postgres facts this module relies on (https://node-postgres.com):
// - A transaction's statements must all run on one client checked out of the pool; `pool.query` may run each
//   statement on a different connection (features/transactions). `tx` checks a client out for its whole run.
// - A query given a `name` is prepared once per connection and reused by name afterwards (features/queries,
//   "Prepared statements"); a name must always stand for the same text, so names are handed out per text.
// - Values arrive as text and are parsed per type OID; int8 (COUNT, bigint columns) is a string by default
//   because it can exceed 2^53 (pg-types README). A pool takes its own `types` so the parsers below change
//   nothing for other pools in the process.
// - The pool emits 'error' when an idle client loses its connection (the server restarted, a proxy cut it);
//   an EventEmitter 'error' without a listener ends the process (apis/pool). A checked-out client has no
//   listener of the pool's, so `checkout` adds one. A client released while broken is dropped, not reused.
// - pg-pool's `pool.query` releases its client with the statement's error, which ends the connection even
//   for a unique violation; statements here check a client out themselves instead.

/** The PostgreSQL type OIDs read differently from pg's defaults. */
const OID = { bool: 16, int8: 20, json: 114, numeric: 1700, jsonb: 3802 } as const;

/**
 * Rows are read in the shapes the SQLite store reads them, so that both backends share one row mapping
 * (rows.ts): times and counts as numbers, JSON as its text (the mapping parses it), booleans as 1 or 0.
 */
const PARSERS = new Map<number, (text: string) => unknown>([
  [OID.int8, safeInteger],
  [OID.numeric, Number],
  [OID.json, (text) => text],
  [OID.jsonb, (text) => text],
  [OID.bool, (text) => (text === 't' ? 1 : 0)],
]);

function safeInteger(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new Error(`postgres store: integer ${text} is beyond 2^53`);
  return n;
}

const ROW_TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    (format ?? 'text') === 'text'
      ? (PARSERS.get(oid) ?? pg.types.getTypeParser(oid, 'text'))
      : pg.types.getTypeParser(oid, 'binary')) as typeof pg.types.getTypeParser,
};

/** SQLSTATEs of a transaction PostgreSQL aborted to resolve a conflict; running it again may succeed. */
const RETRYABLE = new Set(['40001' /* serialization_failure */, '40P01' /* deadlock_detected */]);
const TX_ATTEMPTS = 5;

/**
 * Keys of the advisory locks the store takes: the first half of the two-int key names what is locked. Two-int
 * keys are a key space of their own, apart from single bigint keys (functions-admin, "Advisory Lock
 * Functions"), so other users of the database's advisory locks do not meet these unless they choose to.
 */
export const LOCK = {
  /** Session-level, held while one process applies migrations. */
  migrate: 0x6472_0001,
  /** Transaction-level: appending to the run event log (one writer at a time, see runs.ts). */
  eventLog: 0x6472_0002,
  /** Transaction-level, second key hashtext(conversation id): appending to one conversation. */
  conversation: 0x6472_0003,
  /** Transaction-level, second key hashtext(trigger id): a trigger's fires and its hourly cap. */
  triggerFires: 0x6472_0004,
} as const;

/**
 * What the parts run their SQL on: the pool, or one transaction's client. A text has `$n` placeholders or
 * `?` ones (the SQL shared with SQLite, numbered before it runs), never both.
 */
export interface Queries {
  /** All rows of a statement. */
  rows<R>(text: string, values?: readonly unknown[]): Promise<R[]>;
  /** The first row, or undefined. */
  row<R>(text: string, values?: readonly unknown[]): Promise<R | undefined>;
  /** The first column of the first row, or undefined. */
  value<V>(text: string, values?: readonly unknown[]): Promise<V | undefined>;
  /** How many rows the statement wrote. */
  exec(text: string, values?: readonly unknown[]): Promise<number>;
}

type Statement = { name: string; text: string; values: unknown[] };
type Run = <R extends pg.QueryResultRow>(statement: Statement) => Promise<pg.QueryResult<R>>;

class Runs implements Queries {
  constructor(
    private readonly run: Run,
    private readonly names: StatementNames,
  ) {}

  private query<R extends pg.QueryResultRow>(written: string, values: readonly unknown[] = []) {
    // Shared SQL (sql/dialect.ts) is written with `?` placeholders: numbered here, once per text.
    const text = POSTGRES.sql(written);
    return this.run<R>({ name: this.names.of(text), text, values: values.map(storable) });
  }

  async rows<R>(text: string, values?: readonly unknown[]): Promise<R[]> {
    return (await this.query(text, values)).rows as R[];
  }

  async row<R>(text: string, values?: readonly unknown[]): Promise<R | undefined> {
    return (await this.query(text, values)).rows[0] as R | undefined;
  }

  async value<V>(text: string, values?: readonly unknown[]): Promise<V | undefined> {
    const result = await this.query(text, values);
    const first = result.rows[0];
    const field = result.fields[0];
    return first && field ? (first[field.name] as V) : undefined;
  }

  async exec(text: string, values?: readonly unknown[]): Promise<number> {
    return (await this.query(text, values)).rowCount ?? 0;
  }
}

/** Whether a statement only reads: a SELECT (a `WITH` may write, and counts as a write). */
function reads(text: string): boolean {
  return /^\s*SELECT\b/i.test(text);
}

/**
 * A value as PostgreSQL can store it. Text cannot hold the NUL character (SQLite's can): in a string value,
 * or a string in an array value, it becomes U+FFFD. JSON text is not touched by this (JSON.stringify writes
 * NUL as the escape \u0000).
 */
function storable(value: unknown): unknown {
  if (typeof value === 'string')
    return value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value;
  if (Array.isArray(value)) return value.map(storable);
  return value;
}

/**
 * Prepared statement names by SQL text: a name always stands for the same text, on every connection of the
 * pool, and each connection prepares a statement the first time it runs it.
 */
class StatementNames {
  private readonly names = new Map<string, string>();

  of(text: string): string {
    let name = this.names.get(text);
    if (name === undefined) {
      name = `drydock_${this.names.size + 1}`;
      this.names.set(text, name);
    }
    return name;
  }
}

export interface PgDbOptions {
  /** postgres://user:password@host:port/database */
  url: string;
  /** Connections at most (default 10, node-postgres' default). */
  max?: number;
  /** Told when an idle connection is lost (default: ignored; the pool drops the connection and makes another). */
  onConnectionError?: (err: Error) => void;
  /** How long a new connection may take before it fails (default 10 s). */
  connectTimeoutMs?: number;
  /** Told when statements start failing to reach the database, and when one is answered again (outage.ts). */
  onOutage?: (event: OutageEvent) => void;
}

/**
 * How the store connects: the pool's connections, and the wake-up listener's own client (listen.ts), which
 * differs only by `applicationName`.
 */
export function connectionConfig(
  url: string,
  applicationName: string,
  connectTimeoutMs = 10_000,
): pg.ClientConfig {
  return {
    connectionString: url,
    application_name: applicationName,
    // pg-pool 3.14 (node_modules/pg-pool/index.js): without connectionTimeoutMillis a connect to a host that
    // never answers waits forever (no timer is set when it is 0 or absent); /readyz and the start would hang.
    // pg's Client takes the same option for its own connect (pg/lib/client.js).
    connectionTimeoutMillis: connectTimeoutMs,
    // TCP keepalive (pg/lib/connection-parameters.js keepAlive): a peer gone without a FIN is noticed.
    keepAlive: true,
  };
}

export class PgDb implements Queries {
  readonly pool: pg.Pool;
  /** The pool's connection options (connectionConfig), for a client of the store's own outside the pool. */
  readonly connection: pg.ClientConfig;
  private readonly closing: (() => Promise<void>)[] = [];
  private readonly answering: (() => void)[] = [];
  private readonly writing: (() => void)[] = [];
  private readonly outage: OutageTracker;
  private readonly names = new StatementNames();
  private readonly direct: Runs;
  private readonly max: number;
  private readonly onConnectionError: (err: Error) => void;
  private closed = false;

  constructor(opts: PgDbOptions) {
    this.max = opts.max ?? 10;
    this.connection = connectionConfig(opts.url, 'drydock', opts.connectTimeoutMs);
    this.pool = new pg.Pool({ ...this.connection, max: this.max, types: ROW_TYPES });
    this.onConnectionError = opts.onConnectionError ?? (() => {});
    this.pool.on('error', (err) => this.connectionLost(err));
    this.outage = new OutageTracker(opts.onOutage ?? (() => {}));
    this.direct = new Runs(<R extends pg.QueryResultRow>(statement: Statement) => {
      const ran = this.tracked(() => this.single<R>(statement));
      return reads(statement.text) ? ran : ran.finally(() => this.wrote());
    }, this.names);
  }

  private wrote(): void {
    for (const fn of this.writing) fn();
  }

  /**
   * One operation of the store (a statement or a transaction), as the outage tracker and the `onAnswer`
   * hooks see it: a StoreUnavailableError is a failure to reach the database; a result, or an error the
   * server sent (it has a SQLSTATE), is an answer. Anything else (a transaction's own throw) is neither.
   */
  private async tracked<T>(op: () => Promise<T>): Promise<T> {
    const ticket = this.outage.begin();
    try {
      const result = await op();
      this.answered(ticket);
      return result;
    } catch (err) {
      if (err instanceof StoreUnavailableError) {
        if (!this.closed) this.outage.failed(err.cause);
      } else if (sqlState(err) !== undefined) this.answered(ticket);
      throw err;
    }
  }

  private answered(ticket: number): void {
    if (this.closed) return;
    this.outage.answered(ticket);
    for (const fn of this.answering) fn();
  }

  /**
   * One statement outside a transaction (its own, implicit one), on a connection checked out for it.
   * (pool.query would end the connection after any failed statement, a unique violation included.) A
   * statement PostgreSQL aborted to break a deadlock (two UPDATEs of several plans meeting in opposite
   * orders) changed nothing and runs again, as in `tx`. A connection whose prepared statement went stale is
   * ended and the statement run on another, as many times as the pool has connections.
   */
  private async single<R extends pg.QueryResultRow>(statement: Statement): Promise<pg.QueryResult<R>> {
    for (let attempt = 1, stale = 0; ; attempt++) {
      const { client, release } = await this.checkout();
      let staleErr: Error | undefined;
      try {
        return await client.query<R>(statement);
      } catch (err) {
        if (isStalePlan(err) && stale++ < this.max) staleErr = err as Error;
        else if (!RETRYABLE.has(sqlState(err) ?? '') || attempt >= TX_ATTEMPTS) throw unavailable(err);
      } finally {
        release(staleErr);
      }
      if (!staleErr) await backoff(attempt);
    }
  }

  rows<R>(text: string, values?: readonly unknown[]): Promise<R[]> {
    return this.direct.rows<R>(text, values);
  }

  row<R>(text: string, values?: readonly unknown[]): Promise<R | undefined> {
    return this.direct.row<R>(text, values);
  }

  value<V>(text: string, values?: readonly unknown[]): Promise<V | undefined> {
    return this.direct.value<V>(text, values);
  }

  exec(text: string, values?: readonly unknown[]): Promise<number> {
    return this.direct.exec(text, values);
  }

  /**
   * Runs `fn` in one transaction at READ COMMITTED, on one connection. What a transaction decides on, it
   * locks first (SELECT ... FOR UPDATE, an advisory lock): under READ COMMITTED each statement sees what was
   * committed before it began, and an UPDATE or a row lock that meets a row another transaction changed
   * waits for it, then goes on with the row's new version if it still matches (mvcc, "Read Committed
   * Isolation Level"). When PostgreSQL aborts the transaction to break a deadlock (or a serialization
   * failure), it is run again from the start, a few times: `fn` must only read and write the database.
   */
  tx<T>(fn: (q: Queries) => Promise<T>): Promise<T> {
    return this.tracked(async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.once(fn);
        } catch (err) {
          const again = RETRYABLE.has(sqlState(err) ?? '') || isStalePlan(err);
          if (attempt >= TX_ATTEMPTS || !again) throw unavailable(err);
          await backoff(attempt);
        }
      }
    }).finally(() => this.wrote());
  }

  private async once<T>(fn: (q: Queries) => Promise<T>): Promise<T> {
    const { client, release } = await this.checkout();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      try {
        const result = await fn(new Runs((statement) => client.query(statement), this.names));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        // A connection that cannot even roll back is not given back to the pool; nor is one whose prepared
        // statement went stale.
        await client.query('ROLLBACK').catch((rollback: Error) => {
          broken = rollback;
        });
        if (isStalePlan(err)) broken ??= err as Error;
        throw err;
      }
    } finally {
      release(broken);
    }
  }

  /**
   * A connection of the pool, for one statement, one transaction or a migration. While it is checked out its lost
   * connection is reported here (the pool listens only to idle ones); the statement running on it, or the
   * next one, fails, and the pool drops the connection when it is released. `release(err)` ends it
   * whatever its state.
   */
  async checkout(): Promise<{ client: pg.PoolClient; release: (err?: Error) => void }> {
    const client = await this.pool.connect().catch((err: unknown) => {
      throw unavailable(err);
    });
    const lost = (err: Error) => this.connectionLost(err);
    client.on('error', lost);
    return {
      client,
      release: (err) => {
        client.removeListener('error', lost);
        client.release(err);
      },
    };
  }

  private connectionLost(err: Error): void {
    if (!this.closed) this.onConnectionError(err);
  }

  /**
   * Calls `fn` each time the database answers an operation of the pool (cheap: it runs after every
   * statement). The wake-up listener connects again at once on it when its connection is down.
   */
  onAnswer(fn: () => void): void {
    this.answering.push(fn);
  }

  /**
   * Calls `fn` when a transaction, or a statement outside one that is not a SELECT, has ended (committed,
   * rolled back or failed): whatever this process wrote is in the database, or never will be. Values kept
   * by the store (versions.ts) are read again after it.
   */
  onWrite(fn: () => void): void {
    this.writing.push(fn);
  }

  /** Runs `fn` when the database is closed, before the pool ends (the wake-up listener's client). */
  onClose(fn: () => Promise<void>): void {
    this.closing.push(fn);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.closing.map((fn) => fn()));
    await this.pool.end();
  }
}

/**
 * Network errors of node, and SQLSTATE class 08 (connection exception) and 57P01-57P03 (the server shutting
 * down or starting: admin_shutdown, crash_shutdown, cannot_connect_now;
 * https://www.postgresql.org/docs/current/errcodes-appendix.html). node-postgres reports a connection closed
 * under a query as "Connection terminated unexpectedly" without a code.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

function isConnectionFailure(err: unknown): boolean {
  const code = String((err as { code?: unknown })?.code ?? '');
  if (NETWORK_CODES.has(code) || code.startsWith('08') || ['57P01', '57P02', '57P03'].includes(code))
    return true;
  return /Connection terminated|timeout exceeded when trying to connect/.test((err as Error)?.message ?? '');
}

/** A connection failure as StoreUnavailableError (its cause kept); any other error as it is. */
function unavailable(err: unknown): unknown {
  return isConnectionFailure(err) && !(err instanceof StoreUnavailableError)
    ? new StoreUnavailableError(err)
    : err;
}

/** A short random wait before running a transaction again, longer after each attempt. */
function backoff(attempt: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
}

/** The SQLSTATE of a database error (pg's DatabaseError.code), if it is one. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * A prepared statement whose result columns changed since it was prepared on this connection (a migration
 * added a column to a table read with `SELECT *`): PostgreSQL refuses to run it again. Running the text on a
 * connection that has not prepared it works.
 */
function isStalePlan(err: unknown): boolean {
  return sqlState(err) === '0A000' && /cached plan must not change result type/.test((err as Error).message);
}

// ---- building a listing's query

/** The values of a statement, numbered as they are added: `p.add(v)` is the placeholder to write. */
export class Params {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  /** A placeholder for each value, comma-separated (for `IN (...)`). */
  list(values: readonly unknown[]): string {
    return values.map((v) => this.add(v)).join(', ');
  }
}

/** JSON text of a value for a json column (null stays null). */
export function json(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
