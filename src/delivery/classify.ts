import { GithubCallError } from '../github/client.js';

// Which failures of a delivery a retry can mend. Transient (retried with backoff, delivery.attempts in all): the
// network, a timeout, a remote or GitHub answering 5xx or 429, a rate limit. Permanent (the delivery fails at
// once, with the reason and what to do): credentials refused, no access, a repository or remote that is not
// there, a push the remote rejects by its rules, a request GitHub refuses as invalid. A person who mended the
// cause asks again (`drydock plans deliver`, POST /v1/plans/:id/deliver).

/** What git says when the remote will not take it, whatever the next attempt; with what to do about it. */
const PERMANENT_GIT: readonly { pattern: RegExp; hint: string }[] = [
  {
    pattern:
      /Authentication failed|Invalid username or (password|token)|could not read (Username|Password)|terminal prompts disabled|returned error: 401/i,
    hint: 'the remote refused the credentials: check delivery.token, or the GitHub token or App drydock pushes with',
  },
  {
    pattern: /Permission to \S+ denied|Permission denied|returned error: 403|Host key verification failed/i,
    hint: 'the credentials may not push to this repository: give them write access, or set delivery.token',
  },
  {
    pattern: /Repository not found|does not appear to be a git repository|returned error: 404/i,
    hint: "the remote's repository does not exist or is not visible to the credentials: check the remote's URL",
  },
];

/** For git's text of a failure that no retry mends: what to do; undefined when it may pass (network, 5xx). */
export function permanentGitFailure(text: string): string | undefined {
  return PERMANENT_GIT.find(({ pattern }) => pattern.test(text))?.hint;
}

/**
 * Whether a GitHub call failed for good: credentials missing or refused (401, the App not installed), no access
 * or not found (403 other than a rate limit, 404), a request GitHub refuses (422, other 4xx). The client has
 * retried 5xx, 429 and rate limits already; no answer at all (the network) is transient.
 */
export function permanentGithubFailure(err: unknown): boolean {
  if (!(err instanceof GithubCallError)) return false;
  if (err.credentials) return true;
  const status = err.status;
  if (status === null || status < 400 || status >= 500) return false;
  if (status === 408 || status === 429) return false;
  if (status === 403 && /rate limit|abuse/i.test(err.message)) return false;
  // Just after a push GitHub may not see the branch yet: "head" invalid is worth another try.
  if (status === 422 && err.details.some((d) => /\bhead\b/i.test(d))) return false;
  return true;
}

/** What to do about a GitHub call that failed for good, to follow its message; empty when nothing useful is known. */
export function githubFailureHint(err: GithubCallError): string {
  if (err.credentials || err.status === 401) {
    return "GitHub refused drydock's credentials: check github.token (GITHUB_TOKEN), or that the App is installed on the repository";
  }
  if (err.status === 403) {
    return "drydock's GitHub credentials may not do this: the token or App needs pull requests and issues: write on the repository";
  }
  if (err.status === 404) {
    return "GitHub does not show the repository or branch to drydock's credentials: check the repository's name and the token's or App's access";
  }
  return err.details.length ? err.details.join('; ') : '';
}
