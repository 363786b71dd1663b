import { request } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import { type Clock, systemClock } from '../../src/clock.js';
import { defaultConfig } from '../../src/config/load.js';
import { startDaemon } from '../../src/daemon.js';
import type { RunHandler } from '../../src/runs/queue.js';
import { Scheduler, type SchedulerOptions, type TickReport } from '../../src/scheduler/loop.js';
import { freePort } from '../shared/free-port.js';
import { countingLogger } from '../shared/logger.js';
import { childParams, cpuMs, fail, finish, maxRssBytes, report, sleepUntil } from './child-io.js';
import type { DrydockParams, DrydockStarted, FireRecord } from './protocol.js';

// Child: the real daemon (startDaemon: store, run queue, scheduler, HTTP server) on the seeded data
// directory (SQLite) or the seeded database (PostgreSQL, through `database_url`), with the real clock. What
// it is given instead of the defaults: an executor that completes every run at once (so a session is busy
// only while its run passes through the queue), a model client that is never called, a free port, and a
// logger that counts instead of printing (warnings go to stderr).
//
// Instrumentation, none of it in src/: the clock counts timer arms; Scheduler.prototype.tick is wrapped to
// see each tick's report (the first one's end is where "start" ends); and the scheduler's onRun and
// onLateness options are wrapped after start to time each run it hands over. The last reaches into the
// scheduler's private `opts`, because startDaemon does not expose those hooks.

const p = childParams<DrydockParams>();

let armed = 0;
const clock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    armed += 1;
    return systemClock.setTimer(fn, ms);
  },
};

const seenReports = new Set<TickReport>();
const ticks = { count: 0, fired: 0, pending: 0, coalesced: 0 };
let firstTickEnd: number | null = null;
let firstTickEndWall = 0;
let firstTickDone: () => void = () => {};
const firstTick = new Promise<void>((resolve) => {
  firstTickDone = resolve;
});
const tick = Scheduler.prototype.tick;
Scheduler.prototype.tick = async function (this: Scheduler): Promise<TickReport> {
  const r = await tick.call(this);
  if (!seenReports.has(r)) {
    seenReports.add(r);
    ticks.count += 1;
    ticks.fired += r.fired;
    ticks.pending += r.pending;
    ticks.coalesced += r.coalesced;
  }
  if (firstTickEnd === null) {
    firstTickEnd = performance.now();
    firstTickEndWall = Date.now();
    firstTickDone();
  }
  return r;
};

const fires: FireRecord[] = [];
const byRun = new Map<string, FireRecord>();
const onTime: number[] = [];
let allFired: () => void = () => {};
const allDueFired = new Promise<void>((resolve) => {
  allFired = resolve;
});

const instant: RunHandler = {
  async execute(run) {
    const fire = byRun.get(run.id);
    if (fire) fire[4] = Date.now();
    return { status: 'completed' };
  },
};

const { logger, counts: logged } = countingLogger();

function healthz(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(`${url}/healthz`, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** Wraps the scheduler's hand-over hooks: which runs it hands over, when, and whether they came when due. */
function observe(scheduler: Scheduler): void {
  const opts = (scheduler as unknown as { opts?: SchedulerOptions }).opts;
  if (!opts || typeof opts.onRun !== 'function') {
    throw new Error(
      'bench: Scheduler keeps its options elsewhere now; update bench/scheduler/drydock-child.ts',
    );
  }
  const { onRun, onLateness } = opts;
  let onTimeSeen = 0;
  opts.onLateness = (ms) => {
    onTime.push(ms);
    onLateness?.(ms);
  };
  opts.onRun = (run) => {
    // loop.ts reports a slot's lateness just before it hands the slot's run over; a run with no report
    // before it is one that waited for its session to go idle.
    const reported = onTime.length > onTimeSeen;
    onTimeSeen = onTime.length;
    const fire: FireRecord = [run.jobId ?? '', run.createdAt, Date.now(), reported ? 1 : 0, null];
    fires.push(fire);
    byRun.set(run.id, fire);
    onRun(run);
    if (fires.length === p.due) allFired();
  };
}

async function main(): Promise<void> {
  const base = defaultConfig();
  const config = {
    ...base,
    data_dir: p.dataDir,
    database_url: p.target.kind === 'postgres' ? p.target.url : null,
    server: { ...base.server, host: '127.0.0.1', port: await freePort() },
  };
  const model = new Anthropic({ apiKey: 'bench-never-called' });

  const t0 = performance.now();
  const daemon = await startDaemon({ config, logger, clock, handler: instant, model, announce: () => {} });
  const daemonReadyMs = performance.now() - t0;
  await firstTick;
  observe(daemon.scheduler);
  const started: DrydockStarted = {
    type: 'started',
    startMs: firstTickEnd! - t0,
    daemonReadyMs,
    spawnToFirstTickMs: firstTickEndWall - p.spawnedAt,
    rssAfterStart: process.memoryUsage.rss(),
    heapAfterStart: process.memoryUsage().heapUsed,
    jobsHeld: await daemon.store.countJobs(),
  };
  const httpOk = await healthz(daemon.url);
  await report(started);

  // Idle: the whole window before the due minute, ending 2 s before it.
  const idleEnd = p.dueMinuteAt - 2_000;
  await sleepUntil(idleEnd - p.idleMs);
  const idleFrom = performance.now();
  const idleArmed = armed;
  const idleFires = fires.length;
  const idleCpu = process.cpuUsage();
  await sleepUntil(idleEnd);
  const idleUsage = process.cpuUsage(idleCpu);
  const idleWindowMs = performance.now() - idleFrom;
  const idleWakeups = armed - idleArmed;
  const firesDuringIdle = fires.length - idleFires;

  // The due minute: from 2 s before it until every due job fired (or 20 s after the minute, if some never do).
  const dueCpu = process.cpuUsage();
  const dueFrom = performance.now();
  const dueArmed = armed;
  const dueTicks = ticks.count;
  const dueLogLines = logged.lines;
  await Promise.race([allDueFired, sleepUntil(p.dueMinuteAt + 80_000)]);
  await new Promise((resolve) => setTimeout(resolve, 200)); // let the last runs through the queue
  const dueUsage = process.cpuUsage(dueCpu);
  const dueWindowMs = performance.now() - dueFrom;
  const rssEnd = process.memoryUsage.rss();
  const maxRss = maxRssBytes();

  await daemon.stop();

  const idleCpuMs = cpuMs(idleUsage);
  const dueCpuMs = cpuMs(dueUsage);
  await finish({
    type: 'report',
    started,
    idle: {
      windowMs: idleWindowMs,
      userMs: idleCpuMs.userMs,
      systemMs: idleCpuMs.systemMs,
      wakeups: idleWakeups,
      firesDuringIdle,
    },
    fires,
    onTime,
    ticks: { ...ticks, duringDue: ticks.count - dueTicks },
    dueCpuMs: dueCpuMs.userMs + dueCpuMs.systemMs,
    dueWindowMs,
    dueWakeups: armed - dueArmed,
    dueLogLines: logged.lines - dueLogLines,
    rssEnd,
    maxRss,
    warnings: logged.warnings,
    httpOk,
  });
}

main().catch(fail);
