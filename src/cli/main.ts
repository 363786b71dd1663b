#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config/schema.js';
import { ROLES, type Role } from '../domain/types.js';
import { packageVersion } from '../paths.js';
import type { openStoreChecked } from '../preflight.js';
import { applyMain, exportMain } from './commands/apply.js';
import { closest, str, unknownOption, type Values } from './commands/args.js';
import { runGroup } from './commands/group.js';
import { LOCAL_COMMANDS, localOptionNames, localOptions } from './commands/local.js';
import { REMOTE_GROUPS, topLevelHelp } from './help.js';

// Exit codes: 0 ok, 1 runtime failure, 2 bad usage or configuration.
//
// The local commands load the server's modules (configuration, store, tokens, daemon) inside themselves,
// with `await import`, never at the top of this file: the remote commands only talk HTTP and should not
// pay for them (tests/cli/remote-imports.test.ts holds this).

class UsageError extends Error {}

/** The options of the local command `name`, parsed as its definition (commands/local.ts) says. */
function localArgs(name: string, args: string[], allowPositionals = false) {
  const parsed = parseArgs({ args, options: localOptions(name), allowPositionals });
  const values = parsed.values as Values;
  const positionals: string[] = [...parsed.positionals];
  return { values, positionals, string: (key: string) => str(values, key) };
}

async function config(values: Values): Promise<Config> {
  const { loadConfig } = await import('../config/load.js');
  return loadConfig({
    configPath: str(values, 'config'),
    env: process.env,
    overrides: { port: str(values, 'port'), host: str(values, 'host'), data_dir: str(values, 'data-dir') },
  });
}

/** The store of `cfg`'s data directory, checked (and migrated unless `migrate` is false) as the daemon does. */
async function openStore(cfg: Config, migrate?: boolean): Promise<ReturnType<typeof openStoreChecked>> {
  const preflight = await import('../preflight.js');
  return preflight.openStoreChecked(cfg, Date.now(), migrate);
}

/** Where the store of `cfg` is, as a message names it (the SQLite file, or the URL without its password). */
async function where(cfg: Config): Promise<string> {
  const { storeLocation } = await import('../store/open.js');
  return storeLocation(cfg);
}

/** A local admin command found no database where it looked: it makes none unless told to (`--init`). */
class NoDatabaseError extends Error {}

/**
 * The daemon's store for a local admin command (token create, token revoke, gc): an existing database only,
 * so that a command run in the wrong directory says where it looked rather than making a new database there
 * and a token the daemon does not know. `init` (`token create --init`) makes a new one on purpose.
 */
async function openExistingStore(
  cfg: Config,
  what: string,
  init = false,
): Promise<ReturnType<typeof openStoreChecked>> {
  const { databaseFile, storeLocation } = await import('../store/open.js');
  const refuse = (where: string) =>
    new NoDatabaseError(
      `${what}: no drydock database ${where}. It opens the daemon's own database: run it where the daemon ` +
        "was started, or name the daemon's data directory with --data-dir DIR (or DRYDOCK_DATA_DIR, or the " +
        `config file's data_dir with --config FILE)${what === 'token create' ? '; --init makes a new database there' : ''}`,
    );
  if (!init && cfg.database_url === null && !existsSync(databaseFile(cfg))) {
    throw refuse(`at ${databaseFile(cfg)} (data_dir ${resolve(cfg.data_dir)})`);
  }
  const store = await openStore(cfg, false);
  try {
    const { SchemaTooNewError } = await import('../store/store.js');
    const version = await store.schemaVersion();
    if (version.current === 0 && !init) throw refuse(`in ${storeLocation(cfg)} (it has no drydock schema)`);
    if (version.current > version.latest) throw new SchemaTooNewError(version.current, version.latest);
    await store.migrateNow(Date.now());
    return store;
  } catch (err) {
    await store.close();
    throw err;
  }
}

async function serveCommand(args: string[]): Promise<number> {
  const { values, string } = localArgs('serve', args);
  if (values.help) return help();
  const cfg = await config(values);
  const { createLogger } = await import('../logger.js');
  const logger = createLogger(cfg.log_level);
  const { startDaemon } = await import('../daemon.js');
  const { StartError } = await import('../preflight.js');
  const { SchemaTooNewError } = await import('../store/store.js');
  const configFile = string('config') || process.env.DRYDOCK_CONFIG;
  // What drydock processes that are gone left in the temporary directory (temp.ts); ours go when we stop.
  const { removeOwnTempDirs, removeStaleTempDirs } = await import('../workspace/temp.js');
  const stale = removeStaleTempDirs();
  if (stale.length > 0)
    logger.info({ removed: stale.length }, 'removed temporary directories of stopped daemons');
  const daemon = await startDaemon({
    config: cfg,
    logger,
    ...(configFile ? { configFile: resolve(configFile) } : {}),
  }).catch((err: unknown) => {
    if (err instanceof StartError || err instanceof SchemaTooNewError) throw err;
    // Not foreseen: still one line (the debug log has the stack).
    logger.debug({ err }, 'start failed');
    throw new StartError(`start failed: ${firstLine(err)}`);
  });
  await new Promise<void>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      logger.info({ signal }, 'signal received');
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      daemon
        .stop()
        .then(
          () => undefined,
          (err) => logger.error({ err }, 'error while stopping'),
        )
        .finally(() => {
          removeOwnTempDirs();
          resolve();
        });
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  return 0;
}

async function migrateCommand(args: string[]): Promise<number> {
  const { values } = localArgs('migrate', args);
  if (values.help) return help();
  const cfg = await config(values);
  const store = await openStore(cfg, false);
  const { SchemaTooNewError } = await import('../store/store.js');
  const { storeLocation } = await import('../store/open.js');
  try {
    const before = await store.schemaVersion();
    if (before.current > before.latest) throw new SchemaTooNewError(before.current, before.latest);
    const applied = await store.migrateNow(Date.now());
    const after = await store.schemaVersion();
    process.stdout.write(
      `${storeLocation(cfg)}: schema at version ${after.current}` +
        (applied.length ? ` (applied ${applied.join(', ')})\n` : ' (up to date)\n'),
    );
  } finally {
    await store.close();
  }
  return 0;
}

/** `migrate-store --from FILE --to URL`: the copy and its counts; a refusal is one line and exit 1. */
async function migrateStoreCommand(args: string[]): Promise<number> {
  const { values, string } = localArgs('migrate-store', args);
  if (values.help) return help();
  const from0 = string('from');
  const to = string('to') ?? process.env.DATABASE_URL;
  if (!from0) throw new UsageError('migrate-store: --from FILE (the SQLite database) is required');
  if (!to) throw new UsageError('migrate-store: --to URL (or DATABASE_URL) is required');
  const { migrateStore, MigrateStoreError } = await import('../store/migrate-store.js');
  const { shownUrl } = await import('../store/open.js');
  const from = resolve(from0);
  try {
    const report = await migrateStore({ from, to, now: Date.now() });
    const width = Math.max(5, ...report.tables.map((t) => t.table.length));
    const line = (table: string, source: string | number, target: string | number) =>
      `${table.padEnd(width)}  ${String(source).padStart(8)}  ${String(target).padStart(8)}\n`;
    const sum = (k: 'source' | 'target') => report.tables.reduce((n, t) => n + t[k], 0);
    process.stdout.write(
      `copied ${from} (schema version ${report.sourceVersion}) into ${shownUrl(to)}` +
        (report.targetMigrated.length
          ? ` (migrated to its schema version ${report.targetMigrated.at(-1)})\n`
          : '\n') +
        line('table', 'source', 'target') +
        report.tables.map((t) => line(t.table, t.source, t.target)).join('') +
        line('total', sum('source'), sum('target')),
    );
    return 0;
  } catch (err) {
    if (!(err instanceof MigrateStoreError)) throw err;
    process.stderr.write(`drydock: migrate-store: ${err.message}\n`);
    return 1;
  }
}

async function tokenCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'revoke') return tokenRevoke(rest);
  if (sub !== 'create') {
    const near = sub ? closest(sub, ['create', 'revoke']) : undefined;
    throw new UsageError(
      `token: expected "create" or "revoke", got ${sub ? `"${sub}"` : 'nothing'}${near ? `; did you mean "${near}"?` : ''}`,
    );
  }
  const { values, string } = localArgs('token create', rest);
  if (values.help) return help();
  const name = string('name')?.trim();
  const role = string('role');
  if (!name) throw new UsageError('token create: --name is required');
  if (!ROLES.includes(role as Role)) {
    throw new UsageError(`token create: --role must be one of ${ROLES.join(', ')}`);
  }
  const cfg = await config(values);
  const store = await openExistingStore(cfg, 'token create', values.init === true);
  try {
    const { issueToken } = await import('../auth/tokens.js');
    const issued = issueToken(name, name, role as Role, Date.now());
    await store.createToken(issued.record);
    process.stdout.write(`${issued.token}\n`);
    process.stderr.write(
      `token ${issued.record.id} for ${name} (${role}) created in ${await where(cfg)}; ` +
        'it is shown only this once\n',
    );
  } finally {
    await store.close();
  }
  return 0;
}

/** `token revoke ID`: the token stops working at once, and the /ui sessions signed in with it end. */
async function tokenRevoke(args: string[]): Promise<number> {
  // An id issued before ids began with a letter or digit may start with `-` (`-J3k…`): an argument of a
  // token id's exact shape that is not one of this command's options is the id, not an option.
  const { TOKEN_ID } = await import('../auth/tokens.js');
  const options = localOptions('token revoke');
  const isId = (a: string) =>
    a.startsWith('-') && TOKEN_ID.test(a) && !Object.hasOwn(options, a.replace(/^--/, ''));
  const { values, positionals } = localArgs(
    'token revoke',
    args.filter((a) => !isId(a)),
    true,
  );
  positionals.unshift(...args.filter(isId));
  if (values.help) return help();
  const [given, ...extra] = positionals;
  if (!given || extra.length > 0) throw new UsageError('token revoke: expected one token id (or the token)');
  // The whole token names its id between `ddk_` and the dot; the id alone is what `token create` printed.
  const id = /^ddk_([^.]+)\./.exec(given)?.[1] ?? given;
  const cfg = await config(values);
  const store = await openExistingStore(cfg, 'token revoke');
  try {
    const token = await store.findToken(id);
    if (!token) {
      process.stderr.write(`token revoke: no token with id ${id}\n`);
      return 1;
    }
    if (!(await store.revokeToken(id, Date.now()))) {
      process.stderr.write(`token ${id} (${token.name}) was already revoked\n`);
      return 0;
    }
    process.stderr.write(`token ${id} (${token.name}) revoked; its /ui sessions ended\n`);
  } finally {
    await store.close();
  }
  return 0;
}

async function doctorCommand(args: string[]): Promise<number> {
  const { values } = localArgs('doctor', args);
  if (values.help) return help();
  const cfg = await config(values);
  const { doctorReport } = await import('./commands/doctor.js');
  const report = await doctorReport(cfg, { now: Date.now() });
  process.stdout.write(`${report.lines.join('\n')}\n`);
  return report.ok ? 0 : 1;
}

async function mcpCommand(args: string[]): Promise<number> {
  const { mcpToolsCommand } = await import('./commands/mcp.js');
  return mcpToolsCommand(args, (values) => config(values), {
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
  });
}

function firstLine(err: unknown): string {
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return message.split('\n')[0] ?? message;
}

async function gcCommand(args: string[]): Promise<number> {
  const { values } = localArgs('gc', args);
  if (values.help) return help();
  const cfg = await config(values);
  const store = await openExistingStore(cfg, 'gc');
  try {
    const { collectGarbage } = await import('../workspace/retention.js');
    const { workRoot } = await import('../workspace/paths.js');
    const dryRun = values['dry-run'] === true;
    const r = await collectGarbage(
      { store, workRoot: workRoot(cfg) },
      { ttlMs: cfg.retention.worktree_ttl_ms, now: Date.now(), dryRun },
    );
    const { gcItemLines, gcSummary } = await import('./commands/gc.js');
    for (const line of gcItemLines(r, dryRun)) process.stdout.write(`${line}\n`);
    for (const f of r.failed) process.stderr.write(`drydock: could not remove ${f.path}: ${f.error}\n`);
    process.stdout.write(`${gcSummary(r, dryRun)}\n`);
    return r.failed.length ? 1 : 0;
  } finally {
    await store.close();
  }
}

function help(): number {
  process.stdout.write(`${topLevelHelp()}\n`);
  return 0;
}

/** The local commands by their first word (`token` for `token create` and `token revoke`). */
const LOCAL_NAMES = [...new Set(LOCAL_COMMANDS.map((c) => c.name.split(' ')[0]!))];

/** The remote command groups, each run by its name: `drydock jobs ...`. */
const REMOTE: Record<string, (argv: string[]) => Promise<number>> = Object.fromEntries(
  REMOTE_GROUPS.map((group) => [group.name, (argv: string[]) => runGroup(group, argv)]),
);

/**
 * The exit code of a local command's failure told in one line, or null for any other error: 2 for an invalid
 * configuration, 1 for a start the data directory or database refused (also a schema newer than this
 * drydock). The error classes are loaded only here, after a local command failed.
 */
async function localFailure(err: unknown): Promise<number | null> {
  const { ConfigError } = await import('../config/load.js');
  if (err instanceof ConfigError) return 2;
  const { StartError } = await import('../preflight.js');
  const { SchemaTooNewError } = await import('../store/store.js');
  return err instanceof StartError || err instanceof SchemaTooNewError ? 1 : null;
}

/** Every command's name: the local ones, the remote groups, apply and export. */
const COMMANDS = [...LOCAL_NAMES, ...Object.keys(REMOTE), 'apply', 'export'];

/** `unknown command "jbos"; did you mean "jobs"?` */
function unknownCommand(name: string): UsageError {
  const near = closest(name, COMMANDS);
  return new UsageError(`unknown command "${name}"${near ? `; did you mean "${near}"?` : ''}`);
}

const isHelp = (arg: string | undefined) => arg === '--help' || arg === '-h' || arg === 'help';

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case '--version':
      case '-V':
      case 'version':
        process.stdout.write(`${packageVersion()}\n`);
        return 0;
      case 'serve':
        return await serveCommand(rest);
      case 'migrate':
        return await migrateCommand(rest);
      case 'migrate-store':
        return await migrateStoreCommand(rest);
      case 'token':
        if (isHelp(rest[0])) return help();
        return await tokenCommand(rest);
      case 'doctor':
        return await doctorCommand(rest);
      case 'gc':
        return await gcCommand(rest);
      case 'mcp':
        return await mcpCommand(rest);
      case 'apply':
        return await applyMain(rest);
      case 'export':
        return await exportMain(rest);
      case 'help':
        // `drydock help jobs` is `drydock jobs --help`.
        if (rest[0] && Object.hasOwn(REMOTE, rest[0])) return await REMOTE[rest[0]]!(['--help']);
        if (rest[0] && !COMMANDS.includes(rest[0])) throw unknownCommand(rest[0]);
        return help();
      case undefined:
      case '--help':
      case '-h':
        return help();
      default: {
        if (Object.hasOwn(REMOTE, command)) return await REMOTE[command]!(rest);
        throw unknownCommand(command);
      }
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && command) {
      const raw = /'(-[^']*)'/.exec((err as Error).message)?.[1] ?? '?';
      // `token create`, `token revoke`, `mcp tools`: the subcommand's own options.
      const where = (command === 'token' || command === 'mcp') && rest[0] ? `${command} ${rest[0]}` : command;
      process.stderr.write(`drydock: ${unknownOption(raw, localOptionNames(where), where)}\n`);
      return 2;
    }
    if (code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`drydock: ${(err as Error).message.split('\n')[0]} (run "drydock --help")\n`);
      return 2;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`drydock: ${(err as Error).message}\n\n${topLevelHelp()}\n`);
      return 2;
    }
    if (err instanceof NoDatabaseError) {
      process.stderr.write(`drydock: ${err.message}\n`);
      return 2;
    }
    const known = LOCAL_NAMES.includes(command ?? '') ? await localFailure(err) : null;
    if (known !== null) {
      process.stderr.write(`drydock: ${(err as Error).message}\n`);
      return known;
    }
    process.stderr.write(`drydock: ${(err as Error).stack ?? String(err)}\n`);
    return 1;
  }
}

const code = await main(process.argv.slice(2));
process.exitCode = code;
