import type { Identity } from '../auth/tokens.js';
import { html, type SafeHtml } from './html.js';

export type Section = 'queue' | 'questions' | 'tool-approvals' | 'schedules' | 'usage' | null;

export interface PageOptions {
  title: string;
  body: SafeHtml;
  /** Signed in: the navigation, who is signed in and the logout form. */
  viewer?: { identity: Identity; csrf: string; section: Section };
}

const NAV: [Exclude<Section, null>, string, string][] = [
  ['queue', '/ui', 'Plan queue'],
  ['questions', '/ui/questions', 'Questions'],
  ['tool-approvals', '/ui/tool-approvals', 'Tool approvals'],
  ['schedules', '/ui/schedules', 'Schedules'],
  ['usage', '/ui/usage', 'Usage'],
];

/** A whole document. No inline script or style anywhere: the CSP allows only /ui/app.js and /ui/app.css. */
export function page(o: PageOptions): string {
  const v = o.viewer;
  const header = v
    ? html`<header class="top">
  <p class="brand"><a href="/ui">drydock</a></p>
  <nav aria-label="Main">
    <ul>${NAV.map(
      ([key, href, label]) =>
        html`<li><a href="${href}"${key === v.section ? html` aria-current="page"` : ''}>${label}</a></li>`,
    )}</ul>
  </nav>
  <form class="logout" method="post" action="/ui/logout">
    <span>Signed in as <strong>${v.identity.identity}</strong> (${v.identity.role})</span>
    ${csrfField(v.csrf)}
    <button type="submit">Log out</button>
  </form>
</header>`
    : html`<header class="top"><p class="brand">drydock</p></header>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · drydock</title>
<link rel="stylesheet" href="/ui/app.css">
<script src="/ui/app.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to main content</a>
${header}
<main id="main" tabindex="-1">
${o.body}
</main>
</body>
</html>
`.value;
}

export function csrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${token}">`;
}

/** An error (role=alert) or a confirmation (role=status) at the top of a page. */
export function alertBox(error: string | undefined, notice?: string | undefined): SafeHtml {
  return html`${error ? html`<div class="alert error" role="alert"><p>${error}</p></div>` : ''}${
    notice ? html`<div class="alert notice" role="status"><p>${notice}</p></div>` : ''
  }`;
}

/** `/ui/<kind>/<id>` with the id encoded: ids are opaque. */
export function uiPath(kind: 'plans' | 'runs', id: string): string {
  return `/ui/${kind}/${encodeURIComponent(id)}`;
}

/**
 * A time, rendered in UTC; the page script (app.js) rewrites the text into the viewer's own zone and keeps
 * the UTC time in the title, shown on hover.
 */
export function time(t: number | null): SafeHtml {
  if (t === null) return html`—`;
  const iso = new Date(t).toISOString();
  const utc = iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  return html`<time datetime="${iso}" title="${utc}">${utc}</time>`;
}

/** A rough age: "45 s", "12 min", "3 h", "2 d". */
export function age(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86_400)} d`;
}

export function usd(n: number): string {
  return `$${n.toFixed(4)}`;
}
