import { accessSync, constants, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Config } from './config/schema.js';
import type { Logger } from './logger.js';
import { databaseFile, type OpenedStore, openStore, storeLocation } from './store/open.js';
import {
  SchemaTooNewError,
  type SessionStore,
  StoreUnavailableError,
  type TriggerStore,
} from './store/store.js';
import { type HiddenPaths, isWithin, realPathOf } from './workspace/hidden.js';

// What stops a start, said in one line with its fix. The checks run before drydock creates anything (the
// database, the admin token), so a start that fails leaves nothing behind for the next one to trip over.

/** A start that cannot go on: `message` is one line naming the cause and the fix (the CLI exits 1). */
export class StartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartError';
  }
}

const SET_DATA_DIR = 'set data_dir (DRYDOCK_DATA_DIR, --data-dir) to a writable directory';

/** A directory drydock writes to, as its start-up errors name it. */
interface OwnDir {
  /** "data directory" */
  name: string;
  /** What to do about it. */
  fix: string;
}

const DATA_DIR: OwnDir = { name: 'data directory', fix: SET_DATA_DIR };
const WORK_DIR: OwnDir = {
  name: 'work directory',
  fix: 'set work_dir (DRYDOCK_WORK_DIR) to a writable directory, or unset it to use data_dir',
};

const WORDS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'not a directory',
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'name lookup failed',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  EEXIST: 'already exists',
};

function says(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  return code ? (WORDS[code] ?? code) : (err as Error).message;
}

/**
 * Makes a directory of drydock's (the data directory, the work directory) if it is missing and proves it
 * writable; throws StartError otherwise. The
 * directory is made one level at a time: Node's `mkdir(…, {recursive: true})` never returns for a path whose
 * parent exists but cannot hold it (`/proc/x`: mkdir says ENOENT, the parent EEXIST, and it tries again
 * forever; nodejs/node, same loop as oven-sh/bun#36162).
 */
export function prepareDir(dir: string, own: OwnDir = DATA_DIR): void {
  const missing: string[] = [];
  let at = dir;
  for (;;) {
    const kind = kindOf(at, own);
    if (kind === 'directory') break;
    if (kind === 'other') {
      throw new StartError(
        at === dir
          ? `${own.name} ${dir} is a file, not a directory: ${own.fix}`
          : `${own.name} ${dir} cannot be created: ${at} is a file: ${own.fix}`,
      );
    }
    missing.unshift(at);
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
  }
  for (const path of missing) {
    try {
      mkdirSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && kindOf(path, own) === 'directory') continue;
      throw new StartError(`${own.name} ${dir} cannot be created (mkdir ${path}: ${says(err)}): ${own.fix}`);
    }
  }
  // Access bits say nothing for root on a read-only mount: only a real write tells.
  const probe = join(dir, `.drydock-write-check-${process.pid}`);
  try {
    writeFileSync(probe, '');
  } catch (err) {
    throw new StartError(`${own.name} ${dir} is not writable (${says(err)}): ${own.fix}`);
  } finally {
    rmSync(probe, { force: true });
  }
}

function kindOf(path: string, own: OwnDir): 'directory' | 'other' | 'missing' {
  try {
    return statSync(path).isDirectory() ? 'directory' : 'other';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // ENOTDIR: a parent is a file, which the walk up finds.
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'missing';
    throw new StartError(`${own.name} ${path} cannot be read (${says(err)}): ${own.fix}`);
  }
}

/** Why the HTTP server could not listen, with what to do. */
export function listenError(err: unknown, host: string, port: number): StartError {
  const code = (err as NodeJS.ErrnoException).code;
  switch (code) {
    case 'EADDRINUSE':
      return new StartError(`port ${port} is in use: stop the other process or set DRYDOCK_PORT / --port`);
    case 'EACCES':
      return new StartError(
        `port ${port} needs privileges this process lacks: set DRYDOCK_PORT / --port to 1024 or above`,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartError(
        `cannot listen on ${host}: no such address on this machine: set DRYDOCK_HOST / --host`,
      );
    default:
      return new StartError(`cannot listen on ${host}:${port}: ${says(err)}`);
  }
}

/**
 * The data directory prepared and the store opened (migrated unless `migrate` is false); a database that
 * cannot be opened or written is a StartError. SchemaTooNewError passes through: it says what to do itself.
 * With a `logger`, a PostgreSQL store logs the outages of its database (openStore).
 */
export async function openStoreChecked(
  config: Config,
  now: number,
  migrate = true,
  logger?: Logger,
): Promise<OpenedStore> {
  prepareDir(config.data_dir);
  if (config.work_dir !== null) prepareDir(config.work_dir, WORK_DIR);
  if (config.database_url !== null) {
    let store: OpenedStore | undefined;
    try {
      store = await openStore(config, now, migrate, logger);
      // The pool connects lazily: one round trip proves the database is there (when nothing was migrated).
      await store.schemaVersion();
      return store;
    } catch (err) {
      await store?.close().catch(() => undefined);
      if (err instanceof SchemaTooNewError) throw err;
      throw postgresError(err, storeLocation(config));
    }
  }
  const file = databaseFile(config);
  // SQLite opens a read-only file without complaint and fails at the first write: the admin token.
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    if (!existsSync(path)) continue;
    try {
      accessSync(path, constants.R_OK | constants.W_OK);
    } catch (err) {
      throw new StartError(
        `database ${path} is read-only (${says(err)}): make it writable, or ${SET_DATA_DIR}`,
      );
    }
  }
  try {
    return await openStore(config, now, migrate);
  } catch (err) {
    if (err instanceof SchemaTooNewError) throw err;
    throw storeError(err, file);
  }
}

const SET_DATABASE_URL = 'check database_url (DATABASE_URL), or unset it to use the embedded SQLite store';

/**
 * Why the PostgreSQL database could not be opened, without the URL's password. Codes: node's network errors,
 * and PostgreSQL's SQLSTATE (28P01 wrong password, 28000 no such role or not allowed, 3D000 no such
 * database; https://www.postgresql.org/docs/current/errcodes-appendix.html).
 */
function postgresError(failure: unknown, where: string): StartError {
  const err = failure instanceof StoreUnavailableError ? failure.cause : failure;
  const code = String((err as { code?: unknown }).code ?? '');
  const message = (err as Error).message;
  switch (code) {
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
      return new StartError(
        `database ${where} cannot be reached (${WORDS[code] ?? code}): ${SET_DATABASE_URL}`,
      );
    case '28P01':
    case '28000':
      return new StartError(`database ${where} refused the login (${message}): ${SET_DATABASE_URL}`);
    case '3D000':
      return new StartError(
        `database ${where} does not exist (${message}): create it, or ${SET_DATABASE_URL}`,
      );
    default:
      return new StartError(`database ${where} cannot be opened (${message}): ${SET_DATABASE_URL}`);
  }
}

/** Why the database could not be opened (the schema being too new has its own error). */
function storeError(err: unknown, file: string): StartError {
  const code = String((err as { code?: unknown }).code ?? '');
  const fix = `make ${file} and its directory writable, or ${SET_DATA_DIR}`;
  if (code.startsWith('SQLITE_READONLY')) return new StartError(`database ${file} is read-only: ${fix}`);
  if (code.startsWith('SQLITE_CANTOPEN')) return new StartError(`database ${file} cannot be opened: ${fix}`);
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
    return new StartError(
      `database ${file} is not a drydock database or is damaged: restore it from a backup, or ${SET_DATA_DIR}`,
    );
  }
  return new StartError(`database ${file} cannot be opened (${(err as Error).message}): ${fix}`);
}

/** A workspace the model works in, as a start-up error names it. */
interface ModelWorkspace {
  path: string;
  /** "the workspace of open session ses_…" */
  whose: string;
  /** "the model of that session" */
  model: string;
  /** What else to do once the hidden path is out of it. */
  afterwards: string;
}

/**
 * Refuses a start whose own files (the hidden paths, src/workspace/hidden.ts) lie in a workspace the model
 * works in: an open session's, a trigger's, a configured GitHub clone's. The API refuses such a workspace when
 * it is named (workspace/dir.ts); this catches one named before that check, or a data directory moved since.
 * Runs after the store is open and before anything is made (the admin token), like the checks above.
 */
export async function checkWorkspaces(
  store: SessionStore & TriggerStore,
  config: Config,
  hidden: HiddenPaths,
): Promise<void> {
  const own = hidden.real();
  for await (const ws of modelWorkspaces(store, config)) {
    const real = realPathOf(ws.path);
    const h = own.find((entry) => isWithin(real, entry.real));
    if (h === undefined) continue;
    const fix = h.fix ? `${h.fix(ws.path)} (${ws.afterwards})` : ws.afterwards;
    throw new StartError(
      `${h.name} ${h.path} lies inside ${ws.path}, ${ws.whose}: ${ws.model} could read and change it; ${fix}`,
    );
  }
}

/** Every workspace the model may work in: open sessions (page by page), triggers', GitHub clones. */
async function* modelWorkspaces(
  store: SessionStore & TriggerStore,
  config: Config,
): AsyncGenerator<ModelWorkspace> {
  let cursor: string | undefined;
  do {
    const page = await store.listSessions({ status: 'open', limit: 500, cursor });
    for (const s of page.items) {
      yield {
        path: s.workspace,
        whose: `the workspace of open session ${s.id}`,
        model: 'the model of that session',
        afterwards: 'then close the session if it is not wanted',
      };
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  for (const t of await store.listTriggers({})) {
    if (t.workspace === null) continue;
    yield {
      path: t.workspace,
      whose: `the workspace of trigger ${t.id} (${t.name})`,
      model: "the model of the trigger's runs",
      afterwards: "then change the trigger's workspace if it should stay there",
    };
  }
  for (const [name, repo] of Object.entries(config.github.repositories)) {
    yield {
      path: repo.path,
      whose: `the clone of github.repositories.${name}`,
      model: "the model of its pull requests' runs",
      afterwards: `or map ${name} to a clone elsewhere`,
    };
  }
}
