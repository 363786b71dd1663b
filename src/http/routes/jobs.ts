import { Hono } from 'hono';
import type { CronJob } from '../../domain/types.js';
import { newId } from '../../ids.js';
import { oneShotPassed, specOf } from '../../scheduler/decide.js';
import { nextFire } from '../../scheduler/next-fire.js';
import { jitterOptions } from '../../scheduler/plan-job.js';
import { requires } from '../auth.js';
import type { AppDeps, Env } from '../deps.js';
import { HttpError, notFound } from '../errors.js';
import { presentJob, presentRun, presentSlot } from '../present.js';

export function jobRoutes(deps: AppDeps): Hono<Env> {
  const { store, clock, config } = deps;
  const app = new Hono<Env>();

  const current = (job: CronJob) =>
    job.nextNominalAt === null || job.nextDueAt === null
      ? null
      : { nominalAt: job.nextNominalAt, dueAt: job.nextDueAt, final: job.nextFinal };

  const load = async (id: string): Promise<CronJob> => {
    const job = await store.getJob(id);
    if (!job) throw notFound('job', id);
    return job;
  };

  /** A scheduled trigger's job is changed through its trigger, never on its own. */
  const own = async (id: string): Promise<CronJob> => {
    const job = await load(id);
    if (job.triggerId) {
      throw new HttpError(
        409,
        'managed_by_trigger',
        `job ${job.id} fires schedule trigger ${job.triggerId}: change, pause or delete it through /v1/triggers/${job.triggerId}`,
      );
    }
    return job;
  };

  app.get('/:id', async (c) => c.json(presentJob(await load(c.req.param('id')))));

  app.get('/:id/slots', async (c) => {
    const job = await load(c.req.param('id'));
    return c.json({ items: (await store.listSlots(job.id)).map(presentSlot) });
  });

  app.delete('/:id', requires('operate'), async (c) => {
    await own(c.req.param('id'));
    if (!(await store.deleteJob(c.req.param('id')))) throw notFound('job', c.req.param('id'));
    deps.scheduler.kick();
    return c.body(null, 204);
  });

  app.post('/:id/pause', requires('operate'), async (c) => {
    const job = await own(c.req.param('id'));
    if (job.status === 'missed')
      throw new HttpError(409, 'conflict', 'a missed one-shot cannot be paused; run or delete it');
    // A one-shot keeps its slot while paused, so resuming can tell whether it passed meanwhile.
    const keep = job.recurring || job.nextNominalAt === null ? null : current(job);
    const updated = await store.updateJobSchedule(job.id, 'paused', keep);
    return c.json(presentJob(updated!));
  });

  app.post('/:id/resume', requires('operate'), async (c) => {
    const job = await own(c.req.param('id'));
    if (job.status !== 'paused') throw new HttpError(409, 'conflict', `job is ${job.status}, not paused`);
    const now = clock.now();
    let updated: CronJob | null;
    if (job.recurring) {
      // Slots that passed while paused are skipped: resuming schedules the next slot from now.
      updated = await store.updateJobSchedule(
        job.id,
        'active',
        nextFire(specOf(job), now, now, jitterOptions(config)),
      );
    } else if (job.nextNominalAt !== null && oneShotPassed(job.nextNominalAt, now)) {
      // A one-shot whose time passed while paused is not run behind anyone's back: it waits for a person.
      // Resumed inside its early-jitter window (due, but its nominal time still ahead), it fires.
      updated = await store.updateJobSchedule(job.id, 'missed', current(job));
    } else {
      updated = await store.updateJobSchedule(job.id, 'active', current(job));
    }
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
      overrides: job.options,
      ...(job.triggerId ? { triggerId: job.triggerId } : {}),
    });
    if (!run) throw notFound('job', job.id);
    deps.submitRun(run);
    return c.json(presentRun(run), 201);
  });

  /**
   * Another expiry period from now, recorded on the job (renewals, renewed_at, renewed_by). A session's
   * recurring jobs expire (recurring_expiry_ms) so that forgotten ones stop; a team that means to keep a
   * schedule renews it, or makes it a scheduled trigger, which never expires.
   */
  app.post('/:id/renew', requires('operate'), async (c) => {
    const job = await own(c.req.param('id'));
    if (!job.recurring) {
      throw new HttpError(409, 'conflict', `job ${job.id} is a one-shot: it has no expiry to renew`);
    }
    const now = clock.now();
    const renewed = await store.renewJob(
      job.id,
      now + config.scheduler.recurring_expiry_ms,
      c.get('identity').identity,
      now,
    );
    if (!renewed) throw notFound('job', job.id);
    deps.scheduler.kick();
    return c.json(presentJob(renewed));
  });

  return app;
}
