import { describe, expect, it } from 'vitest';
import { escapeHtml, html, raw } from '../../src/ui/html.js';
import { isAllowedLink, renderMarkdown } from '../../src/ui/markdown.js';

describe('escapeHtml and the html template', () => {
  it('escapes the five characters that matter in text and quoted attributes', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });

  it('escapes interpolations by default, nests templates, and prints nothing for false/null/undefined', () => {
    const name = '<img src=x onerror=alert(1)>';
    const out = html`<p title="${name}">${name}${false}${null}${undefined}${[html`<b>${'&'}</b>`, '<i>']}</p>`;
    expect(out.value).toBe(
      '<p title="&lt;img src=x onerror=alert(1)&gt;">&lt;img src=x onerror=alert(1)&gt;<b>&amp;</b>&lt;i&gt;</p>',
    );
  });

  it('passes raw() through untouched (kept for sanitized markdown)', () => {
    expect(html`<div>${raw('<em>ok</em>')}</div>`.value).toBe('<div><em>ok</em></div>');
  });
});

describe('markdown rendering of untrusted plans', () => {
  const attack = [
    '# Plan',
    '',
    '<script>alert(1)</script>',
    '',
    '[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) [z](java&#09;script:alert(1)) [w](javascript&#58;alert(1))',
    '',
    '[d](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) [v](vbscript:msgbox(1)) [f](file:///etc/passwd)',
    '',
    '<img src=x onerror=alert(1)>',
    '',
    '![i](javascript:alert(1)) ![j](data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=)',
    '',
    '<a href="javascript:alert(1)">raw</a> <div onmouseover="alert(1)">hover</div>',
    '',
    'Bare https://example.com/x is not linkified.',
  ].join('\n');

  it('leaves no script, no javascript: or data: link and no event-handler attribute', () => {
    const out = renderMarkdown(attack).value;
    expect(out).not.toMatch(/<script/i);
    expect(out).not.toMatch(/href="\s*(javascript|vbscript|data|file):/i);
    expect(out).not.toMatch(/src="\s*(javascript|data):/i);
    expect(out).not.toMatch(/<img/i);
    expect(out).not.toMatch(/<[a-z][^>]*\son[a-z]+=/i); // an event handler inside a real tag
    expect(out).not.toMatch(/<a /i); // none of the links above is allowed
    // The raw HTML is shown as text, so a reviewer sees what the model wrote.
    expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(out).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(out).toContain('<h1>Plan</h1>');
    expect(out).toContain('Bare https://example.com/x is not linkified.');
  });

  it('keeps http(s), mailto and relative links, with rel="noopener noreferrer nofollow"', () => {
    const out = renderMarkdown(
      '[a](https://example.com/a?b=1) [b](http://example.com) [c](mailto:x@example.com) [d](/ui/plans/p1) [e](../docs/x.md) [f](#top)',
    ).value;
    for (const href of [
      'https://example.com/a?b=1',
      'http://example.com',
      'mailto:x@example.com',
      '/ui/plans/p1',
      '../docs/x.md',
      '#top',
    ]) {
      expect(out).toContain(`href="${href}" rel="noopener noreferrer nofollow"`);
    }
  });

  it('link validator: schemes other than http, https, mailto are refused however they are spelled', () => {
    for (const bad of [
      'javascript:alert(1)',
      ' JAVASCRIPT:alert(1)',
      'java\tscript:alert(1)',
      'java%09script:alert(1)',
      'javascript%3Aalert(1)',
      'data:text/html,x',
      'vbscript:x',
      'file:///etc/passwd',
      'ftp://example.com',
    ]) {
      expect(isAllowedLink(bad), bad).toBe(false);
    }
    for (const good of [
      'https://x.test',
      'HTTP://x.test',
      'mailto:a@b.c',
      '/a/b',
      'a/b:c',
      '?q=1',
      '#h',
      '//x.test/y',
    ]) {
      expect(isAllowedLink(good), good).toBe(true);
    }
  });
});
