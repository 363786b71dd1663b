import { Hono } from 'hono';
import type { WebhookDelivery } from '../../domain/types.js';
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
    const triggers = await triggersOfRuns(deps.store, items);
    return c.json({
      items: items.map((d) => presentWebhookDelivery(d, firedBy(d, triggers))),
      next_before: items.length === q.limit ? items.at(-1)!.id : null,
    });
  });

  app.get('/:id', async (c) => {
    const d = await deps.store.getWebhookDelivery(c.req.param('id'));
    if (!d) throw notFound('delivery', c.req.param('id'));
    return c.json(presentWebhookDelivery(d, firedBy(d, await triggersOfRuns(deps.store, [d]))));
  });

  return app;
}

/** The trigger each run of these deliveries was started by (runs no trigger started are left out). */
async function triggersOfRuns(
  store: AppDeps['store'],
  deliveries: WebhookDelivery[],
): Promise<Map<string, string>> {
  const ids = [...new Set(deliveries.flatMap((d) => d.runIds))];
  const runs = await Promise.all(ids.map((id) => store.getRun(id)));
  const triggers = new Map<string, string>();
  for (const run of runs) if (run?.triggerId) triggers.set(run.id, run.triggerId);
  return triggers;
}

/** The triggers that started a run for `d`, in the order of its runs, each once. */
const firedBy = (d: WebhookDelivery, triggers: Map<string, string>): string[] => [
  ...new Set(d.runIds.flatMap((id) => triggers.get(id) ?? [])),
];
