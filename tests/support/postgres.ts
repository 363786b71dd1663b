import pg from 'pg';

// The PostgreSQL server the tests use, and a fresh database on it for a test or a test file.
//
// The rule for suites that need the server: they run when it answers; when it does not, they are skipped
// with one line on stderr saying why, unless DRYDOCK_REQUIRE_POSTGRES=1 (set by CI), which makes a missing
// server a failure instead.
//
// node-postgres (https://node-postgres.com/apis/client): `new Client({ connectionString,
// connectionTimeoutMillis })`, then `connect()`, `query(text)` and `end()`; without a timeout a connect
// to an address that drops packets waits for the operating system's.
// PostgreSQL: CREATE DATABASE and DROP DATABASE cannot run inside a transaction block (a single query on a
// client is its own statement, outside one); DROP DATABASE ... WITH (FORCE) (since 13) ends the sessions
// still connected to it first; CREATE DATABASE ... TEMPLATE copies a database that no other session is
// connected to (docs: sql-createdatabase, sql-dropdatabase, manage-ag-templatedbs).

/** The maintenance database the tests connect to for creating and dropping theirs. */
export const POSTGRES_URL =
  process.env.DRYDOCK_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const CONNECT_TIMEOUT_MS = 3_000;

/** One client connected to `url` for `use`, ended after it. */
export async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** Why no server can be used at POSTGRES_URL, or null when one answers. */
export async function postgresUnavailable(): Promise<string | null> {
  try {
    await withClient(POSTGRES_URL, (c) => c.query('SELECT 1'));
    return null;
  } catch (err) {
    return `no PostgreSQL server answers at ${redacted(POSTGRES_URL)} (${(err as Error).message || String(err)})`;
  }
}

/**
 * Whether the PostgreSQL suite named `suite` runs. When no server answers it prints one line to stderr and
 * answers false, or throws when DRYDOCK_REQUIRE_POSTGRES=1.
 */
export async function postgresAvailable(suite: string): Promise<boolean> {
  const why = await postgresUnavailable();
  if (why === null) return true;
  if (process.env.DRYDOCK_REQUIRE_POSTGRES === '1') {
    throw new Error(`${suite}: DRYDOCK_REQUIRE_POSTGRES=1 but ${why}`);
  }
  process.stderr.write(`${suite}: skipped, ${why}; set DRYDOCK_TEST_POSTGRES_URL to use another server\n`);
  return false;
}

export interface FreshDatabase {
  name: string;
  /** The database's URL: POSTGRES_URL with the database's name as its path. */
  url: string;
  /** Drops the database, ending any session still connected to it. */
  drop(): Promise<void>;
}

let made = 0;

/**
 * Creates a database of a unique name (`<prefix>_<pid>_<time>_<n>`) on the server at `server` (default
 * POSTGRES_URL; the benchmarks pass theirs): empty, or a copy of `template` (a database no one is connected
 * to).
 */
export async function freshDatabase(
  opts: { template?: string; server?: string; prefix?: string } = {},
): Promise<FreshDatabase> {
  const server = opts.server ?? POSTGRES_URL;
  made += 1;
  const name = `${opts.prefix ?? 'drydock_test'}_${process.pid}_${Date.now().toString(36)}_${made}`;
  const from = opts.template ? ` TEMPLATE ${quoted(opts.template)}` : '';
  await withClient(server, (c) => c.query(`CREATE DATABASE ${quoted(name)}${from}`));
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => {
      await withClient(server, (c) => c.query(`DROP DATABASE IF EXISTS ${quoted(name)} WITH (FORCE)`));
    },
  };
}

/**
 * The environment variable that names a database the PostgreSQL store has migrated, made by the tests' global
 * setup (tests/support/global-setup.ts) and dropped after the last test file; unset when none was made.
 */
export const TEMPLATE_ENV = 'DRYDOCK_TEST_POSTGRES_TEMPLATE';

/**
 * A fresh database holding the store's schema as it opens on an empty one: a copy of the migrated template
 * named in TEMPLATE_ENV, which costs one CREATE DATABASE instead of every migration. Without a template (a
 * run without the global setup) it is empty, and the store migrates it when it opens.
 */
export async function migratedDatabase(opts: { prefix?: string } = {}): Promise<FreshDatabase> {
  const template = process.env[TEMPLATE_ENV];
  return freshDatabase({ ...opts, ...(template ? { template } : {}) });
}

function quoted(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/** The URL without its password, for messages. */
function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(an unparsable DRYDOCK_TEST_POSTGRES_URL)';
  }
}
