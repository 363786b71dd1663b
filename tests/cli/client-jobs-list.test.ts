import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_TOKEN, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { tempDir } from '../support/harness.js';
import { runCli } from './cli-process.js';

// `drydock jobs list` without --session: every session's jobs and every scheduled trigger's job, with the
// filters of GET /v1/jobs and its pages. The built binary in a child process against a real daemon of its own
// (no other test's jobs in it).

vi.setConfig({ testTimeout: 60_000 });

let d: TestDaemon;
let workspace: { path: string; remove(): void };
beforeAll(async () => {
  d = await startTestDaemon({});
  workspace = tempDir('drydock-cli-jobs-list-');
});
afterAll(async () => {
  await d?.stop();
  workspace?.remove();
});

const cli = (...args: string[]) => runCli(args, { DRYDOCK_URL: d.daemon.url, DRYDOCK_TOKEN: ADMIN_TOKEN });

async function ok(method: string, path: string, body?: unknown) {
  const res = await d.api(method, path, body);
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body;
}

describe('drydock jobs list across sessions', () => {
  it('lists every session’s jobs and scheduled triggers’ with a session column; filters and pages', async () => {
    const one = (await ok('POST', '/v1/sessions', { workspace: workspace.path })).id;
    const two = (await ok('POST', '/v1/sessions', { workspace: workspace.path })).id;
    const a = (
      await ok('POST', `/v1/sessions/${one}/jobs`, { cron: '0 9 * * *', timezone: 'UTC', prompt: 'a' })
    ).id;
    const b = (
      await ok('POST', `/v1/sessions/${two}/jobs`, { cron: '0 10 * * *', timezone: 'UTC', prompt: 'b' })
    ).id;
    await ok('POST', `/v1/jobs/${b}/pause`);
    const trigger = await ok('POST', '/v1/triggers', {
      kind: 'schedule',
      name: 'nightly',
      prompt: 'Tidy up',
      workspace: workspace.path,
      cron: '0 3 * * *',
      timezone: 'UTC',
    });
    const s = trigger.schedule.job_id;

    const all = await cli('jobs', 'list');
    expect(all.code, all.stderr).toBe(0);
    const [header, ...rows] = all.stdout.trimEnd().split('\n');
    expect(header).toMatch(
      /^ID\s+SESSION\s+CRON\s+TZ\s+RECURRING\s+STATUS\s+NEXT_FIRE\s+JITTERED\s+EXPIRES\s+PROMPT$/,
    );
    expect(rows.map((r) => r.split(/\s{2,}/).slice(0, 2))).toEqual([
      [a, one],
      [b, two],
      [s, `${trigger.schedule.session_id} (trigger ${trigger.id})`],
    ]);
    expect(rows[1]).toMatch(/\spaused\s/);

    const paused = await cli('jobs', 'list', '--paused');
    expect(
      paused.stdout
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((r) => r.split(/\s+/)[0]),
    ).toEqual([b]);
    const enabled = await cli('jobs', 'list', '--enabled', '--json');
    expect(JSON.parse(enabled.stdout).items.map((j: { id: string }) => j.id)).toEqual([a, s]);
    const ofTrigger = await cli('jobs', 'list', '--trigger', trigger.id, '--json');
    expect(JSON.parse(ofTrigger.stdout).items.map((j: { id: string }) => j.id)).toEqual([s]);
    const soon = await cli(
      'jobs',
      'list',
      '--expiring-before',
      new Date(Date.now() + 8 * 86_400_000).toISOString(),
    );
    expect(
      soon.stdout
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((r) => r.split(/\s+/)[0]),
    ).toEqual([a, b]);

    // With --session the table is the session's alone, without the session column.
    const mine = await cli('jobs', 'list', '--session', one);
    expect(mine.stdout).toMatch(/^ID\s+CRON\s+TZ\s/);
    expect(mine.stdout.trimEnd().split('\n')).toHaveLength(2);

    // A page ends with the command for the next one, filters (flags too) kept.
    const first = await cli('jobs', 'list', '--enabled', '--limit', '1');
    const more = /\nmore: (drydock jobs list --enabled --limit 1 --cursor \S+)\n$/.exec(first.stdout);
    expect(more, first.stdout).not.toBeNull();
    const next = await cli(...more![1]!.split(' ').slice(1));
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toContain(s);
    expect(next.stdout).not.toContain('more:');

    const bad = await cli('jobs', 'list', '--expiring-before', 'tomorrow');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^drydock: 422 invalid_request: expiring_before/);
  });
});

describe('drydock jobs update', () => {
  it('changes a job in place, its overlap policy and jitter cap among the rest; none gives the cap back', async () => {
    const session = (await ok('POST', '/v1/sessions', { workspace: workspace.path })).id;
    const job = await ok('POST', `/v1/sessions/${session}/jobs`, {
      name: 'review',
      cron: '0 9 * * *',
      timezone: 'UTC',
      prompt: 'review',
    });
    expect(job).toMatchObject({ overlap: 'buffer_one', jitter: { max_seconds: null } });
    const r = await cli(
      'jobs',
      'update',
      job.id,
      '--overlap',
      'skip',
      '--jitter-max-seconds',
      '30',
      '--cron',
      '@daily',
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^job ${job.id} updated; `));
    expect(await ok('GET', `/v1/jobs/${job.id}`)).toMatchObject({
      id: job.id,
      name: 'review',
      cron: '0 0 * * *',
      overlap: 'skip',
      jitter: { max_seconds: 30 },
    });
    const back = await cli('jobs', 'update', job.id, '--jitter-max-seconds', 'none', '--json');
    expect(back.code, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({ overlap: 'skip', jitter: { max_seconds: null } });
    const bad = await cli('jobs', 'update', job.id, '--jitter-max-seconds', 'soon');
    expect(bad).toMatchObject({ code: 2 });
    expect(bad.stderr).toContain('--jitter-max-seconds must be a whole number of seconds (0-86400) or none');
  });
});
