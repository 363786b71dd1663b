import type { MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie } from 'hono/cookie';
import type { Identity } from '../auth/tokens.js';
import type { Clock } from '../clock.js';
import type { StateStore } from '../store/store.js';
import type { UiEnv } from './env.js';
import { readForm } from './form.js';
import { sameOrigin } from './headers.js';
import { html } from './html.js';
import { page } from './layout.js';
import { checkCsrf, csrfToken, SESSION_COOKIE, sessionKey, type UiSecret } from './session.js';

/**
 * The identity behind a session: its row must be live in the store (neither revoked nor expired at `now`)
 * and its token still exist, unrevoked, under the same identity. When the token fails that, its sessions
 * are revoked on the spot, so their rows say what became of them whichever way the token was revoked.
 */
export async function sessionIdentity(store: StateStore, key: Buffer, now: number): Promise<Identity | null> {
  const session = await store.findUiSession(key, now);
  if (!session) return null;
  const record = await store.findToken(session.tokenId);
  if (!record || record.revokedAt !== null || record.identity !== session.identity) {
    await store.revokeTokenUiSessions(session.tokenId, now);
    return null;
  }
  return { tokenId: record.id, identity: record.identity, role: record.role };
}

/** A bare page for refusals (no navigation: the visitor may not be signed in). */
export function refusal(title: string, message: string): string {
  return page({
    title,
    body: html`<h1>${title}</h1><div class="alert error" role="alert"><p>${message}</p></div>
<p><a href="/ui">Back to the plan queue</a></p>`,
  });
}

const READS = new Set(['GET', 'HEAD']);

/**
 * Every /ui route but login and the static assets. A GET without a live session (unknown, signed out,
 * revoked, expired, or its token revoked) is sent to the login form; a POST gets 401. A POST must come
 * from our own origin and carry the session's CSRF token (403).
 */
export function requireSession(deps: {
  store: StateStore;
  clock: Clock;
  secret: UiSecret;
}): MiddlewareHandler<UiEnv> {
  return async (c, next) => {
    const write = !READS.has(c.req.method);
    if (write && !sameOrigin(c)) return c.html(refusal('Refused', 'Cross-site request refused.'), 403);
    const secret = await deps.secret.get();
    const value = getCookie(c, SESSION_COOKIE);
    const key = value ? sessionKey(secret, value) : null;
    const viewer = key ? await sessionIdentity(deps.store, key, deps.clock.now()) : null;
    if (!value || !key || !viewer) {
      if (value) deleteCookie(c, SESSION_COOKIE, { path: '/ui' });
      if (!write) return c.redirect(loginPath(c.req.path), 303);
      return c.html(refusal('Not signed in', 'Sign in again: your session ended.'), 401);
    }
    c.set('viewer', viewer);
    c.set('session', key);
    c.set('csrf', csrfToken(secret, value));
    if (write) {
      const form = await readForm(c);
      const presented = typeof form.csrf === 'string' ? form.csrf : undefined;
      if (!checkCsrf(secret, value, presented)) {
        return c.html(
          refusal('Refused', 'The form was stale or not ours (CSRF check failed). Reload the page.'),
          403,
        );
      }
      c.set('form', form);
    }
    await next();
  };
}

const RETURNABLE = /^\/ui(\/[A-Za-z0-9_-]+)*$/;

/** The login form, remembering where to return afterwards (only ever a /ui path of ours). */
export function loginPath(next: string): string {
  return RETURNABLE.test(next) && next !== '/ui' && !next.endsWith('/events')
    ? `/ui/login?next=${encodeURIComponent(next)}`
    : '/ui/login';
}

export function safeNext(next: string | undefined): string {
  return next && RETURNABLE.test(next) && !next.startsWith('/ui/login') ? next : '/ui';
}
