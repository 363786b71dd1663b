import { afterEach, expect, it } from 'vitest';
import { TokenAuth } from '../../src/github/auth.js';
import { GithubApi, GithubCallError } from '../../src/github/client.js';
import { silentLogger } from '../../src/logger.js';
import { type FakeGithub, startFakeGithub } from '../support/fake-github.js';

// Listing a pull request's comments, which the reporter reads before posting a plan: every page, through
// the real Octokit against the fake GitHub, which pages as GitHub does.

const TOKEN = 'ghp_FAKElist0123456789abcdefghijklmnopqrst';
const REPO = 'acme/widgets';
let github: FakeGithub | undefined;
afterEach(async () => {
  await github?.close();
});

it('reads every page of comments, oldest first; an unknown issue is a 404', async () => {
  github = await startFakeGithub({ token: TOKEN });
  const api = new GithubApi({ auth: new TokenAuth(TOKEN), baseUrl: github.url, logger: silentLogger() });
  github.setPullRequest(REPO, 5, { number: 5 });
  for (let i = 1; i <= 205; i++) await api.createComment(REPO, 5, `comment ${i}`);
  const all = await api.listComments(REPO, 5);
  expect(all.map((c) => c.body)).toEqual(Array.from({ length: 205 }, (_, i) => `comment ${i + 1}`));
  const pages = github.calls.filter((c) => c.method === 'GET');
  expect(pages).toHaveLength(3);

  const err = await api.listComments(REPO, 6).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(GithubCallError);
  expect((err as GithubCallError).status).toBe(404);
  api.close();
});

it('the fake pages as GitHub does: at most 100 a page, a Link header naming the next and last pages', async () => {
  github = await startFakeGithub({ token: TOKEN });
  const api = new GithubApi({ auth: new TokenAuth(TOKEN), baseUrl: github.url, logger: silentLogger() });
  github.setPullRequest(REPO, 7, { number: 7 });
  for (let i = 1; i <= 150; i++) await api.createComment(REPO, 7, `c${i}`);
  api.close();
  const get = (query: string) =>
    fetch(`${github!.url}/repos/${REPO}/issues/7/comments${query}`, {
      headers: { authorization: `token ${TOKEN}` },
    });
  const first = await get('?per_page=500');
  expect(first.status).toBe(200);
  expect(((await first.json()) as unknown[]).length).toBe(100);
  expect(first.headers.get('link')).toMatch(/page=2>; rel="next".*page=2>; rel="last"/);
  const second = await get('?per_page=100&page=2');
  expect(((await second.json()) as { body: string }[]).map((c) => c.body)[0]).toBe('c101');
  expect(second.headers.get('link')).not.toMatch(/rel="next"/);
  expect(second.headers.get('link')).toMatch(/rel="prev"/);
  const plain = await get('');
  expect(((await plain.json()) as unknown[]).length).toBe(30);
  expect((await get('?page=9')).status).toBe(200);
});

it("GET /user answers the token's own login (401 without a valid token); drydock reads it once; comments name their author", async () => {
  github = await startFakeGithub({ token: TOKEN });
  github.addUser('ghp_FAKEother0123456789abcdefghijklmnopq', 'mallory');
  const whoami = (token: string) =>
    fetch(`${github!.url}/user`, { headers: { authorization: `token ${token}` } });
  expect(((await (await whoami(TOKEN)).json()) as { login: string }).login).toBe('drydock-bot');
  const other = await whoami('ghp_FAKEother0123456789abcdefghijklmnopq');
  expect(((await other.json()) as { login: string }).login).toBe('mallory');
  const bad = await whoami('ghp_nobody');
  expect(bad.status).toBe(401);
  expect(((await bad.json()) as { message: string }).message).toBe('Bad credentials');

  const api = new GithubApi({ auth: new TokenAuth(TOKEN), baseUrl: github.url, logger: silentLogger() });
  expect(await api.authenticatedLogin(REPO)).toBe('drydock-bot');
  expect(await api.authenticatedLogin(REPO)).toBe('drydock-bot');
  expect(github.calls.filter((c) => c.path === '/user' && c.status === 200)).toHaveLength(3);
  github.setPullRequest(REPO, 8, { number: 8 });
  await api.createComment(REPO, 8, 'mine');
  await fetch(`${github.url}/repos/${REPO}/issues/8/comments`, {
    method: 'POST',
    headers: {
      authorization: 'token ghp_FAKEother0123456789abcdefghijklmnopq',
      'content-type': 'application/json',
    },
    body: JSON.stringify({ body: 'theirs' }),
  });
  expect((await api.listComments(REPO, 8)).map((c) => [c.body, c.author])).toEqual([
    ['mine', 'drydock-bot'],
    ['theirs', 'mallory'],
  ]);
  api.close();
});
