import { Webhooks } from '@octokit/webhooks';
import { Hono } from 'hono';
import { bodyCap } from '../body-cap.js';
import type { AppDeps, Env } from '../deps.js';
import { HttpError } from '../errors.js';

const DELIVERY = /^[A-Za-z0-9-]{1,100}$/;
const EVENT = /^[a-z_]{1,64}$/;

/**
 * POST /webhooks/github. The signature (X-Hub-Signature-256) is verified on the raw body before anything
 * parses it; every configured secret is tried, so secrets can be rotated. The delivery is recorded and
 * answered; what it starts is worked out by the trigger inbox (GET /v1/deliveries/:id tells the outcome).
 */
export function webhookRoutes(deps: AppDeps): Hono<Env> {
  const verifiers = deps.config.github.webhook_secrets.map((secret) => new Webhooks({ secret }));
  const app = new Hono<Env>();
  app.post('/github', bodyCap(deps.config.server.webhook_body_limit_bytes, 'webhook body'), async (c) => {
    // Read the (size-capped) body before answering anything: a reply sent while the client is still
    // uploading would make Node drop the connection instead of delivering the error.
    const raw = await c.req.text();
    const signature = c.req.header('x-hub-signature-256');
    if (!signature) throw new HttpError(401, 'unauthorized', 'missing X-Hub-Signature-256');
    const event = c.req.header('x-github-event');
    const delivery = c.req.header('x-github-delivery');
    if (!event || !EVENT.test(event))
      throw new HttpError(400, 'bad_request', 'missing or invalid X-GitHub-Event');
    if (!delivery || !DELIVERY.test(delivery))
      throw new HttpError(400, 'bad_request', 'missing or invalid X-GitHub-Delivery');
    if (!verifiers.length) {
      deps.logger.warn('webhook refused: no github.webhook_secrets configured');
      throw new HttpError(
        401,
        'unauthorized',
        'webhook signature cannot be verified: no secret is configured',
      );
    }
    let ok = false;
    for (const v of verifiers) {
      if (raw.length > 0 && (await v.verify(raw, signature).catch(() => false))) {
        ok = true;
        break;
      }
    }
    if (!ok) throw new HttpError(401, 'unauthorized', 'webhook signature does not match');
    let payload: unknown;
    try {
      payload = JSON.parse(raw);
    } catch {
      throw new HttpError(400, 'malformed_json', 'webhook body is not valid JSON');
    }
    const answer = await deps.triggers.receiveGithub(event, delivery, raw, payload);
    deps.logger.debug({ event, delivery, outcome: answer.body.outcome ?? 'pong' }, 'webhook received');
    return c.json(answer.body, answer.status);
  });
  return app;
}
