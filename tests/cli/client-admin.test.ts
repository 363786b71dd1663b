import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { zoned } from '../../src/cli/commands/jobs.js';
import { packageRoot } from '../../src/paths.js';
import { ADMIN_TOKEN, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { tempDir } from '../support/harness.js';

// The remote admin commands (sessions, jobs, triggers), run as the built binary in a child process against
// a real daemon. No model server runs: runs that start fail quickly, which is fine here.

const CLI = join(packageRoot(), 'dist/src/cli/main.js');
vi.setConfig({ testTimeout: 60_000 });

let d: TestDaemon;
let workspace: { path: string; remove(): void };
/** Every token seen (the admin's, the generic triggers'): none may appear in any stderr. */
const secrets: string[] = [ADMIN_TOKEN];
const stderrs: string[] = [];

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI asynchronously (the daemon lives in this process, so spawnSync would deadlock it). */
function cli(
  args: string[],
  opts: { token?: string | null; env?: Record<string, string>; cwd?: string } = {},
): Promise<Result> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    DRYDOCK_URL: d?.daemon.url ?? 'http://127.0.0.1:9',
  };
  if (opts.token !== null) env.DRYDOCK_TOKEN = opts.token ?? ADMIN_TOKEN;
  Object.assign(env, opts.env);
  const child = spawn(process.execPath, [CLI, ...args], {
    env,
    cwd: opts.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => {
    stdout += b;
  });
  child.stderr.on('data', (b) => {
    stderr += b;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      stderrs.push(stderr);
      for (const secret of secrets) expect(stderr).not.toContain(secret);
      expect(stdout + stderr).not.toContain(ADMIN_TOKEN);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The API's body for a GET, as text (what --json must print). */
async function raw(path: string): Promise<string> {
  const res = await fetch(`${d.daemon.url}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return `${await res.text()}\n`;
}

async function session(): Promise<string> {
  const res = await d.api('POST', '/v1/sessions', { workspace: workspace.path });
  expect(res.status).toBe(201);
  return res.body.id;
}

beforeAll(async () => {
  workspace = tempDir('drydock-cli-admin-ws-');
  d = await startTestDaemon({ maxRetries: 0, timeoutMs: 2_000 });
});

afterAll(async () => {
  await d?.stop();
  workspace?.remove();
});

const SUBCOMMANDS: Record<string, string[]> = {
  sessions: ['list', 'show', 'create', 'close'],
  jobs: ['list', 'show', 'create', 'delete', 'pause', 'resume', 'run', 'slots'],
  triggers: ['list', 'show', 'create', 'update', 'delete', 'deliveries', 'fire'],
  deliveries: ['list', 'show'],
};
const PAIRS = Object.entries(SUBCOMMANDS).flatMap(([g, subs]) => subs.map((s) => [g, s] as const));

describe('usage', () => {
  it('--help on every new subcommand and group exits 0 and prints its usage, with no token', async () => {
    const results = await Promise.all(PAIRS.map(([g, s]) => cli([g, s, '--help'], { token: null })));
    results.forEach((r, i) => {
      const [g, s] = PAIRS[i]!;
      expect(r.code, `${g} ${s}: ${r.stderr}`).toBe(0);
      expect(r.stdout).toContain(`usage: drydock ${g} ${s}`);
      expect(r.stdout).toContain('--url URL');
      expect(r.stderr).toBe('');
    });
    const groups = await Promise.all(Object.keys(SUBCOMMANDS).map((g) => cli([g, '-h'], { token: null })));
    groups.forEach((r, i) => {
      const g = Object.keys(SUBCOMMANDS)[i]!;
      expect(r.code, r.stderr).toBe(0);
      for (const s of SUBCOMMANDS[g]!) expect(r.stdout).toContain(`drydock ${g} ${s}`);
    });
    const top = await cli(['--help'], { token: null });
    expect(top.code).toBe(0);
    for (const [g, s] of PAIRS) expect(top.stdout).toContain(`${g} ${s}`);
  });

  it('bad usage exits 2 with a clear message and sends nothing', async () => {
    const cases: [string[], string][] = [
      [['jobs', 'list', '--enabled', '--paused'], '--enabled and --paused exclude each other'],
      [['jobs', 'list', '--limit', '0'], '--limit must be a positive integer'],
      [['jobs', 'create', '--session', 'ses_x', '--prompt', 'p'], '--cron is required'],
      [
        [
          'jobs',
          'create',
          '--session',
          'ses_x',
          '--cron',
          '@daily',
          '--prompt',
          'p',
          '--execute-mode',
          'yolo',
        ],
        '--execute-mode must be one of manual, edits, auto, got "yolo"',
      ],
      [['sessions', 'create'], '--workspace is required'],
      [['sessions', 'create', '--workspace', '.', '--execute-mode', 'x'], '--execute-mode must be one of'],
      [
        ['sessions', 'create', '--workspace', '.', '--budget-usd', 'lots'],
        '--budget-usd must be a positive number',
      ],
      [['sessions', 'list', '--status', 'gone'], '--status must be one of open, closed'],
      [['sessions', 'show'], 'sessions show expects ID'],
      [
        ['triggers', 'create', '--kind', 'cron', '--name', 'n', '--prompt', 'p'],
        '--kind must be one of github, generic',
      ],
      [
        ['triggers', 'create', '--kind', 'github', '--name', 'n', '--prompt', 'p'],
        'needs at least one --event',
      ],
      [['triggers', 'create', '--kind', 'generic', '--name', 'n', '--prompt', 'p'], 'needs --workspace'],
      [
        [
          'triggers',
          'create',
          '--kind',
          'generic',
          '--name',
          'n',
          '--prompt',
          'p',
          '--workspace',
          '.',
          '--label',
          'x',
        ],
        'apply to github triggers only',
      ],
      [['triggers', 'update', 'trg_x'], 'nothing to change'],
      [['triggers', 'update', 'trg_x', '--enable', '--disable'], 'at most one of --enable and --disable'],
      [
        ['triggers', 'fire', 'trg_x'],
        'no trigger token: pass --trigger-token (or set DRYDOCK_TRIGGER_TOKEN)',
      ],
      [
        ['triggers', 'fire', 'trg_x', '--trigger-token', 'ddt_x', '--text', 'a', '--text-file', 'f'],
        'at most one of --text and --text-file',
      ],
      [
        ['triggers', 'fire', 'trg_x', '--trigger-token', 'ddt_x', '--text-file', '/nonexistent/file'],
        'cannot read --text-file /nonexistent/file: ENOENT',
      ],
      [['jobs', 'frob'], 'unknown command "frob"'],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(args)));
    results.forEach((r, i) => {
      const [args, message] = cases[i]!;
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stdout).toBe('');
    });
    // Nothing reached the daemon.
    expect((await d.api('GET', '/v1/triggers')).body.items).toEqual([]);
  });
});

describe('drydock sessions', () => {
  it('create prints the id; list, show (and --json, equal to the API body) and close', async () => {
    const created = await cli(
      [
        'sessions',
        'create',
        '--workspace',
        '.',
        '--name',
        'nightly',
        '--execute-mode',
        'edits',
        '--approvals-required',
        '2',
        '--allow-self-approval',
        '--network-domain',
        'registry.npmjs.org',
        '--network-domain',
        '*.github.com',
        '--budget-usd',
        '1.5',
        '--thinking',
        '2048',
        '--effort',
        'medium',
      ],
      { cwd: workspace.path },
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^ses_\S+\n$/);
    const id = created.stdout.trim();
    const api = await d.api('GET', `/v1/sessions/${id}`);
    expect(api.body).toMatchObject({
      name: 'nightly',
      status: 'open',
      defaults: {
        execute_mode: 'edits',
        approvals_required: 2,
        allow_self_approval: true,
        network: ['*.github.com', 'registry.npmjs.org'],
        budget_usd: 1.5,
        thinking: { budget_tokens: 2048 },
        effort: 'medium',
      },
    });
    // A relative workspace is the CLI's current directory.
    expect(api.body.workspace).toBe(workspace.path);

    const [list, listJson, show, showJson] = await Promise.all([
      cli(['sessions', 'list', '--status', 'open', '--limit', '200']),
      cli(['sessions', 'list', '--status', 'open', '--limit', '200', '--json']),
      cli(['sessions', 'show', id]),
      cli(['sessions', 'show', id, '--json']),
    ]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^ID\s+NAME\s+STATUS\s+OWNER\s+AGE\s+WORKSPACE\n/);
    expect(list.stdout).toMatch(
      new RegExp(`^${id}\\s+nightly\\s+open\\s+admin\\s+\\d+s\\s+${workspace.path}$`, 'm'),
    );
    expect(listJson.stdout).toBe(await raw('/v1/sessions?status=open&limit=200'));
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`^session\\s+${id}$`, 'm'));
    expect(show.stdout).toMatch(/^status\s+open$/m);
    expect(show.stdout).toMatch(/^ {2}thinking\s+budget 2048 tokens$/m);
    expect(show.stdout).toMatch(/^ {2}effort\s+medium$/m);
    expect(show.stdout).toMatch(/^ {2}execute_mode\s+edits$/m);
    expect(show.stdout).toMatch(/^ {2}network\s+\*\.github\.com, registry\.npmjs\.org$/m);
    expect(showJson.stdout).toBe(await raw(`/v1/sessions/${id}`));

    const json = await cli(['sessions', 'create', '--workspace', workspace.path, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const body = JSON.parse(json.stdout);
    expect(body).toEqual((await d.api('GET', `/v1/sessions/${body.id}`)).body);

    await d.api('POST', `/v1/sessions/${id}/jobs`, { cron: '@daily', prompt: 'x' });
    const close = await cli(['sessions', 'close', id]);
    expect(close.code, close.stderr).toBe(0);
    expect(close.stdout).toBe(`session ${id} closed; 1 job deleted\n`);
    const closed = await cli(['sessions', 'list', '--status', 'closed']);
    expect(closed.stdout).toMatch(new RegExp(`^${id}\\s+nightly\\s+closed`, 'm'));
    expect(closed.stdout).not.toContain(body.id);

    const [missing, badDir] = await Promise.all([
      cli(['sessions', 'show', 'ses_unknown']),
      cli(['sessions', 'create', '--workspace', join(workspace.path, 'nope')]),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('drydock: 404 not_found: session ses_unknown not found\n');
    expect(badDir.code).toBe(1);
    expect(badDir.stderr).toMatch(
      /^drydock: 422 invalid_workspace: workspace \S+nope is not an existing directory\n$/,
    );
  });
});

describe('drydock jobs', () => {
  it('create refuses a bad cron (422) and a closed session (409) with exit 1', async () => {
    const [open, closed] = await Promise.all([session(), session()]);
    await d.api('DELETE', `/v1/sessions/${closed}`);
    const [bad, r] = await Promise.all([
      cli(['jobs', 'create', '--session', open, '--cron', '61 * * * *', '--prompt', 'p']),
      cli(['jobs', 'create', '--session', closed, '--cron', '@daily', '--prompt', 'p']),
    ]);
    expect(bad.code, bad.stderr).toBe(1);
    expect(bad.stderr).toBe('drydock: 422 invalid_cron: cron: minute value 61 is out of range 0-59\n');
    expect(bad.stdout).toBe('');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toBe(`drydock: 409 conflict: session ${closed} is closed\n`);
    expect((await d.api('GET', `/v1/sessions/${open}/jobs`)).body.items).toEqual([]);
  });

  it('show: a one-shot has one next fire time, the last; a UTC job shows UTC alone', async () => {
    const sessionId = await session();
    const once = (
      await d.api('POST', `/v1/sessions/${sessionId}/jobs`, {
        cron: '30 23 * * *',
        timezone: 'America/New_York',
        prompt: 'once',
        recurring: false,
      })
    ).body;
    expect(once.next_fire_times).toEqual([once.next_fire_at]);
    const show = await cli(['jobs', 'show', once.id]);
    expect(show.code, show.stderr).toBe(0);
    // 23:30 in New York is the next day in UTC: the UTC date is shown too.
    expect(show.stdout).toMatch(
      /\nnext fires:\n {2}(\d{4}-\d\d-\d\d) 23:30 America\/New_York \(\d{4}-\d\d-\d\d 0[34]:30 UTC\) \(the last\)\n\n/,
    );
    const utc = (
      await d.api('POST', `/v1/sessions/${sessionId}/jobs`, {
        cron: '0 6 * * *',
        timezone: 'UTC',
        prompt: 'u',
      })
    ).body;
    const list = await cli(['jobs', 'list', '--session', sessionId]);
    expect(list.stdout).toMatch(new RegExp(`^${utc.id}\\s.*\\s\\d{4}-\\d\\d-\\d\\d 06:00 UTC\\s`, 'm'));
  });

  it('create, list, show, pause, resume, run, slots and delete', async () => {
    const sessionId = await session();
    const created = await cli([
      'jobs',
      'create',
      '--session',
      sessionId,
      '--cron',
      '0 9 * * 1-5',
      '--timezone',
      'Europe/Berlin',
      '--approximate',
      '--execute-mode',
      'manual',
      '--prompt',
      'Review yesterday’s commits',
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^job_\S+\n$/);
    const id = created.stdout.trim();
    const job = (await d.api('GET', `/v1/jobs/${id}`)).body;
    expect(job).toMatchObject({
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
      recurring: true,
      approximate: true,
      options: { execute_mode: 'manual' },
    });
    expect(job.effective_cron).toMatch(/^[1-6] 9 \* \* 1-5$/);

    const [list, listJson, show, showJson] = await Promise.all([
      cli(['jobs', 'list', '--session', sessionId]),
      cli(['jobs', 'list', '--session', sessionId, '--json']),
      cli(['jobs', 'show', id]),
      cli(['jobs', 'show', id, '--json']),
    ]);
    expect(list.code, list.stderr).toBe(0);
    const [header, row] = list.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+CRON\s+TZ\s+RECURRING\s+STATUS\s+NEXT_FIRE\s+JITTERED\s+EXPIRES\s+PROMPT$/);
    // Times in the job's zone with UTC beside; the zone is in its own column. Berlin is UTC+1 or +2.
    const m = job.effective_cron[0];
    expect(row!.split(/\s{2,}/)).toEqual([
      id,
      `0 9 * * 1-5 → ${job.effective_cron}`,
      'Europe/Berlin',
      'yes',
      'active',
      expect.stringMatching(new RegExp(`^\\d{4}-\\d\\d-\\d\\d 09:0${m} \\(0[78]:0${m} UTC\\)$`)),
      zoned(job.next_fire_jittered_at, 'Europe/Berlin', false),
      expect.stringMatching(/^in [67]d$/),
      'Review yesterday’s commits',
    ]);
    expect(listJson.stdout).toBe(await raw(`/v1/jobs?session_id=${sessionId}`));
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`^job\\s+${id}$`, 'm'));
    expect(show.stdout).toMatch(/^effective_cron\s+[1-6] 9 \* \* 1-5$/m);
    expect(show.stdout).toMatch(
      /^next_fire_jittered\s+\S+ 09:\d\d(:\d\d)? Europe\/Berlin \(0[78]:\d\d(:\d\d)? UTC\), in \d+[mhd]$/m,
    );
    // The next 3 fire times, from the API, on weekdays at the effective minute.
    expect(job.next_fire_times).toHaveLength(3);
    expect(job.next_fire_times[0]).toBe(job.next_fire_at);
    for (const t of job.next_fire_times) expect([1, 2, 3, 4, 5]).toContain(new Date(t).getUTCDay());
    expect(show.stdout).toContain(
      `next fires:\n${job.next_fire_times.map((t: string) => `  ${zoned(t, 'Europe/Berlin')}\n`).join('')}\n`,
    );
    expect(show.stdout).toMatch(
      new RegExp(`^  \\d{4}-\\d\\d-\\d\\d 09:0${m} Europe/Berlin \\(0[78]:0${m} UTC\\)$`, 'm'),
    );
    expect(show.stdout).toContain('prompt:\nReview yesterday’s commits\n');
    expect(showJson.stdout).toBe(await raw(`/v1/jobs/${id}`));

    const pause = await cli(['jobs', 'pause', id]);
    expect(pause.code, pause.stderr).toBe(0);
    expect(pause.stdout).toBe(`job ${id} paused\n`);
    const again = await cli(['jobs', 'resume', id]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(
      new RegExp(
        `^job ${id} active; next fire \\S+ 09:0${m} Europe/Berlin \\(0[78]:0${m} UTC\\).* \\(in \\d+[mhd]\\)\\n$`,
      ),
    );
    const notPaused = await cli(['jobs', 'resume', id]);
    expect(notPaused.code).toBe(1);
    expect(notPaused.stderr).toBe('drydock: 409 conflict: job is active, not paused\n');

    const run = await cli(['jobs', 'run', id]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^run_\S+\n$/);
    const runBody = (await d.api('GET', `/v1/runs/${run.stdout.trim()}`)).body;
    expect(runBody).toMatchObject({ job_id: id, source: 'manual' });
    await waitFor(
      async () => (await d.api('GET', `/v1/runs/${runBody.id}`)).body.finished_at !== null,
      15_000,
    );

    // A slot that fell due: the scheduler fires it and records it.
    const none = await cli(['jobs', 'slots', id]);
    expect(none.stdout).toBe('no slots recorded yet\n');
    const due = Date.now() - 1_000;
    await d.daemon.store.updateJobSchedule(id, 'active', { nominalAt: due, dueAt: due, final: false });
    d.daemon.scheduler.kick();
    await waitFor(async () => (await d.api('GET', `/v1/jobs/${id}/slots`)).body.items.length > 0, 15_000);
    const slot = (await d.api('GET', `/v1/jobs/${id}/slots`)).body.items[0];
    const [slots, slotsJson] = await Promise.all([
      cli(['jobs', 'slots', id]),
      cli(['jobs', 'slots', id, '--json']),
    ]);
    expect(slots.code, slots.stderr).toBe(0);
    expect(slots.stdout).toMatch(/^SLOT\s+OUTCOME\s+SLOTS\s+RUN\s+RECORDED\n/);
    expect(
      slots.stdout
        .trimEnd()
        .split('\n')[1]!
        .split(/\s{2,}/),
    ).toEqual([
      zoned(slot.slot_at, 'Europe/Berlin'),
      'fired',
      '1',
      slot.run_id,
      zoned(slot.recorded_at, 'Europe/Berlin'),
    ]);
    expect(slots.stdout).toContain(' Europe/Berlin (');
    expect(slotsJson.stdout).toBe(await raw(`/v1/jobs/${id}/slots`));

    const del = await cli(['jobs', 'delete', id]);
    expect(del.code, del.stderr).toBe(0);
    expect(del.stdout).toBe(`job ${id} deleted\n`);
    const gone = await cli(['jobs', 'show', id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe(`drydock: 404 not_found: job ${id} not found\n`);
    const empty = await cli(['jobs', 'list', '--session', sessionId]);
    expect(empty.stdout).toBe('no jobs\n');
  });
});

describe('drydock triggers', () => {
  it('create github: filters and options reach the API; list, show, update merges filters, delete', async () => {
    const created = await cli([
      'triggers',
      'create',
      '--kind',
      'github',
      '--name',
      'pr-review',
      '--prompt',
      'Review {{repository}}#{{number}}',
      '--event',
      'pull_request.opened',
      '--event',
      'pull_request.synchronize',
      '--repository',
      'acme/api',
      '--label',
      'needs-plan',
      '--draft',
      'false',
      '--hourly-cap',
      '5',
      '--daily-usd',
      '2.5',
      '--daily-runs',
      '10',
      '--approvals-required',
      '2',
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^trigger trg_\S+ created \(github, "pr-review"\)\n$/);
    expect(created.stdout).not.toContain('token');
    const id = /trigger (\S+) created/.exec(created.stdout)![1]!;
    expect((await d.api('GET', `/v1/triggers/${id}`)).body).toMatchObject({
      kind: 'github',
      events: ['pull_request.opened', 'pull_request.synchronize'],
      filters: { repositories: ['acme/api'], labels: ['needs-plan'], draft: false },
      hourly_cap: 5,
      limits: { daily_usd: 2.5, daily_runs: 10 },
      options: { approvals_required: 2 },
      enabled: true,
    });

    const [list, listJson, show, showJson] = await Promise.all([
      cli(['triggers', 'list']),
      cli(['triggers', 'list', '--json']),
      cli(['triggers', 'show', id]),
      cli(['triggers', 'show', id, '--json']),
    ]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^ID\s+KIND\s+NAME\s+ENABLED\s+CAP\s+AGE\s+EVENTS\n/);
    expect(list.stdout).toMatch(
      new RegExp(
        `^${id}\\s+github\\s+pr-review\\s+yes\\s+5\\s+\\d+s\\s+pull_request.opened, pull_request.synchronize$`,
        'm',
      ),
    );
    expect(listJson.stdout).toBe(await raw('/v1/triggers'));
    expect(show.stdout).toMatch(/^repositories\s+acme\/api$/m);
    expect(show.stdout).toMatch(/^draft\s+false$/m);
    expect(show.stdout).toContain('prompt:\nReview {{repository}}#{{number}}\n');
    expect(showJson.stdout).toBe(await raw(`/v1/triggers/${id}`));

    const bad = await cli(['triggers', 'update', id, '--prompt', 'Review {{title}}']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(
      /^drydock: 422 invalid_prompt: prompt names unknown placeholders \{\{title\}\}/,
    );

    const updated = await cli([
      'triggers',
      'update',
      id,
      '--author',
      'octocat',
      '--draft',
      'any',
      '--execute-mode',
      'edits',
      '--name',
      'pr-plan',
    ]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stdout).toBe(`trigger ${id} updated (enabled)\n`);
    expect((await d.api('GET', `/v1/triggers/${id}`)).body).toMatchObject({
      name: 'pr-plan',
      filters: { repositories: ['acme/api'], labels: ['needs-plan'], authors: ['octocat'] },
      options: { approvals_required: 2, execute_mode: 'edits' },
    });
    expect((await d.api('GET', `/v1/triggers/${id}`)).body.filters.draft).toBeUndefined();
    // A spend cap dropped (none), the other kept: the CLI merges over the trigger's limits.
    const capped = await cli(['triggers', 'update', id, '--daily-usd', 'none']);
    expect(capped.code, capped.stderr).toBe(0);
    expect((await d.api('GET', `/v1/triggers/${id}`)).body.limits).toEqual({ daily_runs: 10 });
    expect((await cli(['triggers', 'show', id])).stdout).toMatch(/^limits\s+\{"daily_runs":10\}$/m);
    const badCap = await cli(['triggers', 'update', id, '--daily-runs', '1.5']);
    expect(badCap.code).toBe(2);
    expect(badCap.stderr).toContain('--daily-runs must be a positive integer or none, got "1.5"');
    const cleared = await cli(['triggers', 'update', id, '--clear-filters', '--label', 'x', '--json']);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(JSON.parse(cleared.stdout).filters).toEqual({ labels: ['x'] });

    const del = await cli(['triggers', 'delete', id]);
    expect(del.code, del.stderr).toBe(0);
    expect(del.stdout).toBe(`trigger ${id} deleted\n`);
    const gone = await cli(['triggers', 'show', id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe(`drydock: 404 not_found: trigger ${id} not found\n`);
  });

  it('create github on events beyond pull requests: --branch, --environment, --state, --conclusion, --merged', async () => {
    const deploy = await cli([
      'triggers',
      'create',
      '--kind',
      'github',
      '--name',
      'deploys',
      '--prompt',
      'Look at {{environment}} ({{state}}) at {{sha}}',
      '--event',
      'deployment_status',
      '--environment',
      'production',
      '--state',
      'failure',
      '--state',
      'error',
      '--branch',
      'main',
    ]);
    expect(deploy.code, deploy.stderr).toBe(0);
    const id = /trigger (\S+) created/.exec(deploy.stdout)![1]!;
    expect((await d.api('GET', `/v1/triggers/${id}`)).body.filters).toEqual({
      environments: ['production'],
      states: ['failure', 'error'],
      branches: ['main'],
    });
    const show = await cli(['triggers', 'show', id]);
    expect(show.stdout).toMatch(/^environments\s+production$/m);
    expect(show.stdout).toMatch(/^states\s+failure, error$/m);
    // A filter the event does not have is the API's 422, said as it said it.
    const misfit = await cli(['triggers', 'update', id, '--conclusion', 'failure']);
    expect(misfit.code).toBe(1);
    expect(misfit.stderr).toContain(
      '422 invalid_request: filter conclusions does not apply to deployment_status',
    );

    const merged = await cli([
      'triggers',
      'create',
      '--kind',
      'github',
      '--name',
      'merged',
      '--prompt',
      'Follow up {{repository}}#{{number}}',
      '--event',
      'pull_request.closed',
      '--merged',
      'true',
    ]);
    expect(merged.code, merged.stderr).toBe(0);
    const mergedId = /trigger (\S+) created/.exec(merged.stdout)![1]!;
    expect((await d.api('GET', `/v1/triggers/${mergedId}`)).body.filters).toEqual({ merged: true });
    const any = await cli(['triggers', 'update', mergedId, '--merged', 'any', '--json']);
    expect(any.code, any.stderr).toBe(0);
    expect(JSON.parse(any.stdout).filters).toEqual({});
    const wrong = await cli(['triggers', 'update', mergedId, '--merged', 'maybe']);
    expect(wrong.code).toBe(2);
  });

  it('create generic prints its token once; fire with it (201, then the same run for the same key); disable → 409; deliveries; rotate', async () => {
    const created = await cli([
      'triggers',
      'create',
      '--kind',
      'generic',
      '--name',
      'deploy-check',
      '--prompt',
      'Check the deploy of {{trigger}}',
      '--workspace',
      workspace.path,
    ]);
    expect(created.code, created.stderr).toBe(0);
    const token = /^token: (ddt_\S+)$/m.exec(created.stdout)?.[1];
    expect(token).toBeDefined();
    secrets.push(token!);
    const id = /^trigger (trg_\S+) created \(generic, "deploy-check"\)$/m.exec(created.stdout)?.[1];
    expect(id).toBeDefined();
    expect(created.stdout.split(token!).length - 1).toBe(1);
    expect(created.stdout).toContain('shown only this once');
    expect(created.stderr).toBe('');
    // The token is in no later answer.
    const shown = await cli(['triggers', 'show', id!, '--json']);
    expect(shown.stdout).not.toContain(token);
    expect(JSON.parse(shown.stdout).token).toBeUndefined();

    // Fire with the trigger's token, without any API token.
    const fire = await cli(
      [
        'triggers',
        'fire',
        id!,
        '--trigger-token',
        token!,
        '--idempotency-key',
        'deploy-42',
        '--text',
        'v1.2.3',
      ],
      { token: null },
    );
    expect(fire.code, fire.stderr).toBe(0);
    const m = /^run (run_\S+) started \(delivery (dlv_\S+)\)\n$/.exec(fire.stdout);
    expect(m, fire.stdout).not.toBeNull();
    const runId = m![1]!;
    const run = (await d.api('GET', `/v1/runs/${runId}`)).body;
    expect(run).toMatchObject({ source: 'webhook' });

    const textFile = join(workspace.path, 'fire.txt');
    writeFileSync(textFile, 'from a file');
    const [dup, dupJson] = await Promise.all([
      cli(['triggers', 'fire', id!, '--idempotency-key', 'deploy-42', '--text-file', textFile], {
        token: null,
        env: { DRYDOCK_TRIGGER_TOKEN: token! },
      }),
      cli(['triggers', 'fire', id!, '--trigger-token', token!, '--idempotency-key', 'deploy-42', '--json']),
    ]);
    expect(dup.code, dup.stderr).toBe(0);
    expect(dup.stdout).toBe(
      `run ${runId} (already started by an earlier fire with this idempotency key; delivery ${m![2]})\n`,
    );
    expect(dupJson.code, dupJson.stderr).toBe(0);
    expect(JSON.parse(dupJson.stdout)).toMatchObject({ duplicate: true, run: { id: runId } });

    // The API token is not the trigger's token: 401, and neither is printed.
    const wrong = await cli(['triggers', 'fire', id!, '--trigger-token', ADMIN_TOKEN]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^drydock: 401 unauthorized: missing or invalid trigger token/);

    const disabled = await cli(['triggers', 'update', id!, '--disable']);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stdout).toBe(`trigger ${id} updated (disabled)\n`);
    const refused = await cli(['triggers', 'fire', id!, '--trigger-token', token!, '--text', 'again']);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toBe(`drydock: 409 conflict: trigger ${id} is disabled\n`);
    expect(refused.stdout).toBe('');

    const [deliveries, deliveriesJson] = await Promise.all([
      cli(['triggers', 'deliveries', id!, '--limit', '10']),
      cli(['triggers', 'deliveries', id!, '--json']),
    ]);
    expect(deliveries.code, deliveries.stderr).toBe(0);
    expect(deliveries.stdout).toMatch(/^ID\s+AGE\s+SOURCE\s+EVENT\s+OUTCOME\s+RUN\s+SUBJECT\s+DETAIL\n/);
    expect(
      deliveries.stdout
        .trimEnd()
        .split('\n')[1]!
        .split(/\s{2,}/),
    ).toEqual([m![2], expect.stringMatching(/^\d+s$/), 'fire', 'fire', 'accepted', runId, '-', '-']);
    expect(deliveries.stdout.trimEnd().split('\n')).toHaveLength(2);
    expect(deliveriesJson.stdout).toBe(await raw(`/v1/triggers/${id}/deliveries`));

    // The same delivery through `drydock deliveries`.
    const [list, listJson, one, oneJson, none] = await Promise.all([
      cli(['deliveries', 'list', '--trigger', id!, '--outcome', 'accepted']),
      cli(['deliveries', 'list', '--trigger', id!, '--json']),
      cli(['deliveries', 'show', m![2]!]),
      cli(['deliveries', 'show', m![2]!, '--json']),
      cli(['deliveries', 'list', '--outcome', 'queued']),
    ]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(
      /^ID\s+AGE\s+SOURCE\s+EVENT\s+OUTCOME\s+TRIGGERS\s+RUNS\s+SUBJECT\s+DETAIL\n/,
    );
    expect(list.stdout.trimEnd().split('\n')).toHaveLength(2);
    expect(
      list.stdout
        .trimEnd()
        .split('\n')[1]!
        .split(/\s{2,}/),
    ).toEqual([m![2], expect.stringMatching(/^\d+s$/), 'fire', 'fire', 'accepted', id, runId, '-', '-']);
    expect(listJson.stdout).toBe(await raw(`/v1/deliveries?trigger_id=${id}`));
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(new RegExp(`^id +${m![2]}\n`));
    expect(one.stdout).toMatch(/^key +trg_\S+:deploy-42$/m);
    expect(one.stdout).toMatch(new RegExp(`^runs +${runId}$`, 'm'));
    expect(one.stdout).toMatch(/^processed +\d{4}-\d\d-\d\dT/m);
    expect(oneJson.stdout).toBe(await raw(`/v1/deliveries/${m![2]}`));
    expect(none.stdout).toBe('no deliveries\n');
    const badOutcome = await cli(['deliveries', 'list', '--outcome', 'lost']);
    expect(badOutcome.code).toBe(2);
    expect(badOutcome.stderr).toMatch(/--outcome must be one of queued, accepted/);

    // Enable with a new token: the old one stops working, the new one is printed once.
    const rotated = await cli(['triggers', 'update', id!, '--enable', '--rotate-token']);
    expect(rotated.code, rotated.stderr).toBe(0);
    const fresh = /^token: (ddt_\S+)$/m.exec(rotated.stdout)?.[1];
    expect(fresh).toBeDefined();
    secrets.push(fresh!);
    expect(fresh).not.toBe(token);
    expect(rotated.stdout).toMatch(new RegExp(`^trigger ${id} updated \\(enabled\\)\\n`));
    const old = await cli(['triggers', 'fire', id!, '--trigger-token', token!]);
    expect(old.code).toBe(1);
    expect(old.stderr).toMatch(/^drydock: 401 unauthorized: /);
    const again = await cli(['triggers', 'fire', id!, '--json'], { env: { DRYDOCK_TRIGGER_TOKEN: fresh! } });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      duplicate: false,
      run: { id: expect.stringMatching(/^run_/) },
    });

    const del = await cli(['triggers', 'delete', id!]);
    expect(del.code, del.stderr).toBe(0);
    const afterDelete = await cli(['triggers', 'fire', id!, '--trigger-token', fresh!]);
    expect(afterDelete.code).toBe(1);
    expect(afterDelete.stderr).toMatch(/^drydock: 401 unauthorized: /);
  });

  it('create generic --json has the token in the body', async () => {
    const r = await cli([
      'triggers',
      'create',
      '--kind',
      'generic',
      '--name',
      'json-one',
      '--prompt',
      'p',
      '--workspace',
      workspace.path,
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const body = JSON.parse(r.stdout);
    secrets.push(body.token);
    expect(body).toMatchObject({ kind: 'generic', name: 'json-one', token: expect.stringMatching(/^ddt_/) });
    expect((await d.api('GET', `/v1/triggers/${body.id}`)).body.token).toBeUndefined();
  });
});

describe('secrets', () => {
  it('no token appeared in any stderr', () => {
    expect(stderrs.length).toBeGreaterThan(60);
    const all = stderrs.join('\n');
    expect(secrets.length).toBeGreaterThanOrEqual(4);
    for (const secret of secrets) expect(all).not.toContain(secret);
  });
});

describe('drydock usage', () => {
  it('shows runs and cost per day and key, and the total; --json prints the API body', async () => {
    const shown = await cli(['usage', 'show', '--by', 'model', '--from', '2026-01-01', '--to', '2026-01-03']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toBe('2026-01-01 to 2026-01-03 (UTC): 0 runs, $0.00\n');
    const json = await cli(['usage', 'show', '--by', 'trigger', '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ by: 'trigger', timezone: 'UTC' });
    const bad = await cli(['usage', 'show', '--from', 'yesterday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--from must be a date, YYYY-MM-DD, got "yesterday"');
  });
});
