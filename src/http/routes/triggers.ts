import { Hono, type MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import type { CronJob, Trigger } from '../../domain/types.js';
import { upcomingSlots } from '../../scheduler/next-fire.js';
import { parseTriggerToken, secretMatches } from '../../triggers/tokens.js';
import { requires } from '../auth.js';
import { jsonBody, query } from '../body.js';
import { bodyCap } from '../body-cap.js';
import {
  createTriggerSchema,
  FIRE_TEXT_LIMIT,
  fireSchema,
  patchTriggerSchema,
  type TriggerJson,
  triggerDeliveriesQuery,
} from '../contract/index.js';
import { noteDeprecatedNetwork } from '../deprecations.js';
import type { AppDeps, Env } from '../deps.js';
import { HttpError } from '../errors.js';
import { iso, presentRun } from '../present.js';
import { scheduleFields } from '../schedule-fields.js';

/**
 * A trigger as the API shows it; a scheduled one with its schedule (from the job it fires through).
 * `defaultCap` is github.trigger_hourly_cap, which a cap equal to it is said to come from.
 */
export const presentTrigger = (t: Trigger, job: CronJob | null, defaultCap: number): TriggerJson => ({
  id: t.id,
  name: t.name,
  kind: t.kind,
  events: t.events,
  filters: t.filters,
  prompt: t.prompt,
  workspace: t.workspace,
  options: t.options,
  hourly_cap: t.hourlyCap,
  // A schedule trigger fires on its cron, never through the hourly cap (src/triggers/service.ts).
  hourly_cap_from: t.kind === 'schedule' ? 'none' : t.hourlyCap === defaultCap ? 'default' : 'trigger',
  limits: t.limits,
  enabled: t.enabled,
  created_by: t.createdBy,
  created_at: iso(t.createdAt),
  updated_at: iso(t.updatedAt),
  ...(t.kind === 'schedule'
    ? {
        schedule: job
          ? {
              cron: job.cron,
              timezone: job.timezone,
              approximate: job.approximate,
              overlap: job.overlap,
              jitter: { max_seconds: job.jitterMaxSeconds, approximate: job.approximate },
              job_id: job.id,
              session_id: job.sessionId,
              status: job.status,
              next_fire_at: iso(job.nextNominalAt),
              next_fire_jittered_at: iso(job.nextDueAt),
              next_fire_times: upcomingSlots(job, 3).map((t) => iso(t)),
              last_slot_at: iso(job.lastSlotAt),
              fire_count: job.fireCount,
            }
          : null,
      }
    : {}),
});

/** The fields a trigger's creation and change share, from the API's names to the service's. */
const triggerFields = (body: z.output<typeof patchTriggerSchema>) => ({
  name: body.name,
  events: body.events,
  filters: body.filters,
  workspace: body.workspace,
  options: body.options,
  hourlyCap: body.hourly_cap,
  limits: body.limits,
  cron: body.cron,
  timezone: body.timezone,
  ...scheduleFields(body),
});

/** Trigger management, under the bearer-authenticated /v1 API. */
export function triggerRoutes(deps: AppDeps): Hono<Env> {
  const { store, triggerAdmin: admin } = deps;
  const app = new Hono<Env>();

  const present = async (t: Trigger) =>
    presentTrigger(t, await admin.jobOf(t), deps.config.github.trigger_hourly_cap);

  app.post('/', requires('operate'), async (c) => {
    const body = await jsonBody(c, createTriggerSchema);
    const { trigger, token } = await admin.create({
      ...triggerFields(body),
      name: body.name,
      kind: body.kind,
      prompt: body.prompt,
      enabled: body.enabled ?? true,
      createdBy: c.get('identity').identity,
    });
    noteDeprecatedNetwork(deps.logger, body.options, `trigger ${trigger.id}`);
    // The token is shown this once; only its hash is kept.
    return c.json({ ...(await present(trigger)), ...(token ? { token } : {}) }, 201);
  });

  app.get('/', async (c) => {
    const items = [];
    for (const t of await store.listTriggers({})) items.push(await present(t));
    return c.json({ items });
  });

  app.get('/:id', async (c) => c.json(await present(await admin.get(c.req.param('id')))));

  app.get('/:id/deliveries', async (c) => {
    const t = await admin.get(c.req.param('id'));
    const q = query(c, triggerDeliveriesQuery);
    const fires = await store.listTriggerFires(t.id, q.limit);
    return c.json({
      items: fires.map((f) => ({
        id: f.delivery.id,
        source: f.delivery.source,
        event: f.delivery.event,
        // What this trigger made of the delivery, and the delivery's overall outcome across triggers.
        outcome: f.outcome,
        run_id: f.runId,
        delivery_outcome: f.delivery.outcome,
        detail: f.delivery.detail,
        subject: f.delivery.subject,
        received_at: iso(f.delivery.receivedAt),
      })),
    });
  });

  app.patch('/:id', requires('operate'), async (c) => {
    // A trigger's kind never changes: the change is checked against the one read here.
    const current = await admin.get(c.req.param('id'));
    const body = await jsonBody(c, patchTriggerSchema);
    const { trigger, token } = await admin.update(current, {
      ...triggerFields(body),
      prompt: body.prompt,
      enabled: body.enabled,
      rotateToken: body.rotate_token,
      role: c.get('identity').role,
    });
    noteDeprecatedNetwork(deps.logger, body.options, `trigger ${trigger.id}`);
    return c.json({ ...(await present(trigger)), ...(token ? { token } : {}) });
  });

  app.delete('/:id', requires('operate'), async (c) => {
    await admin.delete(c.req.param('id'));
    return c.body(null, 204);
  });

  return app;
}

/** The fire route's context: the trigger its token authenticated. */
type FireEnv = { Variables: { trigger: Trigger } };

/**
 * POST /v1/triggers/:id/fire, authenticated by the trigger's own token (not an API token), so it is mounted
 * before the /v1 API's bearer check. ORDER MATTERS: the token is checked before any of the body is read (the
 * size cap buffers a chunked body to count it), so an unauthenticated caller never has its body held.
 */
export function fireRoute(deps: AppDeps): Hono<FireEnv> {
  const app = new Hono<FireEnv>();
  const byToken: MiddlewareHandler<FireEnv> = async (c, next) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
    const parsed = m ? parseTriggerToken(m[1]!) : null;
    const trigger = parsed ? await deps.store.findTriggerByToken(parsed.tokenId) : null;
    // The same answer whether the token is unknown, wrong, or another trigger's.
    if (
      !parsed ||
      !trigger ||
      trigger.id !== c.req.param('id') ||
      !secretMatches(parsed.secret, trigger.tokenHash)
    ) {
      throw new HttpError(
        401,
        'unauthorized',
        "missing or invalid trigger token (Authorization: Bearer <the trigger's token>)",
      );
    }
    c.set('trigger', trigger);
    await next();
  };
  app.post('/:id/fire', byToken, bodyCap(FIRE_TEXT_LIMIT + 4096, 'a fire'), async (c) => {
    const trigger = c.get('trigger');
    if (!trigger.enabled) throw new HttpError(409, 'conflict', `trigger ${trigger.id} is disabled`);
    const body = await jsonBody(c, fireSchema);
    if (body.text !== undefined && Buffer.byteLength(body.text) > FIRE_TEXT_LIMIT) {
      throw new HttpError(413, 'payload_too_large', `text is over ${FIRE_TEXT_LIMIT} bytes`);
    }
    const out = await deps.triggers.fire(trigger, {
      idempotencyKey: body.idempotency_key,
      text: body.text,
    });
    return c.json(
      {
        delivery_id: out.delivery.id,
        duplicate: out.kind === 'existing',
        run: out.run ? presentRun(out.run) : null,
      },
      out.kind === 'created' ? 201 : 200,
    );
  });
  return app;
}
