import Database from 'better-sqlite3';
import pg from 'pg';

// The audit's read access to the store, whichever it is: one set of queries for both. They are written in the
// SQL that SQLite and PostgreSQL share (`IS DISTINCT FROM`, a name on every derived table, no JSON functions:
// JSON is parsed here), with `?` placeholders, which become $1, $2 ... for PostgreSQL. Rows come back the same
// from both: times and counts as numbers (PostgreSQL's bigint, which node-postgres hands over as strings, is
// read as a number: every value the audit reads, milliseconds since the epoch or counts, is far below 2^53),
// JSON columns as their text, as SQLite stores them.

export interface AuditDb {
  readonly kind: 'sqlite' | 'postgres';
  all<T>(sql: string, ...params: unknown[]): Promise<T[]>;
  get<T>(sql: string, ...params: unknown[]): Promise<T | undefined>;
  close(): Promise<void>;
}

/** The SQLite file, read-only (the daemon has exited, or is down between a kill and its restart). */
export function openSqliteAudit(file: string): AuditDb {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const statements = new Map<string, Database.Statement>();
  const prepared = (sql: string) => {
    let s = statements.get(sql);
    if (!s) {
      s = db.prepare(sql);
      statements.set(sql, s);
    }
    return s;
  };
  return {
    kind: 'sqlite',
    all: async <T>(sql: string, ...params: unknown[]) => prepared(sql).all(...params) as T[],
    get: async <T>(sql: string, ...params: unknown[]) => prepared(sql).get(...params) as T | undefined,
    close: async () => {
      db.close();
    },
  };
}

// PostgreSQL type oids (pg_type): bigint, numeric, json, jsonb.
const INT8 = 20;
const NUMERIC = 1700;
const JSON_OID = 114;
const JSONB = 3802;

const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
    if (oid === JSON_OID || oid === JSONB) return (value: string) => value;
    return pg.types.getTypeParser(oid, format as 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** `?` placeholders to $1, $2 ... (the audit's queries have no `?` inside a literal). */
export function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** One connection to the database at `url`. */
export async function openPostgresAudit(url: string): Promise<AuditDb> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000, types });
  await client.connect();
  return {
    kind: 'postgres',
    all: async <T>(sql: string, ...params: unknown[]) =>
      (await client.query(numbered(sql), params)).rows as T[],
    get: async <T>(sql: string, ...params: unknown[]) =>
      (await client.query(numbered(sql), params)).rows[0] as T | undefined,
    close: () => client.end(),
  };
}
