import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import { doctor } from '../../agent/doctor.js';
import { pullRequestDeliveryProblem } from '../../config/delivery.js';
import type { Config } from '../../config/schema.js';
import { githubDoctor } from '../../github/app-doctor.js';
import { sandboxFromConfig } from '../../services.js';
import { databaseFile, type OpenedStore, openStore, shownUrl } from '../../store/open.js';

// `drydock doctor`: every dependency the configuration names, checked from this machine, one line each:
// `ok <what>: …` or `FAIL <what>: <what to do>` (and `warn`/`note` lines that change nothing). The model
// (agent/doctor.ts), the store, the API tokens in it, the sandbox, ripgrep, GitHub's webhook secrets, the
// notification webhooks, delivery and GitHub's credentials. Nothing is made or changed: a store that does not
// exist yet is not created, one behind is not migrated. Exit status 1 when any line is FAIL.

export interface DoctorOptions {
  now: number;
  /** The model's client (tests); default: one made from the configuration. */
  model?: Anthropic;
  /** How long a notification webhook and the database have to answer, in ms. */
  timeoutMs?: number;
}

export interface FullDoctorReport {
  ok: boolean;
  lines: string[];
}

export async function doctorReport(cfg: Config, opts: DoctorOptions): Promise<FullDoctorReport> {
  const timeoutMs = opts.timeoutMs ?? 5_000;
  const model = await doctor(cfg, opts.now, opts.model);
  const lines = [...model.lines];
  const opened = await storeCheck(cfg, opts.now, timeoutMs);
  lines.push(opened.line);
  try {
    const storeFailed = opened.line.startsWith('FAIL ');
    lines.push(
      storeFailed ? 'note tokens: not checked, the store did not open' : await tokensLine(cfg, opened.store),
    );
    lines.push(await webhookSecretsLine(cfg, opened.store));
  } finally {
    await opened.store?.close().catch(() => undefined);
  }
  lines.push(await sandboxLine(cfg));
  lines.push(...(await notificationLines(cfg, timeoutMs)));
  lines.push(...deliveryLines(cfg));
  lines.push(...githubLines(await githubDoctor(cfg)));
  return { ok: model.ok && !lines.some((line) => line.startsWith('FAIL ')), lines };
}

// --- store --------------------------------------------------------------------------------------------

const SET_DATA_DIR = 'set data_dir (DRYDOCK_DATA_DIR) to a directory this user may write';
const SET_DATABASE_URL = 'check database_url (DATABASE_URL), or unset it to use the embedded SQLite store';

/** The store as the daemon would open it, never made or migrated here; open (to read tokens) when it exists. */
async function storeCheck(
  cfg: Config,
  now: number,
  timeoutMs: number,
): Promise<{ line: string; store: OpenedStore | null }> {
  if (cfg.database_url !== null) return postgresCheck(cfg, now, timeoutMs);
  const file = databaseFile(cfg);
  if (!existsSync(file)) return { line: newSqliteLine(cfg.data_dir, file), store: null };
  try {
    for (const path of [file, dirname(file)]) accessSync(path, constants.R_OK | constants.W_OK);
  } catch (err) {
    return { line: `FAIL store: SQLite ${file} is read-only (${codeOf(err)}): ${SET_DATA_DIR}`, store: null };
  }
  let store: OpenedStore | null = null;
  try {
    store = await openStore(cfg, now, false);
    const { current, latest } = await store.schemaVersion();
    const migrated =
      current === latest ? 'migrated' : `schema version ${current}; the next start migrates it to ${latest}`;
    return { line: `ok store: SQLite ${file}, ${migrated}`, store };
  } catch (err) {
    await store?.close().catch(() => undefined);
    return {
      line: `FAIL store: SQLite ${file} cannot be opened (${messageOf(err)}): ${SET_DATA_DIR}`,
      store: null,
    };
  }
}

/** No database file yet: the first start makes it, if the directory is (or can be made) writable. */
function newSqliteLine(dataDir: string, file: string): string {
  let dir = dataDir;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  try {
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error(), { code: 'ENOTDIR' });
    accessSync(dir, constants.W_OK);
  } catch (err) {
    return `FAIL store: ${dataDir} cannot be made or written (${dir}: ${codeOf(err)}): ${SET_DATA_DIR}`;
  }
  return `ok store: SQLite ${file} does not exist yet; the first start makes it (${dir} is writable)`;
}

async function postgresCheck(
  cfg: Config,
  now: number,
  timeoutMs: number,
): Promise<{ line: string; store: OpenedStore | null }> {
  const where = shownUrl(cfg.database_url!);
  let store: OpenedStore | null = null;
  try {
    store = await openStore(cfg, now, false);
    const { current, latest } = await withTimeout(store.schemaVersion(), timeoutMs);
    if (current < latest) {
      return {
        line: `FAIL store: PostgreSQL ${where} is not migrated (schema version ${current} of ${latest}): run drydock migrate (or start one daemon, which migrates it)`,
        store,
      };
    }
    if (current > latest) {
      return {
        line: `FAIL store: PostgreSQL ${where} has schema version ${current}, newer than this drydock (${latest}): upgrade drydock`,
        store: null,
      };
    }
    return { line: `ok store: PostgreSQL ${where}, reachable and migrated`, store };
  } catch (err) {
    await store?.close().catch(() => undefined);
    return {
      line: `FAIL store: PostgreSQL ${where} ${postgresProblem(err)}: ${SET_DATABASE_URL}`,
      store: null,
    };
  }
}

/** Node's network errors and PostgreSQL's SQLSTATE (28P01, 28000: the login; 3D000: no such database). */
function postgresProblem(failure: unknown): string {
  const err = (failure as { cause?: unknown }).cause ?? failure;
  const code = codeOf(err);
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH'].includes(code)) {
    return `cannot be reached (${code})`;
  }
  if (code === '28P01' || code === '28000') return `refused the login (${messageOf(err)})`;
  if (code === '3D000') return `does not exist (${messageOf(err)})`;
  return `cannot be opened (${messageOf(err)})`;
}

// --- tokens and webhook secrets -----------------------------------------------------------------------

const MAKE_APPROVER = 'drydock token create --name <person> --role approver';

/**
 * Someone must be able to approve a plan, and not only the one who asked for it: self-approval is off unless
 * a session or job allows it, so a single token that may approve leaves plans its holder requests waiting.
 */
async function tokensLine(cfg: Config, store: OpenedStore | null): Promise<string> {
  if (store === null || !(await migrated(store))) {
    return `ok tokens: no database yet; the first start makes an admin token (${cfg.admin_token ? 'admin_token' : 'printed once'}); then add an approver: ${MAKE_APPROVER}`;
  }
  const admins = await store.countActiveTokens('admin');
  const approvers = await store.countActiveTokens('approver');
  if (admins + approvers === 0) {
    return `FAIL tokens: no admin or approver token, so no one can approve a plan: ${MAKE_APPROVER}`;
  }
  if (admins + approvers === 1) {
    return `FAIL tokens: one token may approve (${admins ? 'admin' : 'approver'}), and self-approval is off, so no one can approve the plans its holder requests: give a second person an approver token (${MAKE_APPROVER}), or set allow_self_approval on the sessions and jobs whose plans their requester may approve`;
  }
  return `ok tokens: ${admins} admin and ${approvers} approver token${approvers === 1 ? '' : 's'} active`;
}

async function migrated(store: OpenedStore): Promise<boolean> {
  const { current, latest } = await store.schemaVersion();
  return current === latest;
}

/** GitHub's webhooks are refused without a secret: needed for GitHub triggers, github.report and an App. */
async function webhookSecretsLine(cfg: Config, store: OpenedStore | null): Promise<string> {
  const triggers =
    store !== null && (await migrated(store))
      ? (await store.listTriggers({ kind: 'github', enabled: true })).length
      : 0;
  const needs = [
    ...(triggers ? [`${triggers} GitHub trigger${triggers === 1 ? '' : 's'}`] : []),
    ...(cfg.github.report ? ['github.report'] : []),
    ...(cfg.github.app.id !== null ? ['the GitHub App'] : []),
  ];
  const set = cfg.github.webhook_secrets.length + (cfg.github.app.webhook_secret ? 1 : 0);
  if (needs.length === 0) {
    return `ok webhook secrets: ${set ? `${set} set` : 'none set'}; none needed (no GitHub triggers, github.report off, no App)`;
  }
  if (set === 0) {
    return `FAIL webhook secrets: ${needs.join(', ')} need GitHub's webhooks, which are refused while neither github.webhook_secrets (GITHUB_WEBHOOK_SECRET) nor github.app.webhook_secret is set: set the secret the webhook was made with`;
  }
  return `ok webhook secrets: ${set} set, for ${needs.join(', ')}`;
}

// --- sandbox, notifications, delivery, GitHub ---------------------------------------------------------

async function sandboxLine(cfg: Config): Promise<string> {
  const status = await sandboxFromConfig(cfg).status();
  if (status.state === 'bwrap') return `ok sandbox: ${status.detail}`;
  if (status.state === 'off')
    return `ok sandbox: off by configuration (execute.sandbox: off): ${status.detail}`;
  return `FAIL sandbox: ${status.detail}`;
}

/**
 * Each notification webhook reached with a HEAD request (any HTTP answer will do: many take only POST). Only
 * the URL's origin is shown: its path may be its credential.
 */
async function notificationLines(cfg: Config, timeoutMs: number): Promise<string[]> {
  const hooks = cfg.notifications.webhooks;
  if (hooks.length === 0) return ['ok notifications: no webhooks configured'];
  return Promise.all(
    hooks.map(async (hook, i) => {
      const what = `notification webhook [${i}] ${new URL(hook.url).origin}`;
      try {
        const res = await fetch(hook.url, {
          method: 'HEAD',
          redirect: 'manual',
          signal: AbortSignal.timeout(Math.min(timeoutMs, 3_000)),
        });
        await res.body?.cancel();
        return `ok ${what}: reachable (HTTP ${res.status})`;
      } catch (err) {
        return `FAIL ${what}: not reachable (${messageOf((err as { cause?: unknown }).cause ?? err)}): check notifications.webhooks[${i}].url and the network`;
      }
    }),
  );
}

function deliveryLines(cfg: Config): string[] {
  const problem = pullRequestDeliveryProblem(cfg);
  if (!cfg.delivery.enabled) {
    const off = 'ok delivery: off unless a session, job or trigger sets deliver (delivery.enabled: false)';
    return problem
      ? [off, `warn delivery: where deliver is set, deliveries to GitHub repositories fail: ${problem}`]
      : [off];
  }
  if (problem) return [`FAIL delivery: ${problem}`];
  const prs = cfg.delivery.pull_request ? ', pull requests opened on GitHub' : ', no pull requests';
  return [`ok delivery: executed plans pushed to the remote ${cfg.delivery.remote}${prs}`];
}

/** githubDoctor's lines (github/app-doctor.ts) as ok, warn and FAIL lines. */
function githubLines(report: { ok: boolean; lines: string[] }): string[] {
  return report.lines.map((line) => {
    if (/: warning: /.test(line)) return `warn ${line.replace(': warning: ', ': ')}`;
    const failed =
      !report.ok && /REFUSED|KEY:|NOT INSTALLED|SUSPENDED|MISSING|could not|is in no installation/.test(line);
    return `${failed ? 'FAIL' : 'ok'} ${line}`;
  });
}

// --- helpers ------------------------------------------------------------------------------------------

function codeOf(err: unknown): string {
  return String((err as { code?: unknown } | null)?.code ?? 'error');
}

function messageOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(`no answer in ${ms} ms`), { code: 'ETIMEDOUT' })),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
