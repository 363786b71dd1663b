import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { TokenAuth } from '../../src/github/auth.js';
import { GithubApi, GithubCallError } from '../../src/github/client.js';
import { silentLogger } from '../../src/logger.js';
import { type FakeGithub, startFakeGithub } from '../support/fake-github.js';
import { git, makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';

// Opening a pull request through the real Octokit against the fake GitHub, which checks heads as GitHub
// does: a branch of the repository itself, or `owner:branch` of a fork of it; an owner with no such fork is
// an invalid head, never taken for a branch of the repository.

const TOKEN = 'ghp_FAKEpulls0123456789abcdefghijklmnopqr';
const REPO = 'acme/widgets';
let github: FakeGithub | undefined;
let tmp: { path: string; remove(): void } | undefined;
afterEach(async () => {
  await github?.close();
  tmp?.remove();
});

it('opens pull requests from a branch of the repository or of a linked fork, and refuses an unknown owner', async () => {
  github = await startFakeGithub({ token: TOKEN });
  tmp = tempDir('drydock-fake-pulls-');
  const repo = join(tmp.path, 'repo');
  const remote = join(tmp.path, 'remote.git');
  const fork = join(tmp.path, 'fork.git');
  makeRepo(repo, { 'README.md': '# widgets\n' });
  git(tmp.path, 'init', '-q', '--bare', '-b', 'main', remote);
  git(repo, 'push', '-q', remote, 'main');
  git(tmp.path, 'clone', '-q', '--bare', remote, fork);
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'on a branch');
  git(repo, 'push', '-q', remote, 'HEAD:refs/heads/topic');
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'on the fork');
  git(repo, 'push', '-q', fork, 'HEAD:refs/heads/feature');
  github.linkRepository(REPO, remote);
  github.linkRepository('mallory/widgets', fork, { forkOf: REPO });
  const api = new GithubApi({ auth: new TokenAuth(TOKEN), baseUrl: github.url, logger: silentLogger() });
  const open = (head: string) => api.createPullRequest(REPO, { title: 't', head, base: 'main', body: 'b' });

  expect(await open('topic')).toMatchObject({ existing: false });
  expect(await open('mallory:feature')).toMatchObject({ existing: false });
  expect(github.pullRequests(REPO)).toMatchObject([
    { head: 'topic', headOwner: 'acme', headRepository: REPO },
    { head: 'feature', headOwner: 'mallory', headRepository: 'mallory/widgets' },
  ]);
  // The same head again: the open one, found by its owner:branch label.
  expect(await open('mallory:feature')).toMatchObject({ existing: true, number: 101 });
  // No fork of that owner, and a branch only the fork has: both invalid heads (422).
  for (const head of ['nobody:topic', 'feature']) {
    const err = await open(head).catch((e: unknown) => e);
    expect(err, head).toBeInstanceOf(GithubCallError);
    expect((err as GithubCallError).status).toBe(422);
  }
  const refused = github.calls.filter((c) => c.method === 'POST' && c.status === 422).at(-2);
  expect(refused?.body.head).toBe('nobody:topic');
  api.close();
});
