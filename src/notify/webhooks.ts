import { createHash } from 'node:crypto';
import type { WebhookConfig } from '../config/schema.js';

/**
 * A webhook's key in the outbox: a hash of its URL, so that rows keep pointing at the same receiver across
 * restarts and reordered config, and the URL (often a credential itself) is never stored.
 */
export function webhookKey(url: string): string {
  return createHash('sha256').update(url).digest('hex').slice(0, 16);
}

/**
 * The URL as it may be shown (API, logs): scheme, host and port, and the first path segment; no userinfo,
 * query, fragment or deeper path, where credentials live (a Slack incoming webhook's URL is
 * https://hooks.slack.com/services/<secret path>, shown as https://hooks.slack.com/services/…).
 */
export function shownUrl(url: string): string {
  const u = new URL(url);
  const segments = u.pathname.split('/').filter(Boolean);
  const first = segments[0] ? `/${segments[0]}` : '';
  return `${u.protocol}//${u.host}${first}${segments.length > 1 || u.search || u.hash ? '/…' : ''}`;
}

/** The webhooks that want `event`. */
export function subscribers(hooks: readonly WebhookConfig[], event: string): WebhookConfig[] {
  return hooks.filter((h) => (h.events as readonly string[]).includes(event));
}

/** A link to a page of the web UI: absolute under server.public_url, else the path alone. */
export function uiLink(publicUrl: string | null, path: string): string {
  return publicUrl ? `${publicUrl.replace(/\/+$/, '')}${path}` : path;
}
