import { describe, expect, it } from 'vitest';
import { permanentGitFailure, permanentGithubFailure } from '../../src/delivery/classify.js';
import { GithubCallError } from '../../src/github/client.js';

// Which delivery failures are retried: git's and GitHub's answers sorted into "a retry may mend it" and "fails at
// once, with what to do". (worker.test.ts shows both kinds end to end against real remotes.)

describe('git failures', () => {
  it('are permanent when the remote refuses credentials or access, or the repository is not there', () => {
    for (const text of [
      "fatal: Authentication failed for 'https://github.com/acme/widgets.git/'",
      'remote: Invalid username or token. Password authentication is not supported for Git operations.',
      "fatal: could not read Username for 'https://github.com': terminal prompts disabled",
      'remote: Permission to acme/widgets.git denied to someone.',
      'git@github.com: Permission denied (publickey).',
      "fatal: unable to access 'http://127.0.0.1:1/x.git/': The requested URL returned error: 403",
      'remote: Repository not found.',
      "fatal: '/srv/nowhere.git' does not appear to be a git repository",
      'Host key verification failed.',
    ]) {
      expect(permanentGitFailure(text), text).toBeTypeOf('string');
    }
  });

  it('are transient for the network, timeouts and a remote answering 5xx', () => {
    for (const text of [
      "fatal: unable to access 'https://github.com/acme/widgets.git/': Could not resolve host: github.com",
      "fatal: unable to access 'http://127.0.0.1:9/x.git/': Failed to connect to 127.0.0.1 port 9: Connection refused",
      "fatal: unable to access 'http://127.0.0.1:1/x.git/': The requested URL returned error: 503",
      'error: RPC failed; HTTP 502 curl 22 The requested URL returned error: 502',
      'fatal: the remote end hung up unexpectedly',
      'Command failed: git push (timed out)',
    ]) {
      expect(permanentGitFailure(text), text).toBeUndefined();
    }
  });
});

describe('GitHub failures', () => {
  const call = (status: number | null, message = 'Not Found', details: string[] = [], credentials = false) =>
    new GithubCallError('POST pull request acme/widgets', status, message, details, credentials);

  it('are permanent for refused credentials, no access, not found and invalid requests', () => {
    expect(permanentGithubFailure(call(401, 'Bad credentials'))).toBe(true);
    expect(permanentGithubFailure(call(403, 'Resource not accessible by integration'))).toBe(true);
    expect(permanentGithubFailure(call(404))).toBe(true);
    expect(permanentGithubFailure(call(422, 'Validation Failed', ['No commits between main and x']))).toBe(
      true,
    );
    expect(permanentGithubFailure(call(null, 'not installed', [], true))).toBe(true);
  });

  it('are transient with no answer, 5xx, 429, a rate limit, and anything that is no GitHub call', () => {
    expect(permanentGithubFailure(call(null, 'fetch failed'))).toBe(false);
    expect(permanentGithubFailure(call(502, 'Bad Gateway'))).toBe(false);
    expect(permanentGithubFailure(call(429, 'Too Many Requests'))).toBe(false);
    expect(permanentGithubFailure(call(403, 'API rate limit exceeded for installation'))).toBe(false);
    expect(permanentGithubFailure(new Error('something else'))).toBe(false);
  });
});
