import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/rest';
import { type Clock, systemClock } from '../clock.js';
import { readAppPrivateKey } from '../config/app-key.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../logger.js';
import type { GitCredentials } from '../workspace/git.js';
import { GIT_TOKEN_USER, type GithubAuth, GithubAuthError, TokenAuth } from './auth.js';

// Authenticating as a GitHub App. What GitHub documents and this relies on:
//
// - The App signs a JWT with its private key (RS256): `iat` (60 s in the past is advised against clock drift),
//   `exp` at most 10 minutes into the future, `iss` the App's ID or client ID; it goes in `Authorization: Bearer`
//   (https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app).
//   @octokit/auth-app signs it (universal-github-app-jwt: iat now-30 s, exp iat+10 min) and its `hook` sends it,
//   retrying once with GitHub's clock when GitHub answers that the claims are off in time.
// - The installation that holds a repository: GET /repos/{owner}/{repo}/installation with the JWT, 404 when the
//   App is not installed there; the token: POST /app/installations/{installation_id}/access_tokens with the JWT,
//   201 {token, expires_at, permissions, repository_selection}. "Installation tokens expire one hour from the time
//   you create them. Using an expired token produces a status code of 401"
//   (https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app,
//   https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-an-installation-access-token-for-a-github-app).
//   Tokens are opaque: newer ones are not 40 characters long (the same page, on the ghs_ format of 2026).
// - git over HTTPS takes the token as password with the user `x-access-token`
//   (https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/authenticating-as-a-github-app-installation).
// - An installation token cannot read GET /user: GitHub answers 403 "Resource not accessible by integration"
//   (seen in https://github.com/actions/create-github-app-token/issues/258). What the App writes is authored by
//   its bot account, whose login is the App's slug (GET /app) followed by `[bot]` (as GitHub shows dependabot[bot];
//   no GitHub page found states the rule, so drydock reads the slug from GitHub rather than guessing it).
//
// The tokens are drydock's own cache, not auth-app's: auth-app keeps a token 59 minutes by its own clock, which
// would hand git a token with a minute left; here each installation's token is kept until RENEW_BEFORE_MS before
// its `expires_at` (on the injected clock), fetched once however many callers wait for it, held in memory only.

/** A token is renewed this long before GitHub's `expires_at`: no call or push starts with one about to lapse. */
export const RENEW_BEFORE_MS = 5 * 60_000;
/** How many replaced tokens are still scrubbed from texts. */
const RETIRED_KEPT = 50;

export interface AppAuthOptions {
  /** github.app.id: the App's ID or client ID. */
  appId: number | string;
  /** The App's private key (PEM). Kept by auth-app to sign JWTs; never logged. */
  privateKey: string;
  /** github.api_url. */
  baseUrl: string;
  logger: Logger;
  /** Decides when a token is due for renewal. Default: the system clock. */
  clock?: Clock;
}

/** An installation of the App as GitHub lists it (GET /app/installations): what the doctor reads. */
export interface AppInstallation {
  id: number;
  account: string;
  repositorySelection: string;
  permissions: Record<string, string>;
  suspended: boolean;
}

interface HeldToken {
  token: string;
  expiresAt: number;
}

type Route = Parameters<ReturnType<typeof createAppAuth>['hook']>[1];

const noop = () => {};

export class AppAuth implements GithubAuth {
  readonly kind = 'app' as const;
  private readonly octokit: Octokit;
  private readonly app: ReturnType<typeof createAppAuth>;
  private readonly clock: Clock;
  /** Repository (lower case) → the id of the installation that holds it. */
  private readonly installations = new Map<string, Promise<number>>();
  /** Installation id → its current token. */
  private readonly tokens = new Map<number, HeldToken>();
  /** Installation id → the exchange under way (one per installation, whoever waits for it). */
  private readonly exchanges = new Map<number, Promise<HeldToken>>();
  private slug: Promise<string> | null = null;
  /** Tokens replaced or refused lately: still scrubbed from texts (an error about one may come later). */
  private readonly retired: string[] = [];

  constructor(private readonly opts: AppAuthOptions) {
    this.clock = opts.clock ?? systemClock;
    // No credentials of its own: the App's requests get the JWT from auth-app's hook, per request.
    this.octokit = new Octokit({
      baseUrl: opts.baseUrl.replace(/\/+$/, ''),
      userAgent: 'drydock',
      log: { debug: noop, info: noop, warn: noop, error: noop },
    });
    this.app = createAppAuth({
      appId: opts.appId,
      privateKey: opts.privateKey,
      request: this.octokit.request,
      // auth-app warns here only of a clock difference with GitHub (no secret in it).
      log: { warn: (message: string) => opts.logger.warn({ github_app: message }, 'GitHub App clock') },
    });
  }

  async tokenFor(repository: string, signal?: AbortSignal): Promise<string> {
    const installation = await this.installationOf(repository, signal);
    return (await this.installationToken(installation, signal)).token;
  }

  async gitCredentialsFor(repository: string, signal?: AbortSignal): Promise<GitCredentials> {
    return { username: GIT_TOKEN_USER, password: await this.tokenFor(repository, signal) };
  }

  refused(repository: string, token: string): boolean {
    for (const [installation, held] of this.tokens) {
      if (held.token === token) this.retire(installation);
    }
    // The repository may have moved to another installation (the App reinstalled): look it up again.
    this.installations.delete(repository.toLowerCase());
    return true;
  }

  botLogin(signal?: AbortSignal): Promise<string | null> {
    this.slug ??= this.getApp(signal).then(
      (app) => app.slug,
      (err: unknown) => {
        this.slug = null;
        throw err;
      },
    );
    return this.slug.then((slug) => `${slug}[bot]`);
  }

  secrets(): string[] {
    return [...[...this.tokens.values()].map((held) => held.token), ...this.retired];
  }

  /** Drops an installation's token, keeping it among the last RETIRED_KEPT to scrub. */
  private retire(installation: number): void {
    const held = this.tokens.get(installation);
    if (!held) return;
    this.tokens.delete(installation);
    this.retired.push(held.token);
    if (this.retired.length > RETIRED_KEPT) this.retired.shift();
  }

  /** GET /app with the JWT: the App GitHub knows by this key (its id, slug, name). */
  async getApp(signal?: AbortSignal): Promise<{ id: number; slug: string; name: string }> {
    const res = await this.asApp('GET /app', {}, signal);
    const data = res.data as { id: number; slug?: string; name: string };
    return { id: data.id, slug: data.slug ?? '', name: data.name };
  }

  /** GET /app/installations with the JWT, every page (GitHub serves at most 100 a page). */
  async listInstallations(signal?: AbortSignal): Promise<AppInstallation[]> {
    const all: AppInstallation[] = [];
    for (let page = 1; page <= 100; page++) {
      const res = await this.asApp('GET /app/installations', { per_page: 100, page }, signal);
      const listed = res.data as {
        id: number;
        account?: { login?: string } | null;
        repository_selection: string;
        permissions?: Record<string, string>;
        suspended_at?: string | null;
      }[];
      for (const i of listed) {
        all.push({
          id: i.id,
          account: i.account?.login ?? '(unknown account)',
          repositorySelection: i.repository_selection,
          permissions: { ...(i.permissions ?? {}) },
          suspended: !!i.suspended_at,
        });
      }
      if (!/\brel="next"/.test(String(res.headers.link ?? ''))) break;
    }
    return all;
  }

  /** The id of the installation that holds `repository`; GithubAuthError 404 when there is none. */
  installationOf(repository: string, signal?: AbortSignal): Promise<number> {
    const key = repository.toLowerCase();
    let found = this.installations.get(key);
    if (!found) {
      found = this.lookUpInstallation(repository, signal);
      this.installations.set(key, found);
      found.catch(() => {
        if (this.installations.get(key) === found) this.installations.delete(key);
      });
    }
    return found;
  }

  private async lookUpInstallation(repository: string, signal?: AbortSignal): Promise<number> {
    const m = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)$/.exec(repository);
    if (!m) throw new GithubAuthError(`not an owner/repo: ${repository}`);
    try {
      const res = await this.asApp(
        'GET /repos/{owner}/{repo}/installation',
        { owner: m[1], repo: m[2] },
        signal,
      );
      return (res.data as { id: number }).id;
    } catch (err) {
      if (statusOf(err) === 404) {
        throw new GithubAuthError(
          `the GitHub App (github.app.id ${this.opts.appId}) is not installed on ${repository}: install it there, with access to the repository`,
          404,
        );
      }
      throw err;
    }
  }

  /** The installation's token: the one held while it has more than RENEW_BEFORE_MS left, else a new one. */
  private installationToken(installation: number, signal?: AbortSignal): Promise<HeldToken> {
    const held = this.tokens.get(installation);
    if (held && held.expiresAt - RENEW_BEFORE_MS > this.clock.now()) return Promise.resolve(held);
    let pending = this.exchanges.get(installation);
    if (!pending) {
      pending = this.exchange(installation, signal).finally(() => this.exchanges.delete(installation));
      this.exchanges.set(installation, pending);
    }
    return pending;
  }

  private async exchange(installation: number, signal?: AbortSignal): Promise<HeldToken> {
    let res: Awaited<ReturnType<AppAuth['asApp']>>;
    try {
      res = await this.asApp(
        'POST /app/installations/{installation_id}/access_tokens',
        { installation_id: installation },
        signal,
      );
    } catch (err) {
      const status = statusOf(err);
      if (status === 404 || status === 403) {
        // Gone (uninstalled) or suspended: every repository is looked up again next time (cheap, and rare).
        this.installations.clear();
        throw new GithubAuthError(
          `GitHub refused a token for installation ${installation} of the App (${status} ${messageOf(err)})`,
          status,
        );
      }
      throw err;
    }
    const data = res.data as { token?: unknown; expires_at?: unknown };
    const expiresAt = typeof data.expires_at === 'string' ? Date.parse(data.expires_at) : Number.NaN;
    if (typeof data.token !== 'string' || data.token === '' || !Number.isFinite(expiresAt)) {
      throw new GithubAuthError(`GitHub's answer for installation ${installation} holds no token and expiry`);
    }
    const held = { token: data.token, expiresAt };
    this.retire(installation);
    this.tokens.set(installation, held);
    this.opts.logger.debug(
      { installation_id: installation, expires_at: new Date(expiresAt).toISOString() },
      'GitHub App installation token fetched',
    );
    return held;
  }

  /** A request as the App (the JWT from auth-app's hook); a 401 names the settings to check. */
  private async asApp(route: Route, params: Record<string, unknown>, signal?: AbortSignal) {
    try {
      return await this.app.hook(this.octokit.request, route, {
        ...params,
        ...(signal ? { request: { signal } } : {}),
      });
    } catch (err) {
      if (statusOf(err) === 401) {
        throw new GithubAuthError(
          `GitHub refused the App's JWT (401 ${messageOf(err)}): check github.app.id and github.app.private_key_file`,
          401,
        );
      }
      throw err;
    }
  }
}

/**
 * drydock's GitHub credentials from the configuration: the App (github.app) or the token (github.token; the
 * configuration refuses both at once), or null for neither. Reads the App's key file (checked at load already).
 */
export function githubAuthFrom(
  github: Config['github'],
  deps: { logger: Logger; clock?: Clock },
): GithubAuth | null {
  const { id, private_key_file } = github.app;
  if (id !== null && private_key_file !== null) {
    const read = readAppPrivateKey(private_key_file);
    if ('problem' in read) throw new GithubAuthError(`github.app.private_key_file: ${read.problem}`);
    return new AppAuth({ appId: id, privateKey: read.pem, baseUrl: github.api_url, ...deps });
  }
  return github.token ? new TokenAuth(github.token) : null;
}

function statusOf(err: unknown): number | null {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status > 0 ? status : null;
}

/** GitHub's message from an Octokit error, without the documentation link Octokit appends. */
function messageOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/ - https?:\/\/\S+$/, '').slice(0, 200);
}
