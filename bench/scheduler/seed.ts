import { statSync, writeFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { defaultConfig } from '../../src/config/load.js';
import type { RunDefaults } from '../../src/domain/types.js';
import type { Store } from '../../src/store/store.js';
import { analyzeAndMeasure, openTarget } from '../shared/store-target.js';
import { childParams, fail, finish } from './child-io.js';
import { benchId, ceilMinute, dueOffsetMs, dueShape, sessionIndexOf } from './job-mix.js';
import type { DueJob, MixFile, SeedParams } from './protocol.js';
import { planBenchJob } from './seed-plan.js';
import type { PlannedBatch, PlanSlice } from './seed-worker.js';

// Child: builds the database drydock will open, through the path the API takes (jobFromRequest, then
// Store.createSession / createJob, one job per transaction), as if the jobs had been created one by one.
//
// - Background jobs (indices >= due) get recurring schedules whose first slot lies after the horizon, so
//   nothing fires while the benchmark runs; a candidate inside it is rolled again. Planning runs in two
//   helper threads (it is the slow part); this thread inserts.
// - Due jobs (indices < due) get schedules whose next slot is one minute M, a little after seeding ends.
//   Their jittered due time is then rewritten to M + frac(id) * 60 s with Store.updateJobSchedule: drydock's
//   own jitter would spread a daily job over up to 15 min, and the benchmark wants them all inside minute M.
//
// On PostgreSQL the same calls go through the PostgreSQL store, in batches of up to 500 planned jobs with
// PG_LANES createJob transactions in flight at once (each locks its own session's row; the jobs of a batch
// belong to distinct sessions while the batch is no longer than the session count), then ANALYZE.

const p = childParams<SeedParams>();
const maxPerSession = defaultConfig().scheduler.max_jobs_per_session;
const PLANNERS = 2;
/** createJob transactions in flight on PostgreSQL (the pool holds 10 connections); SQLite takes them one by one. */
const PG_LANES = 8;
const lanes = p.target.kind === 'postgres' ? PG_LANES : 1;

const SESSION_DEFAULTS: RunDefaults = {
  model: 'claude-sonnet-5-5',
  budget_usd: 5,
  approvals_required: 1,
  execute_mode: 'manual',
};

/** Runs `each` over `items` with at most `width` calls in flight, in index order per lane. */
async function inLanes<T>(items: readonly T[], width: number, each: (item: T, i: number) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      await each(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}

function seedBackground(store: Store, mix: MixFile): Promise<number> {
  const count = p.jobs - p.due;
  mix.background = new Array(count);
  if (count === 0) return Promise.resolve(0);
  return new Promise((resolve, reject) => {
    let inserting = Promise.resolve();
    let rerolls = 0;
    let open = PLANNERS;
    for (let w = 0; w < PLANNERS; w++) {
      const slice: PlanSlice = {
        first: p.due + w,
        end: p.jobs,
        stride: PLANNERS,
        sessions: p.sessions,
        horizonAt: p.horizonAt,
      };
      let next = slice.first; // planners post their jobs in index order
      const worker = new Worker(new URL('./seed-worker.js', import.meta.url), { workerData: slice });
      worker.on('error', reject);
      worker.on('message', (batch: PlannedBatch) => {
        inserting = inserting
          .then(async () => {
            const first = next;
            next += PLANNERS * batch.jobs.length;
            await inLanes(batch.jobs, lanes, async (job, k) => {
              await store.createJob(job, maxPerSession);
              mix.background[first + PLANNERS * k - p.due] = [job.effectiveCron, job.timezone];
            });
            rerolls += batch.rerolls;
            if (batch.done) {
              open -= 1;
              if (open === 0) resolve(rerolls);
            }
          })
          .catch(reject);
      });
    }
  });
}

async function main(): Promise<void> {
  const started = performance.now();
  const store = await openTarget(p.target, true);

  await inLanes(
    Array.from({ length: p.sessions }, (_, s) => s),
    lanes,
    async (s) => {
      await store.createSession({
        id: benchId('ses', s),
        name: `bench session ${s}`,
        workspace: `/srv/repos/repo-${s}`,
        owner: `owner${s % 50}@example.com`,
        defaults: SESSION_DEFAULTS,
        createdAt: Date.now(),
      });
    },
  );

  const mix: MixFile = { background: [] };
  const rerolls = await seedBackground(store, mix);

  // The due minute: far enough ahead for drydock to start and sit through the whole idle window first.
  const dueMinuteAt = ceilMinute(Date.now() + p.dueLeadMs);
  const due: DueJob[] = new Array(p.due);
  const dueSchedules: string[] = new Array(p.due);
  await inLanes(
    Array.from({ length: p.due }, (_, i) => i),
    lanes,
    async (i) => {
      const id = benchId('job', i);
      const job = planBenchJob(i, p.sessions, dueShape(i, dueMinuteAt), Date.now());
      if (job.nextNominalAt !== dueMinuteAt) {
        throw new Error(
          `seed: due job ${i} (${job.effectiveCron} ${job.timezone}) next slot ${job.nextNominalAt}, expected ${dueMinuteAt}`,
        );
      }
      await store.createJob(job, maxPerSession);
      const dueAt = dueMinuteAt + dueOffsetMs(id, p.dueSpreadMs);
      await store.updateJobSchedule(id, 'active', { nominalAt: dueMinuteAt, dueAt, final: job.nextFinal });
      due[i] = { id, sessionIndex: sessionIndexOf(i, p.sessions), dueAt };
      dueSchedules[i] = `${job.timezone} ${job.effectiveCron}`;
    },
  );

  const held = await store.countJobs();
  if (held !== p.jobs) throw new Error(`seed: store holds ${held} jobs, expected ${p.jobs}`);
  await store.close(); // SQLite: checkpoints the WAL into the main file, as a daemon that stopped would
  writeFileSync(p.mixFile, JSON.stringify(mix));
  const fileBytes =
    p.target.kind === 'sqlite' ? statSync(p.target.file).size : await analyzeAndMeasure(p.target.url);

  const schedules = new Set([...mix.background.map(([cron, zone]) => `${zone} ${cron}`), ...dueSchedules]);
  await finish({
    type: 'seeded',
    dueMinuteAt,
    due,
    seedMs: performance.now() - started,
    rerolls,
    distinctSchedules: schedules.size,
    fileBytes,
  });
}

main().catch(fail);
