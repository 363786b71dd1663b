import type Database from 'better-sqlite3';
import pg from 'pg';
import type { StoreKind } from '../shared/store-options.js';

// Plain SQL on drydock's database, whichever store holds it: the bench's own statements (the what-if index, a
// statement's query plan, the read-back), written once with `?` placeholders and numbered $1, $2 ... for
// PostgreSQL. Counts come back as numbers (node-postgres returns bigint as text).
//
// Dialects: SQLite's EXPLAIN QUERY PLAN answers rows with a `detail` column; PostgreSQL's EXPLAIN one row per
// line of the plan in a column named "QUERY PLAN" (COSTS OFF leaves the estimates out). A temporary table is
// the session's own in both.

export interface BenchSql {
  kind: StoreKind;
  /** The first row's `n`, as a number (0 when there is no row or it is null). */
  count(sql: string, ...values: unknown[]): Promise<number>;
  exec(sql: string): Promise<void>;
  /** The statement's query plan, its lines joined with "; ". */
  explain(sql: string, ...values: unknown[]): Promise<string>;
  /** Inserts each of `ids` into the one-column table `table`. */
  insertIds(table: string, ids: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

/** On a better-sqlite3 connection the caller owns (close does not close it). */
export function sqliteSql(db: Database.Database): BenchSql {
  return {
    kind: 'sqlite',
    count: async (sql, ...values) => Number((db.prepare(sql).get(...values) as { n?: unknown })?.n ?? 0),
    exec: async (sql) => {
      db.exec(sql);
    },
    explain: async (sql, ...values) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...values) as { detail: string }[])
        .map((r) => r.detail)
        .join('; '),
    insertIds: async (table, ids) => {
      const insert = db.prepare(`INSERT INTO ${table} (id) VALUES (?)`);
      db.transaction(() => {
        for (const id of ids) insert.run(id);
      })();
    },
    close: async () => {},
  };
}

/** On a connection of its own to the PostgreSQL database at `url`, apart from any store's pool. */
export async function postgresSql(url: string): Promise<BenchSql> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const numbered = (sql: string) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  };
  return {
    kind: 'postgres',
    count: async (sql, ...values) =>
      Number((await client.query<{ n?: unknown }>(numbered(sql), values)).rows[0]?.n ?? 0),
    exec: async (sql) => {
      await client.query(sql);
    },
    explain: async (sql, ...values) =>
      (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (COSTS OFF) ${numbered(sql)}`, values)).rows
        .map((r) => r['QUERY PLAN'].trim())
        .join('; '),
    insertIds: async (table, ids) => {
      await client.query(`INSERT INTO ${table} (id) SELECT unnest($1::text[])`, [ids]);
    },
    close: () => client.end(),
  };
}
