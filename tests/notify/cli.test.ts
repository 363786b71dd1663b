import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../cli/cli-process.js';
import { jobIn, plannedJob, proposes, tokenFor } from '../plans/helpers.js';
import { ADMIN_TOKEN, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { makeRepo } from '../support/git-repo.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { type Receiver, startReceiver } from './receiver.js';

let model: ModelServer;
let ok: Receiver;
let down: Receiver;
let d: TestDaemon;

beforeAll(async () => {
  model = await startModelServer();
  ok = await startReceiver();
  down = await startReceiver({ answer: () => 502 });
  d = await startTestDaemon({
    modelUrl: model.url,
    patch: (c) => {
      c.notifications.webhooks = [
        { url: ok.url, events: ['plan.pending'], secret: null, format: 'json' },
        { url: `${down.url}/deeper/path`, events: ['plan.pending'], secret: null, format: 'json' },
      ];
      c.notifications.max_attempts = 1;
      c.notifications.poll_interval_ms = 100;
    },
  });
  const repo = `${d.dir}/repo`;
  makeRepo(repo, { 'README.md': '# demo\n' });
  const { jobId } = await jobIn(d, repo);
  model.enqueue(proposes('p', '## Tidy the README\n'));
  await plannedJob(d, jobId);
  await waitFor(async () => {
    const r = await d.api('GET', '/v1/notifications');
    return r.body.items.length === 2 && r.body.items.every((n: any) => n.status !== 'pending');
  });
});
afterAll(async () => {
  await d?.stop();
  await ok?.close();
  await down?.close();
  await model?.close();
});

const cli = (args: string[], token = ADMIN_TOKEN) =>
  runCli(args, { DRYDOCK_URL: d.daemon.url, DRYDOCK_TOKEN: token });

it('drydock notifications list: a table of what was announced and how sending went', async () => {
  const r = await cli(['notifications', 'list']);
  expect(r.code, r.stderr).toBe(0);
  const [header, ...rows] = r.stdout.trimEnd().split('\n');
  expect(header).toMatch(/^ID\s+AGE\s+EVENT\s+STATUS\s+ATTEMPTS\s+WEBHOOK\s+LAST_ERROR\s+TITLE$/);
  expect(rows).toHaveLength(2);
  const delivered = rows.find((l) => l.includes('delivered'))!;
  expect(delivered).toMatch(
    /^ntf_\S+\s+\S+\s+plan\.pending\s+delivered\s+1\/1\s+http:\/\/127\.0\.0\.1:\d+\/hook\s+-\s+Tidy the README$/,
  );
  const failed = rows.find((l) => l.includes('failed'))!;
  expect(failed).toMatch(
    /plan\.pending\s+failed\s+1\/1\s+http:\/\/127\.0\.0\.1:\d+\/hook\/…\s+HTTP 502\s+Tidy the README$/,
  );

  const json = await cli(['notifications', 'list', '--status', 'failed', '--json']);
  expect(json.code).toBe(0);
  const body = JSON.parse(json.stdout);
  expect(body.items.map((n: any) => n.last_error)).toEqual(['HTTP 502']);

  const page = await cli(['notifications', 'list', '--event', 'plan.pending', '--limit', '1']);
  expect(page.code).toBe(0);
  expect(page.stdout).toMatch(
    /\nmore: drydock notifications list --event plan\.pending --limit 1 --cursor \S+\n$/,
  );
  const cursor = /--cursor (\S+)/.exec(page.stdout)![1]!;
  const next = await cli([
    'notifications',
    'list',
    '--event',
    'plan.pending',
    '--limit',
    '1',
    '--cursor',
    cursor,
  ]);
  expect(next.code).toBe(0);
  expect(next.stdout.trimEnd().split('\n')).toHaveLength(2);
  expect(next.stdout).not.toContain('more:');
});

it('refuses a bad filter before sending, and says why a viewer may not list', async () => {
  const bad = await cli(['notifications', 'list', '--status', 'sent']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('--status must be one of pending, delivered, failed, got "sent"');
  const help = await cli(['notifications', 'list', '--help']);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain('usage: drydock notifications list');
  const viewer = await tokenFor(d, 'vic', 'viewer');
  const refused = await cli(['notifications', 'list'], viewer);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toMatch(/role viewer may not do this/);
});
