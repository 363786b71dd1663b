import { Hono } from 'hono';
import { AUTO_MODE_KEY, breakerState } from '../../agent/breaker.js';
import { requires } from '../auth.js';
import { jsonBody } from '../body.js';
import { autoModeBody } from '../contract/index.js';
import type { AppDeps, Env } from '../deps.js';

export function adminRoutes(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();
  const state = async () => {
    const s = await breakerState(deps.store, deps.config, deps.clock.now());
    return {
      enabled: s.autoModeEnabled,
      breaker: {
        closed: s.closed,
        reason: s.reason,
        recent_executions: s.recentExecutions,
        recent_failures: s.recentFailures,
      },
    };
  };

  /** The switch for unattended execution (`edits` and `auto` modes), and the breaker's view. */
  app.get('/auto-mode', async (c) => c.json(await state()));
  app.post('/auto-mode', requires('admin'), async (c) => {
    const body = await jsonBody(c, autoModeBody);
    await deps.store.setState(AUTO_MODE_KEY, body.enabled ? 'on' : 'off');
    deps.logger.info({ enabled: body.enabled, by: c.get('identity').identity }, 'auto mode switched');
    return c.json(await state());
  });
  return app;
}
