import { join } from 'node:path';
import { Writable } from 'node:stream';
import Anthropic from '@anthropic-ai/sdk';
import { Webhooks } from '@octokit/webhooks';
import { afterEach, expect, it } from 'vitest';
import { startDaemon } from '../../src/daemon.js';
import { createLogger } from '../../src/logger.js';
import { ADMIN_TOKEN } from '../support/daemon.js';
import { tempDir, testConfig } from '../support/harness.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const API_KEY = 'sk-ant-test-THIS-MUST-NOT-LEAK-0001';
const WEBHOOK_SECRET = 'whsec-THIS-MUST-NOT-LEAK-0002';
const GITHUB_TOKEN = 'ghp_THISMUSTNOTLEAK0003';

async function daemonWithLogs() {
  const tmp = tempDir('drydock-obs-');
  cleanup.push(tmp.remove);
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const config = testConfig(join(tmp.path, 'data'), (c) => {
    c.server.port = 0;
    c.admin_token = ADMIN_TOKEN;
    c.log_level = 'trace';
    c.anthropic.api_key = API_KEY;
    c.github.webhook_secrets = [WEBHOOK_SECRET];
    c.github.token = GITHUB_TOKEN;
  });
  const d = await startDaemon({
    config,
    logger: createLogger('trace', sink),
    model: new Anthropic({ apiKey: API_KEY, baseURL: 'http://127.0.0.1:9', maxRetries: 0 }),
    announce: () => {},
  });
  cleanup.push(() => d.stop());
  return { d, lines };
}

it('logs are JSON lines with levels; tokens, keys and secrets never appear in them', async () => {
  const { d, lines } = await daemonWithLogs();
  const auth = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
  await fetch(`${d.url}/v1/sessions`, { headers: auth });
  await fetch(`${d.url}/v1/sessions`, { headers: { authorization: 'Bearer ddk_AAAAAAAAAAAAAAAA.wrong' } });
  const body = JSON.stringify({ zen: 'hi', hook_id: 1 });
  await fetch(`${d.url}/webhooks/github`, {
    method: 'POST',
    headers: {
      'x-github-event': 'ping',
      'x-github-delivery': 'delivery-1',
      'x-hub-signature-256': await new Webhooks({ secret: WEBHOOK_SECRET }).sign(body),
      'content-type': 'application/json',
    },
    body,
  });
  // The logger's own redaction, whatever a caller hands it.
  const logger = createLogger(
    'info',
    new Writable({
      write: (c, _e, cb) => {
        lines.push(String(c).trim());
        cb();
      },
    }),
  );
  logger.info(
    {
      token: ADMIN_TOKEN,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      api_key: API_KEY,
      config: { anthropic: { api_key: API_KEY } },
    },
    'careless',
  );
  await d.stop();

  expect(lines.length).toBeGreaterThan(3);
  for (const line of lines) {
    const entry = JSON.parse(line);
    expect(typeof entry.level).toBe('number');
    expect(typeof entry.msg).toBe('string');
  }
  const all = lines.join('\n');
  expect(all).toContain('effective configuration');
  expect(all).toContain('webhook received'); // debug level: the test logs at trace
  for (const secret of [ADMIN_TOKEN, API_KEY, WEBHOOK_SECRET, GITHUB_TOKEN])
    expect(all).not.toContain(secret);
  expect(all).toContain('[redacted]');
});

it('/metrics serves Prometheus text with fires, lateness, runs, tokens, cost, queue depth, deliveries and HTTP latency', async () => {
  const { d } = await daemonWithLogs();
  const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
  expect((await fetch(`${d.url}/metrics`)).status).toBe(401);
  await fetch(`${d.url}/v1/plans`, { headers: auth });
  await d.store.createSession({
    id: 'ses_m',
    name: 'm',
    workspace: '/tmp',
    owner: 'x',
    defaults: {},
    createdAt: Date.now(),
  });
  const run = await d.store.createRun({
    id: 'run_m',
    sessionId: 'ses_m',
    jobId: null,
    slotAt: null,
    source: 'manual',
    prompt: 'p',
    requestedBy: 'x',
    createdAt: Date.now(),
  });
  await d.store.updateRun(run.id, { usage: { input_tokens: 1000, output_tokens: 50 }, costUsd: 0.00375 });
  const res = await fetch(`${d.url}/metrics`, { headers: auth });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/text\/plain/);
  const text = await res.text();
  for (const name of [
    'drydock_scheduler_fires_total',
    'drydock_scheduler_lateness_seconds_bucket',
    'drydock_runs',
    'drydock_plans',
    'drydock_deliveries',
    'drydock_tokens',
    'drydock_cost_usd',
    'drydock_waiting',
    'drydock_http_request_duration_seconds_bucket',
  ]) {
    expect(text, name).toContain(`# TYPE ${name.replace(/_bucket$/, '')}`);
  }
  expect(text).toMatch(/drydock_tokens\{kind="input"\} 1000/);
  expect(text).toMatch(/drydock_cost_usd 0\.00375/);
  expect(text).toMatch(
    /drydock_http_request_duration_seconds_count\{method="GET",route="\/v1\/plans",status="200"\} 1/,
  );
});
