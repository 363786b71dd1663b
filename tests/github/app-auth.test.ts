import { createSign } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.js';
import { AppAuth, RENEW_BEFORE_MS } from '../../src/github/app-auth.js';
import { GithubAuthError } from '../../src/github/auth.js';
import { GithubApi, GithubCallError } from '../../src/github/client.js';
import { createLogger } from '../../src/logger.js';
import { type FakeGithub, startFakeGithub } from '../support/fake-github.js';
import { appKeyPair, type FakeAppInstallation, FULL_APP_PERMISSIONS } from '../support/fake-github-app.js';

// drydock as a GitHub App against the fake GitHub, which takes only the JWTs GitHub takes and the installation
// tokens it handed out: the JWT exchanged for each repository's installation token, kept while it lives, renewed
// near its expiry or when GitHub refuses it, never logged.

const APP_ID = 4242;
const keys = appKeyPair();
const INSTALLATIONS: FakeAppInstallation[] = [
  { id: 11, account: 'acme', repositories: 'all', permissions: { ...FULL_APP_PERMISSIONS } },
  { id: 22, account: 'globex', repositories: ['globex/gadgets'], permissions: { ...FULL_APP_PERMISSIONS } },
];

let github: FakeGithub | undefined;
afterEach(async () => {
  await github?.close();
  github = undefined;
});

/** A clock drydock decides expiry by, moved by hand; the fake GitHub keeps real time. */
function movableClock(): Clock & { advance(ms: number): void } {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    setTimer: (fn, ms) => {
      const t = setTimeout(fn, ms);
      return () => clearTimeout(t);
    },
    advance(ms) {
      offset += ms;
    },
  };
}

async function setUp(installations = INSTALLATIONS) {
  // drydock and GitHub agree on the time tokens expire by; moving it stands for an hour going by.
  const clock = movableClock();
  github = await startFakeGithub({
    token: 'ghp_unused0123456789',
    app: { id: APP_ID, publicKey: keys.publicKey, installations, tokenClock: clock.now },
  });
  const logs: string[] = [];
  const logger = createLogger('debug', { write: (line: string) => void logs.push(line) });
  const auth = new AppAuth({
    appId: APP_ID,
    privateKey: keys.privateKey,
    baseUrl: github.url,
    logger,
    clock,
  });
  const api = new GithubApi({ auth, baseUrl: github.url, logger, reportRetry: { baseDelayMs: 1 } });
  return { github, auth, api, logs, clock };
}

const exchanges = (g: FakeGithub) =>
  g.calls.filter((c) => c.method === 'POST' && /^\/app\/installations\/\d+\/access_tokens$/.test(c.path));

describe('installation tokens', () => {
  it('exchanges the JWT once while the token lives, and renews it 5 minutes before expires_at', async () => {
    const { github, auth, clock, logs } = await setUp();
    const [first, again, meanwhile] = await Promise.all([
      auth.tokenFor('acme/widgets'),
      auth.tokenFor('acme/widgets'),
      auth.tokenFor('acme/gears'),
    ]);
    // One installation (acme's, all repositories): one lookup per repository, one exchange for all three.
    expect(exchanges(github)).toHaveLength(1);
    expect(again).toBe(first);
    expect(meanwhile).toBe(first);
    expect(github.app!.issued().map((t) => t.token)).toEqual([first]);
    const exchange = exchanges(github)[0]!;
    expect(exchange.status).toBe(201);
    expect(exchange.headers.authorization).toMatch(/^bearer [\w-]+\.[\w-]+\.[\w-]+$/i);

    const expiresAt = github.app!.issued()[0]!.expiresAt;
    // Just before the renewal point the held token is still used...
    clock.advance(expiresAt - RENEW_BEFORE_MS - clock.now() - 5_000);
    expect(await auth.tokenFor('acme/widgets')).toBe(first);
    expect(exchanges(github)).toHaveLength(1);
    // ...within 5 minutes of its expiry a new one is fetched, and kept.
    clock.advance(10_000);
    const renewed = await auth.tokenFor('acme/widgets');
    expect(renewed).not.toBe(first);
    expect(await auth.tokenFor('acme/widgets')).toBe(renewed);
    expect(exchanges(github)).toHaveLength(2);
    // Both are scrubbed from any text drydock writes; only the new one is handed out.
    expect(auth.secrets()).toEqual([renewed, first]);
    // The old token still works at GitHub for 5 more minutes; drydock just no longer starts anything with it.
    expect(github.app!.acceptsForGit(first, 'acme/widgets', 'write')).toBe(true);
    expectNoToken(logs.join(''), github);
  });

  it('gives each repository the token of the installation that holds it, and calls GitHub with it', async () => {
    const { github, auth, api, logs } = await setUp();
    const acme = await auth.tokenFor('acme/widgets');
    const globex = await auth.tokenFor('globex/gadgets');
    expect(globex).not.toBe(acme);
    expect(github.app!.issued().map((t) => [t.installation, t.token])).toEqual([
      [11, acme],
      [22, globex],
    ]);

    github.setPullRequest('acme/widgets', 1, { number: 1 });
    github.setPullRequest('globex/gadgets', 2, { number: 2 });
    await api.createComment('acme/widgets', 1, 'on acme');
    await api.createComment('globex/gadgets', 2, 'on globex');
    const posts = github.calls.filter((c) => c.method === 'POST' && c.path.endsWith('/comments'));
    expect(posts.map((c) => [c.path, c.headers.authorization, c.status])).toEqual([
      ['/repos/acme/widgets/issues/1/comments', `token ${acme}`, 201],
      ['/repos/globex/gadgets/issues/2/comments', `token ${globex}`, 201],
    ]);
    // Written by the App's bot; drydock knows its own comments by that login, without GET /user.
    expect(github.comments().map((c) => c.login)).toEqual(['drydock-test[bot]', 'drydock-test[bot]']);
    await fetch(`${github.url}/repos/acme/widgets/issues/1/comments`, {
      method: 'POST',
      headers: { authorization: `token ${github.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ body: 'someone else' }),
    });
    expect((await api.ownComments('acme/widgets', 1)).map((c) => c.body)).toEqual(['on acme']);
    expect(await api.authenticatedLogin('acme/widgets')).toBe('drydock-test[bot]');
    expect(github.calls.filter((c) => c.path === '/user')).toHaveLength(0);
    expect(github.calls.filter((c) => c.path === '/app')).toHaveLength(1);

    // The fake holds a token to its installation, as GitHub does: acme's token cannot reach globex.
    const crossed = await fetch(`${github.url}/repos/globex/gadgets/issues/2/comments`, {
      headers: { authorization: `token ${acme}` },
    });
    expect(crossed.status).toBe(404);
    // An installation token cannot read GET /user.
    const user = await fetch(`${github.url}/user`, { headers: { authorization: `token ${acme}` } });
    expect(user.status).toBe(403);
    expect(((await user.json()) as { message: string }).message).toBe(
      'Resource not accessible by integration',
    );
    // Git over HTTPS: the repository's installation token, user x-access-token.
    expect(await auth.gitCredentialsFor('globex/gadgets')).toEqual({
      username: 'x-access-token',
      password: globex,
    });
    api.close();
    expectNoToken(logs.join(''), github);
  });

  it('renews once a token GitHub refuses before drydock thought it expired', async () => {
    const { github, api, logs } = await setUp();
    github.setPullRequest('acme/widgets', 3, { number: 3 });
    await api.createComment('acme/widgets', 3, 'first');
    github.app!.expireTokens();
    await api.createComment('acme/widgets', 3, 'second');
    const posts = github.calls.filter((c) => c.method === 'POST' && c.path.endsWith('/comments'));
    expect(posts.map((c) => c.status)).toEqual([201, 401, 201]);
    const [old, fresh] = github.app!.issued().map((t) => t.token);
    expect(posts.map((c) => c.headers.authorization)).toEqual([
      `token ${old}`,
      `token ${old}`,
      `token ${fresh}`,
    ]);

    // A token refused again right after its renewal is not renewed a second time: the call fails.
    github.fail({ status: 401, message: 'Bad credentials', match: /comments$/, times: 2 });
    const err = await api.createComment('acme/widgets', 3, 'third').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GithubCallError);
    expect((err as GithubCallError).status).toBe(401);
    expect(exchanges(github)).toHaveLength(3);
    api.close();
    expectNoToken(logs.join(''), github);
  });

  it('says plainly when the App is not installed on a repository, or when GitHub refuses its JWT', async () => {
    const { github, auth, api, logs } = await setUp();
    const missing = await auth.tokenFor('initech/tps').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(GithubAuthError);
    expect((missing as GithubAuthError).status).toBe(404);
    expect((missing as Error).message).toBe(
      `the GitHub App (github.app.id ${APP_ID}) is not installed on initech/tps: install it there, with access to the repository`,
    );
    // Through the REST client: no retry of a 404, the reason in the error.
    const failed = await api.createComment('initech/tps', 1, 'x').catch((e: unknown) => e);
    expect((failed as GithubCallError).message).toContain('is not installed on initech/tps');
    expect(github.calls.filter((c) => c.path === '/repos/initech/tps/installation')).toHaveLength(2);
    // A pull request of such a repository is not found, and the log says why (a 404 of GitHub's is not logged).
    expect(await api.lookupPullRequest('initech/tps', 1)).toBeNull();
    expect(logs.join('')).toContain('is not installed on initech/tps');

    // A key that is not the App's: GitHub cannot decode the JWT.
    const other = new AppAuth({
      appId: APP_ID,
      privateKey: appKeyPair().privateKey,
      baseUrl: github.url,
      logger: createLogger('silent'),
    });
    const refused = await other.tokenFor('acme/widgets').catch((e: unknown) => e);
    expect((refused as GithubAuthError).status).toBe(401);
    expect((refused as Error).message).toBe(
      "GitHub refused the App's JWT (401 A JSON web token could not be decoded): check github.app.id and github.app.private_key_file",
    );
    api.close();
    expectNoToken(logs.join(''), github);
  });
});

describe('the fake GitHub takes only the JWTs GitHub takes', () => {
  const sign = (claims: Record<string, unknown>, key = keys.privateKey, alg = 'RS256') => {
    const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const unsigned = `${part({ alg, typ: 'JWT' })}.${part(claims)}`;
    return `${unsigned}.${createSign('RSA-SHA256').update(unsigned).sign(key).toString('base64url')}`;
  };
  const now = () => Math.floor(Date.now() / 1000);

  it('answers 401 with GitHub messages for each wrong claim, and takes the ID or the client ID as iss', async () => {
    github = await startFakeGithub({
      token: 'ghp_unused0123456789',
      app: { id: APP_ID, publicKey: keys.publicKey, installations: INSTALLATIONS },
    });
    const ask = async (jwt: string, scheme = 'Bearer') => {
      const res = await fetch(`${github!.url}/app`, { headers: { authorization: `${scheme} ${jwt}` } });
      const body = (await res.json()) as { message?: string; slug?: string };
      return res.status === 200 ? `200 ${body.slug}` : `${res.status} ${body.message}`;
    };
    const t = now();
    expect(await ask(sign({ iat: t - 60, exp: t + 600, iss: APP_ID }))).toBe('200 drydock-test');
    expect(await ask(sign({ iat: t - 60, exp: t + 540, iss: String(APP_ID) }))).toBe('200 drydock-test');
    expect(await ask(sign({ iat: t, exp: t + 60, iss: github.app!.clientId }))).toBe('200 drydock-test');
    const cases: [string, string][] = [
      [
        sign({ iat: t - 60, exp: t + 660, iss: APP_ID }),
        "401 'Expiration time' claim ('exp') is too far in the future",
      ],
      [
        sign({ iat: t - 700, exp: t - 10, iss: APP_ID }),
        "401 'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
      ],
      [
        sign({ iat: t + 120, exp: t + 300, iss: APP_ID }),
        "401 'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
      ],
      [sign({ iat: t - 60, exp: t + 300 }), "401 Missing 'issuer' claim ('iss') in assertion"],
      [sign({ iat: t - 60, exp: t + 300, iss: 'app-4242' }), "401 'Issuer' claim ('iss') must be an Integer"],
      [sign({ iat: t - 60, exp: t + 300, iss: 9999 }), '401 A JSON web token could not be decoded'],
      [
        sign({ iat: t - 60, exp: t + 300, iss: APP_ID }, appKeyPair().privateKey),
        '401 A JSON web token could not be decoded',
      ],
      ['not.a.jwt', '401 A JSON web token could not be decoded'],
      [github.token, '401 A JSON web token could not be decoded'],
    ];
    for (const [jwt, answer] of cases) expect(await ask(jwt)).toBe(answer);
    // An installation token is no JWT, and a JWT is no token for the other endpoints.
    const jwt = sign({ iat: t - 60, exp: t + 300, iss: APP_ID });
    expect(await ask(jwt, 'token')).toBe('401 A JSON web token could not be decoded');
    const comments = await fetch(`${github.url}/repos/acme/widgets/issues/1/comments`, {
      headers: { authorization: `Bearer ${jwt}` },
    });
    expect(comments.status).toBe(401);
  });

  it('holds an installation token to its permissions', async () => {
    const { github, api } = await setUp([
      { id: 11, account: 'acme', repositories: 'all', permissions: { metadata: 'read', issues: 'write' } },
    ]);
    github.setPullRequest('acme/widgets', 4, { number: 4 });
    await api.createComment('acme/widgets', 4, 'allowed: issues write');
    const status = await api
      .createStatus('acme/widgets', 'a'.repeat(40), {
        state: 'pending',
        context: 'drydock/plan',
        description: 'x',
      })
      .catch((e: unknown) => e);
    expect((status as GithubCallError).status).toBe(403);
    expect((status as GithubCallError).message).toContain('Resource not accessible by integration');
    api.close();
  });
});

/** No token the fake handed out, and no private key, in the text. */
function expectNoToken(text: string, g: FakeGithub): void {
  for (const { token } of g.app!.issued()) expect(text).not.toContain(token);
  expect(text).not.toContain(keys.privateKey.split('\n')[1]!);
}
