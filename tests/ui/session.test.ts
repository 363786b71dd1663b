import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { issueToken } from '../../src/auth/tokens.js';
import { CONTENT_SECURITY_POLICY } from '../../src/ui/headers.js';
import { createHarness, type Harness } from '../support/harness.js';
import { cookieOf, csrfOf, seedPlan, signIn, ui } from './helpers.js';

let h: Harness;
beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  await h.close();
});

const EXPECTED_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** The id part of a `ddk_<id>.<secret>` token. */
const tokenIdOf = (token: string) => token.slice('ddk_'.length).split('.')[0]!;

function sessionRows(tokenId: string): Record<string, any>[] {
  return h.store.db
    .prepare('SELECT * FROM ui_sessions WHERE token_id = ? ORDER BY created_at, id_hash')
    .all(tokenId) as Record<string, any>[];
}

function expectSecurityHeaders(headers: Headers) {
  expect(headers.get('content-security-policy')).toBe(EXPECTED_CSP);
  expect(headers.get('x-content-type-options')).toBe('nosniff');
  expect(headers.get('referrer-policy')).toBe('no-referrer');
}

describe('signing in', () => {
  it('sets an HttpOnly, SameSite=Strict, Path=/ui session cookie that does not hold the token', async () => {
    const form = await ui(h.app, 'GET', '/ui/login');
    expect(form.status).toBe(200);
    expect(form.text).toContain('<label for="token">');
    const login = cookieOf(form.cookies, 'drydock_ui_login')!;
    const res = await ui(h.app, 'POST', '/ui/login', {
      cookie: login,
      form: { csrf: csrfOf(form.text), token: h.tokens.approver, next: '/ui' },
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/ui');
    const line = res.cookies.find((c) => c.startsWith('drydock_ui='))!;
    expect(line).toMatch(/; HttpOnly/);
    expect(line).toMatch(/; SameSite=Strict/);
    expect(line).toMatch(/; Path=\/ui(;|$)/);
    expect(line).toMatch(/; Max-Age=43200/);
    expect(line).not.toMatch(/Secure/); // plain http here
    const value = line.split(';')[0]!.slice('drydock_ui='.length);
    const secret = h.tokens.approver.split('.')[1]!;
    expect(value).not.toContain(secret);
    expect(value).not.toContain(h.tokens.approver);

    const queue = await ui(h.app, 'GET', '/ui', { cookie: line.split(';')[0] });
    expect(queue.status).toBe(200);
    expect(queue.text).toContain('Signed in as <strong>approver-user</strong> (approver)');
    expectSecurityHeaders(queue.headers);
  });

  it('marks the cookie Secure over https', async () => {
    const base = 'https://drydock.example';
    const form = await ui(h.app, 'GET', '/ui/login', { base });
    const res = await ui(h.app, 'POST', '/ui/login', {
      base,
      cookie: cookieOf(form.cookies, 'drydock_ui_login'),
      form: { csrf: csrfOf(form.text), token: h.tokens.viewer },
      headers: { origin: base, 'sec-fetch-site': 'same-origin' },
    });
    expect(res.status).toBe(303);
    expect(res.cookies.find((c) => c.startsWith('drydock_ui='))).toMatch(/; Secure/);
  });

  it('refuses a wrong token (401, no session) and a form without its login nonce (403)', async () => {
    const form = await ui(h.app, 'GET', '/ui/login');
    const login = cookieOf(form.cookies, 'drydock_ui_login')!;
    const wrong = await ui(h.app, 'POST', '/ui/login', {
      cookie: login,
      form: { csrf: csrfOf(form.text), token: `${h.tokens.admin.slice(0, -4)}AAAA` },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('not valid or was revoked');
    expect(cookieOf(wrong.cookies, 'drydock_ui')).toBeUndefined();

    const noNonce = await ui(h.app, 'POST', '/ui/login', {
      form: { csrf: csrfOf(form.text), token: h.tokens.admin },
    });
    expect(noNonce.status).toBe(403);
    const noCsrf = await ui(h.app, 'POST', '/ui/login', { cookie: login, form: { token: h.tokens.admin } });
    expect(noCsrf.status).toBe(403);
    const crossSite = await ui(h.app, 'POST', '/ui/login', {
      cookie: login,
      form: { csrf: csrfOf(form.text), token: h.tokens.admin },
      headers: { origin: 'https://evil.example' },
    });
    expect(crossSite.status).toBe(403);
  });

  it('returns to the page that asked for sign-in, but never off-site', async () => {
    const { plan } = await seedPlan(h);
    const res = await ui(h.app, 'GET', `/ui/plans/${plan.id}`);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/ui/login?next=${encodeURIComponent(`/ui/plans/${plan.id}`)}`);
    const form = await ui(h.app, 'GET', `/ui/login?next=${encodeURIComponent(`/ui/plans/${plan.id}`)}`);
    expect(form.text).toContain(`name="next" value="/ui/plans/${plan.id}"`);
    for (const next of ['//evil.example/ui', 'https://evil.example', '/ui/../v1/plans', '/uix']) {
      const f = await ui(h.app, 'GET', `/ui/login?next=${encodeURIComponent(next)}`);
      expect(f.text).toContain('name="next" value="/ui"');
    }
  });
});

describe('the session guard', () => {
  it('redirects a GET without a session to the login form and answers a POST with 401', async () => {
    for (const path of [
      '/ui',
      '/ui/questions',
      '/ui/tool-approvals',
      '/ui/runs/run_x',
      '/ui/runs/run_x/events',
    ]) {
      const res = await ui(h.app, 'GET', path);
      expect(res.status, path).toBe(303);
      expect(res.headers.get('location')).toMatch(/^\/ui\/login/);
      expectSecurityHeaders(res.headers);
    }
    const post = await ui(h.app, 'POST', '/ui/plans/pln_x/approve', {
      form: { csrf: 'x', sha256: 'a'.repeat(64) },
    });
    expect(post.status).toBe(401);
    expectSecurityHeaders(post.headers);
    expect((await ui(h.app, 'POST', '/ui/logout', { form: { csrf: 'x' } })).status).toBe(401);
  });

  it('refuses a tampered, unknown or old-format session value', async () => {
    const { cookie } = await signIn(h.app, h.tokens.approver);
    expect((await ui(h.app, 'GET', '/ui', { cookie })).status).toBe(200);

    const [name, value] = cookie.split('=') as [string, string];
    const [id, signature] = value.split('.') as [string, string];
    const flip = (s: string) => `${s.slice(0, -1)}${s.endsWith('A') ? 'B' : 'A'}`;
    const unknown = await signIn(h.app, h.tokens.viewer);
    h.store.db.prepare('DELETE FROM ui_sessions WHERE token_id = ?').run(tokenIdOf(h.tokens.viewer));
    for (const forged of [
      `${flip(id)}.${signature}`, // another id under this one's signature
      `${id}.${flip(signature)}`,
      `${id}.${signature}.x`,
      // The self-contained format of earlier versions: token id, identity, expiry, signature.
      [tokenIdOf(h.tokens.admin), 'admin-user', h.clock.now() + 1000, signature].join('.'),
      unknown.cookie.slice(name.length + 1), // well signed, but no such row
    ]) {
      const res = await ui(h.app, 'GET', '/ui', { cookie: `${name}=${forged}` });
      expect(res.status, forged).toBe(303);
      expect(res.headers.get('location')).toBe('/ui/login');
      expect(res.cookies.some((c) => c.startsWith('drydock_ui=;'))).toBe(true);
    }
    expect((await ui(h.app, 'GET', '/ui', { cookie })).status).toBe(200);
  });

  it('refuses the sessions of a revoked token and revokes their rows', async () => {
    const { plan } = await seedPlan(h);
    const first = await signIn(h.app, h.tokens.approver);
    const second = await signIn(h.app, h.tokens.approver);
    const other = await signIn(h.app, h.tokens.admin);
    const approver = tokenIdOf(h.tokens.approver);

    expect(await h.store.revokeToken(approver, h.clock.now())).toBe(true);
    expect(sessionRows(approver).map((r) => r.revoked_at)).toEqual([h.clock.now(), h.clock.now()]);
    for (const s of [first, second]) {
      expect((await ui(h.app, 'GET', '/ui', { cookie: s.cookie })).status).toBe(303);
      const post = await ui(h.app, 'POST', `/ui/plans/${plan.id}/approve`, {
        cookie: s.cookie,
        form: { csrf: s.csrf, sha256: plan.sha256 },
      });
      expect(post.status).toBe(401);
    }
    expect((await h.store.getPlan(plan.id))!.status).toBe('pending_approval');
    // Another token's session is untouched.
    expect((await ui(h.app, 'GET', '/ui', { cookie: other.cookie })).status).toBe(200);

    // A token revoked in the database by hand: refused too, and the guard revokes its sessions' rows.
    const admin = tokenIdOf(h.tokens.admin);
    h.store.db.prepare('UPDATE api_tokens SET revoked_at = ? WHERE id = ?').run(h.clock.now(), admin);
    h.clock.advance(1000);
    expect((await ui(h.app, 'GET', '/ui', { cookie: other.cookie })).status).toBe(303);
    expect(sessionRows(admin).map((r) => r.revoked_at)).toEqual([h.clock.now()]);
  });

  it('refuses a session whose token is gone or no longer has its identity', async () => {
    const gone = issueToken('gone', 'gone-user', 'approver', h.clock.now());
    await h.store.createToken(gone.record);
    const goneSession = await signIn(h.app, gone.token);
    const spy = vi.spyOn(h.store, 'findToken').mockResolvedValue(null);
    expect((await ui(h.app, 'GET', '/ui', { cookie: goneSession.cookie })).status).toBe(303);
    spy.mockRestore();
    expect(sessionRows(gone.record.id)[0]!.revoked_at).toBe(h.clock.now());

    const renamed = await signIn(h.app, h.tokens.approver);
    h.store.db
      .prepare(`UPDATE api_tokens SET identity = 'someone-else' WHERE id = ?`)
      .run(tokenIdOf(h.tokens.approver));
    expect((await ui(h.app, 'GET', '/ui', { cookie: renamed.cookie })).status).toBe(303);
  });

  it('refuses a session 12 hours after sign-in', async () => {
    const { plan } = await seedPlan(h);
    const { cookie, csrf } = await signIn(h.app, h.tokens.approver);
    h.clock.advance(12 * 60 * 60 * 1000 - 1);
    expect((await ui(h.app, 'GET', '/ui', { cookie })).status).toBe(200);
    h.clock.advance(1);
    const page = await ui(h.app, 'GET', `/ui/plans/${plan.id}`, { cookie });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe(`/ui/login?next=${encodeURIComponent(`/ui/plans/${plan.id}`)}`);
    const post = await ui(h.app, 'POST', `/ui/plans/${plan.id}/approve`, {
      cookie,
      form: { csrf, sha256: plan.sha256 },
    });
    expect(post.status).toBe(401);
    expect((await h.store.getPlan(plan.id))!.status).toBe('pending_approval');
  });

  it('stores only the sha256 of the session id the cookie carries', async () => {
    const { cookie } = await signIn(h.app, h.tokens.approver);
    const id = cookie.slice('drydock_ui='.length).split('.')[0]!;
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/); // 256 random bits
    const rows = sessionRows(tokenIdOf(h.tokens.approver));
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row.id_hash).toEqual(createHash('sha256').update(id).digest());
    const stored = JSON.stringify(
      Object.values(row).map((v) => (Buffer.isBuffer(v) ? v.toString('base64url') : v)),
    );
    expect(stored).not.toContain(id);
    expect(row).toMatchObject({
      identity: 'approver-user',
      created_at: h.clock.now(),
      expires_at: h.clock.now() + 12 * 60 * 60 * 1000,
      revoked_at: null,
    });
  });

  it('keeps its signing secret in the store, generated once', async () => {
    await signIn(h.app, h.tokens.viewer);
    const secret = await h.store.getState('ui_secret');
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await signIn(h.app, h.tokens.admin);
    expect(await h.store.getState('ui_secret')).toBe(secret);
  });

  it('logs out: the session is revoked in the store and the cookie cleared', async () => {
    const { cookie, csrf } = await signIn(h.app, h.tokens.approver);
    const res = await ui(h.app, 'POST', '/ui/logout', { cookie, form: { csrf } });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/ui/login');
    const cleared = res.cookies.find((c) => c.startsWith('drydock_ui='))!;
    expect(cleared).toMatch(/^drydock_ui=;/);
    expect(cleared).toMatch(/Max-Age=0/);
    expect(sessionRows(tokenIdOf(h.tokens.approver))[0]!.revoked_at).toBe(h.clock.now());
  });

  it('refuses a copy of the cookie replayed after logout', async () => {
    const { plan } = await seedPlan(h);
    const { cookie, csrf } = await signIn(h.app, h.tokens.approver);
    const elsewhere = await signIn(h.app, h.tokens.approver); // the same person in another browser
    expect((await ui(h.app, 'POST', '/ui/logout', { cookie, form: { csrf } })).status).toBe(303);

    const page = await ui(h.app, 'GET', '/ui', { cookie });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/ui/login');
    const post = await ui(h.app, 'POST', `/ui/plans/${plan.id}/approve`, {
      cookie,
      form: { csrf, sha256: plan.sha256 },
    });
    expect(post.status).toBe(401);
    expect(post.text).toContain('your session ended');
    expect((await h.store.getPlan(plan.id))!.status).toBe('pending_approval');
    expect((await ui(h.app, 'POST', '/ui/logout', { cookie, form: { csrf } })).status).toBe(401);

    // Signing out ends that session only.
    expect((await ui(h.app, 'GET', '/ui', { cookie: elsewhere.cookie })).status).toBe(200);
  });
});

describe('CSRF and cross-site requests', () => {
  it('refuses a POST without the csrf field, with a wrong one, or with another session’s (403)', async () => {
    const { plan } = await seedPlan(h);
    const me = await signIn(h.app, h.tokens.approver);
    const other = await signIn(h.app, h.tokens.admin);
    const path = `/ui/plans/${plan.id}/reject`;
    // The tampered token differs from the real one in its last character (whatever that character is).
    const tampered = `${me.csrf.slice(0, -1)}${me.csrf.endsWith('A') ? 'B' : 'A'}`;
    for (const csrf of [undefined, '', 'AAAA', tampered, other.csrf]) {
      const form: Record<string, string> = { comment: 'no' };
      if (csrf !== undefined) form.csrf = csrf;
      const res = await ui(h.app, 'POST', path, { cookie: me.cookie, form });
      expect(res.status, String(csrf)).toBe(403);
      expectSecurityHeaders(res.headers);
    }
    // A JSON body is not a form: no csrf field, refused.
    const jsonBody = JSON.stringify({ csrf: me.csrf, comment: 'no' });
    const json = await h.app.request(`http://localhost${path}`, {
      method: 'POST',
      headers: {
        cookie: me.cookie,
        'content-type': 'application/json',
        'content-length': String(jsonBody.length),
      },
      body: jsonBody,
    });
    expect(json.status).toBe(403);
    expect((await h.store.getPlan(plan.id))!.status).toBe('pending_approval');

    const ok = await ui(h.app, 'POST', path, { cookie: me.cookie, form: { csrf: me.csrf, comment: 'no' } });
    expect(ok.status).toBe(303);
    expect((await h.store.getPlan(plan.id))!.status).toBe('rejected');
  });

  it('never buffers a form to find its size: no length is 411, over the limit is 413, before anyone signs in', async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(ctrl) {
        pulled += 1;
        ctrl.enqueue(new Uint8Array(64 * 1024));
      },
    });
    const chunked = await h.app.request('http://localhost/ui/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'transfer-encoding': 'chunked' },
      body: endless,
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(411);
    expect(pulled).toBeLessThanOrEqual(2);
    const big = await h.app.request('http://localhost/ui/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '5000' },
      body: 'x'.repeat(5000),
    });
    expect(big.status).toBe(413);
    const overPage = await h.app.request('http://localhost/ui/plans/x/approve', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': String(h.config.server.body_limit_bytes + 1),
      },
      body: 'x',
    });
    expect(overPage.status).toBe(413);
  });

  it('refuses a cross-site Origin or Sec-Fetch-Site even with the right csrf (403)', async () => {
    const { plan } = await seedPlan(h);
    const me = await signIn(h.app, h.tokens.approver);
    const path = `/ui/plans/${plan.id}/reject`;
    const form = { csrf: me.csrf, comment: 'no' };
    const attempts: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { origin: 'null', 'sec-fetch-site': 'cross-site' },
      { origin: 'https://evil.example', 'sec-fetch-site': 'same-origin' },
      { origin: 'http://localhost.evil.example' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'http://localhost', 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of attempts) {
      const res = await ui(h.app, 'POST', path, { cookie: me.cookie, form, headers });
      expect(res.status, JSON.stringify(headers)).toBe(403);
    }
    expect((await h.store.getPlan(plan.id))!.status).toBe('pending_approval');
    // Under Referrer-Policy: no-referrer, Chromium's same-origin form POSTs say `Origin: null`.
    const nullOrigin = await ui(h.app, 'POST', path, {
      cookie: me.cookie,
      form: { ...form, csrf: 'wrong' },
      headers: { origin: 'null', 'sec-fetch-site': 'same-origin' },
    });
    expect(nullOrigin.status).toBe(403); // still needs the CSRF token
    const same = await ui(h.app, 'POST', path, {
      cookie: me.cookie,
      form,
      headers: { origin: 'null', 'sec-fetch-site': 'same-origin' },
    });
    expect(same.status).toBe(303);
  });
});

describe('security headers', () => {
  it('are on every /ui response: pages, assets, redirects, errors, unknown paths', async () => {
    const { cookie } = await signIn(h.app, h.tokens.viewer);
    for (const [path, status] of [
      ['/ui/login', 200],
      ['/ui', 200],
      ['/ui/app.js', 200],
      ['/ui/app.css', 200],
      ['/ui/plans/pln_missing', 404],
      ['/ui/nothing/here', 404],
    ] as const) {
      const res = await ui(h.app, 'GET', path, { cookie });
      expect(res.status, path).toBe(status);
      expectSecurityHeaders(res.headers);
    }
    expect(CONTENT_SECURITY_POLICY).toBe(EXPECTED_CSP);
  });

  it('serves the script and stylesheet as files, and no page carries inline script or style', async () => {
    const js = await ui(h.app, 'GET', '/ui/app.js');
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(js.text).toContain('new EventSource');
    expect(js.text).not.toContain('innerHTML');
    expect((await ui(h.app, 'GET', '/ui/app.css')).headers.get('content-type')).toMatch(/^text\/css/);

    const { plan } = await seedPlan(h);
    const { cookie } = await signIn(h.app, h.tokens.approver);
    for (const path of ['/ui/login', '/ui', `/ui/plans/${plan.id}`, '/ui/questions', '/ui/tool-approvals']) {
      const page = (await ui(h.app, 'GET', path, { cookie })).text;
      expect(page).not.toMatch(/<script(?![^>]*\ssrc="\/ui\/app\.js")/);
      expect(page).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    }
  });
});
