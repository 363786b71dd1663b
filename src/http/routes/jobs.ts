import { Hono } from 'hono';
import { requires } from '../auth.js';
import { jsonBody, query } from '../body.js';
import { backfillSchema, listJobsQuery, patchJobSchema } from '../contract/index.js';
import { noteDeprecatedNetwork } from '../deprecations.js';
import type { AppDeps, Env } from '../deps.js';
import { iso, presentJob, presentRun, presentSlot } from '../present.js';
import { scheduleFields } from '../schedule-fields.js';

export function jobRoutes(deps: AppDeps): Hono<Env> {
  const { jobs } = deps;
  const app = new Hono<Env>();

  // Every caller reads every job, as every caller reads every session and its jobs (a role that may read
  // may read all); pausing, resuming and running stay with operators.
  app.get('/', async (c) => {
    const q = query(c, listJobsQuery);
    const page = await jobs.page({
      sessionId: q.session_id,
      triggerId: q.trigger_id,
      enabled: q.enabled,
      expiringBefore: q.expiring_before === undefined ? undefined : Date.parse(q.expiring_before),
      limit: q.limit,
      cursor: q.cursor,
    });
    return c.json({ items: page.items.map(presentJob), next_cursor: page.nextCursor });
  });

  app.get('/:id', async (c) => c.json(presentJob(await jobs.get(c.req.param('id')))));

  app.get('/:id/slots', async (c) =>
    c.json({ items: (await jobs.slots(c.req.param('id'))).map(presentSlot) }),
  );

  /** A new definition for a session's job (see Jobs.update). */
  app.patch('/:id', requires('operate'), async (c) => {
    const body = await jsonBody(c, patchJobSchema);
    const { jitter: _asked, ...fields } = body;
    const schedule = scheduleFields(body);
    const updated = await jobs.update(c.req.param('id'), {
      ...fields,
      approximate: schedule.approximate,
      overlap: schedule.overlap,
      jitterMaxSeconds: schedule.jitterMaxSeconds,
      role: c.get('identity').role,
    });
    noteDeprecatedNetwork(deps.logger, body.options, `job ${updated.id}`);
    return c.json(presentJob(updated));
  });

  app.delete('/:id', requires('operate'), async (c) => {
    await jobs.delete(c.req.param('id'));
    return c.body(null, 204);
  });

  app.post('/:id/pause', requires('operate'), async (c) =>
    c.json(presentJob(await jobs.pause(c.req.param('id')))),
  );

  app.post('/:id/resume', requires('operate'), async (c) =>
    c.json(presentJob(await jobs.resume(c.req.param('id')))),
  );

  app.post('/:id/run', requires('operate'), async (c) => {
    const run = await jobs.runNow(c.req.param('id'), c.get('identity').identity);
    return c.json(presentRun(run), 201);
  });

  /** The slots of a past range, fired once each under the job's overlap policy (see Jobs.backfill). */
  app.post('/:id/backfill', requires('operate'), async (c) => {
    const body = await jsonBody(c, backfillSchema);
    const id = c.req.param('id');
    const slots = await jobs.backfill(id, { from: Date.parse(body.from), to: Date.parse(body.to) });
    return c.json({
      job_id: id,
      items: slots.map((s) => ({ slot_at: iso(s.slotAt), outcome: s.outcome, run_id: s.runId })),
    });
  });

  /** Another expiry period from now (see Jobs.renew). */
  app.post('/:id/renew', requires('operate'), async (c) =>
    c.json(presentJob(await jobs.renew(c.req.param('id'), c.get('identity').identity))),
  );

  return app;
}
