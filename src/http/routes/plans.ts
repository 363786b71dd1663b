import { Hono } from 'hono';
import type { AppDeps, Env } from '../deps.js';
import { notFound } from '../errors.js';
import { presentPlan } from '../present.js';

export function planRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();
  app.get('/:id', async (c) => {
    const plan = await deps.store.getPlan(c.req.param('id'));
    if (!plan) throw notFound('plan', c.req.param('id'));
    return c.json(presentPlan(plan));
  });
  return app;
}
