import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { childParams, cpuMs, fail, finish, maxRssBytes } from './child-io.js';
import {
  type BareSample,
  bareRoundTrip,
  checkRun,
  makeWorkspace,
  modelClient,
  openDrydock,
  paramsOf,
} from './harness.js';
import type { SequentialParams, SequentialReport } from './protocol.js';
import { toolBeforeTurn } from './script.js';

// Child: one run at a time, each beside a bare SDK replay of the very requests it sent. Odd iterations
// replay first (the previous run's requests, which have the same sizes), even ones after, so neither side
// always runs on a warmer or a more littered heap. Only this child's event loop does anything: the model
// server is a process of its own.

const p = childParams<SequentialParams>();

function fileBytes(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

async function main(): Promise<void> {
  const ws = join(p.dir, 'workspace-sequential');
  mkdirSync(ws, { recursive: true });
  const workspace = makeWorkspace(ws);
  const file = join(p.dir, 'sequential.db');
  const dd = await openDrydock({ file, url: p.url, maxConcurrent: 4 });
  const sessionId = await dd.createSession(ws, p.turns);
  const bare = modelClient(p.url);

  const r: SequentialReport = {
    type: 'sequential',
    workspace,
    drydock: { cycle: [], beforeFetch: [], afterFetch: [], runWall: [], runStart: [], runEnd: [] },
    bare: { total: [], prep: [], wire: [], runSum: [] },
    overhead: [],
    cycleTool: [],
    eventsPerRun: 0,
    textDeltasPerRun: 0,
    requestBytes: { first: 0, last: 0 },
    failures: [],
    cpuMs: 0,
    maxRss: 0,
    dbBytes: 0,
    warnings: 0,
  };

  const replay = async (bodies: string[]): Promise<BareSample[]> => {
    const params = bodies.map(paramsOf);
    const samples: BareSample[] = [];
    for (const one of params) samples.push(await bareRoundTrip(bare.client, one, bare.hook));
    return samples;
  };

  let previous: string[] | null = null;
  let cpuFrom: NodeJS.CpuUsage | undefined;
  for (let i = 0; i < p.warmup + p.runs; i++) {
    const measured = i >= p.warmup;
    if (i === p.warmup) cpuFrom = process.cpuUsage();
    const bareFirst = i % 2 === 1 && previous !== null;
    let samples = bareFirst ? await replay(previous!) : null;

    const bodies: string[] = [];
    const fetchAts: number[] = [];
    dd.hook.onFetch = (body, at) => {
      bodies.push(body);
      fetchAts.push(at);
    };
    const run = await dd.createRun(sessionId, `Add pagination to the list endpoints (run ${i + 1})`);
    const settled = await dd.submit(run);
    dd.hook.onFetch = null;
    samples ??= await replay(bodies);
    previous = bodies;

    const check = await checkRun(dd.store, settled.run, p.turns);
    const marks = dd.marks.get(run.id);
    dd.marks.delete(run.id);
    if (check.problem) {
      r.failures.push(check.problem);
      continue;
    }
    if (!marks || marks.turnEnds.length !== p.turns || fetchAts.length !== p.turns) {
      r.failures.push(`${run.id}: ${marks?.turnEnds.length ?? 0} turn marks, ${fetchAts.length} requests`);
      continue;
    }
    if (!measured) continue;

    r.eventsPerRun = check.events;
    r.textDeltasPerRun = check.textDeltas;
    r.requestBytes = { first: bodies[0]!.length, last: bodies.at(-1)!.length };
    let from = marks.started;
    for (let k = 0; k < p.turns; k++) {
      const end = marks.turnEnds[k]!;
      const cycle = end - from;
      r.drydock.cycle.push(cycle);
      r.drydock.beforeFetch.push(fetchAts[k]! - from);
      r.drydock.afterFetch.push(end - fetchAts[k]!);
      r.bare.total.push(samples[k]!.total);
      r.bare.prep.push(samples[k]!.prep);
      r.bare.wire.push(samples[k]!.wire);
      r.overhead.push(cycle - samples[k]!.total);
      r.cycleTool.push(toolBeforeTurn(k + 1));
      from = end;
    }
    r.drydock.runWall.push(settled.settledAt - settled.submittedAt);
    r.drydock.runStart.push(marks.started - settled.submittedAt);
    r.drydock.runEnd.push(settled.settledAt - marks.turnEnds.at(-1)!);
    r.bare.runSum.push(samples.reduce((sum, s) => sum + s.total, 0));
  }
  r.cpuMs = cpuMs(cpuFrom);
  r.maxRss = maxRssBytes();
  r.dbBytes = fileBytes(file) + fileBytes(`${file}-wal`);
  r.warnings = dd.warnings();
  await dd.close();
  await finish(r);
}

main().catch(fail);
