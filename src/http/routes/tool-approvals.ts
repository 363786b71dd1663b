import { Hono } from 'hono';
import { QuestionError } from '../../runs/service.js';
import { requires } from '../auth.js';
import { jsonBody, query } from '../body.js';
import { toolApprovalListQuery, toolDecisionBody } from '../contract/index.js';
import type { AppDeps, Env } from '../deps.js';
import { HttpError, notFound } from '../errors.js';
import { presentToolApproval } from '../present.js';

/** 404 unknown, 403 self-approval, 409 already decided. */
export function toolDecisionStatus(err: QuestionError): 403 | 404 | 409 {
  if (err.kind === 'not_found') return 404;
  return err.kind === 'self_approval' ? 403 : 409;
}

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
    try {
      const a = await deps.runs.decideToolApproval(
        c.req.param('id'),
        body.decision === 'allow',
        body.message ?? null,
        c.get('identity').identity,
      );
      return c.json(presentToolApproval(a));
    } catch (err) {
      if (!(err instanceof QuestionError)) throw err;
      throw new HttpError(toolDecisionStatus(err), err.kind, err.message);
    }
  });

  return app;
}
