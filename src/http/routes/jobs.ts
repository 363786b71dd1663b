import { Hono } from 'hono';
import { newId } from '../../ids.js';
import { specOf } from '../../scheduler/decide.js';
import { nextFire } from '../../scheduler/next-fire.js';
import { jitterOptions } from '../../scheduler/plan-job.js';
import type { CronJob } from '../../store/types.js';
import { requires } from '../auth.js';
import type { AppDeps, Env } from '../deps.js';
import { HttpError, notFound } from '../errors.js';
import { presentJob, presentRun, presentSlot } from '../present.js';

export function jobRoutes(deps: AppDeps): Hono<Env> {
  const { store, clock, config } = deps;
  const app = new Hono<Env>();

  const load = async (id: string): Promise<CronJob> => {
    const job = await store.getJob(id);
    if (!job) throw notFound('job', id);
    return job;
  };

  app.get('/:id', async (c) => c.json(presentJob(await load(c.req.param('id')))));

  app.get('/:id/slots', async (c) => {
    const job = await load(c.req.param('id'));
    return c.json({ items: (await store.listSlots(job.id)).map(presentSlot) });
  });

  app.delete('/:id', requires('operate'), async (c) => {
    if (!(await store.deleteJob(c.req.param('id')))) throw notFound('job', c.req.param('id'));
    deps.scheduler.kick();
    return c.body(null, 204);
  });

  app.post('/:id/pause', requires('operate'), async (c) => {
    const job = await load(c.req.param('id'));
    if (job.status === 'missed')
      throw new HttpError(409, 'conflict', 'a missed one-shot cannot be paused; run or delete it');
    const updated = await store.updateJobSchedule(job.id, 'paused', null);
    return c.json(presentJob(updated!));
  });

  app.post('/:id/resume', requires('operate'), async (c) => {
    const job = await load(c.req.param('id'));
    if (job.status !== 'paused') throw new HttpError(409, 'conflict', `job is ${job.status}, not paused`);
    // Slots that passed while paused are skipped: resuming schedules the next slot from now.
    const now = clock.now();
    const next = nextFire(specOf(job), now, now, jitterOptions(config));
    const updated = await store.updateJobSchedule(job.id, 'active', next);
    deps.scheduler.kick();
    return c.json(presentJob(updated!));
  });

  app.post('/:id/run', requires('operate'), async (c) => {
    const job = await load(c.req.param('id'));
    const run = await store.runJobNow(job.id, {
      id: newId('run'),
      sessionId: job.sessionId,
      jobId: job.id,
      slotAt: null,
      source: 'manual',
      prompt: job.prompt,
      requestedBy: c.get('identity').identity,
      createdAt: clock.now(),
    });
    if (!run) throw notFound('job', job.id);
    deps.submitRun(run);
    return c.json(presentRun(run), 201);
  });

  return app;
}
