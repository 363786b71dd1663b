import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { type Clock, systemClock } from '../clock.js';
import { closest } from '../domain/closest.js';
import { modelProblems } from '../models/catalogue.js';
import { appKeyProblems } from './app-key.js';
import { knownKeysAt } from './keys.js';
import { mcpSecretProblems } from './mcp-secrets.js';
import { type Config, configSchema, isSecretPath, mayHoldSecret } from './schema.js';

// Precedence, lowest to highest: schema defaults < YAML file < environment < CLI flags.
// Everything is merged into one raw object first and validated once, so a bad start reports every
// problem together instead of the first one.

/** Thrown by loadConfig; `problems` has one line per problem, `path: what is wrong`. */
export class ConfigError extends Error {
  readonly problems: string[];

  constructor(problems: string[]) {
    super(`invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export interface LoadOptions {
  /** From `--config`; wins over DRYDOCK_CONFIG. Without either, no file is read. */
  configPath?: string;
  /** Defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** From `drydock serve --port/--data-dir/--host`; win over everything else. */
  overrides?: { port?: number | string; data_dir?: string; host?: string };
  /**
   * The directory relative paths mean something in: the config file's path and every relative path in the
   * configuration (data_dir, work_dir, github.repositories.*.path). Defaults to process.cwd() at load, the directory
   * the daemon was started in.
   */
  baseDir?: string;
  /** Whose date decides whether the configured model has retired. Default: the system clock. */
  clock?: Clock;
}

type Kind = 'string' | 'int' | 'list';

export interface Binding {
  /** Environment variable or CLI flag, named in problems so the reader knows where to look. */
  source: string;
  path: readonly string[];
  kind: Kind;
}

/** Environment variables that set configuration keys (DRYDOCK_CONFIG, the file path, aside). */
export const ENV_BINDINGS: readonly Binding[] = [
  { source: 'DRYDOCK_HOST', path: ['server', 'host'], kind: 'string' },
  { source: 'DRYDOCK_PORT', path: ['server', 'port'], kind: 'int' },
  { source: 'DRYDOCK_DATA_DIR', path: ['data_dir'], kind: 'string' },
  { source: 'DRYDOCK_WORK_DIR', path: ['work_dir'], kind: 'string' },
  { source: 'DATABASE_URL', path: ['database_url'], kind: 'string' },
  { source: 'DRYDOCK_REPLICA_ID', path: ['replica_id'], kind: 'string' },
  { source: 'DRYDOCK_ADMIN_TOKEN', path: ['admin_token'], kind: 'string' },
  { source: 'DRYDOCK_LOG_LEVEL', path: ['log_level'], kind: 'string' },
  { source: 'DRYDOCK_TIMEZONE', path: ['timezone'], kind: 'string' },
  { source: 'ANTHROPIC_API_KEY', path: ['anthropic', 'api_key'], kind: 'string' },
  { source: 'ANTHROPIC_BASE_URL', path: ['anthropic', 'base_url'], kind: 'string' },
  // One secret, or several separated by commas (to rotate: old,new).
  { source: 'GITHUB_WEBHOOK_SECRET', path: ['github', 'webhook_secrets'], kind: 'list' },
  { source: 'GITHUB_TOKEN', path: ['github', 'token'], kind: 'string' },
  { source: 'GITHUB_APP_ID', path: ['github', 'app', 'id'], kind: 'string' },
  { source: 'GITHUB_APP_PRIVATE_KEY_FILE', path: ['github', 'app', 'private_key_file'], kind: 'string' },
  { source: 'GITHUB_APP_WEBHOOK_SECRET', path: ['github', 'app', 'webhook_secret'], kind: 'string' },
];

const OVERRIDE_BINDINGS: Record<keyof NonNullable<LoadOptions['overrides']>, Binding> = {
  port: { source: '--port', path: ['server', 'port'], kind: 'int' },
  data_dir: { source: '--data-dir', path: ['data_dir'], kind: 'string' },
  host: { source: '--host', path: ['server', 'host'], kind: 'string' },
};

/** Reads, merges and validates the configuration; throws ConfigError listing every problem. */
export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const problems: string[] = [];
  const sources = new Map<string, string>();

  let raw: Record<string, unknown> = {};
  const baseDir = opts.baseDir ?? process.cwd();
  const file = configFile(opts, env, baseDir);
  if (file) {
    const read = readConfigFile(file.path, file.source);
    problems.push(...read.problems);
    raw = read.data;
  }

  for (const binding of ENV_BINDINGS) {
    const value = env[binding.source];
    // An empty variable counts as unset: `FOO=` is how compose files and shells clear a value.
    if (value === undefined || value === '') continue;
    assign(raw, binding, convert(value, binding.kind), sources);
  }

  for (const [key, binding] of Object.entries(OVERRIDE_BINDINGS)) {
    const value = opts.overrides?.[key as keyof typeof OVERRIDE_BINDINGS];
    if (value === undefined) continue;
    assign(raw, binding, typeof value === 'string' ? convert(value, binding.kind) : value, sources);
  }

  const result = configSchema.safeParse(raw);
  const now = (opts.clock ?? systemClock).now();
  if (!result.success) {
    for (const issue of result.error.issues) problems.push(...describeIssue(issue, raw, sources));
    // The checks past the schema run on the sections that did parse, so one report lists everything.
    addNew(problems, beyondSchema(partsOf(raw, baseDir), env, now));
    throw new ConfigError(problems);
  }
  const config = resolvePaths(result.data, baseDir);
  const parts = {
    models: config.models,
    pricing: config.pricing,
    model: config.anthropic.model,
    mcpServers: config.mcp.servers,
    keyFile: config.github.app.private_key_file,
  };
  addNew(problems, beyondSchema(parts, env, now));
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** What the checks past the schema read of the configuration. */
interface Parts {
  models: Config['models'];
  pricing: Config['pricing'];
  /** null: not known (anthropic.model, models or pricing is itself wrong, and said so). */
  model: string | null;
  mcpServers: Config['mcp']['servers'];
  keyFile: string | null;
}

/**
 * The problems the schema cannot see: a retired model (docs/models.md: the daemon does not start on one) and
 * one with no price, an MCP server's secret unset (mcp-secrets.ts), the App's key file missing or no RSA key
 * (app-key.ts; its text is never quoted).
 */
function beyondSchema(parts: Parts, env: NodeJS.ProcessEnv, now: number): string[] {
  const model =
    parts.model === null
      ? []
      : modelProblems(parts, parts.model, now).errors.map((message) => `anthropic.model: ${message}`);
  return [...model, ...mcpSecretProblems(parts.mcpServers, env), ...appKeyProblems(parts.keyFile)];
}

/** The sections of a configuration that failed validation that are valid on their own. */
function partsOf(raw: Record<string, unknown>, baseDir: string): Parts {
  const shape = configSchema.shape;
  const models = shape.models.safeParse(raw.models);
  const pricing = shape.pricing.safeParse(raw.pricing);
  const anthropic = shape.anthropic.safeParse(raw.anthropic);
  const mcp = shape.mcp.safeParse(raw.mcp);
  const github = shape.github.safeParse(raw.github);
  const keyFile = github.success ? github.data.app.private_key_file : null;
  return {
    models: models.success ? models.data : {},
    pricing: pricing.success ? pricing.data : {},
    model: models.success && pricing.success && anthropic.success ? anthropic.data.model : null,
    mcpServers: mcp.success ? mcp.data.servers : {},
    keyFile: keyFile === null ? null : resolve(baseDir, keyFile),
  };
}

/** Appends the lines `problems` lacks (the schema may have said the same of the model's price). */
function addNew(problems: string[], more: readonly string[]): void {
  for (const line of more) if (!problems.includes(line)) problems.push(line);
}

/**
 * Makes every path of the configuration absolute, against `baseDir`. Done once, at load: git runs in the
 * person's repository and commands in worktrees, so a relative data_dir would mean a different directory to
 * each of them (a worktree made inside the person's repository, then looked for in drydock's directory).
 * sandbox_read_only_paths must be absolute already (the schema says so).
 */
export function resolvePaths(config: Config, baseDir: string): Config {
  const at = (path: string) => (isAbsolute(path) ? resolve(path) : resolve(baseDir, path));
  const repositories = Object.fromEntries(
    Object.entries(config.github.repositories).map(([name, repo]) => [
      name,
      { ...repo, path: at(repo.path) },
    ]),
  );
  const keyFile = config.github.app.private_key_file;
  return {
    ...config,
    data_dir: at(config.data_dir),
    work_dir: config.work_dir === null ? null : at(config.work_dir),
    github: {
      ...config.github,
      repositories,
      app: { ...config.github.app, private_key_file: keyFile === null ? null : at(keyFile) },
    },
  };
}

/** The configuration with nothing set: every key at its default. */
export function defaultConfig(): Config {
  return configSchema.parse({});
}

/** A copy safe to log: secrets are replaced by '[redacted]' (unset ones stay null / empty). */
export function redactedConfig(c: Config): unknown {
  const copy = structuredClone(c);
  const hide = (value: string | null) => (value === null ? null : '[redacted]');
  copy.admin_token = hide(copy.admin_token);
  copy.database_url = hide(copy.database_url);
  copy.anthropic.api_key = hide(copy.anthropic.api_key);
  copy.github.webhook_secrets = copy.github.webhook_secrets.map(() => '[redacted]');
  copy.github.token = hide(copy.github.token);
  copy.github.app.webhook_secret = hide(copy.github.app.webhook_secret);
  copy.delivery.token = hide(copy.delivery.token);
  // A webhook's URL may be its credential (Slack's is): only its origin is shown.
  copy.notifications.webhooks = copy.notifications.webhooks.map((w) => ({
    ...w,
    url: `${new URL(w.url).origin}/[redacted]`,
    secret: hide(w.secret),
  }));
  return copy;
}

// --- file ------------------------------------------------------------------------------------------

function configFile(
  opts: LoadOptions,
  env: NodeJS.ProcessEnv,
  baseDir: string,
): { path: string; source: string } | undefined {
  if (opts.configPath !== undefined && opts.configPath !== '') {
    return { path: resolve(baseDir, opts.configPath), source: '--config' };
  }
  const fromEnv = env.DRYDOCK_CONFIG;
  if (fromEnv !== undefined && fromEnv !== '') {
    return { path: resolve(baseDir, fromEnv), source: 'DRYDOCK_CONFIG' };
  }
  return undefined;
}

function readConfigFile(path: string, source: string): { data: Record<string, unknown>; problems: string[] } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const problem =
      code === 'ENOENT'
        ? `config file not found: ${path} (from ${source})`
        : code === 'EISDIR'
          ? `config file is a directory: ${path} (from ${source})`
          : `config file cannot be read: ${path}: ${code ?? String(err)} (from ${source})`;
    return { data: {}, problems: [problem] };
  }

  const doc = parseDocument(text, { prettyErrors: true });
  // The first line of a yaml error says what and where; the lines after it quote the source, which
  // may hold a secret, so they are dropped.
  const yamlProblems = [...doc.errors, ...doc.warnings].map(
    (e) => `config file ${path}: ${(e.message.split('\n')[0] ?? '').replace(/:$/, '')}`,
  );
  if (yamlProblems.length > 0) return { data: {}, problems: yamlProblems };

  let value: unknown;
  try {
    value = doc.toJS();
  } catch (err) {
    return { data: {}, problems: [`config file ${path}: ${(err as Error).message}`] };
  }
  if (value === null || value === undefined) return { data: {}, problems: [] }; // empty or only comments
  if (!isPlainObject(value)) {
    return { data: {}, problems: [`config file ${path}: expected a mapping of settings at the top level`] };
  }
  return { data: value, problems: [] };
}

// --- environment and flags -------------------------------------------------------------------------

function convert(value: string, kind: Kind): unknown {
  switch (kind) {
    case 'string':
      return value;
    case 'int': {
      // Anything that is not plainly an integer stays a string, so validation reports it verbatim.
      const trimmed = value.trim();
      return /^[+-]?\d+$/.test(trimmed) ? Number(trimmed) : value;
    }
    case 'list':
      // Empty items ("a,,b") are kept and fail validation rather than vanish.
      return value.split(',').map((item) => item.trim());
  }
}

function assign(
  raw: Record<string, unknown>,
  binding: Binding,
  value: unknown,
  sources: Map<string, string>,
) {
  let target = raw;
  for (const key of binding.path.slice(0, -1)) {
    const next = target[key];
    if (next === undefined || next === null) {
      target[key] = {};
    } else if (!isPlainObject(next)) {
      return; // the file's section is malformed; validation reports that section
    }
    target = target[key] as Record<string, unknown>;
  }
  target[binding.path[binding.path.length - 1]!] = value;
  sources.set(pathKey(binding.path), binding.source);
}

// --- problems --------------------------------------------------------------------------------------

type Issue = z.ZodError['issues'][number];

function describeIssue(issue: Issue, raw: unknown, sources: Map<string, string>): string[] {
  const path = issue.path;
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeysAt(configSchema, path);
    return issue.keys.map((key) => {
      const near = closest(key, known);
      return `${formatPath([...path, key])}: unknown key${near ? `; did you mean ${near}?` : ''}`;
    });
  }
  const from = sourceOf(path, sources);
  const suffix = from === undefined ? '' : ` (from ${from})`;
  const showValue = !(issue.code === 'custom' && issue.params?.showValue === false);
  const value = valueAt(raw, path);
  // Only a secret is hidden (a token, a key, a webhook's URL): a mistyped event name or number is shown.
  const hidden = isSecretPath(path) || (typeof value === 'string' && mayHoldSecret(path));
  const got = !showValue ? '' : hidden ? ', got (redacted)' : `, got ${describeValue(value)}`;
  return [`${formatPath(path)}: ${issue.message}${got}${meant(issue, value, hidden)}${suffix}`];
}

/** `; did you mean plan.pending?` for a mistyped choice (an event, a level), when one is near. */
function meant(issue: Issue, value: unknown, hidden: boolean): string {
  if (issue.code !== 'invalid_value' || hidden || typeof value !== 'string') return '';
  const near = closest(
    value,
    issue.values.filter((v): v is string => typeof v === 'string'),
  );
  return near === undefined ? '' : `; did you mean ${near}?`;
}

function sourceOf(path: readonly PropertyKey[], sources: Map<string, string>): string | undefined {
  for (let length = path.length; length > 0; length--) {
    const source = sources.get(pathKey(path.slice(0, length)));
    if (source !== undefined) return source;
  }
  return undefined;
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let value = raw;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object' && value !== null) return 'a mapping';
  if (typeof value === 'string') {
    const plain = withoutUrlCredentials(value);
    const shown = plain.length > 80 ? `${plain.slice(0, 77)}...` : plain;
    return JSON.stringify(shown);
  }
  return String(value);
}

/**
 * A URL's password (scheme://user:password@host) is a credential wherever the URL is written, and so may be a
 * user alone (https://TOKEN@github.com); only an ssh URL's user (ssh://git@host) is shown, a name.
 */
function withoutUrlCredentials(text: string): string {
  return text.replace(
    /\b([a-z][a-z0-9+.-]*):\/\/([^\s/@:]*)(:[^\s/@]*)?@/gi,
    (whole, scheme, user, password) =>
      password !== undefined
        ? `${scheme}://${user}:(redacted)@`
        : /^(git\+)?ssh$/i.test(scheme)
          ? whole
          : `${scheme}://(redacted)@`,
  );
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(top level)';
  return path
    .map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`))
    .join('');
}

function pathKey(path: readonly PropertyKey[]): string {
  return path.map(String).join('\u0000');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
