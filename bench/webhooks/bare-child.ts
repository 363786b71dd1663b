import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { serve } from '@hono/node-server';
import { Webhooks } from '@octokit/webhooks';
import Database from 'better-sqlite3';
import { Hono } from 'hono';
import { childParams, cpuMs, fail, maxRssBytes, onOrders, report } from './child-io.js';
import { PrefixSigner, payloadTemplate } from './payload.js';
import type { BareParams, Started, Usage } from './protocol.js';

// Child: the baseline. A bare hono + @hono/node-server app with one route that reads the raw body, verifies
// X-Hub-Signature-256 with @octokit/webhooks (reading the whole body first, as drydock did before it checked
// signatures while the body streams in) and inserts the body into a better-sqlite3 table opened with the
// pragmas of src/store/sqlite/db.ts (WAL, synchronous NORMAL, busy_timeout, foreign_keys), answering
// 202. No deduplication, matching, runs or logging.

const p = childParams<BareParams>();

async function main(): Promise<void> {
  const t0 = performance.now();
  mkdirSync(dirname(p.file), { recursive: true });
  const db = new Database(p.file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.exec(`CREATE TABLE IF NOT EXISTS deliveries (
    seq         INTEGER PRIMARY KEY,
    delivery    TEXT NOT NULL,
    event       TEXT NOT NULL,
    body        TEXT NOT NULL,
    received_at INTEGER NOT NULL
  )`);
  const insert = db.prepare(
    'INSERT INTO deliveries (delivery, event, body, received_at) VALUES (?, ?, ?, ?)',
  );
  let inserted = 0;

  const webhooks = new Webhooks({ secret: p.secret });
  const app = new Hono();
  app.post('/webhooks/github', async (c) => {
    const signature = c.req.header('x-hub-signature-256');
    const raw = await c.req.text();
    if (!signature || !raw || !(await webhooks.verify(raw, signature).catch(() => false))) {
      return c.json({ error: 'signature does not match' }, 401);
    }
    insert.run(
      c.req.header('x-github-delivery') ?? '',
      c.req.header('x-github-event') ?? '',
      raw,
      Date.now(),
    );
    inserted += 1;
    return c.json({ ok: true }, 202);
  });
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const startMs = performance.now() - t0;
  const { port } = server.address() as AddressInfo;

  const tpl = payloadTemplate();
  const body = tpl.body(424_242).toString('utf8');
  const signature = new PrefixSigner(p.secret, tpl.prefix).sign(tpl.tail(424_242));
  const median = async (n: number, fn: () => unknown) => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await fn();
      out.push((performance.now() - t) * 1000);
    }
    return out.sort((a, b) => a - b)[Math.floor(n / 2)]!;
  };
  await median(500, () => webhooks.verify(body, signature));
  const micro = {
    verifyUs: await median(2_000, () => webhooks.verify(body, signature)),
    parseUs: Number.NaN,
  };

  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const none = { calls: 0, wallMs: 0, cpuMs: 0, maxWallMs: 0 };
  const usage = (): Usage => {
    const u: Usage = {
      type: 'usage',
      cpuMs: cpuMs(),
      rss: process.memoryUsage.rss(),
      executed: inserted,
      queued: 0,
      logLines: 0,
      warnings: 0,
      store: {},
      handler: none,
      submit: none,
      loopDelayP99Ms: delay.percentile(99) / 1e6,
      loopDelayMaxMs: delay.max / 1e6,
    };
    delay.reset();
    return u;
  };
  onOrders<{ type: 'usage' | 'stop' }>(async (order) => {
    if (order.type === 'usage') {
      await report(usage());
      return;
    }
    const last = usage();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
    });
    db.close();
    await report({ type: 'stopped', usage: last, maxRss: maxRssBytes(), liveHeap: null });
    process.exit(0);
  });
  await report({
    type: 'started',
    url: `http://127.0.0.1:${port}`,
    startMs,
    triggerId: null,
    micro,
  } satisfies Started);
}

main().catch(fail);
