import { Hono } from 'hono';
import { modelLifecycleWarnings } from '../models/catalogue.js';
import { packageVersion } from '../paths.js';
import { authenticate } from './auth.js';
import { BodyBudget } from './body-budget.js';
import { bodyCap } from './body-cap.js';
import { applyJsonSchema } from './contract/apply.js';
import type { AppDeps, Env } from './deps.js';
import { errorResponse, HttpError } from './errors.js';
import { openApiDocument } from './openapi.js';
import { adminRoutes } from './routes/admin.js';
import { deliveryRoutes } from './routes/deliveries.js';
import { jobRoutes } from './routes/jobs.js';
import { notificationRoutes } from './routes/notifications.js';
import { planRoutes } from './routes/plans.js';
import { questionRoutes } from './routes/questions.js';
import { runRoutes } from './routes/runs.js';
import { sessionRoutes } from './routes/sessions.js';
import { toolApprovalRoutes } from './routes/tool-approvals.js';
import { fireRoute, triggerRoutes } from './routes/triggers.js';
import { usageRoutes } from './routes/usage.js';
import { webhookRoutes } from './routes/webhooks.js';

/**
 * Builds the HTTP application from its dependencies: /v1, /webhooks, /healthz, /readyz, /metrics,
 * /openapi.json and /v1/schema/apply; `mountBeside` adds routes next to them, behind the same error handling and metrics
 * (src/server.ts mounts the web pages at /ui this way, so this folder never imports them). No globals,
 * nothing happens at import.
 */
export function createApi(deps: AppDeps, mountBeside: (app: Hono<Env>) => void = () => {}): Hono<Env> {
  const app = new Hono<Env>();
  app.onError((err, c) => errorResponse(err, c, deps.logger));
  const metrics = deps.metrics;
  if (metrics) {
    // Latency by matched route pattern (not raw path), so ids do not explode the label set.
    app.use(async (c, next) => {
      const started = performance.now();
      await next();
      metrics.observeHttp(
        c.req.method,
        c.req.routePath || 'unmatched',
        c.res.status,
        (performance.now() - started) / 1000,
      );
    });
  }
  app.notFound((c) =>
    errorResponse(
      new HttpError(404, 'not_found', `no route for ${c.req.method} ${c.req.path}`),
      c,
      deps.logger,
    ),
  );

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  let openapi: Record<string, unknown> | null = null;
  app.get('/openapi.json', (c) => {
    openapi ??= openApiDocument(packageVersion());
    return c.json(openapi);
  });
  // The JSON Schema of `drydock apply`'s file, for editors (the same as schemas/drydock.schema.json).
  let applySchema: Record<string, unknown> | null = null;
  app.get('/v1/schema/apply', (c) => {
    applySchema ??= applyJsonSchema();
    return c.json(applySchema);
  });
  app.get('/readyz', async (c) => {
    const { body, ready } = await readiness(deps);
    return c.json(body, ready ? 200 : 503);
  });

  mountBeside(app);

  // Authenticated by their own secrets (a webhook signature, a trigger token), not by API tokens.
  const unauthenticated =
    deps.unauthenticatedBodies ?? new BodyBudget(deps.config.server.unauthenticated_body_budget_bytes);
  app.route('/webhooks', webhookRoutes(deps, unauthenticated));
  app.route('/v1/triggers', fireRoute(deps));

  // Prometheus scrapes with a bearer token like any API client (any role).
  app.get('/metrics', authenticate(deps.store), async (c) => {
    if (!metrics) throw new HttpError(404, 'not_found', 'metrics are not enabled');
    return c.body(await metrics.registry.metrics(), 200, { 'content-type': metrics.registry.contentType });
  });

  app.route('/v1', v1Routes(deps));
  return app;
}

/** What GET /readyz answers: the store's schema and the scheduler, with what serving depends on. */
async function readiness(deps: AppDeps): Promise<{ body: Record<string, unknown>; ready: boolean }> {
  const checks = { store: false, scheduler: deps.scheduler.isRunning };
  try {
    const v = await deps.store.schemaVersion();
    checks.store = v.current === v.latest;
  } catch {
    checks.store = false;
  }
  const ready = checks.store && checks.scheduler;
  // Where the execute phase's commands run: bwrap, off (unconfined) or unavailable (Bash refuses).
  const sandbox = deps.sandbox ? { sandbox: deps.sandbox.state } : {};
  // The daemon serves without a model key (plans, approvals and history stay readable), but runs fail.
  const model = {
    id: deps.config.anthropic.model,
    configured: deps.modelConfigured ?? deps.config.anthropic.api_key !== null,
  };
  const replica = deps.replica !== undefined ? { replica: deps.replica } : {};
  // Warnings leave the daemon ready: the default model retiring within 30 days, or retired since start.
  const warnings = modelLifecycleWarnings(deps.config, deps.config.anthropic.model, deps.clock.now());
  const body = {
    status: ready ? 'ready' : 'not_ready',
    checks,
    ...sandbox,
    model,
    ...replica,
    ...(warnings.length ? { warnings } : {}),
  };
  return { body, ready };
}

/** /v1: the API, every route behind an API token and the request body cap. */
function v1Routes(deps: AppDeps): Hono<Env> {
  const api = new Hono<Env>();
  api.use(authenticate(deps.store));
  api.use(bodyCap(deps.config.server.body_limit_bytes, 'request body'));
  api.route('/sessions', sessionRoutes(deps));
  api.route('/jobs', jobRoutes(deps));
  api.route('/runs', runRoutes(deps));
  api.route('/questions', questionRoutes(deps));
  api.route('/plans', planRoutes(deps));
  api.route('/tool-approvals', toolApprovalRoutes(deps));
  api.route('/admin', adminRoutes(deps));
  api.route('/triggers', triggerRoutes(deps));
  api.route('/deliveries', deliveryRoutes(deps));
  api.route('/notifications', notificationRoutes(deps));
  api.route('/usage', usageRoutes(deps));
  return api;
}
