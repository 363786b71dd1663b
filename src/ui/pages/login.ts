import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { verifyToken } from '../../auth/tokens.js';
import { field, readForm } from '../form.js';
import { safeNext } from '../guard.js';
import { isHttps, sameOrigin } from '../headers.js';
import { html } from '../html.js';
import { alertBox, csrfField, page } from '../layout.js';
import {
  checkCsrf,
  csrfToken,
  LOGIN_COOKIE,
  LOGIN_NONCE_TTL_S,
  newLoginNonce,
  newSession,
  SESSION_COOKIE,
  SESSION_TTL_MS,
} from '../session.js';
import type { UiContext } from './page-context.js';

const NONCE = /^[A-Za-z0-9_-]{24}$/;
/** Expired sessions deleted per sign-in: more than sign-ins add, so the table stays small. */
const PRUNE_BATCH = 100;

function loginPage(csrf: string, next: string, error?: string): string {
  return page({
    title: 'Sign in',
    body: html`<h1>Sign in</h1>
${alertBox(error)}
<form method="post" action="/ui/login" class="login">
  ${csrfField(csrf)}
  <input type="hidden" name="next" value="${next}">
  <label for="token">API token</label>
  <input type="password" id="token" name="token" required autocomplete="off" spellcheck="false" aria-describedby="token-hint">
  <p id="token-hint" class="hint">A drydock bearer token (ddk_…). It is checked once; the browser keeps only a signed session for up to 12 hours, and signing out ends it.</p>
  <button type="submit">Sign in</button>
</form>`,
  });
}

/**
 * Login and logout. The login form is bound to the browser that loaded it by a nonce cookie, so that
 * another site cannot sign a visitor in under its own token (login CSRF).
 */
export function loginRoutes({ app, deps, guard, secret }: UiContext): void {
  const cookieBase = (https: boolean) =>
    ({ path: '/ui', httpOnly: true, sameSite: 'Strict', secure: https }) as const;

  app.get('/login', async (c) => {
    const existing = getCookie(c, LOGIN_COOKIE);
    const nonce = existing && NONCE.test(existing) ? existing : newLoginNonce();
    setCookie(c, LOGIN_COOKIE, nonce, { ...cookieBase(isHttps(c)), maxAge: LOGIN_NONCE_TTL_S });
    const csrf = csrfToken(await secret.get(), `login:${nonce}`);
    return c.html(loginPage(csrf, safeNext(c.req.query('next'))));
  });

  app.post('/login', async (c) => {
    if (!sameOrigin(c)) return c.html(loginPage('', '/ui', 'Cross-site sign-in refused.'), 403);
    const key = await secret.get();
    const form = await readForm(c);
    const nonce = getCookie(c, LOGIN_COOKIE);
    if (!nonce || !NONCE.test(nonce) || !checkCsrf(key, `login:${nonce}`, field(form, 'csrf'))) {
      return c.html(
        loginPage('', '/ui', 'The sign-in form expired or was not ours. Load the sign-in page again.'),
        403,
      );
    }
    const next = safeNext(field(form, 'next'));
    const identity = await verifyToken(deps.store, (field(form, 'token') ?? '').trim());
    if (!identity) {
      return c.html(
        loginPage(csrfToken(key, `login:${nonce}`), next, 'That token is not valid or was revoked.'),
        401,
      );
    }
    const now = deps.clock.now();
    // Sessions that ended stay until they expire; each sign-in clears a bounded batch of expired ones.
    await deps.store.pruneUiSessions(now, PRUNE_BATCH);
    const { value, record } = newSession(key, identity, now);
    await deps.store.createUiSession(record);
    setCookie(c, SESSION_COOKIE, value, { ...cookieBase(isHttps(c)), maxAge: SESSION_TTL_MS / 1000 });
    deleteCookie(c, LOGIN_COOKIE, cookieBase(isHttps(c)));
    deps.logger.info({ identity: identity.identity, role: identity.role }, 'ui: signed in');
    return c.redirect(next, 303);
  });

  app.post('/logout', guard, async (c) => {
    // Revoked in the store first: a copy of the cookie must not outlive the sign-out.
    await deps.store.revokeUiSession(c.get('session'), deps.clock.now());
    deleteCookie(c, SESSION_COOKIE, cookieBase(isHttps(c)));
    return c.redirect('/ui/login', 303);
  });
}
