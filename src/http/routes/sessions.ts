import { Hono } from 'hono';
import { newId } from '../../ids.js';
import { planJob } from '../../scheduler/plan-job.js';
import { requires } from '../auth.js';
import { jsonBody, query, runOptions, scheduleZone, workspaceDir } from '../body.js';
import { createJobSchema, createSessionSchema, listSessionsQuery } from '../contract/index.js';
import type { AppDeps, Env } from '../deps.js';
import { HttpError, notFound } from '../errors.js';
import { presentJob, presentSession } from '../present.js';

export function sessionRoutes(deps: AppDeps): Hono<Env> {
  const { store, clock, config } = deps;
  const app = new Hono<Env>();

  app.post('/', requires('operate'), async (c) => {
    const body = await jsonBody(c, createSessionSchema);
    const workspace = await workspaceDir(body.workspace);
    const id = newId('ses');
    const session = await store.createSession({
      id,
      name: body.name ?? id,
      workspace,
      owner: c.get('identity').identity,
      defaults: runOptions(deps.config, body.defaults),
      createdAt: clock.now(),
    });
    return c.json(presentSession(session), 201);
  });

  app.get('/', async (c) => {
    const q = query(c, listSessionsQuery);
    const page = await store.listSessions({ status: q.status, limit: q.limit, cursor: q.cursor });
    return c.json({ items: page.items.map(presentSession), next_cursor: page.nextCursor });
  });

  app.get('/:id', async (c) => {
    const session = await store.getSession(c.req.param('id'));
    if (!session) throw notFound('session', c.req.param('id'));
    return c.json(presentSession(session));
  });

  app.delete('/:id', requires('operate'), async (c) => {
    const scoped = await store.getSession(c.req.param('id'));
    if (scoped?.scopeKey?.startsWith('schedule:')) {
      throw new HttpError(
        409,
        'managed_by_trigger',
        `session ${scoped.id} belongs to schedule trigger ${scoped.scopeKey.slice('schedule:'.length)}: delete the trigger instead`,
      );
    }
    const closed = await store.closeSession(c.req.param('id'), clock.now());
    if (!closed) throw notFound('session', c.req.param('id'));
    deps.scheduler.kick();
    return c.json({ ...presentSession(closed.session), deleted_jobs: closed.deletedJobs });
  });

  app.post('/:id/jobs', requires('operate'), async (c) => {
    const sessionId = c.req.param('id');
    const body = await jsonBody(c, createJobSchema);
    const session = await store.getSession(sessionId);
    if (!session) throw notFound('session', sessionId);
    const timezone = scheduleZone(body.timezone ?? config.timezone);
    const job = planJob(
      {
        id: newId('job'),
        sessionId,
        cron: body.cron,
        timezone,
        prompt: body.prompt,
        recurring: body.recurring,
        approximate: body.approximate,
        options: runOptions(deps.config, body.options),
        createdBy: c.get('identity').identity,
      },
      clock.now(),
      config,
    );
    const created = await store.createJob(job, config.scheduler.max_jobs_per_session);
    deps.scheduler.kick();
    return c.json(presentJob(created), 201);
  });

  app.get('/:id/jobs', async (c) => {
    const sessionId = c.req.param('id');
    if (!(await store.getSession(sessionId))) throw notFound('session', sessionId);
    return c.json({ items: (await store.listJobs(sessionId)).map(presentJob) });
  });

  return app;
}
