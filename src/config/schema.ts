import { z } from 'zod';
import { DEFAULT_NETWORK_DOMAINS, domainProblem, MAX_NETWORK_DOMAINS } from '../domain/network.js';
import { NOTIFICATION_EVENTS } from '../domain/notifications.js';
import { thinkingOptionSchema } from '../domain/thinking.js';
import { EFFORTS } from '../domain/types.js';
import { canonicalZone, isValidTimezone } from '../domain/zone.js';
import { modelPriceProblems } from '../models/catalogue.js';
import { startOfDay } from '../models/lifecycle.js';

// The configuration contract. Keys are snake_case, identical in YAML and in the `Config` type, and
// every key has a default, so `configSchema.parse({})` is the complete default configuration.
// `config/drydock.example.yaml` documents each key; tests hold it equal to these defaults.

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Paths whose values are credentials: never printed, in errors or in logs. */
export const SECRET_PATHS: readonly (readonly string[])[] = [
  ['admin_token'],
  ['database_url'], // a PostgreSQL URL usually carries a password
  ['anthropic', 'api_key'],
  ['github', 'webhook_secrets'],
  ['github', 'token'],
  ['github', 'app', 'webhook_secret'],
  ['delivery', 'token'],
  // Webhook URLs often carry their own credential (a Slack incoming webhook's path is one), and secrets.
  // `*` is any item of a list: a webhook's events and format are plain values, shown in errors.
  ['notifications', 'webhooks', '*', 'url'],
  ['notifications', 'webhooks', '*', 'secret'],
];

const stepMatches = (secret: string, key: PropertyKey | undefined) =>
  secret === '*' ? typeof key === 'number' : key === secret;

/** Whether `path` is a secret or lies under one. */
export function isSecretPath(path: readonly PropertyKey[]): boolean {
  return SECRET_PATHS.some((secret) => secret.every((key, i) => stepMatches(key, path[i])));
}

/**
 * Whether a secret lies at or under `path`: a string written there (a webhook's URL where the mapping of url,
 * events, secret belongs) may be the secret itself, so it is not shown either.
 */
export function mayHoldSecret(path: readonly PropertyKey[]): boolean {
  return (
    isSecretPath(path) ||
    SECRET_PATHS.some(
      (secret) => path.length < secret.length && path.every((key, i) => stepMatches(secret[i]!, key)),
    )
  );
}

/** The zone of the machine the daemon runs on. */
export function systemTimeZone(): string {
  // TZ as set (Node 20's resolvedOptions() would turn Europe/Kyiv into its old alias Europe/Kiev).
  const tz = process.env.TZ ? canonicalZone(process.env.TZ.replace(/^:/, '')) : null;
  return tz ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** A replica's name: what `replica_id` accepts, and what drydock makes when it is not set. */
export const REPLICA_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const DATABASE_URL_EXPECTED =
  'expected a PostgreSQL URL (postgres://user:password@host:5432/database), or null for the embedded SQLite store in data_dir';

/** postgres:// or postgresql:// with a host: the URL forms node-postgres reads (pg-connection-string). */
function isPostgresUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return (u.protocol === 'postgres:' || u.protocol === 'postgresql:') && u.hostname !== '';
  } catch {
    return false;
  }
}

// --- field builders: one message per field, used for every way the value can be wrong -------------

function int(min: number, max?: number) {
  const error = max === undefined ? `expected integer >= ${min}` : `expected integer ${min}-${max}`;
  const schema = z.int({ error }).min(min, { error });
  return max === undefined ? schema : schema.max(max, { error });
}

function num(min: number, opts: { max?: number; exclusiveMin?: boolean; unit?: string } = {}) {
  const range = opts.max !== undefined ? `${min}-${opts.max}` : opts.exclusiveMin ? `> ${min}` : `>= ${min}`;
  const error = `expected number ${range}${opts.unit ? ` (${opts.unit})` : ''}`;
  let schema = opts.exclusiveMin
    ? z.number({ error }).gt(min, { error })
    : z.number({ error }).min(min, { error });
  if (opts.max !== undefined) schema = schema.max(opts.max, { error });
  return schema;
}

function text(what = 'a non-empty string') {
  const error = `expected ${what}`;
  return z.string({ error }).min(1, { error });
}

function bool() {
  return z.boolean({ error: 'expected true or false' });
}

function httpUrl() {
  const error = 'expected an http(s) URL';
  return z.string({ error }).refine(
    (value) => {
      try {
        const { protocol } = new URL(value);
        return protocol === 'http:' || protocol === 'https:';
      } catch {
        return false;
      }
    },
    { error },
  );
}

/** YAML `section:` with every key commented out reads as null: treat it as an empty section. */
function nullAsEmpty(value: unknown): unknown {
  return value === null ? {} : value;
}

/** A strict (unknown keys are errors) group of settings whose own keys all have defaults. */
function section<Shape extends z.ZodRawShape>(shape: Shape) {
  return z
    .preprocess(nullAsEmpty, z.strictObject(shape, { error: 'expected a mapping of settings' }))
    .prefault({});
}

// --- sections --------------------------------------------------------------------------------------

const serverSchema = section({
  host: text('a host name or IP address').default('127.0.0.1'),
  port: int(0, 65535).default(8080),
  body_limit_bytes: int(1).default(1_048_576),
  webhook_body_limit_bytes: int(1).default(26_214_400),
  // Bytes of webhook bodies held before their signature is verified, across all requests (64 MiB).
  unauthenticated_body_budget_bytes: int(1).default(67_108_864),
  // Time a client has to send a whole request, headers and body (Node's requestTimeout), in ms.
  request_timeout_ms: int(1000).default(30_000),
  max_connections: int(1).default(1024),
  shutdown_grace_ms: int(0).default(10_000),
  // The daemon's address as people reach it (behind a proxy, with TLS): links to plan pages in pull requests,
  // comments and notifications start with it. null: pull requests and comments link to the address the daemon
  // listens on; notifications carry paths (/ui/plans/...) only.
  public_url: httpUrl().nullable().default(null),
}).refine((server) => server.unauthenticated_body_budget_bytes >= server.webhook_body_limit_bytes, {
  // Else the largest webhook the limit allows could never be read: it would be refused with 503 forever.
  error: 'must be at least webhook_body_limit_bytes',
  path: ['unauthenticated_body_budget_bytes'],
});

const approximateShiftSchema = section({
  min: int(0, 29).default(1),
  max: int(0, 29).default(6),
}).refine((shift) => shift.min <= shift.max, { error: 'min must not exceed max' });

const jitterSchema = section({
  enabled: bool().default(true),
  recurring_fraction: num(0, { max: 1 }).default(0.1),
  recurring_cap_ms: int(0).default(600_000),
  one_shot_early_ms: int(0).default(90_000),
});

const schedulerSchema = section({
  max_jobs_per_session: int(1).default(50),
  // The single timer never sleeps longer than 30 s, whatever this says.
  max_wait_ms: int(1, 30_000).default(30_000),
  catchup_window_ms: int(0).default(3_600_000),
  recurring_expiry_ms: int(1).default(604_800_000),
  batch_size: int(1).default(500),
  approximate_shift_minutes: approximateShiftSchema,
  max_buffered_slots: int(1).default(100),
  max_backfill_slots: int(1).default(100),
  jitter: jitterSchema,
});

const EFFORT_ERROR = `expected one of ${EFFORTS.join(', ')}, or null for the model's default`;

/** `thinking` as a person writes it: off, adaptive, or {budget_tokens: N} (the API accepts the same). */

const anthropicSchema = section({
  api_key: text('a non-empty string or null').nullable().default(null),
  base_url: httpUrl().nullable().default(null),
  model: text('a model id').default('claude-sonnet-5-5'),
  // Translated per model (src/models/catalogue.ts); sessions, jobs and triggers may override both.
  thinking: thinkingOptionSchema.default('adaptive'),
  effort: z.enum(EFFORTS, { error: EFFORT_ERROR }).nullable().default(null),
  // Clamped to the model's output cap; thinking counts toward it.
  max_tokens: int(1).default(32_000),
  max_turns: int(1).default(40),
  // The SDK's own retries of one HTTP request (429, 5xx, connection errors).
  max_retries: int(0, 10).default(3),
  request_timeout_ms: int(1).default(600_000),
  // Then the run retries the turn from its stored conversation (also after an error in mid-stream), with
  // exponential backoff from turn_retry_base_ms (capped at 60 s, honouring retry-after), at most
  // turn_attempts attempts per turn and turn_retry_max_ms of waiting in all.
  turn_attempts: int(1, 50).default(6),
  turn_retry_base_ms: int(1).default(2_000),
  turn_retry_max_ms: int(0).default(600_000),
  // A run that meets the account's spend limit is never retried: it waits (awaiting_input on spend_limit),
  // and so does every run that would send a request meanwhile, until an admin resumes them (`drydock runs
  // resume`) or this long has passed; then they try again (docs/models.md).
  spend_limit_wait_ms: int(1).default(3_600_000),
});

const runsSchema = section({
  max_concurrent: int(1).default(4),
  question_timeout_ms: int(1).default(86_400_000),
  default_budget_usd: num(0, { exclusiveMin: true, unit: 'USD' }).default(5),
  // How long a replica's claim on a running run holds without being renewed (renewed every third of it);
  // another replica takes the run over once it runs out (docs/replicas.md).
  lease_ms: int(3_000).default(30_000),
  // The most bytes of project memory (CLAUDE.md, .claude/CLAUDE.md, or AGENTS.md) put into a conversation's
  // system prompt, all files together; past it the text is cut and says so (src/agent/memory.ts). 0: none.
  memory_max_bytes: int(0).default(40_000),
});

// Spend caps of the whole daemon (docs/spend-caps.md): a run that would start past one is not started (a fire
// answers 429 spend_cap, a cron slot is recorded `capped`), and a run going when daily_usd is crossed parks
// after its turn until the day resets. Counted from the runs' receipts in the store, by the day of
// `timezone`, across replicas. Triggers and sessions may have caps of their own (their `limits`).
const spendLimitsSchema = section({
  // US dollars of receipts per day (null: no cap).
  daily_usd: num(0, { exclusiveMin: true, unit: 'USD' }).nullable().default(null),
  // Runs started per day (null: no cap).
  daily_runs: int(1).nullable().default(null),
  // The zone whose midnight starts a new day of caps and usage.
  timezone: z
    .string({ error: 'expected an IANA time zone such as "Europe/Berlin" or "UTC"' })
    .refine(isValidTimezone, { error: 'expected an IANA time zone such as "Europe/Berlin" or "UTC"' })
    .default('UTC'),
});

const plansSchema = section({
  ttl_ms: int(1).default(604_800_000),
  approvals_required: int(1, 10).default(1),
});

// Worktrees of executions and pull request checkouts are removed this long after their plan (or run) was
// settled, checked every interval_ms (src/workspace/retention.ts; `drydock gc` runs one pass at once).
const retentionSchema = section({
  worktree_ttl_ms: int(0).default(604_800_000),
  interval_ms: int(60_000).default(3_600_000),
});

const breakerSchema = section({
  window_ms: int(1).default(3_600_000),
  min_executions: int(1).default(5),
  max_failure_ratio: num(0, { max: 1 }).default(0.5),
});

// Per-command limits of the sandbox (prlimit(1) and the size of its private /tmp).
const limitsSchema = section({
  memory_bytes: int(16 * 1024 * 1024).default(4 * 1024 ** 3),
  processes: int(8).default(1024),
  cpu_seconds: int(1).default(600),
  file_bytes: int(1024).default(1024 ** 3),
  tmp_bytes: int(1024 * 1024).default(1024 ** 3),
  worktree_bytes: int(1024 * 1024).default(8 * 1024 ** 3),
});

const executeSchema = section({
  bash_allow_list: z
    .array(text('a command prefix'), { error: 'expected a list of command prefixes' })
    .default(() => ['git status', 'git diff', 'git log', 'ls', 'npm test', 'npm run lint', 'npm run build']),
  bash_timeout_ms: int(1, 600_000).default(120_000),
  bash_max_output_chars: int(1000).default(30_000),
  tool_approval_timeout_ms: int(1).default(86_400_000),
  max_write_bytes: int(1).default(5_242_880),
  // bwrap: every Bash command runs in a bubblewrap sandbox; Bash refuses to run where it does not work.
  // off: commands run unconfined (logged loudly at start, shown on every plan).
  sandbox: z.enum(['bwrap', 'off'], { error: 'expected bwrap or off' }).default('bwrap'),
  sandbox_read_only_paths: z
    .array(
      z
        .string({ error: 'expected an absolute path' })
        .refine((p) => p.startsWith('/'), { error: 'expected an absolute path' }),
      { error: 'expected a list of absolute paths' },
    )
    .default(() => []),
  // The uid:gid commands run as when the daemon itself runs as root (bwrap keeps it out of root's reach that
  // way: src/agent/sandbox.ts). A daemon that is not root runs them as its own uid, in a user namespace.
  sandbox_user: z
    .string({ error: 'expected uid:gid' })
    .regex(/^(?!0:)\d{1,10}:\d{1,10}$/, { error: 'expected uid:gid, two numbers, the uid not 0' })
    .default('65534:65534'),
  limits: limitsSchema,
  // What `network: true` on a session, job or trigger means (deprecated; a list of host names is better): the
  // names commands may reach through the egress proxy (src/agent/egress.ts). Same rules as such a list.
  network_default_domains: z
    .array(z.string({ error: 'expected a host name' }), { error: 'expected a list of host names' })
    .max(MAX_NETWORK_DOMAINS, { error: `expected at most ${MAX_NETWORK_DOMAINS} host names` })
    .superRefine((list, ctx) => {
      for (const [i, entry] of list.entries()) {
        const problem = domainProblem(entry);
        if (problem) ctx.addIssue({ code: 'custom', path: [i], message: `expected a host name: ${problem}` });
      }
    })
    .default(() => [...DEFAULT_NETWORK_DOMAINS]),
  breaker: breakerSchema,
});

const repositorySchema = z.strictObject(
  { path: text('the path of a local clone') },
  { error: 'expected a mapping with path' },
);

/** A GitHub App's ID: a positive integer, or its client ID (`Iv1.…`, `Iv23…`), which GitHub also takes as `iss`. */
const APP_ID_EXPECTED = "expected the App's ID (a positive integer) or its client ID (Iv…), or null";

// Authenticating as a GitHub App (src/github/app-auth.ts): its ID and private key sign the JWT that GitHub
// exchanges for each installation's tokens. Set `id` and `private_key_file` together, or neither.
const githubAppSchema = section({
  id: z
    .preprocess(
      (value) => (typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value.trim()) : value),
      z.union(
        [
          z.int({ error: APP_ID_EXPECTED }).min(1, { error: APP_ID_EXPECTED }),
          z.string({ error: APP_ID_EXPECTED }).regex(/^Iv[A-Za-z0-9._-]+$/, { error: APP_ID_EXPECTED }),
        ],
        { error: APP_ID_EXPECTED },
      ),
    )
    .nullable()
    .default(null),
  private_key_file: text("the path of the App's private key (.pem), or null").nullable().default(null),
  webhook_secret: text('a non-empty secret or null').nullable().default(null),
}).refine((app) => (app.id === null) === (app.private_key_file === null), {
  error: 'set id and private_key_file together (the App signs its JWT with the key), or neither',
  path: ['private_key_file'],
});

// Repositories a trigger or event names that github.repositories does not map to a local clone are cloned on
// demand into <work_dir>/repos/<owner>/<repo>.git (src/workspace/repo-cache.ts) and fetched before each run.
const cloneSchema = section({
  // Longest the clone or fetch before one run may take in all, in ms; then the run fails.
  timeout_ms: int(1000).default(600_000),
  // The most a repository's cache may hold on disk, in bytes (4 GiB): a clone or fetch that would pass it is
  // stopped, and the run fails.
  max_bytes: int(1).default(4_294_967_296),
});

const githubSchema = section({
  webhook_secrets: z
    .array(text('a non-empty secret'), { error: 'expected a list of secrets' })
    .default(() => []),
  repositories: z
    .preprocess(
      nullAsEmpty,
      z.record(
        z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, { error: 'expected owner/repo' }),
        repositorySchema,
        { error: 'expected a mapping of owner/repo to {path}' },
      ),
    )
    .default(() => ({})),
  users: z
    .preprocess(
      nullAsEmpty,
      z.record(text('a GitHub login'), text('a drydock identity'), {
        error: 'expected a mapping of GitHub login to drydock identity',
      }),
    )
    .default(() => ({})),
  api_url: httpUrl().default('https://api.github.com'),
  // Where repositories are cloned from: <git_url>/<owner>/<repo>.git. null: GitHub's web host of api_url
  // (https://github.com for api.github.com, https://HOST for a GitHub Enterprise API at https://HOST/api/v3).
  git_url: httpUrl().nullable().default(null),
  clone: cloneSchema,
  token: text('a non-empty token or null').nullable().default(null),
  app: githubAppSchema,
  // Report pull requests' plans back (src/github/report.ts): a comment, and a commit status (token) or a check run
  // with Approve and Reject buttons (App).
  report: bool().default(false),
  trigger_hourly_cap: int(1).default(30),
});

// Delivering an executed plan's result (src/delivery/): its branch drydock/<plan id> pushed to the
// workspace's remote and, for GitHub repositories, a pull request opened. Opt-in: sessions, jobs and
// triggers may set `deliver`, else `enabled` decides.
const deliverySchema = section({
  enabled: bool().default(false),
  // The git remote of the workspace's repository to push to.
  remote: text('a git remote name').default('origin'),
  // Password for git over HTTPS to the remote, handed to git through GIT_ASKPASS, never on a command line;
  // null: drydock's GitHub credentials for a remote on GitHub (src/github/auth.ts), none for any other host.
  // Not used for local paths or ssh remotes.
  token: text('a non-empty token or null').nullable().default(null),
  username: text('a user name').default('x-access-token'),
  pull_request: bool().default(true),
  // The branch pull requests go into for runs no pull request started; null: the remote's default branch.
  base_branch: text('a branch name or null').nullable().default(null),
  // Where the result of a run a pull request started goes (src/delivery/pr-target.ts): head (a commit on the
  // pull request's own branch), stacked (a pull request into that branch) or base (a pull request into its
  // base holding only drydock's commit). null: head for a branch of the same repository (stacked when the
  // remote refuses that push), base for a fork, whatever is set (drydock never pushes into a fork). Other runs
  // always go to base.
  pr_target: z
    .enum(['head', 'stacked', 'base'], { error: 'expected head, stacked, base or null' })
    .nullable()
    .default(null),
  attempts: int(1, 100).default(6),
  retry_base_ms: int(1).default(30_000),
  retry_max_ms: int(1).default(3_600_000),
  // Longest one push may take.
  push_timeout_ms: int(1000).default(120_000),
});

const usdPerMTok = () => num(0, { unit: 'USD per million tokens' });

export const modelPriceSchema = z.strictObject(
  {
    input: usdPerMTok(),
    output: usdPerMTok(),
    cache_write_5m: usdPerMTok(),
    cache_write_1h: usdPerMTok(),
    cache_read: usdPerMTok(),
  },
  { error: 'expected a mapping of input, output, cache_write_5m, cache_write_1h, cache_read' },
);
export type ModelPrice = z.infer<typeof modelPriceSchema>;

// Prices of the built-in models live in the model catalogue (src/models/catalogue.ts). An entry here replaces
// the catalogue's price for that model (the older way to price a model; `models.<id>.price` is the same).
const pricingSchema = z
  .preprocess(
    nullAsEmpty,
    z.record(text('a model id'), modelPriceSchema, { error: 'expected a mapping of model id to prices' }),
  )
  .default(() => ({}));

const THINKING_TYPES = ['adaptive', 'between_tools', 'enabled', 'disabled'] as const;

/** `models.<id>`: overrides a catalogue entry field by field, or describes a model the catalogue lacks. */
export const modelSettingsSchema = z
  .strictObject(
    {
      thinking: z
        .array(z.enum(THINKING_TYPES, { error: `expected one of ${THINKING_TYPES.join(', ')}` }), {
          error: 'expected a list of thinking types the model accepts',
        })
        .optional(),
      efforts: z
        .array(z.enum(EFFORTS, { error: EFFORT_ERROR }), { error: 'expected a list of effort levels' })
        .optional(),
      display: bool().optional(),
      off_max_effort: z.enum(EFFORTS, { error: `expected one of ${EFFORTS.join(', ')}` }).optional(),
      max_output_tokens: int(1).optional(),
      min_cacheable_tokens: int(0).optional(),
      prefix_check: bool().optional(),
      cache_ttl_1h: bool().optional(),
      price: modelPriceSchema.optional(),
      long_prompt: z
        .strictObject(
          { above_prompt_tokens: int(1), price: modelPriceSchema },
          { error: 'expected a mapping of above_prompt_tokens and price' },
        )
        .optional(),
      // Lifecycle (src/models/lifecycle.ts); null clears what the catalogue says.
      legacy: bool().nullable().optional(),
      deprecated_on: dateText().nullable().optional(),
      retires_on: dateText().nullable().optional(),
      replacement: text('a model id').nullable().optional(),
      // The older form, still read: status deprecated or retired with status_date is retires_on.
      status: z
        .enum(['active', 'deprecated', 'retired'], { error: 'expected active, deprecated or retired' })
        .optional(),
      status_date: dateText().optional(),
    },
    { error: 'expected a mapping of model settings' },
  )
  .superRefine(olderStatusProblems)
  .transform(fromOlderStatus);
export type ModelSettings = z.infer<typeof modelSettingsSchema>;

function dateText() {
  return z
    .string({ error: 'expected a date such as 2027-01-31' })
    .refine((d) => startOfDay(d) !== undefined, { error: 'expected a date such as 2027-01-31 (YYYY-MM-DD)' });
}

interface OlderStatus {
  status?: 'active' | 'deprecated' | 'retired' | undefined;
  status_date?: string | undefined;
  legacy?: unknown;
  deprecated_on?: unknown;
  retires_on?: unknown;
}

/** `status`/`status_date` are read only where they say one thing: a dated deprecation or retirement. */
function olderStatusProblems(m: OlderStatus, ctx: z.RefinementCtx): void {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  if (m.status === undefined) {
    if (m.status_date !== undefined) issue('status_date', 'goes with status; write retires_on instead');
    return;
  }
  if (m.legacy !== undefined || m.deprecated_on !== undefined || m.retires_on !== undefined) {
    issue('status', 'is the older form of retires_on and deprecated_on: write one form, not both');
  } else if (m.status !== 'active' && m.status_date === undefined) {
    issue('status', `${m.status} needs status_date (the retirement date); or write retires_on: YYYY-MM-DD`);
  }
}

/** status active: neither deprecated nor retiring; deprecated or retired on D: retires_on D. */
function fromOlderStatus<T extends OlderStatus>(m: T): Omit<T, 'status' | 'status_date'> {
  const { status, status_date, ...rest } = m;
  if (status === 'active') return { ...rest, deprecated_on: null, retires_on: null };
  if (status !== undefined) return { ...rest, retires_on: status_date };
  return rest;
}

const modelsSchema = z
  .preprocess(
    nullAsEmpty,
    z.record(text('a model id'), z.preprocess(nullAsEmpty, modelSettingsSchema), {
      error: 'expected a mapping of model id to model settings',
    }),
  )
  .default(() => ({}));

/** What outbound notifications announce (src/notify/). */

const webhookSchema = z.strictObject(
  {
    url: httpUrl(),
    events: z
      .array(z.enum(NOTIFICATION_EVENTS, { error: `expected one of ${NOTIFICATION_EVENTS.join(', ')}` }), {
        error: 'expected a list of events',
      })
      .min(1, { error: 'expected at least one event (leave events out for all of them)' })
      .default(() => [...NOTIFICATION_EVENTS]),
    secret: text('a non-empty secret or null').nullable().default(null),
    format: z.enum(['json', 'slack'], { error: 'expected json or slack' }).default('json'),
  },
  { error: 'expected a mapping with url and optionally events, secret, format' },
);
export type WebhookConfig = z.infer<typeof webhookSchema>;

const notificationsSchema = section({
  webhooks: z
    .array(webhookSchema, { error: 'expected a list of webhooks' })
    .default(() => [])
    .superRefine((hooks, ctx) => {
      const seen = new Set<string>();
      hooks.forEach((hook, i) => {
        if (seen.has(hook.url)) {
          // showValue: false: the URL may be a credential.
          ctx.addIssue({
            code: 'custom',
            path: [i, 'url'],
            message: 'the same url is listed twice; list each webhook once with all its events',
            params: { showValue: false },
          });
        }
        seen.add(hook.url);
      });
    }),
  max_attempts: int(1, 100).default(10),
  backoff_base_ms: int(1).default(10_000),
  backoff_max_ms: int(1).default(3_600_000),
  timeout_ms: int(100, 120_000).default(10_000),
  poll_interval_ms: int(100, 30_000).default(5_000),
}).refine((n) => n.backoff_base_ms <= n.backoff_max_ms, {
  error: 'must not exceed backoff_max_ms',
  path: ['backoff_base_ms'],
});

// --- MCP servers (src/agent/mcp/) ------------------------------------------------------------------
// Tools of a server reach the model as `mcp__<server>__<tool>`, Claude Code's names (Claude Code docs, "Connect
// Claude Code to tools via MCP": characters outside A-Z a-z 0-9 _ - of a server name become _, and a tool whose
// full name is over 128 characters is left out). The Messages API takes a custom tool's name matching
// ^[a-zA-Z0-9_-]{1,128}$ (some older copies of its schema say {1,64}); so a server's name is letters, digits
// and "-" with single "_" between them (a "__" would make the name ambiguous), and a tool the configuration
// names must fit that rule once prefixed.

/** `mcp__<server>__<tool>` is at most this long, and of these characters (the Messages API's rule). */
export const MCP_TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
export const MCP_SERVER_NAME = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;
/** A secret named in an env or header value: `${NAME}`, a variable of the daemon's environment. */
export const MCP_SECRET_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export const mcpToolName = (server: string, tool: string) => `mcp__${server}__${tool}`;

/** Why a value written for an env variable or header is not one that names secrets, or null. */
function secretTemplateProblem(value: string): string | null {
  const rest = value.replace(MCP_SECRET_REFERENCE, '');
  if (rest === value)
    return `expected a value that names a secret as \${VARIABLE}; secrets are never written here`;
  if (rest.includes(`\${`)) return `expected \${VARIABLE} with a variable name of letters, digits and _`;
  if (/[\r\n\0]/.test(value)) return 'expected one line';
  return null;
}

function secretTemplates(what: string, key: RegExp, keyError: string) {
  return z
    .preprocess(
      nullAsEmpty,
      z.record(z.string().regex(key, { error: keyError }), z.string({ error: `expected ${what}` }), {
        error: `expected a mapping of ${what}`,
      }),
    )
    .superRefine((map, ctx) => {
      for (const [name, value] of Object.entries(map)) {
        const problem = secretTemplateProblem(value);
        // showValue: false: a value that is wrong may be a secret written in the file.
        if (problem)
          ctx.addIssue({ code: 'custom', path: [name], message: problem, params: { showValue: false } });
      }
    })
    .default(() => ({}));
}

const mcpToolList = () =>
  z
    .array(
      z.string({ error: 'expected a tool name' }).regex(/^[a-zA-Z0-9_-]+$/, {
        error: 'expected a tool name of letters, digits, _ and -',
      }),
      { error: 'expected a list of tool names' },
    )
    .default(() => []);

const STDIO_ONLY = ['args', 'env', 'network', 'loopback_ports', 'read_only_paths'] as const;

const mcpServerSchema = z
  .strictObject(
    {
      // stdio: the program, absolute or found on the daemon's PATH; it runs in the sandbox.
      command: text('a program').optional(),
      args: z
        .array(z.string({ error: 'expected a string' }), { error: 'expected a list of arguments' })
        .default(() => []),
      env: secretTemplates(
        'values naming secrets',
        /^[A-Za-z_][A-Za-z0-9_]*$/,
        'expected an environment variable name',
      ),
      // Host paths the server's program needs to read (its package), mounted read-only in the sandbox.
      read_only_paths: z
        .array(
          z.string({ error: 'expected an absolute path' }).refine((p) => p.startsWith('/'), {
            error: 'expected an absolute path',
          }),
          { error: 'expected a list of absolute paths' },
        )
        .default(() => []),
      // Host names the server may reach through the egress proxy; none by default.
      network: z
        .array(z.string({ error: 'expected a host name' }), { error: 'expected a list of host names' })
        .max(MAX_NETWORK_DOMAINS, { error: `expected at most ${MAX_NETWORK_DOMAINS} host names` })
        .superRefine((list, ctx) => {
          for (const [i, entry] of list.entries()) {
            const problem = domainProblem(entry);
            if (problem)
              ctx.addIssue({ code: 'custom', path: [i], message: `expected a host name: ${problem}` });
          }
        })
        .default(() => []),
      // Ports of this machine's loopback (127.0.0.1) the server may reach, e.g. a local database; none by default.
      loopback_ports: z.array(int(1, 65535), { error: 'expected a list of port numbers' }).default(() => []),
      // Streamable HTTP: the server's endpoint, reached from the daemon.
      url: httpUrl().optional(),
      headers: secretTemplates(
        'header values naming secrets',
        /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/,
        'expected a header name',
      ),
      plan_tools: mcpToolList(),
      auto_tools: mcpToolList(),
      trust_annotations: bool().default(false),
      start_timeout_ms: int(100, 600_000).default(30_000),
      timeout_ms: int(100, 3_600_000).default(60_000),
      max_output_chars: int(1000).default(30_000),
    },
    { error: 'expected a mapping with command or url' },
  )
  .superRefine((server, ctx) => {
    if ((server.command === undefined) === (server.url === undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: 'expected exactly one of command (stdio) or url (streamable HTTP)',
        params: { showValue: false },
      });
    }
    if (server.url !== undefined) {
      for (const key of STDIO_ONLY) {
        const set = Array.isArray(server[key]) ? server[key].length > 0 : Object.keys(server[key]).length > 0;
        if (set)
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: 'only for a stdio server (command)',
            params: { showValue: false },
          });
      }
    }
    if (server.command !== undefined && Object.keys(server.headers).length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['headers'],
        message: 'only for a streamable HTTP server (url)',
        params: { showValue: false },
      });
    }
  });
export type McpServerConfig = z.infer<typeof mcpServerSchema>;

const SERVER_NAME_ERROR = 'expected a server name of letters, digits and -, with single _ between them';

const mcpSchema = section({
  servers: z
    .preprocess(
      nullAsEmpty,
      z.record(
        z
          .string()
          .regex(MCP_SERVER_NAME)
          // mcp__<name>__ and a tool name of one character at least fit in 128.
          .max(120),
        mcpServerSchema,
        {
          error: (issue) =>
            issue.code === 'invalid_key'
              ? `${SERVER_NAME_ERROR} (at most 120 characters: tool names are at most 128)`
              : 'expected a mapping of server name to {command, ...} or {url, ...}',
        },
      ),
    )
    .superRefine((servers, ctx) => {
      for (const [name, server] of Object.entries(servers)) {
        for (const list of ['plan_tools', 'auto_tools'] as const) {
          server[list].forEach((tool, i) => {
            if (MCP_TOOL_NAME.test(mcpToolName(name, tool))) return;
            ctx.addIssue({
              code: 'custom',
              path: [name, list, i],
              message: `${mcpToolName(name, tool)} is longer than the 128 characters a tool name may have`,
              params: { showValue: false },
            });
          });
        }
      }
    })
    .default(() => ({})),
});

const TIME_ZONE_ERROR =
  'expected an IANA time zone such as "Europe/Berlin" or "UTC", or null for system local';

export const configSchema = z
  .strictObject(
    {
      server: serverSchema,
      data_dir: text('a directory path').default('./data'),
      work_dir: text('a directory path').nullable().default(null),
      // This daemon's name among the replicas on one database; null: a random one kept in data_dir.
      replica_id: z
        .string({ error: 'expected a name of letters, digits, ".", "_" or "-" (at most 64), or null' })
        .regex(REPLICA_NAME, {
          error: 'expected a name of letters, digits, ".", "_" or "-" (at most 64)',
        })
        .nullable()
        .default(null),
      database_url: z
        .string({ error: 'expected a string or null' })
        .superRefine((url, ctx) => {
          if (isPostgresUrl(url)) return;
          // showValue: false: the message is complete, and the URL may hold a password.
          ctx.addIssue({ code: 'custom', message: DATABASE_URL_EXPECTED, params: { showValue: false } });
        })
        .nullable()
        .default(null),
      admin_token: z
        .string({ error: 'expected a string of at least 24 characters or null' })
        .min(24, { error: 'expected a string of at least 24 characters' })
        .nullable()
        .default(null),
      log_level: z.enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(', ')}` }).default('info'),
      // null (the default) means the zone of the machine, resolved once at load.
      timezone: z
        .string({ error: TIME_ZONE_ERROR })
        .refine(isValidTimezone, { error: TIME_ZONE_ERROR })
        .nullable()
        .default(null)
        .transform((zone) => zone ?? systemTimeZone()),
      scheduler: schedulerSchema,
      anthropic: anthropicSchema,
      runs: runsSchema,
      limits: spendLimitsSchema,
      plans: plansSchema,
      retention: retentionSchema,
      notifications: notificationsSchema,
      execute: executeSchema,
      github: githubSchema,
      delivery: deliverySchema,
      pricing: pricingSchema,
      models: modelsSchema,
      mcp: mcpSchema,
    },
    { error: 'expected a mapping of settings' },
  )
  .superRefine((config, ctx) => {
    // An MCP server never reaches the daemon's own API through its loopback ports.
    for (const [name, server] of Object.entries(config.mcp.servers)) {
      const i = server.loopback_ports.indexOf(config.server.port);
      if (i < 0) continue;
      ctx.addIssue({
        code: 'custom',
        path: ['mcp', 'servers', name, 'loopback_ports', i],
        message: `${config.server.port} is the daemon's own port (server.port)`,
        params: { showValue: false },
      });
    }
    // One GitHub identity: a token and an App at once would leave it to chance which account acts (docs/github.md, A GitHub App).
    if (config.github.token !== null && config.github.app.id !== null) {
      ctx.addIssue({
        code: 'custom',
        path: ['github', 'token'],
        message:
          'github.token and github.app are both set: drydock acts on GitHub as one of them; remove the token (GITHUB_TOKEN) to use the App, or the App to use the token',
        params: { showValue: false },
      });
    }
    // A model without a price could never be held to a budget. (A retired model is refused by loadConfig,
    // which has the clock: retirement is a matter of the date.)
    // (Zod runs this with the other problems found too: an empty model id is reported as that alone.)
    if (config.anthropic.model === '') return;
    for (const message of modelPriceProblems(config, config.anthropic.model).errors) {
      ctx.addIssue({ code: 'custom', path: ['anthropic', 'model'], message, params: { showValue: false } });
    }
  });

export type Config = z.infer<typeof configSchema>;
