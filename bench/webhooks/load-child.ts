import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { Webhooks } from '@octokit/webhooks';
import { childParams, fail, onOrders, report } from './child-io.js';
import { BODY_BYTES, EVENT, PrefixSigner, payloadTemplate } from './payload.js';
import type { PhaseReport, PhaseRequest, RedeliverReport, RedeliverRequest } from './protocol.js';

// Child: the second process that sends the deliveries. A phase is a closed loop: `concurrency` workers, each
// with its own keep-alive connection (node:http Agent, keepAlive, maxSockets = concurrency per server), each
// sending its next delivery as soon as the previous answer has been read to the end; with several servers
// (replicas), worker k sends to server k mod N. A warm-up (connections, JIT, SQLite
// pages) precedes the measured window; requests started in the window count.
// Every delivery is a pull_request.opened body of BODY_BYTES with its own X-GitHub-Delivery (a UUID, as
// GitHub sends) and its own pull request number, signed with the shared secret. The body and signature are
// made before the request's clock starts (prefix + tail, HMAC continued from the prefix; see payload.ts).
// Every drydock answer is parsed and checked: 202, outcome queued (its inbox works out the run afterwards).

const { secret } = childParams<{ secret: string }>();
const tpl = payloadTemplate();
const signer = new PrefixSigner(secret, tpl.prefix);
// Six-digit numbers: every body is exactly BODY_BYTES long.
let nextNumber = 100_000;

/**
 * What drydock answered to each first delivery of its last phase: the redelivery check sends the same ones
 * again (with --store both, each daemon only its own).
 */
const delivered: { key: string; n: number; deliveryId: string }[] = [];

interface Answer {
  status: number;
  text: string;
}

interface WebhookDelivery {
  key: string;
  n: number;
  body: Buffer;
  signature: string;
}

function prepare(n: number, key: string = randomUUID()): WebhookDelivery {
  const tail = tpl.tail(n);
  return { key, n, body: Buffer.concat([tpl.prefix, Buffer.from(tail)]), signature: signer.sign(tail) };
}

function send(agent: Agent, url: URL, d: WebhookDelivery): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      {
        agent,
        method: 'POST',
        host: url.hostname,
        port: url.port,
        path: '/webhooks/github',
        headers: {
          'content-type': 'application/json',
          'content-length': String(d.body.length),
          'user-agent': 'GitHub-Hookshot/bench',
          'x-github-event': EVENT,
          'x-github-delivery': d.key,
          'x-github-hook-id': '424242',
          'x-hub-signature-256': d.signature,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(d.body);
  });
}

interface DrydockAnswer {
  delivery_id?: string;
  outcome?: string;
  run_ids?: unknown;
  duplicate?: boolean;
}

function parse(a: Answer): DrydockAnswer | null {
  try {
    return JSON.parse(a.text) as DrydockAnswer;
  } catch {
    return null;
  }
}

/** null when the answer is right; drydock's is kept for the redelivery check. */
function check(target: PhaseRequest['target'], d: WebhookDelivery, a: Answer): string | null {
  if (a.status !== 202) return `HTTP ${a.status}: ${a.text.slice(0, 200)}`;
  if (target === 'bare') return null;
  const body = parse(a);
  if (body?.outcome !== 'queued' || !body.delivery_id || body.duplicate) {
    return `not queued as a new delivery: ${a.text.slice(0, 300)}`;
  }
  delivered.push({ key: d.key, n: d.n, deliveryId: body.delivery_id });
  return null;
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

async function phase(order: PhaseRequest): Promise<PhaseReport> {
  const urls = order.urls.map((u) => new URL(u));
  if (order.target === 'drydock') delivered.length = 0;
  const agent = new Agent({
    keepAlive: true,
    maxSockets: order.concurrency,
    maxFreeSockets: order.concurrency,
  });
  const out: PhaseReport = {
    type: 'phase-done',
    target: order.target,
    concurrency: order.concurrency,
    latencies: [],
    wallMs: 0,
    perSecond: new Array(Math.ceil(order.measureMs / 1000)).fill(0),
    warmupRequests: 0,
    sent: 0,
    statuses: {},
    byUrl: {},
    bad: 0,
    firstBad: null,
    errors: 0,
    firstError: null,
    cpuMs: 0,
  };
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const measureFrom = t0 + order.warmupMs;
  const measureTo = measureFrom + order.measureMs;
  let lastEnd = measureFrom;

  const worker = async (k: number) => {
    const url = urls[k % urls.length]!;
    for (;;) {
      const d = prepare(nextNumber++);
      const start = performance.now();
      if (start >= measureTo) return;
      out.sent += 1;
      let answer: Answer;
      try {
        answer = await send(agent, url, d);
      } catch (err) {
        out.errors += 1;
        out.firstError ??= describe(err);
        await new Promise((r) => setTimeout(r, 10));
        continue;
      }
      const end = performance.now();
      out.statuses[answer.status] = (out.statuses[answer.status] ?? 0) + 1;
      out.byUrl[url.origin] = (out.byUrl[url.origin] ?? 0) + 1;
      const problem = check(order.target, d, answer);
      if (problem) {
        out.bad += 1;
        out.firstBad ??= problem;
      }
      if (end >= measureFrom && end < measureTo) {
        const second = Math.floor((end - measureFrom) / 1000);
        out.perSecond[second] = (out.perSecond[second] ?? 0) + 1;
      }
      if (start >= measureFrom) {
        out.latencies.push(end - start);
        lastEnd = Math.max(lastEnd, end);
      } else {
        out.warmupRequests += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: order.concurrency }, (_, k) => worker(k)));
  agent.destroy();
  out.wallMs = lastEnd - measureFrom;
  const used = process.cpuUsage(cpu);
  out.cpuMs = (used.user + used.system) / 1000;
  return out;
}

/** Sends `count` deliveries drydock already took again (same id, same body), spread over all of them. */
async function redeliver(order: RedeliverRequest): Promise<RedeliverReport> {
  const urls = order.urls.map((u) => new URL(u));
  const agent = new Agent({
    keepAlive: true,
    maxSockets: order.concurrency,
    maxFreeSockets: order.concurrency,
  });
  const count = Math.min(order.count, delivered.length);
  const picks = Array.from(
    { length: count },
    (_, i) => delivered[Math.floor((i * delivered.length) / count)]!,
  );
  const out: RedeliverReport = {
    type: 'redeliver-done',
    concurrency: order.concurrency,
    sent: 0,
    statuses: {},
    sameDelivery: 0,
    runs: {},
    bad: 0,
    firstBad: null,
    latencies: [],
  };
  let next = 0;
  // With replicas, a delivery goes again to whichever replica this connection sends to: often not the one
  // that took it first.
  const worker = async (k: number) => {
    const url = urls[k % urls.length]!;
    for (let pick = picks[next++]; pick; pick = picks[next++]) {
      const d = prepare(pick.n, pick.key);
      const start = performance.now();
      out.sent += 1;
      let answer: Answer;
      try {
        answer = await send(agent, url, d);
      } catch (err) {
        out.bad += 1;
        out.firstBad ??= describe(err);
        continue;
      }
      out.latencies.push(performance.now() - start);
      out.statuses[answer.status] = (out.statuses[answer.status] ?? 0) + 1;
      const body = parse(answer);
      const runs = body?.run_ids;
      if (
        answer.status === 200 &&
        body?.duplicate === true &&
        body.outcome === 'accepted' &&
        body.delivery_id === pick.deliveryId &&
        Array.isArray(runs) &&
        runs.length === 1
      ) {
        out.sameDelivery += 1;
        out.runs[pick.deliveryId] = String(runs[0]);
      } else {
        out.bad += 1;
        out.firstBad ??= `HTTP ${answer.status}: ${answer.text.slice(0, 300)}`;
      }
    }
  };
  await Promise.all(Array.from({ length: order.concurrency }, (_, k) => worker(k)));
  agent.destroy();
  return out;
}

async function main(): Promise<void> {
  // The signer agrees with the library the servers verify with.
  const probe = prepare(7);
  if (!(await new Webhooks({ secret }).verify(probe.body.toString('utf8'), probe.signature))) {
    throw new Error('load: @octokit/webhooks rejects the bench signature');
  }
  if (probe.body.length > BODY_BYTES + 16) throw new Error(`load: body is ${probe.body.length} bytes`);
  const times: number[] = [];
  for (let i = 0; i < 2_000; i++) {
    const t = performance.now();
    prepare(1_000_000 + i);
    times.push((performance.now() - t) * 1000);
  }
  times.sort((a, b) => a - b);
  onOrders<PhaseRequest | RedeliverRequest | { type: 'close' }>(async (order) => {
    if (order.type === 'close') process.exit(0);
    if (order.type === 'phase') await report(await phase(order));
    else await report(await redeliver(order));
  });
  await report({ type: 'ready', bodyBytes: prepare(123_456).body.length, prepareUs: times[1_000]! });
}

main().catch(fail);
