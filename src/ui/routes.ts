import { Hono, type MiddlewareHandler } from 'hono';
import type { AppDeps } from '../http/deps.js';
import { StoreUnavailableError } from '../store/store.js';
import { APP_CSS, APP_JS } from './assets.js';
import type { UiEnv } from './env.js';
import { refusal, requireSession } from './guard.js';
import { securityHeaders } from './headers.js';
import { loginRoutes } from './pages/login.js';
import type { UiContext } from './pages/page-context.js';
import { planRoutes } from './pages/plan.js';
import { questionRoutes } from './pages/questions.js';
import { queueRoutes } from './pages/queue.js';
import { runRoutes } from './pages/run.js';
import { runEventRoutes } from './pages/run-events.js';
import { scheduleRoutes } from './pages/schedules.js';
import { toolApprovalRoutes } from './pages/tool-approvals.js';
import { usageRoutes } from './pages/usage.js';
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
  app.use(formBodies(deps.config.server.body_limit_bytes));
  app.onError((err, c) => {
    if (err instanceof StoreUnavailableError) {
      // The store logs an outage once, at its start and its end; each request it refused only at debug.
      deps.logger.debug(
        { err: err.cause, method: c.req.method, path: c.req.path },
        'ui: database unreachable',
      );
      c.header('Retry-After', '5');
      return c.html(refusal('Try again shortly', 'The database cannot be reached right now.'), 503);
    }
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
  usageRoutes(ctx);
  runEventRoutes(ctx);
  scheduleRoutes(ctx);

  app.all('*', (c) => c.html(refusal('Not found', `There is no page at ${c.req.path}.`), 404));
  return app;
}

/** The sign-in form holds a token and a nonce: a few hundred bytes. */
const LOGIN_FORM_LIMIT = 4_096;

/**
 * Bounds what a form post may make the daemon hold, before anyone is signed in. Browsers send forms with a
 * Content-Length: a body without one is refused (411) rather than buffered to find its size, and one over the
 * limit is refused from the header alone (413). The body itself is read only by the route, which for every
 * page but the sign-in form is after the session check.
 */
function formBodies(limit: number): MiddlewareHandler<UiEnv> {
  return async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const length = c.req.header('content-length');
    if (length === undefined || c.req.header('transfer-encoding') !== undefined) {
      if (!c.req.raw.body) return next();
      return c.html(refusal('Length required', 'The form was sent without its length.'), 411);
    }
    const max = c.req.path === '/ui/login' ? Math.min(limit, LOGIN_FORM_LIMIT) : limit;
    const n = Number(length);
    if (!Number.isSafeInteger(n) || n < 0)
      return c.html(refusal('Bad request', 'Invalid Content-Length.'), 400);
    if (n > max) return c.html(refusal('Too large', 'The form was too large.'), 413);
    return next();
  };
}
