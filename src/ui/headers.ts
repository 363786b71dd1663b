import type { Context, MiddlewareHandler } from 'hono';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** Security headers on every /ui response, error pages and redirects included. */
export function securityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    c.header('X-Frame-Options', 'DENY');
    // Pages show who is signed in and what waits for them: never cache them.
    if (!c.res.headers.has('cache-control')) c.header('Cache-Control', 'no-store');
  };
}

/**
 * False for a request a browser marks as coming from another site: `Sec-Fetch-Site` other than
 * same-origin (or none: typed by the user), or an `Origin` whose host is not ours. Requests without
 * either header (older browsers, scripts) pass here and still need the CSRF token.
 *
 * `Origin: null` is read as "no information", not as cross-site: under our own `Referrer-Policy:
 * no-referrer` Chromium sends exactly that on every same-origin form POST. Cross-site requests that carry
 * it (sandboxed frames) are still marked by Sec-Fetch-Site, and have neither the SameSite=Strict session
 * cookie nor the CSRF token.
 */
export function sameOrigin(c: Context): boolean {
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = c.req.header('origin');
  if (origin === undefined || origin === 'null') return true;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  return host !== '' && host === (c.req.header('host') ?? new URL(c.req.url).host);
}

/** True when the browser reached us over https (directly or, as a proxy reports it, before the proxy). */
export function isHttps(c: Context): boolean {
  return new URL(c.req.url).protocol === 'https:' || c.req.header('x-forwarded-proto') === 'https';
}
