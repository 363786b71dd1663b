import { Hono } from 'hono';
import { requires } from '../auth.js';
import { jsonBody, query } from '../body.js';
import { createJobSchema, createSessionSchema, listSessionsQuery } from '../contract/index.js';
import { noteDeprecatedNetwork } from '../deprecations.js';
import type { AppDeps, Env } from '../deps.js';
import { presentJob, presentSession } from '../present.js';
import { scheduleFields } from '../schedule-fields.js';

export function sessionRoutes(deps: AppDeps): Hono<Env> {
  const { store, sessions, jobs } = deps;
  const app = new Hono<Env>();

  app.post('/', requires('operate'), async (c) => {
    const body = await jsonBody(c, createSessionSchema);
    const session = await sessions.create({
      name: body.name,
      workspace: body.workspace,
      owner: c.get('identity').identity,
      defaults: body.defaults,
      limits: body.limits,
    });
    noteDeprecatedNetwork(deps.logger, body.defaults, `session ${session.id}`);
    return c.json(presentSession(session), 201);
  });

  app.get('/', async (c) => {
    const q = query(c, listSessionsQuery);
    const page = await store.listSessions({ status: q.status, limit: q.limit, cursor: q.cursor });
    return c.json({ items: page.items.map(presentSession), next_cursor: page.nextCursor });
  });

  app.get('/:id', async (c) => c.json(presentSession(await sessions.get(c.req.param('id')))));

  app.delete('/:id', requires('operate'), async (c) => {
    const closed = await sessions.close(c.req.param('id'));
    return c.json({ ...presentSession(closed.session), deleted_jobs: closed.deletedJobs });
  });

  app.post('/:id/jobs', requires('operate'), async (c) => {
    const body = await jsonBody(c, createJobSchema);
    const schedule = scheduleFields(body);
    const created = await jobs.create(c.req.param('id'), {
      name: body.name,
      cron: body.cron,
      timezone: body.timezone,
      prompt: body.prompt,
      recurring: body.recurring,
      approximate: schedule.approximate ?? false,
      overlap: schedule.overlap,
      jitterMaxSeconds: schedule.jitterMaxSeconds,
      options: body.options,
      createdBy: c.get('identity').identity,
      role: c.get('identity').role,
    });
    noteDeprecatedNetwork(deps.logger, body.options, `job ${created.id}`);
    return c.json(presentJob(created), 201);
  });

  app.get('/:id/jobs', async (c) => c.json({ items: (await jobs.list(c.req.param('id'))).map(presentJob) }));

  return app;
}
