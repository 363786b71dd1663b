import type { ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { type ClientRequest, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { Webhooks } from '@octokit/webhooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { BodyBudget } from '../../src/http/body-budget.js';
import type { RunHandler } from '../../src/runs/queue.js';
import { ADMIN_TOKEN, readSse, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { createHarness, type Harness, tempDir } from '../support/harness.js';
import { serveProcess } from '../support/process-daemon.js';
import { example, SECRET, sign } from '../triggers/helpers.js';

// Limits on what a client may make the daemon hold before it is authenticated: the webhook body limit, the
// shared budget of unverified webhook bytes, the request timeout and the connection cap. What can be seen
// through app.request is tested there (with a budget the test can look into); the timeout, the cap and the
// budget under real concurrent uploads need a loopback socket; the memory figure needs a process of its own.

const MiB = 1_048_576;
const WRONG = `sha256=${'0'.repeat(64)}`;

let h: Harness | undefined;
let d: TestDaemon | undefined;
const sockets: (Socket | ClientRequest)[] = [];
const children: ChildProcess[] = [];
const dirs: { remove(): void }[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const x of dirs.splice(0)) x.remove();
  await h?.close();
  h = undefined;
  await d?.stop();
  d = undefined;
});

// ---- bodies the test can watch being read ----------------------------------------------------------------

interface Watched {
  stream: ReadableStream<Uint8Array>;
  /** Bytes handed to the reader so far. */
  readonly pulled: number;
  /** Largest budget.inFlight seen while the body was being read. */
  readonly peakInFlight: number;
}

/**
 * `size` bytes of `bytes` (repeated) in chunks of `chunk`, produced only when read (highWaterMark 0), noting
 * how much was read and the budget's use meanwhile.
 */
function watched(bytes: Uint8Array, size: number, chunk: number, budget?: BodyBudget): Watched {
  let pulled = 0;
  let peakInFlight = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        peakInFlight = Math.max(peakInFlight, budget?.inFlight ?? 0);
        if (pulled >= size) {
          controller.close();
          return;
        }
        const n = Math.min(chunk, size - pulled);
        const out = new Uint8Array(n);
        for (let i = 0; i < n; i++) out[i] = bytes[(pulled + i) % bytes.length]!;
        pulled += n;
        controller.enqueue(out);
      },
    },
    { highWaterMark: 0 },
  );
  return {
    stream,
    get pulled() {
      return pulled;
    },
    get peakInFlight() {
      return peakInFlight;
    },
  };
}

async function post(
  app: Harness['app'],
  body: ReadableStream<Uint8Array> | string,
  headers: Record<string, string>,
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await app.request('/webhooks/github', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    duplex: 'half',
  } as RequestInit);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

const github = (
  event: string | null,
  signature: string | null,
  delivery: string | null = crypto.randomUUID(),
) => {
  const out: Record<string, string> = {};
  if (event !== null) out['x-github-event'] = event;
  if (delivery !== null) out['x-github-delivery'] = delivery;
  if (signature !== null) out['x-hub-signature-256'] = signature;
  return out;
};

const harness = async (patch: (c: Config) => void = () => {}, budget?: BodyBudget) =>
  createHarness({
    patch: (c) => {
      c.github.webhook_secrets = [SECRET];
      patch(c);
    },
    ...(budget ? { unauthenticatedBodies: budget } : {}),
  });

describe('POST /webhooks/github before the signature is verified', () => {
  it('413 for a Content-Length over the limit, without reading the body', async () => {
    h = await harness((c) => (c.server.webhook_body_limit_bytes = MiB));
    const body = watched(new Uint8Array([0x7b]), 2 * MiB, 65_536);
    const r = await post(h.app, body.stream, {
      ...github('ping', WRONG),
      'content-length': String(MiB + 1),
    });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe('payload_too_large');
    expect(body.pulled).toBe(0);
  });

  it.each([
    ['no signature', github('ping', null), 401, 'missing X-Hub-Signature-256'],
    ['a malformed signature', github('ping', 'sha256=zz'), 401, 'webhook signature does not match'],
    ['an upper-case signature', github('ping', `sha256=${'A'.repeat(64)}`), 401, 'does not match'],
    ['no event', github(null, WRONG), 400, 'X-GitHub-Event'],
    ['a bad delivery id', github('ping', WRONG, 'not a delivery id!'), 400, 'X-GitHub-Delivery'],
  ])(
    '%s: the body is read to its end but never held, then refused',
    async (_what, headers, status, message) => {
      const budget = new BodyBudget(MiB);
      h = await harness(() => {}, budget);
      // Four times the budget: were it held, it would be refused with 503 at the first mebibyte.
      const body = watched(new Uint8Array([0x20]), 4 * MiB, 65_536, budget);
      const r = await post(h.app, body.stream, headers);
      expect(r.status).toBe(status);
      expect(r.body.error.message).toContain(message);
      expect(body.pulled).toBe(4 * MiB);
      expect(body.peakInFlight).toBe(0);
    },
  );

  it('no secret configured: 401 after the body is read and dropped', async () => {
    const budget = new BodyBudget(MiB);
    h = await harness((c) => (c.github.webhook_secrets = []), budget);
    const body = watched(new Uint8Array([0x20]), 2 * MiB, 65_536, budget);
    const r = await post(h.app, body.stream, github('ping', WRONG));
    expect(r.status).toBe(401);
    expect(r.body.error.message).toContain('no secret is configured');
    expect([body.pulled, body.peakInFlight]).toEqual([2 * MiB, 0]);
  });

  it('a wrong signature over a big body: 401 once it is read, and its bytes go back to the budget', async () => {
    const budget = new BodyBudget(16 * MiB);
    h = await harness(() => {}, budget);
    const body = watched(new TextEncoder().encode('{"zen":"padding"}'), 8 * MiB, 65_536, budget);
    const r = await post(h.app, body.stream, github('ping', WRONG));
    expect(r.status).toBe(401);
    expect(r.body.error.message).toBe('webhook signature does not match');
    expect(body.pulled).toBe(8 * MiB);
    // Held while it was read, given back after.
    expect(body.peakInFlight).toBe(8 * MiB);
    expect(budget.inFlight).toBe(0);
  });

  it('a chunked body over the limit: 413 while it streams, and its bytes go back to the budget', async () => {
    const budget = new BodyBudget(4 * MiB);
    h = await harness((c) => (c.server.webhook_body_limit_bytes = MiB), budget);
    const body = watched(new Uint8Array([0x20]), 3 * MiB, 65_536, budget);
    const r = await post(h.app, body.stream, github('ping', WRONG));
    expect(r.status).toBe(413);
    expect(body.pulled).toBeLessThanOrEqual(MiB + 65_536);
    expect(budget.inFlight).toBe(0);
  });

  it('a declared length the budget cannot hold: 503 with Retry-After at once; a chunked one is cut off', async () => {
    const budget = new BodyBudget(MiB);
    h = await harness((c) => (c.server.request_timeout_ms = 12_000), budget);
    const raw = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 });
    // Another request holds all but 20 bytes of the budget.
    const other = budget.open();
    expect(other.cover(MiB - 20)).toBe(true);

    const declared = watched(new TextEncoder().encode(raw), raw.length, 16);
    const refused = await post(h.app, declared.stream, {
      ...github('ping', sign(raw)),
      'content-length': String(raw.length),
    });
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('busy');
    expect(refused.headers.get('retry-after')).toBe('12');
    expect(declared.pulled).toBe(0);

    const chunked = watched(new TextEncoder().encode(raw), raw.length, 16);
    const cut = await post(h.app, chunked.stream, github('ping', sign(raw)));
    expect(cut.status).toBe(503);
    expect(cut.headers.get('retry-after')).toBe('12');
    expect(chunked.pulled).toBeLessThan(raw.length);
    expect(budget.inFlight).toBe(MiB - 20);

    // Once the other request gives its bytes back, the same delivery goes through.
    other.release();
    const ok = await post(h.app, raw, { ...github('ping', sign(raw)) });
    expect(ok.status).toBe(200);
    expect(ok.body.pong).toBe(true);
    expect(budget.inFlight).toBe(0);
  });
});

describe('POST /webhooks/github with a verified signature', () => {
  it('a body streamed in odd chunks (splitting UTF-8 characters) is accepted and recorded byte for byte', async () => {
    const budget = new BodyBudget(64 * MiB);
    h = await harness((c) => (c.github.webhook_secrets = ['the-secret-being-rotated-out', SECRET]), budget);
    const payload = example('pull_request', 'opened');
    payload.pull_request.body = 'Ünïcödé ☃ 🚢 — drydock';
    const raw = JSON.stringify(payload);
    const bytes = new TextEncoder().encode(raw);
    expect(bytes.length).toBeGreaterThan(raw.length); // multi-byte characters, some split across chunks
    // What @octokit/webhooks would say of the same body and signature.
    expect(await new Webhooks({ secret: SECRET }).verify(raw, sign(raw))).toBe(true);

    // The body as recorded (the inbox clears it once the delivery is processed).
    const recorded: (string | undefined)[] = [];
    const store = h.store;
    const recordWebhookDeliveries = store.recordWebhookDeliveries.bind(store);
    store.recordWebhookDeliveries = async (items) => {
      recorded.push(...items.map((i) => i.payload));
      return recordWebhookDeliveries(items);
    };
    const recordWebhookDelivery = store.recordWebhookDelivery.bind(store);
    store.recordWebhookDelivery = async (delivery, payload) => {
      recorded.push(payload);
      return recordWebhookDelivery(delivery, payload);
    };
    const key = crypto.randomUUID();
    const body = watched(bytes, bytes.length, 7, budget);
    const r = await post(h.app, body.stream, github('pull_request', sign(raw), key));
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ outcome: 'queued' });
    expect(body.peakInFlight).toBeGreaterThan(0);
    expect(budget.inFlight).toBe(0);
    expect(recorded).toEqual([raw]);

    // Sent again whole, with Content-Length: the same delivery, recognised as a redelivery.
    const again = await post(h.app, raw, {
      ...github('pull_request', sign(raw), key),
      'content-length': String(bytes.length),
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ duplicate: true, delivery_id: r.body.delivery_id });

    // Invalid UTF-8, correctly signed over its raw bytes: verified, then refused as malformed.
    const invalid = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]); // {"a":"\xff"}
    const signed = `sha256=${createHmac('sha256', SECRET).update(invalid).digest('hex')}`;
    const bad = await post(h.app, watched(invalid, invalid.length, 4).stream, github('ping', signed));
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('malformed_json');
  });
});

describe('POST /v1/triggers/:id/fire', () => {
  it('checks the trigger token before reading any of the body', async () => {
    h = await harness();
    const body = watched(new TextEncoder().encode('{"text":"x"}'), 60_000, 1024);
    const res = await h.app.request('/v1/triggers/trg_none/fire', {
      method: 'POST',
      headers: { authorization: 'Bearer ddt_nothing.nothing', 'content-type': 'application/json' },
      body: body.stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(401);
    expect(body.pulled).toBe(0);
  });
});

// ---- over a loopback socket ------------------------------------------------------------------------------

/** A signed-or-not ping body of exactly `size` bytes. */
function pingOf(size: number): string {
  const head = '{"hook_id":1,"zen":"';
  const tail = '"}';
  return `${head}${'x'.repeat(size - head.length - tail.length)}${tail}`;
}

interface Upload {
  /** Resolves once the server took the request (100 Continue): its handler has run up to reading the body. */
  taken: Promise<void>;
  /** The answer, or `dropped` when the connection ended without one. */
  answer: Promise<{ status: number | 'dropped'; retryAfter?: string | undefined; body: any }>;
  req: ClientRequest;
}

/**
 * A POST to /webhooks/github on a connection of its own, with `Expect: 100-continue`, so that the test knows
 * when the server has taken it; nothing of the body is sent until the test writes it. Without `length` the
 * body is chunked.
 */
function upload(url: string, headers: Record<string, string>, length?: number): Upload {
  const req = request(`${url}/webhooks/github`, {
    method: 'POST',
    agent: false,
    headers: {
      'content-type': 'application/json',
      expect: '100-continue',
      ...(length === undefined ? {} : { 'content-length': String(length) }),
      ...headers,
    },
  });
  sockets.push(req);
  const taken = new Promise<void>((resolve) => req.once('continue', resolve));
  const answer = new Promise<Awaited<Upload['answer']>>((resolve) => {
    req.once('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (s) => {
        text += s;
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          retryAfter: res.headers['retry-after'],
          body: text ? JSON.parse(text) : null,
        }),
      );
      res.on('error', () => resolve({ status: res.statusCode!, body: null }));
    });
    req.once('error', () => resolve({ status: 'dropped', body: null }));
    req.once('close', () => resolve({ status: 'dropped', body: null }));
  });
  req.flushHeaders();
  return { taken, answer, req };
}

/** Writes `text` on a new loopback connection; resolves with what came back until it was closed (or `ms`). */
function exchange(
  url: string,
  text: string,
  ms: number,
): Promise<{ data: string; closed: boolean; ms: number }> {
  const { hostname, port } = new URL(url);
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    sockets.push(socket);
    let data = '';
    const done = (closed: boolean) => {
      clearTimeout(timer);
      resolve({ data, closed, ms: performance.now() - started });
    };
    const timer = setTimeout(() => done(false), ms);
    socket.setEncoding('utf8');
    socket.on('data', (s) => {
      data += s;
    });
    socket.on('error', () => {});
    socket.on('close', () => done(true));
    socket.write(text);
  });
}

const daemon = (patch: (c: Config) => void, executor?: RunHandler) =>
  startTestDaemon({
    patch: (c) => {
      c.github.webhook_secrets = [SECRET];
      patch(c);
    },
    ...(executor ? { handler: executor } : {}),
  });

const pingHeaders = (body: string | null) => ({
  'x-github-event': 'ping',
  'x-github-delivery': crypto.randomUUID(),
  ...(body === null ? {} : { 'x-hub-signature-256': sign(body) }),
});

describe('over a loopback socket', () => {
  it('the unauthenticated budget: 503 with Retry-After when full, a chunked body cut off, bytes given back', async () => {
    const KiB = 1024;
    d = await daemon((c) => {
      c.server.webhook_body_limit_bytes = 512 * KiB;
      c.server.unauthenticated_body_budget_bytes = MiB;
    });
    const url = d.daemon.url;
    // Two slow deliveries hold 512 + 384 KiB of the budget while their bodies trickle in.
    const aBody = pingOf(512 * KiB);
    const a = upload(url, pingHeaders(aBody), aBody.length);
    await a.taken;
    a.req.write(aBody.slice(0, KiB));
    const bBody = pingOf(384 * KiB);
    const b = upload(url, pingHeaders(bBody), bBody.length);
    await b.taken;
    b.req.write(bBody.slice(0, KiB));

    // 200 KiB declared does not fit in the 128 KiB left: 503 at once, before its body is sent.
    const cBody = pingOf(200 * KiB);
    const c = upload(url, pingHeaders(cBody), cBody.length);
    const refused = await c.answer;
    expect(refused.status).toBe(503);
    expect(refused.retryAfter).toBe('30');
    expect(refused.body.error.code).toBe('busy');

    // A chunked body fits until it passes the 128 KiB left.
    const eBody = pingOf(300 * KiB);
    const e = upload(url, pingHeaders(eBody));
    await e.taken;
    e.req.write(eBody.slice(0, 100 * KiB));
    e.req.write(eBody.slice(100 * KiB));
    const cut = await e.answer;
    expect(cut.status).toBe(503);
    expect(cut.retryAfter).toBe('30');

    // One slow client goes away, the other finishes: its delivery is taken as usual.
    b.req.destroy();
    a.req.end(aBody.slice(KiB));
    const done = await a.answer;
    expect(done.status).toBe(200);
    expect(done.body.pong).toBe(true);

    // Every byte came back (the aborted one's too): the budget holds two of the largest bodies again.
    await waitFor(
      async () => {
        const both = await Promise.all(
          [0, 1].map(async () => {
            const r = await fetch(`${url}/webhooks/github`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', ...pingHeaders(aBody) },
              body: aBody,
            });
            await r.arrayBuffer();
            return r.status;
          }),
        );
        return both.every((s) => s === 200);
      },
      5_000,
      'the budget to be free again',
    );
  });

  it('a body slower than server.request_timeout_ms is answered 408 and its connection closed; event streams are not cut', async () => {
    const KiB = 1024;
    let hold: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      hold = resolve;
    });
    d = await daemon(
      (c) => {
        c.server.request_timeout_ms = 1_000;
        c.server.webhook_body_limit_bytes = 64 * KiB;
        c.server.unauthenticated_body_budget_bytes = 64 * KiB;
      },
      {
        async execute() {
          await held;
          return { status: 'planned' };
        },
      },
    );
    const url = d.daemon.url;
    const { host } = new URL(url);
    const head = (headers: Record<string, string>) =>
      `POST /webhooks/github HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${64 * KiB}\r\n${Object.entries(
        headers,
      )
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}\r\n{"zen":"`;
    // One slow body would be verified (it holds the whole budget), one would be dropped (no signature).
    const [signed, unsigned] = await Promise.all([
      exchange(url, head(pingHeaders(pingOf(64 * KiB))), 10_000),
      exchange(url, head(pingHeaders(null)), 10_000),
    ]);
    for (const r of [signed, unsigned]) {
      expect(r.data).toMatch(/^HTTP\/1\.1 408 /);
      expect(r.closed).toBe(true);
      // Closed by the server when the budget ran out, not by the client's own 10 s limit.
      expect(r.ms).toBeGreaterThanOrEqual(900);
    }
    // What the cut-off body held is free again: a delivery of the whole budget goes through.
    const full = pingOf(64 * KiB);
    await waitFor(
      async () => {
        const r = await fetch(`${url}/webhooks/github`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...pingHeaders(full) },
          body: full,
        });
        await r.arrayBuffer();
        return r.status === 200;
      },
      5_000,
      'the budget to be free again',
    );

    // A run's event stream stays open for longer than the request timeout: only receiving a request is timed.
    // Beside the data directory, never around it (a workspace holding it is refused).
    const workspace = join(d.dir, 'workspace');
    mkdirSync(workspace);
    const session = await d.api('POST', '/v1/sessions', { workspace });
    const job = await d.api('POST', `/v1/sessions/${session.body.id}/jobs`, {
      cron: '0 9 * * *',
      prompt: 'plan',
    });
    const run = await d.api('POST', `/v1/jobs/${job.body.id}/run`);
    expect(run.status).toBe(201);
    setTimeout(hold, 3_000);
    const started = performance.now();
    const events = await readSse(`${url}/v1/runs/${run.body.id}/events`, ADMIN_TOKEN);
    expect(performance.now() - started).toBeGreaterThan(2_500);
    expect(events.at(-1)).toMatchObject({ event: 'run_finished', data: { status: 'planned' } });
  });

  it('connections past server.max_connections are closed unanswered', async () => {
    d = await daemon((c) => (c.server.max_connections = 2));
    const url = d.daemon.url;
    const { host, port } = new URL(url);
    const healthz = `GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
    // Two keep-alive connections, answered and left open.
    const open: Socket[] = [];
    for (let i = 0; i < 2; i++) {
      const socket = connect(Number(port), '127.0.0.1');
      sockets.push(socket);
      const first = new Promise<string>((resolve) => socket.once('data', (b) => resolve(String(b))));
      socket.write(healthz);
      expect(await first).toMatch(/^HTTP\/1\.1 200 /);
      open.push(socket);
    }
    const extra = await exchange(url, healthz, 3_000);
    expect(extra).toMatchObject({ data: '', closed: true });
    // A freed slot is taken again.
    open[0]!.destroy();
    await waitFor(async () => (await exchange(url, healthz, 1_000)).data.startsWith('HTTP/1.1 200 '), 5_000);
  });
});

// ---- the daemon's memory under a flood of unauthenticated bodies -----------------------------------------

// The headline figure: a daemon (the built CLI, as deployed, with the default limits) receives 20
// concurrent unsigned and 20 concurrent wrongly-signed 25 MiB webhook bodies; its peak resident memory
// (VmHWM) may grow by less than PEAK_GROWTH_MB. Measured on a shared 2-core machine: +69 to +96 MB over
// seven runs (the budget of 64 MiB holds two 25 MiB bodies while they are checked; the others are refused at
// once, or read and dropped, and what is dropped is garbage until the next collection). The bound leaves room
// for a collection that comes late on a busy machine. Before these limits the same load took the daemon from
// 100 MB to 841-968 MB (+740 to +867 MB over three runs).
const PEAK_GROWTH_MB = 150;
const LIMIT = 26_214_400; // server.webhook_body_limit_bytes, default: 25 MiB
/** Peak resident set size of process `pid` so far, in MB (VmHWM, which Linux reports in kB). */
function peakRssMb(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(m[1]) / 1024;
}

/**
 * POSTs `body` to /webhooks/github on a connection of its own; resolves with the status, or `dropped: CODE`
 * when the connection ended without an answer. Stops uploading once the answer is in.
 */
function postBuffer(url: string, headers: Record<string, string>, body: Buffer): Promise<string> {
  return new Promise((resolve) => {
    let status: number | undefined;
    const req = request(`${url}/webhooks/github`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...headers },
    });
    req.on('response', (res) => {
      status = res.statusCode;
      res.resume();
      res.on('end', () => {
        resolve(String(status));
        req.destroy();
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve(status ? String(status) : `dropped: ${err.code}`),
    );
    req.on('close', () => resolve(status ? String(status) : 'dropped: closed'));
    req.end(body);
  });
}

const webhookHeaders = (delivery: string, signature: string | null): Record<string, string> => ({
  'x-github-event': 'ping',
  'x-github-delivery': delivery,
  ...(signature === null ? {} : { 'x-hub-signature-256': signature }),
});

describe('memory', () => {
  it(`20 unsigned and 20 wrongly-signed 25 MiB webhooks at once grow the daemon's peak RSS by < ${PEAK_GROWTH_MB} MB`, async () => {
    const tmp = tempDir('drydock-memory-');
    dirs.push(tmp);
    const { child, url } = await serveProcess(join(tmp.path, 'data'), 'http://127.0.0.1:9', children, {
      DRYDOCK_HOST: '127.0.0.1',
      GITHUB_WEBHOOK_SECRET: SECRET,
    });
    const pid = child.pid!;

    // Warm up every path the load takes (a verified ping, an unsigned and a wrongly-signed refusal).
    const ping = Buffer.from(JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 }));
    for (let i = 0; i < 5; i++) {
      expect(await postBuffer(url, webhookHeaders(`warm-${i}`, sign(ping.toString())), ping)).toBe('200');
      expect(await postBuffer(url, webhookHeaders(`warm-u-${i}`, null), ping)).toBe('401');
      expect(await postBuffer(url, webhookHeaders(`warm-w-${i}`, WRONG), ping)).toBe('401');
    }
    const before = peakRssMb(pid);

    // One 25 MiB JSON body, shared by every request (the test process's memory is not what is measured).
    const body = Buffer.alloc(LIMIT, 0x61);
    body.write('{"zen":"', 0);
    body.write('"}', LIMIT - 2);
    const started = performance.now();
    const answers = await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => postBuffer(url, webhookHeaders(`unsigned-${i}`, null), body)),
      ...Array.from({ length: 20 }, (_, i) => postBuffer(url, webhookHeaders(`wrong-${i}`, WRONG), body)),
    ]);
    const seconds = (performance.now() - started) / 1000;
    const after = peakRssMb(pid);
    const growth = after - before;
    console.log(
      `peak RSS ${before.toFixed(0)} MB -> ${after.toFixed(0)} MB (+${growth.toFixed(0)} MB) over ${seconds.toFixed(1)} s; answers: ${JSON.stringify(count(answers))}`,
    );

    // Every unsigned body is read, dropped and refused (401). Every wrongly-signed one is either checked and
    // refused (401) or turned away at once because the budget was full (503). A 503 sent at once races the
    // client's upload: on a loaded machine the client may find its connection reset before it read the
    // answer (EPIPE/ECONNRESET), as GitHub would, and redeliver; nothing else is acceptable.
    expect(answers.slice(0, 20).filter((a) => a !== '401')).toEqual([]);
    expect(
      answers.slice(20).filter((a) => !['401', '503', 'dropped: EPIPE', 'dropped: ECONNRESET'].includes(a)),
    ).toEqual([]);
    expect(answers.slice(20).filter((a) => a === '401').length).toBeGreaterThan(0);
    expect(growth).toBeLessThan(PEAK_GROWTH_MB);
    // And the daemon still takes a signed delivery.
    expect(await postBuffer(url, webhookHeaders('after', sign(ping.toString())), ping)).toBe('200');
  }, 120_000);
});

function count(xs: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}
