#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config/schema.js';
import { ROLES, type Role } from '../domain/types.js';
import { packageVersion } from '../paths.js';
import type { openStoreChecked } from '../preflight.js';
import { applyMain, exportMain } from './commands/apply.js';
import { closest, unknownOption } from './commands/args.js';
import { deliveriesGroup } from './commands/deliveries.js';
import { runGroup } from './commands/group.js';
import { jobsGroup } from './commands/jobs.js';
import { notificationsGroup } from './commands/notifications.js';
import { plansGroup } from './commands/plans.js';
import { questionsGroup } from './commands/questions.js';
import { runsGroup } from './commands/runs.js';
import { sessionsGroup } from './commands/sessions.js';
import { toolApprovalsGroup } from './commands/tool-approvals.js';
import { triggersGroup } from './commands/triggers.js';
import { usageGroup } from './commands/usage.js';

// Exit codes: 0 ok, 1 runtime failure, 2 bad usage or configuration.
//
// The local commands load the server's modules (configuration, store, tokens, daemon) inside themselves,
// with `await import`, never at the top of this file: the remote commands only talk HTTP and should not
// pay for them (tests/cli/remote-imports.test.ts holds this).

const USAGE = `usage: drydock <command> [options]

commands:
  serve                 start the daemon (HTTP API and scheduler)
      --config FILE       configuration file (default: $DRYDOCK_CONFIG, else built-in defaults)
      --port N            listen port (default 8080)
      --host ADDR         listen address (default 127.0.0.1)
      --data-dir DIR      database, worktrees and checkouts (default ./data; relative to where drydock starts)
  migrate               apply pending database migrations and exit
      --config FILE, --data-dir DIR
  migrate-store         copy everything of a SQLite database into an empty PostgreSQL database, in one
                        transaction (all or nothing), and print each table's rows in both; stop the
                        daemon first (the file is only read)
      --from FILE         the SQLite database (data_dir/drydock.db), at this drydock's schema (run
                          "drydock migrate" first)
      --to URL            postgres://user:password@host:5432/db (default: $DATABASE_URL); its tables are
                          made if missing, and it is refused unless they are empty
  token create          create an API token and print it once (its id goes to stderr)
      --name NAME         who the token is for (also its identity)
      --role ROLE         admin | operator | approver | viewer
      --init              make a new database when there is none (else: refused, naming where it looked)
      --config FILE, --data-dir DIR
  token revoke ID       revoke a token (its id, or the token itself); its /ui sessions end too
      --config FILE, --data-dir DIR
  doctor                check every dependency the configuration names, one line each, "ok ..." or
                        "FAIL ...: what to do": the key and model (one tiny real request), ripgrep, the
                        store (SQLite writable, or PostgreSQL reachable and migrated), the tokens that may
                        approve, the sandbox, GitHub webhook secrets, notification webhooks, delivery and
                        GitHub's credentials (with github.app: its JWT, installations, permissions); exit 1
                        when any check fails
      --config FILE
  mcp tools SERVER      start the MCP server SERVER of mcp.servers as a run would, list its tools with their
                        annotations and which phase may call each (plan; execute: ask or allow in manual,
                        edits and auto) and why, then stop it (exit 1 when it does not start)
      --config FILE, --json
  gc                    remove executions' worktrees (and their local drydock/<plan> branches) and pull
                        request checkouts settled longer than retention.worktree_ttl_ms ago; never one
                        a run can still use (the daemon also does this a minute after it starts, then
                        every retention.interval_ms)
      --dry-run           only list what would be removed
      --config FILE, --data-dir DIR

remote commands (talk to a running daemon over its HTTP API):
  sessions list [--status open|closed] [--limit N] [--cursor C] [--json]
  sessions show ID [--json]
  sessions create --workspace DIR [--name N] [--model M] [--execute-mode M] [--approvals-required N]
      [--allow-self-approval] [--network-domain D ...] [--budget-usd X] [--thinking off|adaptive|N] [--effort E] [--max-turns N]
      [--daily-usd X] [--daily-runs N] [--json]   (prints the id)
  sessions close ID [--json]
  jobs list --session ID [--json]
  jobs show ID [--json]
  jobs create --session ID --cron EXPR --prompt TEXT [--name N] [--timezone TZ] [--one-shot] [--approximate]
      [--overlap P] [--jitter-max-seconds N] [--execute-mode M] [--json]   (prints the id)
  jobs update ID [--cron EXPR] [--prompt TEXT] [--timezone TZ] [--recurring|--one-shot] [--approximate|--exact]
      [--overlap P] [--jitter-max-seconds N|none] [--json]
  jobs delete ID
  jobs pause ID [--json]
  jobs resume ID [--json]
  jobs run ID [--json]   (prints the run id)
  jobs slots ID [--json]
  jobs backfill ID --from TIME --to TIME [--json]
  triggers list [--json]
  triggers show ID [--json]
  triggers create --kind github|generic --name N --prompt TEXT [--event E ...] [--repository owner/repo ...]
      [--base-branch B ...] [--label L ...] [--author A ...] [--draft true|false] [--workspace DIR]
      [--hourly-cap N] [--daily-usd X] [--daily-runs N] [--execute-mode M] [--approvals-required N] [--json]   (a generic trigger's token
      is printed once)
  triggers update ID [the create options but --kind] [--draft any] [--clear-filters] [--enable|--disable]
      [--rotate-token] [--json]
  triggers delete ID
  triggers deliveries ID [--limit N] [--json]
  triggers fire ID --trigger-token T [--idempotency-key K] [--text TEXT | --text-file F] [--json]
      (authenticates with the trigger's token, or $DRYDOCK_TRIGGER_TOKEN, instead of DRYDOCK_TOKEN)
  deliveries list [--outcome O] [--trigger ID] [--limit N] [--before ID] [--json]
  deliveries show ID [--json]
  notifications list [--status S] [--event E] [--limit N] [--cursor C] [--json]
  usage show [--by trigger|session|model] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--json]
  plans list [--status S] [--session ID] [--job ID] [--limit N] [--cursor C] [--json]
  plans show ID [--json]
  plans approve ID [--sha256 S] [--comment C]
  plans reject ID --comment C
  plans revise ID --feedback F [--sha256 S]
  questions list [--status S] [--run ID] [--json]
  questions show ID [--json]
  questions answer ID --answer "Question=Label" [--answer ...]   (multiSelect: "Question=A|B")
  tool-approvals list [--status S] [--run ID] [--json]
  tool-approvals show ID [--json]
  tool-approvals decide ID --allow|--deny [--message M]
  runs list [--status S] [--session ID] [--job ID] [--json]
  runs show ID [--json]
  runs cancel ID
  runs diff ID [--stat] [--json]   (what an execute run changed, as a unified diff)
  runs follow ID [--json]   (prints the run's events as they happen until it ends; exit 1 unless it
      ended planned or completed)
  apply -f FILE [--dry-run [--exit-code]] [--prune]   (sessions, jobs and triggers as code: reconcile the
      daemon with a YAML file by name and print the diff; --print-schema prints the file's JSON Schema)
  export [-o FILE]   (the daemon's sessions, jobs and triggers in the format apply reads)
      --url URL           daemon URL (default: $DRYDOCK_URL, else http://127.0.0.1:8080)
      --token TOKEN       API token (default: $DRYDOCK_TOKEN, required)
      --json              print the API's JSON body as received
  run "drydock <group> <command> --help" (or "drydock help <group>") for each command's options
  drydock --version     print the version

exit codes: 0 success; 1 failure (for remote commands: the API refused or failed, printed as
"drydock: <status> <code>: <message>", or the daemon is unreachable); 2 bad usage or invalid configuration`;

class UsageError extends Error {}

const common = {
  config: { type: 'string' },
  'data-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

async function config(values: {
  config?: string | undefined;
  'data-dir'?: string | undefined;
  port?: string | undefined;
  host?: string | undefined;
}): Promise<Config> {
  const { loadConfig } = await import('../config/load.js');
  return loadConfig({
    configPath: values.config,
    env: process.env,
    overrides: { port: values.port, host: values.host, data_dir: values['data-dir'] },
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
  const { values } = parseArgs({
    args,
    options: { ...common, port: { type: 'string' }, host: { type: 'string' } },
  });
  if (values.help) return help();
  const cfg = await config(values);
  const { createLogger } = await import('../logger.js');
  const logger = createLogger(cfg.log_level);
  const { startDaemon } = await import('../daemon.js');
  const { StartError } = await import('../preflight.js');
  const { SchemaTooNewError } = await import('../store/store.js');
  const configFile = values.config || process.env.DRYDOCK_CONFIG;
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
  const { values } = parseArgs({ args, options: common });
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
  const { values } = parseArgs({
    args,
    options: { from: { type: 'string' }, to: { type: 'string' }, help: common.help },
  });
  if (values.help) return help();
  const to = values.to ?? process.env.DATABASE_URL;
  if (!values.from) throw new UsageError('migrate-store: --from FILE (the SQLite database) is required');
  if (!to) throw new UsageError('migrate-store: --to URL (or DATABASE_URL) is required');
  const { migrateStore, MigrateStoreError } = await import('../store/migrate-store.js');
  const { shownUrl } = await import('../store/open.js');
  const from = resolve(values.from);
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
  const { values } = parseArgs({
    args: rest,
    options: { ...common, name: { type: 'string' }, role: { type: 'string' }, init: { type: 'boolean' } },
  });
  if (values.help) return help();
  if (!values.name?.trim()) throw new UsageError('token create: --name is required');
  if (!ROLES.includes(values.role as Role)) {
    throw new UsageError(`token create: --role must be one of ${ROLES.join(', ')}`);
  }
  const cfg = await config(values);
  const store = await openExistingStore(cfg, 'token create', values.init === true);
  try {
    const { issueToken } = await import('../auth/tokens.js');
    const issued = issueToken(values.name.trim(), values.name.trim(), values.role as Role, Date.now());
    await store.createToken(issued.record);
    process.stdout.write(`${issued.token}\n`);
    process.stderr.write(
      `token ${issued.record.id} for ${values.name.trim()} (${values.role}) created in ${await where(cfg)}; ` +
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
  const options = { ...common };
  const isId = (a: string) =>
    a.startsWith('-') && TOKEN_ID.test(a) && !Object.hasOwn(options, a.replace(/^--/, ''));
  const { values, positionals } = parseArgs({
    args: args.filter((a) => !isId(a)),
    options,
    allowPositionals: true,
  });
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
  const { values } = parseArgs({ args, options: common });
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
  const { values } = parseArgs({ args, options: { ...common, 'dry-run': { type: 'boolean' } } });
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
  process.stdout.write(`${USAGE}\n`);
  return 0;
}

/** Options of the local commands, for suggesting the closest one to an unknown option. */
const LOCAL_OPTIONS: Record<string, string[]> = {
  serve: ['config', 'data-dir', 'port', 'host', 'help'],
  migrate: ['config', 'data-dir', 'help'],
  'migrate-store': ['from', 'to', 'help'],
  token: ['name', 'role', 'init', 'config', 'data-dir', 'help'],
  doctor: ['config', 'data-dir', 'help'],
  gc: ['config', 'data-dir', 'dry-run', 'help'],
  mcp: ['config', 'json', 'help'],
};

/** The options of a local command's subcommands, where they differ from the command's own. */
const LOCAL_SUBCOMMAND_OPTIONS: Record<string, string[]> = {
  'token create': ['name', 'role', 'init', 'config', 'data-dir', 'help'],
  'token revoke': ['config', 'data-dir', 'help'],
  'mcp tools': ['config', 'json', 'help'],
};

/** The remote command groups, each run by its name: `drydock jobs ...`. */
const REMOTE: Record<string, (argv: string[]) => Promise<number>> = Object.fromEntries(
  [
    plansGroup,
    questionsGroup,
    toolApprovalsGroup,
    runsGroup,
    sessionsGroup,
    jobsGroup,
    triggersGroup,
    deliveriesGroup,
    notificationsGroup,
    usageGroup,
  ].map((group) => [group.name, (argv: string[]) => runGroup(group, argv)]),
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
const COMMANDS = [...Object.keys(LOCAL_OPTIONS), ...Object.keys(REMOTE), 'apply', 'export'];

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
      const sub = `${command} ${rest[0]}`;
      const where = Object.hasOwn(LOCAL_SUBCOMMAND_OPTIONS, sub) ? sub : command;
      const known = LOCAL_SUBCOMMAND_OPTIONS[where] ?? LOCAL_OPTIONS[command] ?? [];
      process.stderr.write(`drydock: ${unknownOption(raw, known, where)}\n`);
      return 2;
    }
    if (code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`drydock: ${(err as Error).message.split('\n')[0]} (run "drydock --help")\n`);
      return 2;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`drydock: ${(err as Error).message}\n\n${USAGE}\n`);
      return 2;
    }
    if (err instanceof NoDatabaseError) {
      process.stderr.write(`drydock: ${err.message}\n`);
      return 2;
    }
    const known = Object.hasOwn(LOCAL_OPTIONS, command ?? '') ? await localFailure(err) : null;
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
