import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_TOKEN, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { tempDir } from '../support/harness.js';
import { runCli } from './cli-process.js';

// Schedules that last, from the command line: a scheduled trigger, renewing a job; and what a run waits on.
// The built binary in a child process against a real daemon (no model server: runs that start fail).

vi.setConfig({ testTimeout: 60_000 });

let d: TestDaemon;
let workspace: { path: string; remove(): void };
beforeAll(async () => {
  d = await startTestDaemon({});
  workspace = tempDir('drydock-cli-schedules-');
});
afterAll(async () => {
  await d?.stop();
  workspace?.remove();
});

const cli = (...args: string[]) => runCli(args, { DRYDOCK_URL: d.daemon.url, DRYDOCK_TOKEN: ADMIN_TOKEN });

describe('drydock triggers create --kind schedule', () => {
  it('creates a schedule that never expires and prints its next fire times in its zone', async () => {
    const created = await cli(
      'triggers',
      'create',
      '--kind',
      'schedule',
      '--name',
      'nightly',
      '--cron',
      '0 3 * * MON-FRI',
      '--timezone',
      'europe/kyiv',
      '--prompt',
      'Review the day.',
      '--workspace',
      workspace.path,
    );
    expect(created.code, created.stderr).toBe(0);
    const id = /^trigger (trg_\S+) created \(schedule, "nightly"\)$/m.exec(created.stdout)?.[1];
    expect(id).toBeDefined();
    const fires = created.stdout.split('next fires:\n')[1]!.trim().split('\n');
    expect(fires).toHaveLength(3);
    for (const line of fires)
      expect(line.trim()).toMatch(/^\d{4}-\d\d-\d\d 03:00 Europe\/Kyiv \((\d{4}-\d\d-\d\d )?0[01]:00 UTC\)$/);

    const shown = await cli('triggers', 'show', id!);
    expect(shown.stdout).toMatch(
      /schedule\s+0 3 \* \* MON-FRI \(Europe\/Kyiv\), overlap buffer_one, active, fired 0 time\(s\), job job_\S+/,
    );

    const paused = await cli('triggers', 'update', id!, '--disable');
    expect(paused.stdout).toContain(`trigger ${id} updated (disabled)`);
    const moved = await cli('triggers', 'update', id!, '--enable', '--cron', '30 6 * * *');
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toMatch(/06:30 Europe\/Kyiv/);
  });

  it('says what is missing or misplaced, before any request', async () => {
    const noCron = await cli(
      'triggers',
      'create',
      '--kind',
      'schedule',
      '--name',
      'x',
      '--prompt',
      'p',
      '--workspace',
      workspace.path,
    );
    expect(noCron.code).toBe(2);
    expect(noCron.stderr).toContain('a schedule trigger needs --cron, e.g. "0 3 * * MON-FRI"');
    const misplaced = await cli(
      'triggers',
      'create',
      '--kind',
      'generic',
      '--name',
      'x',
      '--prompt',
      'p',
      '--workspace',
      workspace.path,
      '--cron',
      '0 3 * * *',
    );
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain(
      '--cron, --timezone, --approximate, --overlap and --jitter-max-seconds apply to schedule triggers only',
    );
  });
});

describe('drydock jobs renew', () => {
  it('creating a job says when it expires and how to keep it; renew pushes the expiry out', async () => {
    const session = (await d.api('POST', '/v1/sessions', { workspace: workspace.path })).body.id as string;
    const created = await cli(
      'jobs',
      'create',
      '--session',
      session,
      '--cron',
      '0 9 * * *',
      '--prompt',
      'p',
      '--timezone',
      'UTC',
    );
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    expect(id).toMatch(/^job_\S+$/);
    expect(created.stderr).toMatch(
      new RegExp(
        `^job ${id} expires \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d(:\\d\\d)? UTC; keep it with: drydock jobs renew ${id}\\n$`,
      ),
    );
    const renewed = await cli('jobs', 'renew', id);
    expect(renewed.code, renewed.stderr).toBe(0);
    expect(renewed.stdout).toMatch(
      new RegExp(`^job ${id} renewed: expires \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d(:\\d\\d)? UTC; next fire `),
    );
    const shown = await cli('jobs', 'show', id);
    expect(shown.stdout).toMatch(/renewed\s+1 time\(s\), last .* by admin/);
  });
});

describe('drydock runs show', () => {
  it('says what a queued run waits on', async () => {
    const session = (await d.api('POST', '/v1/sessions', { workspace: workspace.path })).body.id as string;
    const job = (await d.api('POST', `/v1/sessions/${session}/jobs`, { cron: '0 9 * * *', prompt: 'p' })).body
      .id;
    // Held in place: the session has a run in progress (parked on a question that nobody answers).
    const first = (await d.api('POST', `/v1/jobs/${job}/run`)).body.id as string;
    await d.daemon.store.transitionRun(first, ['queued', 'running', 'failed'], 'awaiting_input');
    await d.daemon.store.createQuestion({
      id: 'qst_cli',
      runId: first,
      sessionId: session,
      toolUseId: 'toolu_cli',
      questions: { questions: [] },
      priorResults: [],
      createdAt: Date.now(),
      expiresAt: Date.now() + 60_000,
    });
    const second = (await d.api('POST', `/v1/jobs/${job}/run`)).body.id as string;
    const shownFirst = await cli('runs', 'show', first);
    expect(shownFirst.stdout).toMatch(
      /waiting_on\s+a question for a person: answer it with drydock questions answer qst_cli/,
    );
    const shown = await cli('runs', 'show', second);
    expect(shown.stdout).toMatch(
      new RegExp(
        `waiting_on\\s+its session is busy with run ${first} \\(awaiting_input\\); a session runs one run at a time`,
      ),
    );
  });
});
