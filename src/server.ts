import type { Hono } from 'hono';
import { createApi } from './http/app.js';
import type { AppDeps, Env } from './http/deps.js';
import type { Services } from './services.js';
import { uiRoutes } from './ui/routes.js';

/**
 * The whole HTTP surface: the API (/v1 with /webhooks, /healthz, /readyz, /metrics, /openapi.json, built by
 * src/http/app.ts) and the approver web pages (/ui, src/ui/routes.ts), side by side.
 *
 * Direction of imports: this file sits above both. `ui` may import small shared pieces of `http` (the
 * dependencies `http/deps.ts`, the presenters of `http/present.ts`, the tool decision rule of
 * `http/routes/tool-approvals.ts`), one way only: nothing in `http` imports `ui`, and `ui` never imports
 * `http/app.ts`.
 */
export function createApp(deps: AppDeps): Hono<Env> {
  return createApi(deps, (app) => {
    app.route('/ui', uiRoutes(deps));
  });
}

/** What the HTTP surface is given from the composition root (src/services.ts). */
export function appDeps(services: Services): AppDeps {
  const { store, clock, config, logger, scheduler, events, runs, plans, triggers, metrics, delivery } =
    services;
  const { sessions, jobs, triggerAdmin } = services;
  return {
    store,
    clock,
    config,
    logger,
    scheduler,
    events,
    runs,
    plans,
    triggers,
    sessions,
    jobs,
    triggerAdmin,
    hidden: services.hidden,
    metrics,
    ...(services.sandbox ? { sandbox: services.sandbox } : {}),
    modelConfigured: services.modelConfigured,
    replica: services.replica,
    submitRun: services.submitRun,
    delivery,
  };
}
