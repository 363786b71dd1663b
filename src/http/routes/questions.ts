import { Hono } from 'hono';
import { requires } from '../auth.js';
import { jsonBody, query } from '../body.js';
import { answerBody, questionListQuery } from '../contract/index.js';
import type { AppDeps, Env } from '../deps.js';
import { notFound } from '../errors.js';
import { presentQuestion } from '../present.js';

export function questionRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();

  app.get('/', async (c) => {
    const q = query(c, questionListQuery);
    const items = await deps.store.listQuestions({ status: q.status, runId: q.run_id, limit: q.limit });
    return c.json({ items: items.map(presentQuestion) });
  });

  app.get('/:id', async (c) => {
    const q = await deps.store.getQuestion(c.req.param('id'));
    if (!q) throw notFound('question', c.req.param('id'));
    return c.json(presentQuestion(q));
  });

  app.post('/:id/answers', requires('decide'), async (c) => {
    const body = await jsonBody(c, answerBody);
    const q = await deps.runs.answer(c.req.param('id'), body.answers, c.get('identity').identity);
    return c.json(presentQuestion(q));
  });

  return app;
}
