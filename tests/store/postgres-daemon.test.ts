import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { loadPostgresMigrations } from '../../src/store/postgres/migrate.js';
import { runCli } from '../cli/cli-process.js';
import { approveAs, calls, planned, proposes, runUntil, says, type World, world } from '../plans/helpers.js';
import { ADMIN_TOKEN, readSse } from '../support/daemon.js';
import { git } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import {
  type FreshDatabase,
  freshDatabase,
  POSTGRES_URL,
  postgresAvailable,
  withClient,
} from '../support/postgres.js';
import { type DaemonProcess, serveProcess } from '../support/process-daemon.js';

// The daemon with `database_url` set. Built (`node dist/src/cli/main.js`): it starts on a fresh PostgreSQL
// database and is ready, keeps its state there across a restart, stops with exit 0 on SIGTERM; `drydock
// migrate` reports the schema; a start that cannot use the database fails in one line. Nowhere, in any of
// them, the database's password. In process: a plan proposed, approved and executed, on PostgreSQL.
//
// The password: the test server trusts local logins, and under trust authentication PostgreSQL lets anyone
// who can connect log in as the user they name, without asking for a password
// (https://www.postgresql.org/docs/current/auth-trust.html); node-postgres sends a password only when the
// server asks for one. So a made-up password in the URL is carried everywhere the URL goes and never
// checked: anything that prints it shows it.

const SUITE = 'drydock serve on PostgreSQL';
const up = await postgresAvailable(SUITE);

/** No Messages API listens here: these tests never start a run. */
const NO_MODEL = 'http://127.0.0.1:9';
const SET_DATABASE_URL = 'check database_url (DATABASE_URL), or unset it to use the embedded SQLite store';

/** `url` with a password: its own, or a made-up one (see above); and that password. */
function withPassword(url: string): { url: string; password: string } {
  const u = new URL(url);
  if (!u.password) u.password = 'pw-never-shown-5e0c1a';
  return { url: u.toString(), password: decodeURIComponent(u.password) };
}

/** How drydock names a database: its URL with `***` for the password. */
function shown(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.username}:***@${u.host}${u.pathname}`;
}

/** POSTGRES_URL with a password, another user or another database. */
function variant(change: { user?: string; database?: string }): { url: string; password: string } {
  const u = new URL(POSTGRES_URL);
  if (change.user) u.username = change.user;
  if (change.database) u.pathname = `/${change.database}`;
  return withPassword(u.toString());
}

describe.skipIf(!up)(SUITE, () => {
  const children: ChildProcess[] = [];
  const processes: DaemonProcess[] = [];
  const databases: FreshDatabase[] = [];
  const dirs: { remove(): void }[] = [];
  const worlds: World[] = [];
  let model: ModelServer | undefined;

  afterEach(async () => {
    for (const w of worlds.splice(0)) await w.d.stop();
    await model?.close();
    model = undefined;
    for (const p of processes.splice(0).reverse()) await p.close();
    for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
    for (const d of databases.splice(0)) await d.drop();
    for (const d of dirs.splice(0)) d.remove();
  });

  function dir(): string {
    const d = tempDir('drydock-pg-daemon-');
    dirs.push(d);
    return d.path;
  }

  it('starts ready on a fresh database, keeps a session across a restart, and exits 0 on SIGTERM', async () => {
    const home = dir();
    const workspace = join(home, 'workspace');
    mkdirSync(workspace);
    const db = await freshDatabase();
    databases.push(db);
    // The daemon is given the database's URL with a password in it.
    const secret = withPassword(db.url);
    const start = (data: string) =>
      serveProcess(
        join(home, data),
        NO_MODEL,
        children,
        { DATABASE_URL: secret.url, DRYDOCK_LOG_LEVEL: 'debug' },
        { store: db },
      );
    const first = await start('data');
    processes.push(first);

    const ready = await fetch(`${first.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { store: true, scheduler: true } });

    const created = await first.api('POST', '/v1/sessions', { workspace });
    expect(created.status).toBe(201);
    expect(await first.stop()).toBe(0);
    expect(first.stdout()).toContain('"msg":"drydock stopped"');
    // The state is in the database: no SQLite file was made.
    expect(existsSync(join(home, 'data', 'drydock.db'))).toBe(false);

    // A restart on another, empty data directory: the session is still there.
    const again = await start('data-2');
    processes.push(again);
    const read = await again.api('GET', `/v1/sessions/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: created.body.id, workspace: created.body.workspace });
    expect(await again.stop()).toBe(0);

    for (const p of [first, again]) {
      expect(p.stdout() + p.stderr()).not.toContain(secret.password);
    }
  });

  it('drydock migrate applies the schema, then says it is up to date, naming the database without its password', async () => {
    const db = await freshDatabase();
    databases.push(db);
    const { url, password } = withPassword(db.url);
    const env = { DATABASE_URL: url, DRYDOCK_DATA_DIR: dir(), DRYDOCK_LOG_LEVEL: 'debug' };
    const versions = loadPostgresMigrations().map((m) => m.version);
    const latest = Math.max(...versions);

    const first = await runCli(['migrate'], env);
    expect(first).toEqual({
      code: 0,
      stdout: `${shown(url)}: schema at version ${latest} (applied ${versions.join(', ')})\n`,
      stderr: '',
    });
    const second = await runCli(['migrate'], env);
    expect(second).toEqual({
      code: 0,
      stdout: `${shown(url)}: schema at version ${latest} (up to date)\n`,
      stderr: '',
    });
    expect(shown(url)).toContain(db.name);
    expect(shown(url)).not.toContain(password);
  });

  it('drydock token create makes no schema in an empty database unless --init; it names the database without its password', async () => {
    const db = await freshDatabase();
    databases.push(db);
    const { url, password } = withPassword(db.url);
    const env = { DATABASE_URL: url, DRYDOCK_DATA_DIR: dir(), DRYDOCK_LOG_LEVEL: 'warn' };
    const args = ['token', 'create', '--name', 'ann', '--role', 'viewer'];
    const refused = await runCli(args, env);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(
      `token create: no drydock database in ${shown(url)} (it has no drydock schema)`,
    );
    const tables = await withClient(db.url, (c) =>
      c.query("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'"),
    );
    expect(tables.rows[0].n).toBe(0);
    const made = await runCli([...args, '--init'], env);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^ddk_/);
    expect(made.stderr).toContain(`created in ${shown(url)};`);
    // The database has drydock's schema now: the next token needs no --init.
    expect((await runCli(['token', 'create', '--name', 'bo', '--role', 'viewer'], env)).code).toBe(0);
    for (const r of [refused, made]) expect(r.stdout + r.stderr).not.toContain(password);
  });

  it('a start on a database that does not exist fails in one line, exit 1, without the password', async () => {
    const name = `drydock_no_such_database_${process.pid}`;
    const { url, password } = variant({ database: name });
    const r = await runCli(['serve'], {
      DATABASE_URL: url,
      DRYDOCK_DATA_DIR: join(dir(), 'data'),
      DRYDOCK_PORT: '0',
      DRYDOCK_LOG_LEVEL: 'debug',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `drydock: database ${shown(url)} does not exist (database "${name}" does not exist): create it, or ${SET_DATABASE_URL}\n`,
    );
    expect(r.stdout + r.stderr).not.toContain(password);
  });

  it('a start whose login is refused fails in one line, exit 1, without the password', async () => {
    const user = 'drydock_no_such_role';
    const { url, password } = variant({ user });
    const r = await runCli(['serve'], {
      DATABASE_URL: url,
      DRYDOCK_DATA_DIR: join(dir(), 'data'),
      DRYDOCK_PORT: '0',
      DRYDOCK_LOG_LEVEL: 'debug',
    });
    expect(r.code).toBe(1);
    // Under trust authentication an unknown role is refused as such (SQLSTATE 28000); a server that asks
    // for passwords refuses the password instead (28P01): either way, a refused login.
    const line = new RegExp(
      `^drydock: database ${escaped(shown(url))} refused the login \\([^\\n]+\\): ${escaped(SET_DATABASE_URL)}\\n$`,
    );
    expect(r.stderr).toMatch(line);
    expect(r.stderr).toContain(user);
    expect(r.stdout + r.stderr).not.toContain(password);
  });

  it('in process: a job plans, an approver approves, the plan executes and commits; stop() drops the database', async () => {
    model = await startModelServer();
    const w = await world(model, { execute_mode: 'edits' }, undefined, 'postgres');
    worlds.push(w);
    expect(w.d.config.database_url).toBe(w.d.database!.url);
    model.enqueue(
      proposes(),
      calls('w1', 'Write', { file_path: 'hello.txt', content: 'hello, world\n' }),
      says('Created hello.txt.'),
    );
    const { plan } = await planned(w);
    expect(plan).toMatchObject({ status: 'pending_approval', workspace_commit: w.head });
    const exec = await approveAs(w.d, plan, await w.token('alice'));
    const done = await runUntil(w.d, exec.id, ['completed', 'failed']);
    expect(done.status, done.error).toBe('completed');
    expect(done.changed_files).toEqual(['hello.txt']);
    expect(git(w.repo, 'show', `drydock/${plan.id}:hello.txt`)).toBe('hello, world');
    expect((await w.d.api('GET', `/v1/plans/${plan.id}`)).body.status).toBe('executed');
    // The run's events, replayed from the database.
    const events = await readSse(`${w.d.daemon.url}/v1/runs/${exec.id}/events`, ADMIN_TOKEN);
    expect(events.at(-1)).toMatchObject({ event: 'run_finished', data: { status: 'completed' } });

    const url = w.d.database!.url;
    expect(await connectError(url)).toBeNull();
    await w.d.stop();
    // 3D000: invalid_catalog_name, no such database
    // (https://www.postgresql.org/docs/current/errcodes-appendix.html).
    expect(await connectError(url)).toBe('3D000');
  });
});

/** The SQLSTATE of connecting to the database at `url`, or null when it connects. */
async function connectError(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    return null;
  } catch (err) {
    return String((err as { code?: unknown }).code);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
