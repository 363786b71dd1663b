import MarkdownIt from 'markdown-it';
import { raw, type SafeHtml } from './html.js';

// Plans are model output: untrusted. Raw HTML is escaped (html: false), bare URLs are not turned into
// links, and a link or image is only made when its target is http(s), mailto or relative.

const SCHEME = /^([a-z][a-z0-9+.-]*):/;
const ALLOWED_SCHEMES = new Set(['http', 'https', 'mailto']);

/** True for http:, https:, mailto: and relative URLs; false for javascript:, data:, vbscript: and the rest. */
export function isAllowedLink(url: string): boolean {
  // Browsers ignore control characters and whitespace inside a scheme; look at the URL the way they do,
  // both as written and percent-decoded, and refuse when either reads as a scheme we do not allow.
  for (const form of [url, decodeOrSame(url)]) {
    const probe = form.replace(/[\p{Cc}\s]+/gu, '').toLowerCase();
    const m = SCHEME.exec(probe);
    if (m && !ALLOWED_SCHEMES.has(m[1]!)) return false;
  }
  return true;
}

function decodeOrSame(url: string): string {
  try {
    return decodeURIComponent(url);
  } catch {
    return url;
  }
}

const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
md.validateLink = isAllowedLink;

const renderLinkOpen = md.renderer.rules.link_open;
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx]!.attrSet('rel', 'noopener noreferrer nofollow');
  return renderLinkOpen
    ? renderLinkOpen(tokens, idx, options, env, self)
    : self.renderToken(tokens, idx, options);
};

/** Renders untrusted markdown to sanitized HTML. */
export function renderMarkdown(markdown: string): SafeHtml {
  return raw(md.render(markdown));
}
