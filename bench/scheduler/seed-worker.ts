import { parentPort, workerData } from 'node:worker_threads';
import type { NewJob } from '../../src/store/store.js';
import { planBackgroundJob } from './seed-plan.js';

// Seeding helper thread: plans (jobFromRequest, the CPU-heavy part) every `stride`-th background job from `first`
// and posts them in batches; the seeding thread inserts them. Planning is ~0.4 ms a job, mostly croner
// construction and Intl time zone checks for expressions its 64-entry cache has not seen.

export interface PlanSlice {
  first: number;
  end: number;
  stride: number;
  sessions: number;
  horizonAt: number;
}

export interface PlannedBatch {
  jobs: NewJob[];
  rerolls: number;
  done: boolean;
}

const slice = workerData as PlanSlice;
let batch: NewJob[] = [];
let rerolls = 0;
for (let i = slice.first; i < slice.end; i += slice.stride) {
  const planned = planBackgroundJob(i, slice.sessions, slice.horizonAt);
  batch.push(planned.job);
  rerolls += planned.rerolls;
  if (batch.length === 500) {
    parentPort!.postMessage({ jobs: batch, rerolls, done: false } satisfies PlannedBatch);
    batch = [];
    rerolls = 0;
  }
}
parentPort!.postMessage({ jobs: batch, rerolls, done: true } satisfies PlannedBatch);
