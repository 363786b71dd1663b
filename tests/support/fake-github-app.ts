/**
 * The GitHub App side of the fake GitHub (tests/support/fake-github.ts, option `app`): the App's endpoints, as
 * strict as GitHub about the JWT they take, and the installation tokens they hand out, accepted on the other
 * endpoints within their installation's repositories and permissions until they expire.
 *
 *   GET  /app                                            200, the App (id, slug, client_id, ...)
 *   GET  /app/installations                              200, its installations with their permissions, paged
 *   GET  /repos/:owner/:repo/installation                200, the installation holding the repository; 404 when none
 *   POST /app/installations/:id/access_tokens            201 {token, expires_at, permissions, repository_selection};
 *                                                        404 for an installation the App does not have
 *
 * What GitHub documents and this holds to:
 * - The JWT (https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app):
 *   signed RS256 with the App's key, `iss` the App's ID or its client ID, `iat` the time it was made, `exp` "no
 *   more than 10 minutes into the future", sent as `Authorization: Bearer`. The docs' own example sets iat 60 s in
 *   the past and exp 10 minutes ahead (exp - iat = 11 minutes), so the limit is on exp against GitHub's clock, not
 *   on exp - iat. What GitHub answers when a claim is wrong, 401 with these messages, as GitHub's users report
 *   them (octokit/auth-app.js#375, #698, actions/create-github-app-token#153, #178, #386, Expensify/App#32069,
 *   sigmavirus24/github3.py#1050, code-corps/code-corps-api#1129): "A JSON web token could not be decoded" (not a
 *   JWT, a signature the App's key does not verify, an `iss` of no App), "Missing 'issuer' claim ('iss') in
 *   assertion", "'Issuer' claim ('iss') must be an Integer", "'Issued at' claim ('iat') must be an Integer
 *   representing the time that the assertion was issued" (also for an iat in the future: GitHub advises setting
 *   it 60 s back against clock drift), "'Expiration time' claim ('exp') must be a numeric value representing the
 *   future time at which the assertion expires" (missing or past), "'Expiration time' claim ('exp') is too far in
 *   the future". Each with documentation_url https://docs.github.com/rest.
 * - Installation tokens "expire one hour from the time you create them. Using an expired token produces a status
 *   code of 401" (https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app): 401 "Bad
 *   credentials" here, as for any token GitHub does not take. A token reaches only its installation's
 *   repositories (another repository: 404 Not Found, as GitHub hides repositories a token cannot see) and acts
 *   within its permissions (else 403 "Resource not accessible by integration", GitHub's answer to an App lacking
 *   a permission). GET /user refuses it with 403 "Resource not accessible by integration" (as GitHub answers:
 *   actions/create-github-app-token#258). What it writes is authored by `<slug>[bot]`.
 * - Which permission each endpoint needs (https://docs.github.com/rest/overview/permissions-required-for-github-apps):
 *   pull requests read/write for GET/POST pulls, issues or pull requests for issue comments (a pull request's
 *   comments are issue comments), commit statuses write for POST statuses, checks for check runs.
 */
import { generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { GITHUB_APP_PERMISSIONS } from '../../src/github/app-manifest.js';

export type Access = 'read' | 'write';

/** An installation that may do all drydock's App asks for (src/github/app-manifest.ts). */
export const FULL_APP_PERMISSIONS: Readonly<Record<string, Access>> = { ...GITHUB_APP_PERMISSIONS };

export interface FakeAppInstallation {
  id: number;
  /** The account (organization or user) it is installed on. */
  account: string;
  /** `all`: every repository of the account; else the owner/repo names it was given. */
  repositories: 'all' | string[];
  permissions: Record<string, Access>;
  /** When it was suspended (listed as suspended_at), or null. */
  suspendedAt?: string | null;
}

export interface FakeAppOptions {
  id: number;
  /** Default `Iv23li` + the id. */
  clientId?: string;
  /** Default `drydock-test`. */
  slug?: string;
  /** The App's public key (PEM): what verifies the JWTs. */
  publicKey: string;
  installations: FakeAppInstallation[];
  /** Life of an installation token (default 1 hour, GitHub's). */
  tokenTtlMs?: number;
  /**
   * The time installation tokens are issued and expire by (default the system clock). JWTs are always judged
   * by the system clock: @octokit/auth-app signs them by it.
   */
  tokenClock?: () => number;
}

export interface IssuedToken {
  installation: number;
  token: string;
  expiresAt: number;
  /** The installation's permissions when it was handed out: what the token may do. */
  permissions: Record<string, Access>;
}

/** What the App side makes of a request: an answer to send, the login a token acts as, or nothing of its own. */
export type AppVerdict =
  | { status: number; body: unknown; headers?: Record<string, string> }
  | { login: string }
  | null;

export interface FakeApp {
  readonly id: number;
  readonly clientId: string;
  readonly slug: string;
  /** The bot's login: what the App's tokens write as. */
  readonly login: string;
  /** Installation tokens handed out, oldest first. */
  issued(): IssuedToken[];
  /** Every token handed out so far expires now (GitHub then answers 401 Bad credentials). */
  expireTokens(): void;
  /** Replaces an installation's permissions (tokens handed out from now on carry them). */
  setPermissions(installation: number, permissions: Record<string, Access>): void;
  /**
   * Whether git over HTTPS may use `token` on `repository`: a live installation token of an installation that
   * holds it, with the contents permission at `access` (GitHub: "Your app must have the Contents repository
   * permission" for HTTP-based Git access).
   */
  acceptsForGit(token: string, repository: string, access: Access): boolean;
  judge(
    method: string,
    path: string,
    query: URLSearchParams,
    authorization: string,
    baseUrl: string,
  ): AppVerdict;
}

const DOCS = 'https://docs.github.com/rest';
const REPO_PATH = /^\/repos\/([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)(\/.*)?$/;

/** Which permission (any one of the alternatives, at least this access) an endpoint needs; null: metadata only. */
function required(method: string, rest: string): [string, Access][] | null {
  const write: Access = method === 'GET' || method === 'HEAD' ? 'read' : 'write';
  if (/^\/pulls(\/\d+)?$/.test(rest)) return [['pull_requests', write]];
  if (/^\/issues\/\d+\/comments$/.test(rest))
    return [
      ['issues', write],
      ['pull_requests', write],
    ];
  if (/^\/statuses\/[0-9a-f]{40}$/.test(rest)) return [['statuses', write]];
  if (/^\/check-runs(\/\d+)?$/.test(rest) || /^\/commits\/[^/]+\/check-runs$/.test(rest))
    return [['checks', write]];
  return null;
}

function allows(have: Access | undefined, need: Access): boolean {
  return have === 'write' || (have === 'read' && need === 'read');
}

function b64url(text: string): Buffer {
  return Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

function unauthorized(message: string): { status: number; body: unknown } {
  return { status: 401, body: { message, documentation_url: DOCS, status: '401' } };
}

export function createFakeApp(opts: FakeAppOptions, now: () => number = Date.now): FakeApp {
  const clientId = opts.clientId ?? `Iv23li${opts.id}`;
  const slug = opts.slug ?? 'drydock-test';
  const login = `${slug}[bot]`;
  const ttl = opts.tokenTtlMs ?? 3_600_000;
  const tokenNow = opts.tokenClock ?? now;
  const installations = opts.installations.map((i) => ({ ...i, permissions: { ...i.permissions } }));
  const tokens = new Map<string, IssuedToken>();
  const issued: IssuedToken[] = [];

  /** null when the JWT is one GitHub takes for this App, else GitHub's 401. */
  function checkJwt(authorization: string): AppVerdict {
    const m = /^bearer\s+(\S+)$/i.exec(authorization);
    if (!m) return unauthorized('A JSON web token could not be decoded');
    const parts = m[1]!.split('.');
    let header: { alg?: unknown };
    let claims: { iss?: unknown; iat?: unknown; exp?: unknown };
    try {
      if (parts.length !== 3) throw new Error('not three parts');
      header = JSON.parse(b64url(parts[0]!).toString('utf8'));
      claims = JSON.parse(b64url(parts[1]!).toString('utf8'));
      if (typeof claims !== 'object' || claims === null) throw new Error('no claims');
    } catch {
      return unauthorized('A JSON web token could not be decoded');
    }
    if (header.alg !== 'RS256') return unauthorized('A JSON web token could not be decoded');
    if (claims.iss === undefined) return unauthorized("Missing 'issuer' claim ('iss') in assertion");
    const iss = claims.iss;
    if (typeof iss === 'string' && !/^\d+$/.test(iss) && !iss.startsWith('Iv'))
      return unauthorized("'Issuer' claim ('iss') must be an Integer");
    const ours = iss === opts.id || iss === String(opts.id) || iss === clientId;
    const signed = `${parts[0]}.${parts[1]}`;
    if (!ours || !verify('RSA-SHA256', Buffer.from(signed), opts.publicKey, b64url(parts[2]!)))
      return unauthorized('A JSON web token could not be decoded');
    const seconds = Math.floor(now() / 1000);
    if (!Number.isInteger(claims.iat) || (claims.iat as number) > seconds)
      return unauthorized(
        "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
      );
    if (typeof claims.exp !== 'number' || claims.exp <= seconds)
      return unauthorized(
        "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
      );
    if (claims.exp > seconds + 600)
      return unauthorized("'Expiration time' claim ('exp') is too far in the future");
    return null;
  }

  const holds = (i: FakeAppInstallation, repository: string) =>
    i.repositories === 'all'
      ? repository.split('/')[0]!.toLowerCase() === i.account.toLowerCase()
      : i.repositories.some((r) => r.toLowerCase() === repository.toLowerCase());

  const installationJson = (i: FakeAppInstallation, baseUrl: string) => ({
    id: i.id,
    account: { login: i.account, id: i.id * 7, type: 'Organization' },
    repository_selection: i.repositories === 'all' ? 'all' : 'selected',
    access_tokens_url: `${baseUrl}/app/installations/${i.id}/access_tokens`,
    repositories_url: `${baseUrl}/installation/repositories`,
    html_url: `https://github.com/organizations/${i.account}/settings/installations/${i.id}`,
    app_id: opts.id,
    app_slug: slug,
    target_id: i.id * 7,
    target_type: 'Organization',
    permissions: i.permissions,
    events: [],
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
    single_file_name: null,
    suspended_at: i.suspendedAt ?? null,
    suspended_by: null,
  });

  function asApp(method: string, path: string, query: URLSearchParams, baseUrl: string): AppVerdict {
    if (method === 'GET' && path === '/app') {
      return {
        status: 200,
        body: {
          id: opts.id,
          slug,
          client_id: clientId,
          node_id: `A_${opts.id}`,
          owner: { login: 'acme', id: 1, type: 'Organization' },
          name: 'drydock test',
          description: '',
          external_url: 'https://drydock.example.test',
          html_url: `https://github.com/apps/${slug}`,
          created_at: '2026-01-01T00:00:00Z',
          updated_at: '2026-01-01T00:00:00Z',
          permissions: Object.assign({}, ...installations.map((i) => i.permissions)),
          events: [],
          installations_count: installations.length,
        },
      };
    }
    if (method === 'GET' && path === '/app/installations') {
      const perPage = Math.min(100, Math.max(1, Number(query.get('per_page') ?? 30) || 30));
      const page = Math.max(1, Number(query.get('page') ?? 1) || 1);
      const last = Math.max(1, Math.ceil(installations.length / perPage));
      const link = (p: number, rel: string) =>
        `<${baseUrl}/app/installations?per_page=${perPage}&page=${p}>; rel="${rel}"`;
      const links = page < last ? [link(page + 1, 'next'), link(last, 'last')] : [];
      return {
        status: 200,
        body: installations
          .slice((page - 1) * perPage, page * perPage)
          .map((i) => installationJson(i, baseUrl)),
        headers: links.length ? { link: links.join(', ') } : {},
      };
    }
    const repo = /^\/repos\/([A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+)\/installation$/.exec(path);
    if (method === 'GET' && repo) {
      const found = installations.find((i) => holds(i, repo[1]!));
      if (!found)
        return {
          status: 404,
          body: {
            message: 'Not Found',
            documentation_url:
              'https://docs.github.com/rest/apps/apps#get-a-repository-installation-for-the-authenticated-app',
            status: '404',
          },
        };
      return { status: 200, body: installationJson(found, baseUrl) };
    }
    const exchange = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(path);
    if (method === 'POST' && exchange) {
      const found = installations.find((i) => i.id === Number(exchange[1]));
      if (!found)
        return {
          status: 404,
          body: {
            message: 'Not Found',
            documentation_url:
              'https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app',
            status: '404',
          },
        };
      const token = `ghs_${randomBytes(27).toString('base64url').replace(/[-_]/g, 'x')}`;
      const expiresAt = Math.floor((tokenNow() + ttl) / 1000) * 1000;
      const record = { installation: found.id, token, expiresAt, permissions: { ...found.permissions } };
      tokens.set(token, record);
      issued.push(record);
      return {
        status: 201,
        body: {
          token,
          expires_at: new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z'),
          permissions: found.permissions,
          repository_selection: found.repositories === 'all' ? 'all' : 'selected',
        },
      };
    }
    return null;
  }

  /** What an installation token may do at `path`: the bot's login, or GitHub's refusal. */
  function asInstallation(record: IssuedToken, method: string, path: string): AppVerdict {
    if (tokenNow() >= record.expiresAt) return unauthorized('Bad credentials');
    const installation = installations.find((i) => i.id === record.installation)!;
    if (path === '/user')
      return {
        status: 403,
        body: {
          message: 'Resource not accessible by integration',
          documentation_url: 'https://docs.github.com/rest/users/users#get-the-authenticated-user',
          status: '403',
        },
      };
    const repo = REPO_PATH.exec(path);
    if (repo) {
      if (!holds(installation, `${repo[1]}/${repo[2]}`))
        return { status: 404, body: { message: 'Not Found', documentation_url: DOCS, status: '404' } };
      const need = required(method, repo[3] ?? '');
      if (need && !need.some(([name, access]) => allows(record.permissions[name], access)))
        return {
          status: 403,
          body: { message: 'Resource not accessible by integration', documentation_url: DOCS, status: '403' },
        };
    }
    return { login };
  }

  return {
    id: opts.id,
    clientId,
    slug,
    login,
    issued: () => [...issued],
    expireTokens() {
      for (const record of tokens.values()) record.expiresAt = Math.min(record.expiresAt, tokenNow() - 1);
    },
    setPermissions(id, permissions) {
      const found = installations.find((i) => i.id === id);
      if (!found) throw new Error(`fake-github: no installation ${id}`);
      found.permissions = { ...permissions };
    },
    acceptsForGit(token, repository, access) {
      const record = tokens.get(token);
      if (!record || tokenNow() >= record.expiresAt) return false;
      const installation = installations.find((i) => i.id === record.installation)!;
      return holds(installation, repository) && allows(record.permissions.contents, access);
    },
    judge(method, path, query, authorization, baseUrl) {
      if (path === '/app' || path.startsWith('/app/') || /^\/repos\/[^/]+\/[^/]+\/installation$/.test(path)) {
        return checkJwt(authorization) ?? asApp(method, path, query, baseUrl);
      }
      const m = /^(?:token|bearer)\s+(\S+)$/i.exec(authorization);
      const record = m ? tokens.get(m[1]!) : undefined;
      return record ? asInstallation(record, method, path) : null;
    },
  };
}

/**
 * A fresh RSA key pair for a test App, made with node:crypto in the test (no key file is ever committed): the
 * private key as GitHub hands it out (PEM, PKCS#1), the public key the fake verifies JWTs with.
 */
export function appKeyPair(): { privateKey: string; publicKey: string } {
  return generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
}
