import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { loadMigrations } from './migrations.js';
import { shownUrl } from './open.js';
import { PgDb, type Queries } from './postgres/db.js';
import { openPostgresStore } from './postgres/index.js';
import { SchemaTooNewError } from './store.js';

// `drydock migrate-store`: everything of a SQLite store copied into an empty PostgreSQL database, in one
// transaction on the target, with the rows of each table counted on both sides.
//
// Facts this module relies on:
// - better-sqlite3 (node_modules/better-sqlite3/lib/database.js): `readonly` opens the file without write
//   access, `fileMustExist` refuses a missing file instead of creating one. In WAL mode a read transaction
//   (BEGIN, then the first read) sees one snapshot of the file until it ends, whatever is written meanwhile
//   (sqlite.org, "Isolation In SQLite").
//   `stmt.safeIntegers()` reads integers as BigInt, exact beyond 2^53.
// - node-postgres (node_modules/pg/lib/utils.js prepareValue): a Buffer is sent as it is (bytea), a bigint or
//   number as its text; a boolean as 'true' / 'false'. The protocol counts a statement's parameters in 16
//   bits (pg-protocol serializer: addInt16), so one statement takes at most 65,535. Rows go through PgDb's
//   queries (postgres/db.ts), which put U+FFFD in place of NUL in text, as the PostgreSQL store writes it.
// - PostgreSQL (sql-insert): a value for a GENERATED ALWAYS identity column is taken only with OVERRIDING
//   SYSTEM VALUE, and the column's sequence does not move. pg_get_serial_sequence names an identity column's
//   sequence too (functions-info). setval is not undone by a rollback (functions-sequence), so it runs last.
// - PostgreSQL (explicit-locking): EXCLUSIVE mode lets other transactions only read the table; their
//   INSERT, UPDATE and DELETE (ROW EXCLUSIVE) wait until this transaction ends.

/** A refusal or failure of the copy, said in one line with what to do (the CLI exits 1). */
export class MigrateStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrateStoreError';
  }
}

/**
 * A table copied, in an order that keeps the target's foreign keys (a row's parent is copied before it).
 * `key`: what the source is read in order of, page by page (SQLite's rowid, or the primary key of a table
 * WITHOUT ROWID). `rowidAs`: the target's identity column that takes the source's rowid: the order of arrival
 * (deliveries.seq), or a place in the log that other rows name (run_events.id: notifications.event_rowid,
 * the notifier's old cursor in scheduler_state and each reaction's cursor in reaction_cursors).
 */
interface CopiedTable {
  name: string;
  key: string[];
  rowidAs?: string;
}

const ROWID = ['rowid'];

const COPIED_TABLES: readonly CopiedTable[] = [
  { name: 'api_tokens', key: ROWID },
  { name: 'ui_sessions', key: ['id_hash'] },
  { name: 'sessions', key: ROWID },
  { name: 'cron_jobs', key: ROWID },
  { name: 'job_slots', key: ROWID },
  { name: 'runs', key: ROWID },
  { name: 'conversation_messages', key: ROWID },
  { name: 'conversation_frames', key: ROWID },
  { name: 'run_events', key: ROWID, rowidAs: 'id' },
  { name: 'questions', key: ROWID },
  { name: 'plans', key: ROWID },
  { name: 'decisions', key: ROWID },
  { name: 'tool_approvals', key: ROWID },
  { name: 'tool_calls', key: ROWID },
  { name: 'triggers', key: ROWID },
  { name: 'deliveries', key: ROWID, rowidAs: 'seq' },
  { name: 'trigger_fires', key: ROWID },
  { name: 'trigger_fire_counts', key: ['trigger_id', 'minute'] },
  { name: 'notifications', key: ROWID },
  { name: 'scheduler_state', key: ROWID },
  { name: 'reaction_cursors', key: ['name'] },
  { name: 'spend_cap_notices', key: ROWID },
];

/**
 * Tables of both schemas that are not copied: each database keeps its own migration history, and the plan
 * queue's change counter only has to move when the plans change (the copy's commit moves it).
 */
const NOT_COPIED = new Set(['schema_migrations', 'change_counters']);

export interface MigrateStoreOptions {
  /** The SQLite database file (data_dir/drydock.db). Only read. */
  from: string;
  /** postgres://user:password@host:port/database */
  to: string;
  /** When the target's migrations are recorded as applied. */
  now: number;
  /** Rows read and written at a time, at most (default 500; fewer when a table has many columns). */
  batchRows?: number;
  /** Bytes of text and blobs read and written at a time, about (default 8 MiB; at least one row). */
  batchBytes?: number;
}

export interface TableCount {
  table: string;
  /** Rows in the source. */
  source: number;
  /** Rows in the target after the copy, counted in the copy's transaction. */
  target: number;
}

export interface MigrateStoreReport {
  /** The source's schema version (the latest this build knows). */
  sourceVersion: number;
  /** The target's migrations applied by this run (empty when its schema was up to date). */
  targetMigrated: number[];
  tables: TableCount[];
}

const DEFAULT_BATCH_ROWS = 500;
const DEFAULT_BATCH_BYTES = 8 * 1024 * 1024;
const MAX_PARAMETERS = 65_535;

/**
 * Copies every table of the SQLite store at `from` into the PostgreSQL database at `to`: the source must be
 * at the latest SQLite schema this build knows; the target is migrated first and must hold no drydock rows.
 * All rows are written in one transaction on the target, which also counts them: on any failure nothing
 * stays written. Throws MigrateStoreError, whose message never shows the URL's password.
 */
export async function migrateStore(opts: MigrateStoreOptions): Promise<MigrateStoreReport> {
  const target = shownUrl(opts.to);
  if (!/^postgres(ql)?:\/\//.test(opts.to)) {
    throw new MigrateStoreError(`the target must be a postgres:// or postgresql:// URL, not ${target}`);
  }
  const source = openSource(opts.from);
  try {
    const sourceVersion = checkSourceSchema(source, opts.from);
    const targetMigrated = await migrateTarget(opts.to, target, opts.now);
    const db = new PgDb({ url: opts.to, max: 1 });
    try {
      // One snapshot of the source for every read below, also if the transaction on the target is run again.
      source.exec('BEGIN');
      const at: Progress = { table: null };
      const tables = await db
        .tx((q) => copyAll(q, source, target, opts, at))
        .catch((err: unknown) => {
          throw err instanceof MigrateStoreError ? err : targetError(err, target, at.table);
        });
      return { sourceVersion, targetMigrated, tables };
    } finally {
      if (source.inTransaction) source.exec('ROLLBACK');
      await db.close();
    }
  } finally {
    source.close();
  }
}

// ---- the source

function openSource(file: string): Database.Database {
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    // The first read fails on a file that is not a database.
    db.prepare('SELECT COUNT(*) FROM sqlite_master').get();
    return db;
  } catch (err) {
    const code = String((err as { code?: unknown }).code ?? '');
    if (code === 'SQLITE_NOTADB') throw new MigrateStoreError(`the source ${file} is not a SQLite database`);
    throw new MigrateStoreError(`the source ${file} cannot be opened: ${firstLine(err)}`);
  }
}

/** The source's schema version, if it is the latest this build knows; refuses any other. */
function checkSourceSchema(db: Database.Database, file: string): number {
  const latest = loadMigrations().length;
  const recorded = db
    .prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`)
    .get();
  if (!recorded) {
    throw new MigrateStoreError(`the source ${file} is not a drydock database (it has no schema_migrations)`);
  }
  const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
  const current = row.v ?? 0;
  if (current < latest) {
    throw new MigrateStoreError(
      `the source ${file} is at schema version ${current}, this drydock copies from version ${latest}: ` +
        `run \`drydock migrate --data-dir ${dirname(file)}\` with this drydock first`,
    );
  }
  if (current > latest) {
    throw new MigrateStoreError(
      `the source ${file} is at schema version ${current}, newer than this drydock knows (${latest}): ` +
        'run migrate-store with the drydock release that wrote it',
    );
  }
  return current;
}

// ---- the target

/** Applies the target's pending migrations (the store's own, under its advisory lock). */
async function migrateTarget(url: string, shown: string, now: number): Promise<number[]> {
  let store: Awaited<ReturnType<typeof openPostgresStore>> | undefined;
  try {
    store = await openPostgresStore({ url, migrate: false, poolSize: 1 });
    return await store.migrateNow(now);
  } catch (err) {
    if (err instanceof SchemaTooNewError) throw new MigrateStoreError(`the target ${shown}: ${err.message}`);
    throw targetError(err, shown);
  } finally {
    await store?.close();
  }
}

/** Why the target failed (while copying `table`, if known), in one line without the URL's password. */
function targetError(err: unknown, shown: string, table: string | null = null): MigrateStoreError {
  const code = String((err as { code?: unknown }).code ?? '');
  const words: Record<string, string> = {
    ECONNREFUSED: 'cannot be reached (connection refused)',
    ENOTFOUND: 'cannot be reached (no such host)',
    EAI_AGAIN: 'cannot be reached (name lookup failed)',
    ETIMEDOUT: 'cannot be reached (timed out)',
    EHOSTUNREACH: 'cannot be reached (host unreachable)',
    // SQLSTATEs (errcodes-appendix): invalid_password, invalid_authorization_specification,
    // invalid_catalog_name.
    '28P01': 'refused the login',
    '28000': 'refused the login',
    '3D000': 'does not exist (create it first)',
  };
  const what = words[code];
  if (what) return new MigrateStoreError(`the target ${shown} ${what}: ${firstLine(err)}`);
  // A constraint's violation names the row in `detail` (pg's DatabaseError), e.g. the key not found.
  const detail = (err as { detail?: unknown }).detail;
  const why = typeof detail === 'string' ? `${firstLine(err)} (${firstLine(detail)})` : firstLine(err);
  const where = table ? ` at table ${table}` : '';
  return new MigrateStoreError(`copying into ${shown} failed${where}, nothing was written: ${why}`);
}

/** The table being copied, for the message of a failure. */
interface Progress {
  table: string | null;
}

// ---- the copy, in the target's transaction

interface Column {
  name: string;
  /** information_schema.columns.data_type: boolean, bigint, integer, text, json, bytea, ... */
  type: string;
}

async function copyAll(
  q: Queries,
  source: Database.Database,
  shown: string,
  opts: MigrateStoreOptions,
  at: Progress,
): Promise<TableCount[]> {
  const names = COPIED_TABLES.map((t) => t.name);
  // LOUD: the tables are locked before they are found empty, so no other writer (a daemon started on the
  // target too early, a second migrate-store) can add a row between the check and the commit.
  await q.exec(`LOCK TABLE ${names.map(quoted).join(', ')} IN EXCLUSIVE MODE`);
  const used: string[] = [];
  for (const name of names) {
    // A boolean is read as 1 or 0 (postgres/db.ts).
    if (await q.value<number>(`SELECT EXISTS (SELECT 1 FROM ${quoted(name)})`)) used.push(name);
  }
  if (used.length) {
    throw new MigrateStoreError(
      `the target ${shown} is not empty (rows in ${used.join(', ')}): migrate-store copies only into a ` +
        'database no drydock has written to; nothing was changed',
    );
  }
  const columns = await targetColumns(q, names);
  checkSameTables(source, columns);
  const counts: TableCount[] = [];
  for (const table of COPIED_TABLES) {
    const cols = columns.get(table.name)!;
    at.table = table.name;
    const copied = await copyTable(q, source, table, cols, opts);
    const inSource = (
      source.prepare(`SELECT COUNT(*) AS n FROM ${quoted(table.name)}`).get() as { n: number }
    ).n;
    const inTarget = (await q.value<number>(`SELECT COUNT(*) FROM ${quoted(table.name)}`)) ?? 0;
    if (copied !== inSource || inTarget !== inSource) {
      throw new MigrateStoreError(
        `${table.name}: ${inSource} rows in the source, ${copied} read, ${inTarget} in the target; ` +
          'nothing was written',
      );
    }
    counts.push({ table: table.name, source: inSource, target: inTarget });
  }
  at.table = null;
  for (const table of COPIED_TABLES) {
    if (!table.rowidAs) continue;
    // The next row the store appends numbers after the copied ones (setval with is_called false: the next
    // nextval returns this value).
    await q.value(
      `SELECT setval(pg_get_serial_sequence($1, $2), COALESCE(MAX(${quoted(table.rowidAs)}), 0) + 1, false)
       FROM ${quoted(table.name)}`,
      [table.name, table.rowidAs],
    );
  }
  return counts;
}

/** The target's columns of each copied table, without the identity columns that take a rowid. */
async function targetColumns(q: Queries, names: string[]): Promise<Map<string, Column[]>> {
  const rows = await q.rows<{ table_name: string; column_name: string; data_type: string }>(
    `SELECT table_name, column_name, data_type FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = ANY($1::text[])
     ORDER BY table_name, ordinal_position`,
    [names],
  );
  const byTable = new Map<string, Column[]>(names.map((n) => [n, []]));
  for (const r of rows) {
    const table = COPIED_TABLES.find((t) => t.name === r.table_name)!;
    if (r.column_name === table.rowidAs) continue;
    byTable.get(r.table_name)!.push({ name: r.column_name, type: r.data_type });
  }
  return byTable;
}

/**
 * The source and the target hold the same tables with the same columns (both schemas are this build's
 * latest, so a difference is a defect of this build, said before anything is copied).
 */
function checkSameTables(source: Database.Database, target: Map<string, Column[]>): void {
  const tables = (
    source
      .prepare(
        `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`,
      )
      .all() as { name: string }[]
  )
    .map((r) => r.name)
    .filter((n) => !NOT_COPIED.has(n));
  const unknown = tables.filter((n) => !target.has(n));
  if (unknown.length) {
    throw new MigrateStoreError(`the source has tables this drydock does not copy: ${unknown.join(', ')}`);
  }
  for (const [name, cols] of target) {
    const inSource = new Set(
      (source.prepare(`SELECT name FROM pragma_table_info(?)`).all(name) as { name: string }[]).map(
        (r) => r.name,
      ),
    );
    const inTarget = new Set(cols.map((c) => c.name));
    const differ = [
      ...[...inSource].filter((c) => !inTarget.has(c)).map((c) => `${c} only in the source`),
      ...[...inTarget].filter((c) => !inSource.has(c)).map((c) => `${c} only in the target`),
    ];
    if (inTarget.size === 0) differ.push('no such table in the target');
    if (differ.length) {
      throw new MigrateStoreError(`the schemas of ${name} differ (${differ.join(', ')}): nothing was copied`);
    }
  }
}

/**
 * Copies one table, a batch at a time: rows are read in `key` order from where the last batch ended, until
 * the batch is full (rows or bytes), then written with one INSERT. The source's reads are synchronous and
 * finish before the write is awaited. How many rows it copied.
 */
async function copyTable(
  q: Queries,
  source: Database.Database,
  table: CopiedTable,
  cols: Column[],
  opts: MigrateStoreOptions,
): Promise<number> {
  const written = table.rowidAs ? [table.rowidAs, ...cols.map((c) => c.name)] : cols.map((c) => c.name);
  const maxRows = Math.max(
    1,
    Math.min(opts.batchRows ?? DEFAULT_BATCH_ROWS, Math.floor(MAX_PARAMETERS / written.length)),
  );
  const maxBytes = opts.batchBytes ?? DEFAULT_BATCH_BYTES;
  const keys = table.key.map((k, i) => `${k === 'rowid' ? k : quoted(k)} AS "__key${i}"`);
  const selected = [...keys, ...cols.map((c) => quoted(c.name))];
  const order = table.key.map((k) => (k === 'rowid' ? k : quoted(k))).join(', ');
  const from = `SELECT ${selected.join(', ')} FROM ${quoted(table.name)}`;
  const first = source.prepare(`${from} ORDER BY ${order}`).safeIntegers(true);
  const next = source
    .prepare(`${from} WHERE (${order}) > (${table.key.map(() => '?').join(', ')}) ORDER BY ${order}`)
    .safeIntegers(true);
  const booleans = new Set(cols.filter((c) => c.type === 'boolean').map((c) => c.name));
  let after: unknown[] | null = null;
  let copied = 0;
  for (;;) {
    const batch: unknown[][] = [];
    let bytes = 0;
    const rows = (after === null ? first.iterate() : next.iterate(...after)) as Iterable<
      Record<string, unknown>
    >;
    for (const raw of rows) {
      const values = cols.map((c) => {
        const v = raw[c.name];
        // SQLite keeps booleans as 1 and 0.
        return booleans.has(c.name) && v !== null ? Number(v) !== 0 : v;
      });
      // A table with rowidAs is read in rowid order: its key is the rowid.
      batch.push(table.rowidAs ? [raw.__key0, ...values] : values);
      bytes += values.reduce<number>((n, v) => n + sizeOf(v), 0);
      after = table.key.map((_, i): unknown => raw[`__key${i}`]);
      // Leaving the loop ends the statement (the iterator's return()), so the connection is free again.
      if (batch.length >= maxRows || bytes >= maxBytes) break;
    }
    if (!batch.length) return copied;
    await insertRows(q, table, written, batch);
    copied += batch.length;
    if (batch.length < maxRows && bytes < maxBytes) return copied;
  }
}

async function insertRows(q: Queries, table: CopiedTable, cols: string[], rows: unknown[][]): Promise<void> {
  const values: unknown[] = [];
  const tuples = rows.map((row) => {
    const marks = row.map((v) => {
      values.push(v);
      return `$${values.length}`;
    });
    return `(${marks.join(', ')})`;
  });
  const overriding = table.rowidAs ? ' OVERRIDING SYSTEM VALUE' : '';
  await q.exec(
    `INSERT INTO ${quoted(table.name)} (${cols.map(quoted).join(', ')})${overriding} VALUES ${tuples.join(', ')}`,
    values,
  );
}

/** About what a value weighs in memory and on the wire. */
function sizeOf(v: unknown): number {
  if (typeof v === 'string') return v.length * 2;
  if (Buffer.isBuffer(v)) return v.length;
  return 8;
}

function quoted(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0] ?? message;
}
