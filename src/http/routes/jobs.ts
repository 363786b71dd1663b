import { Hono } from 'hono';
import { requires } from '../auth.js';
import { jsonBody } from '../body.js';
import { backfillSchema } from '../contract/index.js';
import type { AppDeps, Env } from '../deps.js';
import { iso, presentJob, presentRun, presentSlot } from '../present.js';

export function jobRoutes(deps: AppDeps): Hono<Env> {
  const { jobs } = deps;
  const app = new Hono<Env>();

  app.get('/:id', async (c) => c.json(presentJob(await jobs.get(c.req.param('id')))));

  app.get('/:id/slots', async (c) =>
    c.json({ items: (await jobs.slots(c.req.param('id'))).map(presentSlot) }),
  );

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
