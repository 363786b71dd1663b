import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { childParams, fail, onOrders, report } from './child-io.js';
import type { LoadParams, PhaseReport, PhaseRequest, Pools } from './protocol.js';

// Child: the second process that drives the daemon over HTTP. A phase is a closed loop: `concurrency`
// workers, each with its own keep-alive connection (a node:http Agent with keepAlive and one socket),
// each sending its next request as soon as the previous response has been read to the end. A warm-up
// (connections, JIT, SQLite pages) precedes the measured window; the requests whose answers complete
// inside the window are measured (those still in flight at its end are finished, not measured).
//   - list: GET /v1/plans?status=pending_approval&limit=50 with a viewer token; every 20th response of each
//     worker (and its first) is parsed and checked: 50 items, all pending, a next cursor.
//   - approve: POST /v1/plans/:id/approve {sha256} with an approver token that requested none of the plans,
//     each plan of the pool once, in the pool's (random) order; every response is parsed and checked.

const p = childParams<LoadParams>();
const pools = JSON.parse(readFileSync(p.poolsFile, 'utf8')) as Pools;
const target = new URL(p.url);
let nextPlan = 0; // the approve pool is used up across phases, so no plan is approved twice

interface Answer {
  status: number;
  bytes: number;
  text: string | null;
}

function send(agent: Agent, method: string, path: string, token: string, body: string | null, keep: boolean) {
  return new Promise<Answer>((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== null) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const req = request({ agent, method, path, host: target.hostname, port: target.port, headers }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (keep || res.statusCode !== 200) chunks.push(chunk);
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          bytes,
          text: chunks.length ? Buffer.concat(chunks).toString('utf8') : null,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

function checkList(a: Answer): string | null {
  if (a.status !== 200) return `HTTP ${a.status}: ${a.text?.slice(0, 200)}`;
  const body = JSON.parse(a.text ?? 'null') as { items?: { status: string }[]; next_cursor?: string | null };
  if (body?.items?.length !== 50) return `expected 50 items, got ${body?.items?.length}`;
  if (body.items.some((i) => i.status !== 'pending_approval')) return 'an item is not pending_approval';
  if (typeof body.next_cursor !== 'string') return 'no next_cursor';
  return null;
}

function checkApprove(a: Answer, planId: string): string | null {
  if (a.status !== 200) return `HTTP ${a.status}: ${a.text?.slice(0, 200)}`;
  const body = JSON.parse(a.text ?? 'null') as {
    plan?: { id: string; status: string };
    run?: { phase: string; executes_plan_id: string } | null;
  };
  if (body?.plan?.id !== planId || body.plan.status !== 'approved') return `plan not approved: ${a.text}`;
  if (body.run?.phase !== 'execute' || body.run.executes_plan_id !== planId)
    return `no execute run: ${a.text}`;
  return null;
}

async function phase(order: PhaseRequest): Promise<PhaseReport> {
  const out: PhaseReport = {
    type: 'phase-done',
    kind: order.kind,
    concurrency: order.concurrency,
    latencies: [],
    wallMs: 0,
    warmupRequests: 0,
    statuses: {},
    bytesMean: 0,
    checked: 0,
    bad: 0,
    firstBad: null,
    approved: [],
    poolExhausted: false,
    cpuMs: 0,
  };
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const measureFrom = t0 + order.warmupMs;
  const measureTo = measureFrom + order.measureMs;
  let bytes = 0;
  const listPath = '/v1/plans?status=pending_approval&limit=50';
  let taken = 0; // plans of the pool this phase took
  let lastEnd = measureFrom;

  const agents: Agent[] = [];
  const worker = async () => {
    // One agent with one socket per worker: exactly `concurrency` connections, none left idle.
    const agent = new Agent({ keepAlive: true, maxSockets: 1, maxFreeSockets: 1 });
    agents.push(agent);
    for (let n = 0; ; n++) {
      const start = performance.now();
      if (start >= measureTo) return;
      let answer: Answer;
      let problem: string | null = null;
      // A request that fails on the wire counts as an answer "error <code>" (not retried, not measured).
      const attempt = (method: string, path: string, token: string, body: string | null, keep: boolean) =>
        send(agent, method, path, token, body, keep).catch((err: NodeJS.ErrnoException) => ({
          status: -1,
          bytes: 0,
          text: `error ${err.code ?? err.message}`,
        }));
      if (order.kind === 'list') {
        const check = n % 20 === 0;
        answer = await attempt('GET', listPath, p.viewerToken, null, check);
        if (check || answer.status !== 200) {
          out.checked += 1;
          problem = checkList(answer);
        }
      } else {
        const plan = taken < order.maxPlans ? pools.http[nextPlan++] : undefined;
        taken += 1;
        if (!plan) {
          out.poolExhausted = true;
          return;
        }
        const [id, sha256] = plan;
        const body = JSON.stringify({ sha256 });
        answer = await attempt('POST', `/v1/plans/${id}/approve`, p.approverToken, body, true);
        out.checked += 1;
        problem = checkApprove(answer, id);
        if (answer.status === 200) out.approved.push(id);
      }
      const end = performance.now();
      const key = answer.status < 0 ? answer.text! : String(answer.status);
      out.statuses[key] = (out.statuses[key] ?? 0) + 1;
      if (answer.status < 0) {
        out.bad += 1;
        out.firstBad ??= answer.text;
        continue;
      }
      if (problem) {
        out.bad += 1;
        out.firstBad ??= problem;
      }
      if (end >= measureFrom && end < measureTo) {
        out.latencies.push(end - start);
        bytes += answer.bytes;
        lastEnd = Math.max(lastEnd, end);
      } else {
        out.warmupRequests += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: order.concurrency }, worker));
  for (const agent of agents) agent.destroy();
  // A phase whose pool ran out before its window closed is measured up to its last answer.
  out.wallMs = out.poolExhausted ? lastEnd - measureFrom : order.measureMs;
  out.bytesMean = out.latencies.length ? bytes / out.latencies.length : 0;
  const used = process.cpuUsage(cpu);
  out.cpuMs = (used.user + used.system) / 1000;
  return out;
}

onOrders<PhaseRequest | { type: 'close' }>(async (order) => {
  if (order.type === 'close') process.exit(0);
  await report(await phase(order));
});
report({ type: 'ready' }).catch(fail);
