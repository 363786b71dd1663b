import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../../src/daemon.js';
import { createLogger } from '../../src/logger.js';
import { jobIn, plannedJob, proposes } from '../plans/helpers.js';
import { ADMIN_TOKEN, waitFor } from '../support/daemon.js';
import { makeRepo } from '../support/git-repo.js';
import { tempDir, testConfig } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { type Receiver, startReceiver } from './receiver.js';

let model: ModelServer | undefined;
let daemon: Daemon | undefined;
const receivers: Receiver[] = [];
const dirs: { remove(): void }[] = [];
afterEach(async () => {
  await daemon?.stop();
  for (const r of receivers.splice(0)) await r.close();
  for (const d of dirs.splice(0)) d.remove();
  await model?.close();
});

const HMAC_SECRET = 'hmac-secret-never-logged-5d1c';
const PATH_SECRET = 'pathsecretXYZ123';
const QUERY_SECRET = 'querysecretQRS789';

it('no webhook secret, secret URL path or query ever reaches the log or the API, even when sending fails', async () => {
  model = await startModelServer();
  const failing = await startReceiver({ answer: () => 500 });
  const slack = await startReceiver({ kind: 'slack' });
  receivers.push(failing, slack);
  const tmp = tempDir('drydock-notify-secrets-');
  dirs.push(tmp);
  const lines: string[] = [];
  const logger = createLogger('debug', { write: (line: string) => void lines.push(line) });
  const config = testConfig(join(tmp.path, 'data'), (c) => {
    c.server.port = 0;
    c.admin_token = ADMIN_TOKEN;
    c.log_level = 'debug';
    c.notifications.webhooks = [
      {
        url: `${failing.url}/${PATH_SECRET}?token=${QUERY_SECRET}`,
        events: ['plan.pending'],
        secret: HMAC_SECRET,
        format: 'json',
      },
      {
        url: `http://user:${QUERY_SECRET}@${new URL(slack.url).host}/services/T1/B1/${PATH_SECRET}`,
        events: ['plan.pending'],
        secret: HMAC_SECRET,
        format: 'slack',
      },
    ];
    c.notifications.max_attempts = 2;
    c.notifications.backoff_base_ms = 20;
    c.notifications.backoff_max_ms = 50;
    c.notifications.poll_interval_ms = 100;
  });
  daemon = await startDaemon({
    config,
    logger,
    model: new Anthropic({ apiKey: 'test-key', baseURL: model.url, maxRetries: 0 }),
    announce: () => {},
  });
  const url = daemon.url;
  const api = async (path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const repo = join(tmp.path, 'repo');
  makeRepo(repo, { 'README.md': '# demo\n' });
  const { jobId } = await jobIn({ api: (m, p, b) => api(p, m === 'GET' ? undefined : (b ?? {})) }, repo);
  model.enqueue(proposes());
  await plannedJob({ api: (m, p, b) => api(p, m === 'GET' ? undefined : (b ?? {})) }, jobId);
  const items = await waitFor(async () => {
    const r = await api('/v1/notifications');
    return r.body.items.length === 2 && r.body.items.every((n: any) => n.status !== 'pending')
      ? (r.body.items as any[])
      : undefined;
  });
  expect(items.map((n) => n.status).sort()).toEqual(['delivered', 'failed']);
  // Userinfo in a webhook URL is sent as Basic authentication (fetch takes no URL with credentials).
  expect(slack.requests[0]!.headers.authorization).toBe(
    `Basic ${Buffer.from(`user:${QUERY_SECRET}`).toString('base64')}`,
  );
  await daemon.stop();
  daemon = undefined;

  const log = lines.join('');
  // The log was written: the configuration, and the failed attempts with their cause.
  expect(log).toContain('effective configuration');
  expect(log).toContain('notification attempt failed; will retry');
  expect(log).toContain('HTTP 500');
  for (const secret of [HMAC_SECRET, PATH_SECRET, QUERY_SECRET]) {
    expect(log).not.toContain(secret);
    expect(JSON.stringify(items)).not.toContain(secret);
  }
});
