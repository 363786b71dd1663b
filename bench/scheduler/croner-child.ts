import { readFileSync } from 'node:fs';
import { Cron } from 'croner';
import { childParams, cpuMs, fail, finish, maxRssBytes, receive, report, sleepUntil } from './child-io.js';
import { benchId, dueOffsetMs, dueShape } from './job-mix.js';
import type { BaselineParams, BaselineSchedule, MixFile } from './protocol.js';

// Child: the design drydock rejects, one croner instance with a live timer per job, for the same job mix.
// Croner has no per-job jitter, so a due instance gets a 6-field expression whose seconds field holds the
// same offset into the due minute drydock's copy of that job has (rounded down to whole seconds).
//
// Before holding `count` instances it measures what one costs on the heap and refuses (too-big) if the
// projection passes 90% of the heap ceiling it runs under; the orchestrator then tries a smaller count.

const p = childParams<BaselineParams>();
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) fail(new Error('croner baseline: run with --expose-gc'));

// As drydock's own croner use (src/scheduler/cron.ts): vixie day matching, DST fixed-time rule.
const OPTIONS = { domAndDow: false, fixedTimeRule: 'no-wildcard' } as const;
const PROBE = 1_000;

async function main(): Promise<void> {
  const mix = JSON.parse(readFileSync(p.mixFile, 'utf8')) as MixFile;
  const due = Math.min(p.due, p.count);
  const background = p.count - due;
  if (background > mix.background.length) throw new Error('croner baseline: the mix has too few jobs');

  let unexpectedFires = 0;
  const quiet = () => {
    unexpectedFires += 1;
  };
  const held: Cron[] = [];
  const hold = (i: number) => {
    const [cron, timezone] = mix.background[i]!;
    held.push(new Cron(cron, { ...OPTIONS, timezone }, quiet));
  };

  gc!();
  const heap0 = process.memoryUsage().heapUsed;
  let createMs = 0;
  let t = performance.now();
  const probe = Math.min(PROBE, background);
  for (let i = 0; i < probe; i++) hold(i);
  createMs += performance.now() - t;
  gc!();
  const perInstanceHeapBytes = probe > 0 ? (process.memoryUsage().heapUsed - heap0) / probe : 0;
  const projectedHeapBytes = heap0 + perInstanceHeapBytes * p.count;
  if (projectedHeapBytes > 0.9 * p.heapCeilingMb * 1024 * 1024) {
    for (const c of held) c.stop();
    await finish({ type: 'too-big', count: p.count, perInstanceHeapBytes, projectedHeapBytes });
  }

  t = performance.now();
  for (let i = probe; i < background; i++) hold(i);
  createMs += performance.now() - t;
  mix.background.length = 0;
  const spawnToReadyMs = Date.now() - p.spawnedAt;
  await report({ type: 'ready', count: p.count, perInstanceHeapBytes });

  // The due set, once the orchestrator has chosen a minute that does not overlap drydock's.
  const schedule = await receive<BaselineSchedule>('schedule');
  const lateness: number[] = [];
  const firedOnce = new Set<number>();
  let duplicateFires = 0;
  let allFired: () => void = () => {};
  const allDueFired = new Promise<void>((resolve) => {
    allFired = resolve;
  });
  t = performance.now();
  for (let i = 0; i < due; i++) {
    const shape = dueShape(i, schedule.dueMinuteAt);
    const second = Math.floor(dueOffsetMs(benchId('job', i), schedule.dueSpreadMs) / 1000);
    const expected = schedule.dueMinuteAt + second * 1000;
    const cron = new Cron(`${second} ${shape.cron}`, { ...OPTIONS, timezone: shape.timezone }, () => {
      const now = Date.now();
      if (firedOnce.has(i)) {
        duplicateFires += 1;
        return;
      }
      firedOnce.add(i);
      lateness.push(now - expected);
      if (firedOnce.size === due) allFired();
    });
    held.push(cron);
    const next = cron.nextRun()?.getTime();
    if (next !== expected)
      throw new Error(`croner baseline: due instance ${i} next run ${next}, expected ${expected}`);
  }
  createMs += performance.now() - t;
  const rssAfterStart = process.memoryUsage.rss();
  const heapAfterStart = process.memoryUsage().heapUsed;

  const idleEnd = schedule.dueMinuteAt - 2_000;
  await sleepUntil(idleEnd - schedule.idleMs);
  const idleFrom = performance.now();
  const idleFires = unexpectedFires + firedOnce.size;
  const idleCpu = process.cpuUsage();
  await sleepUntil(idleEnd);
  const idleUsage = process.cpuUsage(idleCpu);
  const idleWindowMs = performance.now() - idleFrom;
  const firesDuringIdle = unexpectedFires + firedOnce.size - idleFires;

  const dueCpu = process.cpuUsage();
  const dueFrom = performance.now();
  if (due > 0) await Promise.race([allDueFired, sleepUntil(schedule.dueMinuteAt + 80_000)]);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const dueUsage = process.cpuUsage(dueCpu);
  const dueWindowMs = performance.now() - dueFrom;
  const rssEnd = process.memoryUsage.rss();
  const maxRss = maxRssBytes();
  for (const c of held) c.stop();

  const idleCpuMs = cpuMs(idleUsage);
  const dueCpuMs = cpuMs(dueUsage);
  await finish({
    type: 'report',
    count: p.count,
    due,
    createMs,
    spawnToReadyMs,
    rssAfterStart,
    heapAfterStart,
    perInstanceHeapBytes,
    idle: {
      windowMs: idleWindowMs,
      userMs: idleCpuMs.userMs,
      systemMs: idleCpuMs.systemMs,
      wakeups: null,
      firesDuringIdle,
    },
    lateness,
    duplicateFires,
    unexpectedFires,
    dueCpuMs: dueCpuMs.userMs + dueCpuMs.systemMs,
    dueWindowMs,
    rssEnd,
    maxRss,
  });
}

main().catch(fail);
