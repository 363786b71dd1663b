import { Hono } from 'hono';
import { query } from '../body.js';
import type { AppDeps, Env } from '../deps.js';
import { notFound } from '../errors.js';
import { presentRun } from '../present.js';
import { listRunsQuery } from '../schemas.js';

export function runRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();

  app.get('/', async (c) => {
    const q = query(c, listRunsQuery);
    const page = await deps.store.listRuns({
      sessionId: q.session_id,
      jobId: q.job_id,
      status: q.status,
      limit: q.limit,
      cursor: q.cursor,
    });
    return c.json({ items: page.items.map(presentRun), next_cursor: page.nextCursor });
  });

  app.get('/:id', async (c) => {
    const run = await deps.store.getRun(c.req.param('id'));
    if (!run) throw notFound('run', c.req.param('id'));
    return c.json(presentRun(run));
  });

  return app;
}
