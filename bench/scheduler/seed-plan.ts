import { defaultConfig } from '../../src/config/load.js';
import { jobFromRequest } from '../../src/scheduler/job-request.js';
import type { NewJob } from '../../src/store/store.js';
import { backgroundCandidate, benchId, type JobShape, sessionIndexOf } from './job-mix.js';

// How the seeder turns a job index into the record drydock's API would store: jobFromRequest, as POST /v1/jobs does.

const config = defaultConfig();

const PROMPTS = [
  'Review the pull requests opened since the last run and propose fixes for any failing checks.',
  'Read the open issues labelled bug, reproduce the most recent one and propose a minimal patch.',
  'Check the dependency manifest for outdated or vulnerable packages and plan the upgrades.',
  'Summarise yesterday’s commits on main and flag any change that lacks tests.',
];

export function planBenchJob(index: number, sessions: number, shape: JobShape, now: number): NewJob {
  return jobFromRequest(
    {
      id: benchId('job', index),
      sessionId: benchId('ses', sessionIndexOf(index, sessions)),
      cron: shape.cron,
      timezone: shape.timezone,
      prompt: `${PROMPTS[index % PROMPTS.length]} (bench job ${index})`,
      recurring: true,
      approximate: shape.approximate,
      options: index % 7 === 0 ? { budget_usd: 2, max_turns: 20 } : {},
      createdBy: `user${index % 97}@example.com`,
    },
    now,
    config,
  );
}

/** A background job whose first slot (nominal and jittered) comes after `horizonAt`; rolls again until so. */
export function planBackgroundJob(
  index: number,
  sessions: number,
  horizonAt: number,
): { job: NewJob; rerolls: number } {
  for (let attempt = 0; attempt <= 200; attempt++) {
    const job = planBenchJob(index, sessions, backgroundCandidate(index, attempt), Date.now());
    if ((job.nextNominalAt ?? 0) > horizonAt && (job.nextDueAt ?? 0) > horizonAt)
      return { job, rerolls: attempt };
  }
  throw new Error(`seed: no schedule quiet until the horizon found for job ${index}`);
}
