import type { GitCredentials } from '../workspace/git.js';

// How drydock proves who it is to GitHub: a personal access token (github.token) or a GitHub App (github.app,
// src/github/app-auth.ts). One small interface for both, so that every REST call and every git fetch or push
// asks it for the credentials of the repository it is about, and never holds a token of its own.
//
// For callers (the REST client, delivery's push, cloning and fetching):
//   const password = await auth.tokenFor('acme/widgets', signal);        // REST: Authorization: token …
//   const credentials = await auth.gitCredentialsFor('acme/widgets');    // git over HTTPS, through askpass
//   if (status === 401 && auth.refused('acme/widgets', password)) retry once with a fresh token
// A token is never logged, stored or put in a URL; `secrets()` lists those held now, for scrubbing texts.

/** drydock's credentials for GitHub: the token of a repository, for REST calls and for git over HTTPS. */
export interface GithubAuth {
  /** `token`: a personal access token (github.token); `app`: a GitHub App's installation tokens (github.app). */
  readonly kind: 'token' | 'app';
  /**
   * The token for calls about `repository` (owner/repo). With an App: the installation token of the installation
   * that holds the repository, fetched when missing or within minutes of its expiry; throws a GithubAuthError when
   * the App is not installed there or GitHub refuses the App.
   */
  tokenFor(repository: string, signal?: AbortSignal): Promise<string>;
  /** What git over HTTPS answers for `repository` (user name and password, handed to git through GIT_ASKPASS). */
  gitCredentialsFor(repository: string, signal?: AbortSignal): Promise<GitCredentials>;
  /**
   * GitHub answered 401 to `token` for `repository`: a token drydock still thought valid (revoked, expired
   * early). Forgets it, so that the next `tokenFor` fetches a new one, and says whether that is worth one retry
   * (false for a personal access token: it will not change).
   */
  refused(repository: string, token: string): boolean;
  /**
   * The login of drydock's own account when the credentials alone tell it: an App's bot, `<slug>[bot]` (GitHub
   * refuses GET /user to an installation token). null: ask GitHub whose token it is (GET /user).
   */
  botLogin(signal?: AbortSignal): Promise<string | null>;
  /** Every token held now (scrubbed from any text drydock logs, stores or answers). */
  secrets(): string[];
}

/** GitHub refused drydock's App, or the App cannot act on a repository. Its message carries no secret. */
export class GithubAuthError extends Error {
  constructor(
    message: string,
    /** GitHub's status, when GitHub answered (404: not installed, 401: the JWT was refused). */
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'GithubAuthError';
  }
}

/**
 * The user name git sends with an installation token. GitHub: "use the installation access token as the HTTP
 * password" with `x-access-token` as the user (https://docs.github.com/apps/creating-github-apps/
 * authenticating-with-a-github-app/authenticating-as-a-github-app-installation); a personal access token
 * accepts any user name, so drydock sends the same.
 */
export const GIT_TOKEN_USER = 'x-access-token';

/** A personal access token (github.token): the same token for every repository; what drydock always did. */
export class TokenAuth implements GithubAuth {
  readonly kind = 'token' as const;

  constructor(private readonly token: string) {}

  async tokenFor(): Promise<string> {
    return this.token;
  }

  async gitCredentialsFor(): Promise<GitCredentials> {
    return { username: GIT_TOKEN_USER, password: this.token };
  }

  refused(): boolean {
    return false;
  }

  async botLogin(): Promise<string | null> {
    return null;
  }

  secrets(): string[] {
    return [this.token];
  }
}
