import type { Context, Hono, MiddlewareHandler } from 'hono';
import type { AppDeps } from '../../http/deps.js';
import type { UiEnv } from '../env.js';
import type { SafeHtml } from '../html.js';
import { page, type Section } from '../layout.js';
import type { UiSecret } from '../session.js';

/** What each page module gets: the daemon's dependencies, the session guard and the signing secret. */
export interface UiContext {
  app: Hono<UiEnv>;
  deps: AppDeps;
  guard: MiddlewareHandler<UiEnv>;
  secret: UiSecret;
}

/** A page for the signed-in viewer (navigation, logout form). */
export function signedIn(c: Context<UiEnv>, section: Section, title: string, body: SafeHtml): string {
  return page({ title, body, viewer: { identity: c.get('viewer'), csrf: c.get('csrf'), section } });
}
