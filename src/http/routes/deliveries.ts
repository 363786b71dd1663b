import { Hono } from 'hono';
import { query } from '../body.js';
import { webhookDeliveryListQuery } from '../contract/index.js';
import type { AppDeps, Env } from '../deps.js';
import { HttpError, notFound } from '../errors.js';
import { presentWebhookDelivery } from '../present.js';

/**
 * Webhook deliveries and fires, newest first, with what became of them. A webhook is answered once it is
 * recorded (`queued`); this is where its outcome and runs show once the inbox processed it.
 */
export function deliveryRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();

  app.get('/', async (c) => {
    const q = query(c, webhookDeliveryListQuery);
    if (q.before && !(await deps.store.getWebhookDelivery(q.before))) {
      throw new HttpError(400, 'bad_cursor', `before: no delivery ${q.before}`);
    }
    const items = await deps.store.listWebhookDeliveries({
      outcome: q.outcome,
      triggerId: q.trigger_id,
      before: q.before,
      limit: q.limit,
    });
    return c.json({
      items: items.map(presentWebhookDelivery),
      next_before: items.length === q.limit ? items.at(-1)!.id : null,
    });
  });

  app.get('/:id', async (c) => {
    const d = await deps.store.getWebhookDelivery(c.req.param('id'));
    if (!d) throw notFound('delivery', c.req.param('id'));
    return c.json(presentWebhookDelivery(d));
  });

  return app;
}
