import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { childParams, cpuMs, fail, finish } from './child-io.js';
import { bareRoundTrip, checkRun, makeWorkspace, modelClient, openDrydock, paramsOf } from './harness.js';
import type { ConcurrentParams, ConcurrentReport, Load } from './protocol.js';

// Child: C runs at once, one per session, RunQueue maxConcurrent = C, all submitted together; beside it,
// C bare SDK conversations at once, each replaying the requests of one drydock run in order. The bare
// phase runs first; the heap is collected between the phases (node --expose-gc).

const p = childParams<ConcurrentParams>();

const gc = (): void => (globalThis as { gc?: () => void }).gc?.();

/** RSS, heap and (for drydock) the queue's active runs, sampled every 25 ms while a phase runs. */
function sampler(active: () => number) {
  let rssPeak = 0;
  let heapPeak = 0;
  let activeSum = 0;
  let maxActive = 0;
  let samples = 0;
  const tick = () => {
    const m = process.memoryUsage();
    rssPeak = Math.max(rssPeak, m.rss);
    heapPeak = Math.max(heapPeak, m.heapUsed);
    const a = active();
    activeSum += a;
    maxActive = Math.max(maxActive, a);
    samples += 1;
  };
  const timer = setInterval(tick, 25);
  return {
    stop() {
      clearInterval(timer);
      tick();
      return { rssPeak, heapPeak, meanActive: activeSum / samples, maxActive };
    },
  };
}

async function main(): Promise<void> {
  const ws = join(p.dir, 'workspace-concurrent');
  mkdirSync(ws, { recursive: true });
  makeWorkspace(ws);
  const dd = await openDrydock({
    file: join(p.dir, 'concurrent.db'),
    url: p.url,
    maxConcurrent: p.concurrent,
  });
  const sessions: string[] = [];
  for (let i = 0; i < p.concurrent; i++) sessions.push(await dd.createSession(ws, p.turns));

  // Warm-up: two runs one after the other; the second one's requests are what the bare SDK replays.
  let bodies: string[] = [];
  for (let i = 0; i < 2; i++) {
    bodies = [];
    dd.hook.onFetch = (body) => bodies.push(body);
    const s = await dd.submit(await dd.createRun(sessions[0]!, 'Add pagination (warm-up)'));
    dd.hook.onFetch = null;
    const check = await checkRun(dd.store, s.run, p.turns);
    if (check.problem) throw new Error(`warm-up run failed: ${check.problem}`);
  }
  const params = bodies.map(paramsOf);

  // Bare SDK: C conversations at once.
  const bare = modelClient(p.url).client;
  gc();
  let rssBefore = process.memoryUsage.rss();
  let sample = sampler(() => 0);
  let cpuFrom = process.cpuUsage();
  let t0 = performance.now();
  const conversations = await Promise.all(
    sessions.map(async () => {
      const start = performance.now();
      const perRequest: number[] = [];
      for (const one of params) perRequest.push((await bareRoundTrip(bare, one)).total);
      return { wall: performance.now() - start, perRequest };
    }),
  );
  let wallMs = performance.now() - t0;
  let cpu = cpuMs(cpuFrom);
  let peaks = sample.stop();
  const bareLoad: Load = {
    wallMs,
    perTurn: conversations.flatMap((c) => c.perRequest),
    perRun: conversations.map((c) => c.wall),
    cpuMs: cpu,
    rssBefore,
    rssPeak: peaks.rssPeak,
    heapPeak: peaks.heapPeak,
  };

  // Drydock: C runs submitted at once.
  const runs = [];
  for (const sessionId of sessions)
    runs.push(await dd.createRun(sessionId, 'Add pagination to the list endpoints'));
  gc();
  rssBefore = process.memoryUsage.rss();
  sample = sampler(() => dd.queue.activeCount);
  cpuFrom = process.cpuUsage();
  t0 = performance.now();
  const settled = await Promise.all(runs.map((run) => dd.submit(run)));
  wallMs = performance.now() - t0;
  cpu = cpuMs(cpuFrom);
  peaks = sample.stop();

  const perTurn: number[] = [];
  for (const s of settled) {
    const marks = dd.marks.get(s.run.id);
    if (!marks) continue;
    let from = marks.started;
    for (const end of marks.turnEnds) {
      perTurn.push(end - from);
      from = end;
    }
  }

  let planned = 0;
  let exactTurns = 0;
  let complete = 0;
  const problems: string[] = [];
  for (const s of settled) {
    if (s.run.status === 'planned') planned += 1;
    if (s.run.turns === p.turns) exactTurns += 1;
    const check = await checkRun(dd.store, s.run, p.turns);
    if (check.problem) problems.push(check.problem);
    else complete += 1;
  }
  const n = p.concurrent;
  const ok = planned === n && exactTurns === n && complete === n && dd.warnings() === 0;
  const lines = [
    `${planned}/${n} planned, ${exactTurns}/${n} with exactly ${p.turns} turns, ${complete}/${n} complete ` +
      '(event log 1..n from run_started to run_finished, the expected events, conversation, plan record)',
    ...problems.slice(0, 5),
  ];
  if (problems.length > 5) lines.push(`… and ${problems.length - 5} more`);

  const report: ConcurrentReport = {
    type: 'concurrent',
    bare: bareLoad,
    drydock: {
      wallMs,
      perTurn,
      perRun: settled.map((s) => s.settledAt - s.submittedAt),
      cpuMs: cpu,
      rssBefore,
      rssPeak: peaks.rssPeak,
      heapPeak: peaks.heapPeak,
      meanActive: peaks.meanActive,
      maxActive: peaks.maxActive,
    },
    verification: { ok, lines },
    warnings: dd.warnings(),
  };
  await dd.close();
  await finish(report);
}

main().catch(fail);
