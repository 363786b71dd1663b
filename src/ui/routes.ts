import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AppDeps } from '../http/deps.js';
import { APP_CSS, APP_JS } from './assets.js';
import type { UiEnv } from './env.js';
import { refusal, requireSession } from './guard.js';
import { securityHeaders } from './headers.js';
import type { UiContext } from './pages/context.js';
import { loginRoutes } from './pages/login.js';
import { planRoutes } from './pages/plan.js';
import { questionRoutes } from './pages/questions.js';
import { queueRoutes } from './pages/queue.js';
import { runRoutes } from './pages/run.js';
import { runEventRoutes } from './pages/run-events.js';
import { toolApprovalRoutes } from './pages/tool-approvals.js';
import { UiSecret } from './session.js';

/**
 * The approver web page, mounted at /ui outside the bearer-authenticated /v1 API: server-rendered HTML,
 * server-side sessions behind a signed cookie, CSRF tokens on every form, one script and one stylesheet.
 * Each route other than login and the assets carries the session guard explicitly.
 */
export function uiRoutes(deps: AppDeps): Hono<UiEnv> {
  const app = new Hono<UiEnv>();
  const secret = new UiSecret(deps.store);
  const guard = requireSession({ store: deps.store, clock: deps.clock, secret });

  app.use(securityHeaders());
  app.use(
    bodyLimit({
      maxSize: deps.config.server.body_limit_bytes,
      onError: (c) => c.html(refusal('Too large', 'The form was too large.'), 413),
    }),
  );
  app.onError((err, c) => {
    deps.logger.error({ err, method: c.req.method, path: c.req.path }, 'ui: unhandled error');
    return c.html(refusal('Something went wrong', 'The page could not be shown; the error was logged.'), 500);
  });

  const asset = (body: string, type: string) =>
    app.get(type === 'js' ? '/app.js' : '/app.css', (c) => {
      c.header('Content-Type', type === 'js' ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
      c.header('Cache-Control', 'no-cache');
      return c.body(body);
    });
  asset(APP_JS, 'js');
  asset(APP_CSS, 'css');

  const ctx: UiContext = { app, deps, guard, secret };
  loginRoutes(ctx);
  queueRoutes(ctx);
  planRoutes(ctx);
  questionRoutes(ctx);
  toolApprovalRoutes(ctx);
  runRoutes(ctx);
  runEventRoutes(ctx);

  app.all('*', (c) => c.html(refusal('Not found', `There is no page at ${c.req.path}.`), 404));
  return app;
}
