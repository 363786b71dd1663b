import { Hono } from 'hono';
import { requires } from '../auth.js';
import { jsonBody, query } from '../body.js';
import { toolApprovalListQuery, toolDecisionBody } from '../contract/index.js';
import type { AppDeps, Env } from '../deps.js';
import { notFound } from '../errors.js';
import { presentToolApproval } from '../present.js';

export function toolApprovalRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();

  app.get('/', async (c) => {
    const q = query(c, toolApprovalListQuery);
    const items = await deps.store.listToolApprovals({ status: q.status, runId: q.run_id, limit: q.limit });
    return c.json({ items: items.map(presentToolApproval) });
  });

  app.get('/:id', async (c) => {
    const a = await deps.store.getToolApproval(c.req.param('id'));
    if (!a) throw notFound('tool approval', c.req.param('id'));
    return c.json(presentToolApproval(a));
  });

  app.post('/:id', requires('decide'), async (c) => {
    const body = await jsonBody(c, toolDecisionBody);
    const a = await deps.runs.decideToolApproval(
      c.req.param('id'),
      body.decision === 'allow',
      body.message ?? null,
      c.get('identity').identity,
    );
    return c.json(presentToolApproval(a));
  });

  return app;
}
