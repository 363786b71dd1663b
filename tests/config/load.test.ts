import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import {
  ConfigError,
  defaultConfig,
  type LoadOptions,
  loadConfig,
  redactedConfig,
} from '../../src/config/load.js';
import {
  type Config,
  DATABASE_URL_EXPECTED,
  type ModelPrice,
  systemTimeZone,
} from '../../src/config/schema.js';
import { DEFAULT_NETWORK_DOMAINS } from '../../src/domain/network.js';
import { findModel, modelProblems } from '../../src/models/catalogue.js';
import { FakeClock } from '../support/fake-clock.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'drydock-config-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function writeConfig(yaml: string, name = 'drydock.yaml'): string {
  const path = join(dir, name);
  writeFileSync(path, yaml);
  return path;
}

/** The problems loadConfig reports; fails the test if it does not throw a ConfigError. */
function problemsOf(opts: LoadOptions): string[] {
  try {
    loadConfig(opts);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const error = err as ConfigError;
    expect(error.message).toBe(`invalid configuration:\n${error.problems.map((p) => `  - ${p}`).join('\n')}`);
    return error.problems;
  }
  throw new Error('expected loadConfig to throw a ConfigError');
}

const TOKEN = 'tok-0123456789abcdefghijklmnop'; // 29 characters

/** The defaults as loadConfig returns them when started in /srv/drydock: data_dir made absolute. */
const loadedDefaults = (): Config => ({ ...defaultConfig(), data_dir: '/srv/drydock/data' });

describe('defaults', () => {
  it('applies every default when no file, env or flag is given', () => {
    const config = loadConfig({ env: {}, baseDir: '/srv/drydock' });
    expect(config).toEqual(loadedDefaults());
    expect(config).toEqual({
      server: {
        host: '127.0.0.1',
        port: 8080,
        body_limit_bytes: 1_048_576,
        webhook_body_limit_bytes: 26_214_400,
        unauthenticated_body_budget_bytes: 67_108_864,
        request_timeout_ms: 30_000,
        max_connections: 1024,
        shutdown_grace_ms: 10_000,
        public_url: null,
      },
      data_dir: '/srv/drydock/data',
      work_dir: null,
      replica_id: null,
      database_url: null,
      admin_token: null,
      log_level: 'info',
      timezone: systemTimeZone(),
      scheduler: {
        max_jobs_per_session: 50,
        max_wait_ms: 30_000,
        catchup_window_ms: 3_600_000,
        recurring_expiry_ms: 604_800_000,
        batch_size: 500,
        approximate_shift_minutes: { min: 1, max: 6 },
        max_buffered_slots: 100,
        max_backfill_slots: 100,
        jitter: {
          enabled: true,
          recurring_fraction: 0.1,
          recurring_cap_ms: 600_000,
          one_shot_early_ms: 90_000,
        },
      },
      anthropic: {
        api_key: null,
        base_url: null,
        model: 'claude-sonnet-5-5',
        thinking: 'adaptive',
        effort: null,
        max_tokens: 32_000,
        max_turns: 40,
        max_retries: 3,
        request_timeout_ms: 600_000,
        turn_attempts: 6,
        turn_retry_base_ms: 2_000,
        turn_retry_max_ms: 600_000,
        spend_limit_wait_ms: 3_600_000,
      },
      runs: {
        max_concurrent: 4,
        question_timeout_ms: 86_400_000,
        default_budget_usd: 5,
        lease_ms: 30_000,
        memory_max_bytes: 40_000,
      },
      limits: { daily_usd: null, daily_runs: null, timezone: 'UTC' },
      plans: { ttl_ms: 604_800_000, approvals_required: 1 },
      retention: { worktree_ttl_ms: 604_800_000, interval_ms: 3_600_000 },
      notifications: {
        webhooks: [],
        max_attempts: 10,
        backoff_base_ms: 10_000,
        backoff_max_ms: 3_600_000,
        timeout_ms: 10_000,
        poll_interval_ms: 5_000,
      },
      execute: {
        bash_allow_list: [
          'git status',
          'git diff',
          'git log',
          'ls',
          'npm test',
          'npm run lint',
          'npm run build',
        ],
        bash_timeout_ms: 120_000,
        bash_max_output_chars: 30_000,
        tool_approval_timeout_ms: 86_400_000,
        max_write_bytes: 5_242_880,
        sandbox: 'bwrap',
        sandbox_read_only_paths: [],
        sandbox_user: '65534:65534',
        limits: {
          memory_bytes: 4294967296,
          processes: 1024,
          cpu_seconds: 600,
          file_bytes: 1073741824,
          tmp_bytes: 1073741824,
          worktree_bytes: 8589934592,
        },
        network_default_domains: [...DEFAULT_NETWORK_DOMAINS],
        breaker: { window_ms: 3_600_000, min_executions: 5, max_failure_ratio: 0.5 },
      },
      github: {
        webhook_secrets: [],
        repositories: {},
        users: {},
        api_url: 'https://api.github.com',
        git_url: null,
        clone: { timeout_ms: 600_000, max_bytes: 4_294_967_296 },
        token: null,
        app: { id: null, private_key_file: null, webhook_secret: null },
        report: false,
        trigger_hourly_cap: 30,
      },
      delivery: {
        enabled: false,
        remote: 'origin',
        token: null,
        username: 'x-access-token',
        pull_request: true,
        base_branch: null,
        pr_target: null,
        attempts: 6,
        retry_base_ms: 30_000,
        retry_max_ms: 3_600_000,
        push_timeout_ms: 120_000,
      },
      // Built-in models and their prices are the catalogue's (src/models/catalogue.ts).
      pricing: {},
      models: {},
      mcp: { servers: {} },
    });
  });

  it('types resolved values, not their inputs', () => {
    // Checked by tsc: null timezone and omitted sections are resolved by the schema.
    expectTypeOf<Config['timezone']>().toEqualTypeOf<string>();
    expectTypeOf<Config['server']['port']>().toEqualTypeOf<number>();
    expectTypeOf<Config['admin_token']>().toEqualTypeOf<string | null>();
    expectTypeOf<Config['pricing']>().toEqualTypeOf<Record<string, ModelPrice>>();
    expectTypeOf<Config['log_level']>().toEqualTypeOf<
      'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
    >();
  });

  it('hands out independent copies', () => {
    const a = defaultConfig();
    a.github.webhook_secrets.push('x');
    a.pricing['claude-sonnet-4-5'] = {
      input: 99,
      output: 1,
      cache_write_5m: 1,
      cache_write_1h: 1,
      cache_read: 1,
    };
    a.execute.bash_allow_list.push('rm -rf /');
    const b = defaultConfig();
    expect(b.github.webhook_secrets).toEqual([]);
    expect(b.pricing).toEqual({});
    expect(b.execute.bash_allow_list).not.toContain('rm -rf /');
  });
});

describe('config file', () => {
  it('reads the file named by configPath; unset keys keep their defaults', () => {
    const path = writeConfig(`
server:
  port: 9000
log_level: debug
timezone: Europe/Berlin
scheduler:
  jitter:
    enabled: false
github:
  webhook_secrets: [one, two]
`);
    const config = loadConfig({ configPath: path, env: {} });
    expect(config.server).toEqual({ ...defaultConfig().server, port: 9000 });
    expect(config.log_level).toBe('debug');
    expect(config.timezone).toBe('Europe/Berlin');
    expect(config.scheduler.jitter).toEqual({ ...defaultConfig().scheduler.jitter, enabled: false });
    expect(config.scheduler.max_wait_ms).toBe(30_000);
    expect(config.github.webhook_secrets).toEqual(['one', 'two']);
  });

  it('reads the file named by DRYDOCK_CONFIG, and configPath wins over it', () => {
    const fromEnv = writeConfig('server:\n  port: 9001\n', 'env.yaml');
    const fromFlag = writeConfig('server:\n  port: 9002\n', 'flag.yaml');
    expect(loadConfig({ env: { DRYDOCK_CONFIG: fromEnv } }).server.port).toBe(9001);
    expect(loadConfig({ configPath: fromFlag, env: { DRYDOCK_CONFIG: fromEnv } }).server.port).toBe(9002);
  });

  it('treats an empty file and an emptied section as defaults', () => {
    const empty = writeConfig('# nothing here\n');
    expect(loadConfig({ configPath: empty, env: {}, baseDir: '/srv/drydock' })).toEqual(loadedDefaults());
    const emptied = writeConfig('server:\n  # port: 9000\nscheduler:\n  jitter:\n', 'emptied.yaml');
    expect(loadConfig({ configPath: emptied, env: {}, baseDir: '/srv/drydock' })).toEqual(loadedDefaults());
  });

  it('prices a model the catalogue lacks, and replaces a catalogue price, from pricing and models', () => {
    const path = writeConfig(`
anthropic:
  model: my-model
pricing:
  my-model: { input: 1, output: 2, cache_write_5m: 3, cache_write_1h: 4, cache_read: 0.5 }
  claude-haiku-4-5: { input: 2, output: 10, cache_write_5m: 2.5, cache_write_1h: 4, cache_read: 0.2 }
models:
  other-model:
    thinking: [adaptive]
    price: { input: 7, output: 8, cache_write_5m: 9, cache_write_1h: 10, cache_read: 0.7 }
`);
    const config = loadConfig({ configPath: path, env: {} });
    expect(config.anthropic.model).toBe('my-model');
    expect(findModel(config, 'my-model')).toMatchObject({ known: false, priced: true, thinking: [] });
    expect(findModel(config, 'my-model').price.input).toBe(1);
    expect(findModel(config, 'claude-haiku-4-5').price.input).toBe(2);
    // Only the price is replaced: the rest of the catalogue entry stays.
    expect(findModel(config, 'claude-haiku-4-5').thinking).toEqual(['enabled', 'disabled']);
    expect(findModel(config, 'claude-sonnet-4-5').price.input).toBe(3);
    expect(findModel(config, 'other-model')).toMatchObject({
      known: true,
      priced: true,
      thinking: ['adaptive'],
    });
    // An unknown model with a price is allowed, with a warning (no thinking knobs are sent to it).
    expect(modelProblems(config, 'my-model', Date.UTC(2026, 11, 4)).errors).toEqual([]);
    expect(modelProblems(config, 'my-model', Date.UTC(2026, 11, 4)).warnings[0]).toMatch(
      /not in the model catalogue/,
    );
  });

  it('refuses a retired default model by the clock, naming its replacement; warns about a deprecated one', () => {
    const path = writeConfig('anthropic:\n  model: claude-opus-4-1\n');
    expect(problemsOf({ configPath: path, env: {} })).toEqual([
      'anthropic.model: claude-opus-4-1 retired on 2026-08-05 and no longer answers; use claude-opus-5-5 (docs/models.md)',
    ]);
    // Sonnet 4.5 retires on 2026-11-30: loaded the day before, it is retiring; on the day, refused.
    const sonnet45 = writeConfig('anthropic:\n  model: claude-sonnet-4-5\n', 'd.yaml');
    const dayBefore = new FakeClock(Date.UTC(2026, 10, 29, 12));
    const loaded = loadConfig({ configPath: sonnet45, env: {}, clock: dayBefore });
    expect(modelProblems(loaded, 'claude-sonnet-4-5', dayBefore.now())).toEqual({
      errors: [],
      warnings: ['claude-sonnet-4-5 retires on 2026-11-30 (in 1 day); move to claude-sonnet-5-5 before then'],
      notes: [],
    });
    expect(
      problemsOf({ configPath: sonnet45, env: {}, clock: new FakeClock(Date.UTC(2026, 10, 30)) }),
    ).toEqual([
      'anthropic.model: claude-sonnet-4-5 retired on 2026-11-30 and no longer answers; use claude-sonnet-5-5 (docs/models.md)',
    ]);
  });

  it('accepts thinking as off, adaptive or {budget_tokens}, and an effort level', () => {
    const path = writeConfig('anthropic:\n  thinking: { budget_tokens: 2048 }\n  effort: low\n');
    const config = loadConfig({ configPath: path, env: {} });
    expect(config.anthropic.thinking).toEqual({ budget_tokens: 2048 });
    expect(config.anthropic.effort).toBe('low');
    const bad = writeConfig('anthropic:\n  thinking: sometimes\n  effort: extreme\n', 'bad.yaml');
    expect(problemsOf({ configPath: bad, env: {} })).toEqual([
      'anthropic.thinking: expected off, adaptive or {budget_tokens: N} with N 1024-128000, got "sometimes"',
      'anthropic.effort: expected one of low, medium, high, xhigh, max, or null for the model\'s default, got "extreme"',
    ]);
  });

  it('takes delivery.pr_target as head, stacked, base or null, and nothing else', () => {
    const stacked = writeConfig('delivery:\n  pr_target: stacked\n', 'pr-stacked.yaml');
    expect(loadConfig({ configPath: stacked, env: {} }).delivery.pr_target).toBe('stacked');
    const bad = writeConfig('delivery:\n  pr_target: fork\n', 'pr-bad.yaml');
    expect(problemsOf({ configPath: bad, env: {} }).join('\n')).toMatch(
      /delivery\.pr_target: expected head, stacked, base or null/,
    );
  });

  it('rejects a default model that has no price', () => {
    const path = writeConfig('anthropic:\n  model: unpriced-model\n');
    expect(problemsOf({ configPath: path, env: {} })).toEqual([
      'anthropic.model: unpriced-model is not in the model catalogue and has no price; add models.unpriced-model.price (budgets are enforced from it)',
    ]);
  });

  it('rejects an explicitly named file that does not exist, naming its path', () => {
    const missing = join(dir, 'nope.yaml');
    expect(problemsOf({ configPath: missing, env: {} })).toEqual([
      `config file not found: ${missing} (from --config)`,
    ]);
    expect(problemsOf({ env: { DRYDOCK_CONFIG: missing } })).toEqual([
      `config file not found: ${missing} (from DRYDOCK_CONFIG)`,
    ]);
  });

  it('reports YAML syntax errors with their position', () => {
    const problems = problemsOf({ configPath: writeConfig('server:\n  port: 1\n  port: 2\n'), env: {} });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^config file .*drydock\.yaml: Map keys must be unique at line 3, column 3$/);
  });

  it('rejects a file whose top level is not a mapping', () => {
    const path = writeConfig('- 1\n- 2\n');
    expect(problemsOf({ configPath: path, env: {} })).toEqual([
      `config file ${path}: expected a mapping of settings at the top level`,
    ]);
  });

  it('rejects unknown keys, at the top level and inside sections', () => {
    const path = writeConfig(`
colour: blue
server:
  prot: 8080
scheduler:
  jitter:
    enable: false
pricing:
  claude-opus-4-1: { input: 15, output: 75, cache_write_5m: 18.75, cache_write_1h: 30, cache_read: 1.5, extra: 1 }
`);
    expect(problemsOf({ configPath: path, env: {} }).sort()).toEqual(
      [
        'colour: unknown key',
        'server.prot: unknown key; did you mean port?',
        'scheduler.jitter.enable: unknown key; did you mean enabled?',
        'pricing.claude-opus-4-1.extra: unknown key',
      ].sort(),
    );
  });

  it('rejects values of the wrong type without coercing them', () => {
    const path = writeConfig(`
server:
  port: "8080"
scheduler:
  jitter:
    enabled: yes
pricing:
  claude-opus-4-1: { input: 15 }
`);
    const problems = problemsOf({ configPath: path, env: {} });
    expect(problems).toContain('server.port: expected integer 0-65535, got "8080"');
    expect(problems).toContain('scheduler.jitter.enabled: expected true or false, got "yes"');
    expect(problems).toContain(
      'pricing.claude-opus-4-1.output: expected number >= 0 (USD per million tokens), got nothing',
    );
  });
});

describe('environment and flags', () => {
  it('environment variables beat the file', () => {
    const path = writeConfig(`
server: { host: 0.0.0.0, port: 9000 }
data_dir: /from/file
log_level: warn
timezone: Europe/Berlin
anthropic: { base_url: "https://file.example" }
github: { webhook_secrets: [from-file] }
`);
    const config = loadConfig({
      configPath: path,
      env: {
        DRYDOCK_HOST: '10.0.0.1',
        DRYDOCK_PORT: '9100',
        DRYDOCK_DATA_DIR: '/from/env',
        DRYDOCK_ADMIN_TOKEN: TOKEN,
        DRYDOCK_LOG_LEVEL: 'debug',
        DRYDOCK_TIMEZONE: 'America/New_York',
        ANTHROPIC_API_KEY: 'sk-test',
        ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010',
        GITHUB_WEBHOOK_SECRET: 'old-secret, new-secret',
      },
    });
    expect(config.server.host).toBe('10.0.0.1');
    expect(config.server.port).toBe(9100);
    expect(config.data_dir).toBe('/from/env');
    expect(config.admin_token).toBe(TOKEN);
    expect(config.log_level).toBe('debug');
    expect(config.timezone).toBe('America/New_York');
    expect(config.anthropic.api_key).toBe('sk-test');
    expect(config.anthropic.base_url).toBe('http://127.0.0.1:4010');
    expect(config.github.webhook_secrets).toEqual(['old-secret', 'new-secret']);
  });

  it('treats an empty environment variable as unset', () => {
    const path = writeConfig('server:\n  port: 9000\n');
    const config = loadConfig({ configPath: path, env: { DRYDOCK_PORT: '', ANTHROPIC_API_KEY: '' } });
    expect(config.server.port).toBe(9000);
    expect(config.anthropic.api_key).toBeNull();
  });

  it('resolves every relative path once, against the directory it was started in', () => {
    const path = writeConfig(
      'data_dir: state\ngithub:\n  repositories:\n    acme/api: { path: ../clones/api }\n',
    );
    const config = loadConfig({ configPath: 'drydock.yaml', env: {}, baseDir: dir });
    expect(config.data_dir).toBe(join(dir, 'state'));
    expect(config.github.repositories['acme/api']!.path).toBe(join(dir, '..', 'clones', 'api'));
    // The config file's own path too; an absolute path stays as it is.
    expect(loadConfig({ configPath: path, env: {}, baseDir: '/elsewhere' }).data_dir).toBe(
      '/elsewhere/state',
    );
    const flagged = loadConfig({
      env: { DRYDOCK_DATA_DIR: 'x/../y', DRYDOCK_WORK_DIR: 'shared/../work' },
      overrides: {},
      baseDir: '/srv',
    });
    expect(flagged.data_dir).toBe('/srv/y');
    expect(flagged.work_dir).toBe('/srv/work');
    expect(loadConfig({ env: {}, baseDir: '/srv' }).work_dir).toBeNull();
    expect(loadConfig({ env: {}, overrides: { data_dir: '/abs/data/' } }).data_dir).toBe('/abs/data');
  });

  it('flags beat environment variables', () => {
    const env = { DRYDOCK_PORT: '9100', DRYDOCK_HOST: '10.0.0.1', DRYDOCK_DATA_DIR: '/from/env' };
    const config = loadConfig({ env, overrides: { port: 9200, host: '::1', data_dir: '/from/flag' } });
    expect(config.server.port).toBe(9200);
    expect(config.server.host).toBe('::1');
    expect(config.data_dir).toBe('/from/flag');
    expect(loadConfig({ env, overrides: { port: '9300' } }).server.port).toBe(9300);
  });

  it('names the variable when DRYDOCK_PORT is not a port', () => {
    expect(problemsOf({ env: { DRYDOCK_PORT: 'abc' } })).toEqual([
      'server.port: expected integer 0-65535, got "abc" (from DRYDOCK_PORT)',
    ]);
    expect(problemsOf({ env: { DRYDOCK_PORT: '70000' } })).toEqual([
      'server.port: expected integer 0-65535, got 70000 (from DRYDOCK_PORT)',
    ]);
    expect(problemsOf({ env: { DRYDOCK_PORT: '80.5' } })).toEqual([
      'server.port: expected integer 0-65535, got "80.5" (from DRYDOCK_PORT)',
    ]);
  });

  it('names the flag when --port is not a port', () => {
    expect(problemsOf({ env: { DRYDOCK_PORT: '9000' }, overrides: { port: 'http' } })).toEqual([
      'server.port: expected integer 0-65535, got "http" (from --port)',
    ]);
  });

  it('rejects an invalid log level from the environment', () => {
    expect(problemsOf({ env: { DRYDOCK_LOG_LEVEL: 'verbose' } })).toEqual([
      'log_level: expected one of fatal, error, warn, info, debug, trace, silent, got "verbose" (from DRYDOCK_LOG_LEVEL)',
    ]);
  });

  it('rejects an empty item in GITHUB_WEBHOOK_SECRET', () => {
    expect(problemsOf({ env: { GITHUB_WEBHOOK_SECRET: 'a,,b' } })).toEqual([
      'github.webhook_secrets[1]: expected a non-empty secret, got (redacted) (from GITHUB_WEBHOOK_SECRET)',
    ]);
  });
});

describe('timezone', () => {
  it('accepts IANA zones and UTC', () => {
    expect(loadConfig({ env: { DRYDOCK_TIMEZONE: 'Asia/Kolkata' } }).timezone).toBe('Asia/Kolkata');
    expect(loadConfig({ env: { DRYDOCK_TIMEZONE: 'UTC' } }).timezone).toBe('UTC');
  });

  it('rejects unknown zones and bare offsets', () => {
    const message = 'expected an IANA time zone such as "Europe/Berlin" or "UTC", or null for system local';
    expect(problemsOf({ env: { DRYDOCK_TIMEZONE: 'Mars/Olympus_Mons' } })).toEqual([
      `timezone: ${message}, got "Mars/Olympus_Mons" (from DRYDOCK_TIMEZONE)`,
    ]);
    expect(problemsOf({ configPath: writeConfig('timezone: "+01:00"\n'), env: {} })).toEqual([
      `timezone: ${message}, got "+01:00"`,
    ]);
  });
});

describe('database_url', () => {
  it('takes a PostgreSQL URL (postgres:// or postgresql://), and null by default', () => {
    const url = 'postgres://drydock:hunter2-password@db.internal:5432/drydock';
    expect(loadConfig({ env: { DATABASE_URL: url } }).database_url).toBe(url);
    const long = 'postgresql://db.internal/drydock?sslmode=require';
    expect(loadConfig({ env: { DATABASE_URL: long } }).database_url).toBe(long);
    expect(loadConfig({ env: {} }).database_url).toBeNull();
  });

  it('refuses any other URL without showing it', () => {
    for (const url of ['mysql://root:hunter2@x/db', 'postgres://', 'sqlite:///data/drydock.db', 'hunter2']) {
      const problems = problemsOf({ env: { DATABASE_URL: url } });
      expect(problems).toEqual([`database_url: ${DATABASE_URL_EXPECTED} (from DATABASE_URL)`]);
      expect(problems.join('\n')).not.toContain('hunter2');
    }
  });
});

describe('every problem at once', () => {
  it('lists all problems from the file, the environment and the flags in one error', () => {
    const path = writeConfig(`
server:
  port: -1
  shutdown_grace_ms: -1
log_level: loud
scheduler:
  max_wait_ms: 60000
  approximate_shift_minutes: { min: 5, max: 2 }
runs:
  default_budget_usd: 0
anthropic:
  base_url: ftp://example.com
surprise: true
`);
    const problems = problemsOf({
      configPath: path,
      env: { DRYDOCK_TIMEZONE: 'Nowhere/Land', DRYDOCK_ADMIN_TOKEN: 'short' },
      overrides: { data_dir: '' },
    });
    expect(problems).toEqual([
      'server.port: expected integer 0-65535, got -1',
      'server.shutdown_grace_ms: expected integer >= 0, got -1',
      'data_dir: expected a directory path, got "" (from --data-dir)',
      'admin_token: expected a string of at least 24 characters, got (redacted) (from DRYDOCK_ADMIN_TOKEN)',
      'log_level: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"',
      'timezone: expected an IANA time zone such as "Europe/Berlin" or "UTC", or null for system local, got "Nowhere/Land" (from DRYDOCK_TIMEZONE)',
      'scheduler.max_wait_ms: expected integer 1-30000, got 60000',
      'scheduler.approximate_shift_minutes: min must not exceed max, got a mapping',
      'anthropic.base_url: expected an http(s) URL, got "ftp://example.com"',
      'runs.default_budget_usd: expected number > 0 (USD), got 0',
      'surprise: unknown key',
    ]);
  });

  it('clone on demand: git_url must be an http(s) URL, the clone limits positive integers', () => {
    const path = writeConfig(`
github:
  git_url: ssh://git@github.com
  clone:
    timeout_ms: 10
    max_bytes: 0
`);
    expect(problemsOf({ configPath: path })).toEqual([
      'github.git_url: expected an http(s) URL, got "ssh://git@github.com"',
      'github.clone.timeout_ms: expected integer >= 1000, got 10',
      'github.clone.max_bytes: expected integer >= 1, got 0',
    ]);
    const ok = loadConfig({
      configPath: writeConfig('github:\n  git_url: http://127.0.0.1:3000\n  clone: {max_bytes: 1000}\n'),
      env: {},
    });
    expect(ok.github.git_url).toBe('http://127.0.0.1:3000');
    expect(ok.github.clone).toEqual({ timeout_ms: 600_000, max_bytes: 1000 });
  });

  it('refuses an unauthenticated body budget smaller than the webhook body limit', () => {
    const path = writeConfig(`
server:
  webhook_body_limit_bytes: 1048576
  unauthenticated_body_budget_bytes: 1048575
`);
    expect(problemsOf({ configPath: path, env: {} })).toEqual([
      'server.unauthenticated_body_budget_bytes: must be at least webhook_body_limit_bytes, got 1048575',
    ]);
    // Equal is enough: one delivery of the largest size at a time.
    const equal = writeConfig(
      'server: { webhook_body_limit_bytes: 1048576, unauthenticated_body_budget_bytes: 1048576 }\n',
    );
    expect(loadConfig({ configPath: equal, env: {} }).server.unauthenticated_body_budget_bytes).toBe(
      1_048_576,
    );
  });

  it('still validates the environment when the file is missing', () => {
    const problems = problemsOf({ configPath: join(dir, 'missing.yaml'), env: { DRYDOCK_PORT: 'abc' } });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toContain('config file not found');
    expect(problems[1]).toBe('server.port: expected integer 0-65535, got "abc" (from DRYDOCK_PORT)');
  });
});

describe('secrets', () => {
  const adminToken = 'short-admin-secret';
  const apiKey = 'sk-ant-api-secret-value';
  const webhookSecret = 'gh-webhook-secret-value';

  it('never appear in problems, whatever is wrong with them', () => {
    const path = writeConfig(`
admin_token: ${adminToken}
anthropic:
  api_key: [${apiKey}]
github:
  webhook_secrets: ${webhookSecret}
`);
    const problems = problemsOf({ configPath: path, env: {} });
    expect(problems).toEqual([
      'admin_token: expected a string of at least 24 characters, got (redacted)',
      'anthropic.api_key: expected a non-empty string or null, got (redacted)',
      'github.webhook_secrets: expected a list of secrets, got (redacted)',
    ]);
    const text = problems.join('\n');
    for (const secret of [adminToken, apiKey, webhookSecret]) expect(text).not.toContain(secret);
  });

  it('never appear in YAML syntax errors', () => {
    const path = writeConfig(`admin_token: "${adminToken}\n`);
    const error = (() => {
      try {
        loadConfig({ configPath: path, env: {} });
      } catch (err) {
        return err as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(error.problems).toHaveLength(1);
    expect(error.message).not.toContain(adminToken);
  });

  it('are replaced in the copy meant for logs', () => {
    const config = loadConfig({
      env: {
        DRYDOCK_ADMIN_TOKEN: TOKEN,
        ANTHROPIC_API_KEY: apiKey,
        GITHUB_WEBHOOK_SECRET: `${webhookSecret},b`,
      },
    });
    const redacted = redactedConfig(config) as typeof config;
    expect(redacted.admin_token).toBe('[redacted]');
    expect(redacted.anthropic.api_key).toBe('[redacted]');
    expect(redacted.github.webhook_secrets).toEqual(['[redacted]', '[redacted]']);
    expect(redacted.database_url).toBeNull();
    expect(redacted.server).toEqual(config.server);
    const text = JSON.stringify(redacted);
    for (const secret of [TOKEN, apiKey, webhookSecret]) expect(text).not.toContain(secret);
    // The original is untouched.
    expect(config.admin_token).toBe(TOKEN);
    expect(config.github.webhook_secrets).toEqual([webhookSecret, 'b']);
  });

  it('unset secrets stay null in the copy meant for logs', () => {
    const redacted = redactedConfig(defaultConfig()) as ReturnType<typeof defaultConfig>;
    expect(redacted.admin_token).toBeNull();
    expect(redacted.anthropic.api_key).toBeNull();
    expect(redacted.github.webhook_secrets).toEqual([]);
  });
});

describe('execute.sandbox', () => {
  it('is bwrap or off; read-only paths must be absolute', () => {
    expect(loadConfig({ env: { DRYDOCK_CONFIG: '' } }).execute.sandbox).toBe('bwrap');
    const dir = mkdtempSync(join(tmpdir(), 'drydock-sandbox-config-'));
    try {
      const file = join(dir, 'c.yaml');
      writeFileSync(file, 'execute:\n  sandbox: off\n  sandbox_read_only_paths: [/opt/node]\n');
      expect(loadConfig({ configPath: file, env: {} }).execute).toMatchObject({
        sandbox: 'off',
        sandbox_read_only_paths: ['/opt/node'],
      });
      writeFileSync(file, 'execute:\n  sandbox: docker\n  sandbox_read_only_paths: [opt/node]\n');
      let problems: string[] = [];
      try {
        loadConfig({ configPath: file, env: {} });
      } catch (err) {
        problems = (err as ConfigError).problems;
      }
      expect(problems.join('\n')).toMatch(/execute\.sandbox: expected bwrap or off/);
      expect(problems.join('\n')).toMatch(
        /execute\.sandbox_read_only_paths\[0\]: expected an absolute path, got "opt\/node"/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('execute.network_default_domains', () => {
  it('holds host names only: each other entry is named with its problem', () => {
    const dir = mkdtempSync(join(tmpdir(), 'drydock-network-config-'));
    try {
      const file = join(dir, 'c.yaml');
      writeFileSync(file, 'execute:\n  network_default_domains: [registry.npmjs.org, "*.github.com"]\n');
      expect(loadConfig({ configPath: file, env: {} }).execute.network_default_domains).toEqual([
        'registry.npmjs.org',
        '*.github.com',
      ]);
      writeFileSync(
        file,
        'execute:\n  network_default_domains: [ok.example, 127.0.0.1, "https://x.example"]\n',
      );
      let problems: string[] = [];
      try {
        loadConfig({ configPath: file, env: {} });
      } catch (err) {
        problems = (err as ConfigError).problems;
      }
      expect(problems.join('\n')).toMatch(
        /execute\.network_default_domains\[1\]: expected a host name: an IP address: only host names are allowed/,
      );
      expect(problems.join('\n')).toMatch(
        /execute\.network_default_domains\[2\]: expected a host name: a URL/,
      );
      expect(problems).toHaveLength(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the default time zone', () => {
  it('is TZ as spelled, not the runtime older alias (Europe/Kyiv stays Europe/Kyiv)', () => {
    const before = process.env.TZ;
    try {
      process.env.TZ = 'Europe/Kyiv';
      expect(defaultConfig().timezone).toBe('Europe/Kyiv');
      process.env.TZ = ':asia/kolkata';
      expect(defaultConfig().timezone).toBe('Asia/Kolkata');
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });
});

describe('execute.sandbox_user and execute.limits', () => {
  it('take uid:gid (never uid 0) and positive limits, each problem named', () => {
    const dir = mkdtempSync(join(tmpdir(), 'drydock-config-'));
    try {
      const file = join(dir, 'c.yaml');
      writeFileSync(file, 'execute:\n  sandbox_user: "1500:1500"\n  limits:\n    cpu_seconds: 30\n');
      const c = loadConfig({ configPath: file, env: {} });
      expect(c.execute.sandbox_user).toBe('1500:1500');
      expect(c.execute.limits.cpu_seconds).toBe(30);
      expect(c.execute.limits.processes).toBe(1024);
      writeFileSync(file, 'execute:\n  sandbox_user: "0:0"\n  limits:\n    processes: 0\n');
      expect(() => loadConfig({ configPath: file, env: {} })).toThrow(
        /execute\.sandbox_user: expected uid:gid/,
      );
      expect(() => loadConfig({ configPath: file, env: {} })).toThrow(/execute\.limits\.processes/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
