/**
 * A stand-in for the GitHub REST API: a real `node:http` server on 127.0.0.1 serving the calls drydock makes,
 * so tests drive the unmodified Octokit client through `baseUrl`.
 *
 *   GET  /user                                     200, the user the request's token belongs to ({login, ...})
 *   POST /repos/:owner/:repo/issues/:n/comments   201, the comment, written by the token's user
 *   GET  /repos/:owner/:repo/issues/:n/comments    200, the comments oldest first, paginated as GitHub does
 *                                                  (per_page default 30, at most 100; page from 1; a Link
 *                                                  header with rel="next", "last", "first", "prev"); 404 for
 *                                                  an issue the fake does not know (one neither set with
 *                                                  `setPullRequest`, opened here, nor commented on)
 *   POST /repos/:owner/:repo/statuses/:sha        201, the status
 *   GET  /repos/:owner/:repo/pulls/:n             200 from a fixture (`setPullRequest`), else 404
 *   POST /repos/:owner/:repo/pulls                201, the new pull request; 422 as GitHub answers (below)
 *   GET  /repos/:owner/:repo/pulls?head=o:branch  200, the pull requests opened here (open ones by default)
 *   GET  /repos/:owner/:repo/actions/runs/:id/jobs 200 `{total_count, jobs}` of a run set with `setWorkflowJobs`
 *                                                  (else 404), paginated as GitHub does (per_page default 30, at
 *                                                  most 100; Link rel="next"); `filter` latest (default) or all,
 *                                                  anything else 422
 *   GET  /repos/:owner/:repo/check-suites/:id/check-runs
 *                                                  200 `{total_count, check_runs}` of a suite set with
 *                                                  `setCheckRuns` (else 404), paginated and filtered the same way
 *   POST /repos/:owner/:repo/check-runs, PATCH and GET /repos/:owner/:repo/check-runs/:id,
 *   GET  /repos/:owner/:repo/commits/:sha/check-runs
 *                                                  check runs, written only with an App's installation token and
 *                                                  checked as GitHub checks them (tests/support/fake-checks.ts);
 *                                                  `checkRuns()` lists them
 *
 * Creating a pull request checks what GitHub checks (https://docs.github.com/rest/pulls/pulls#create-a-pull-request)
 * and answers 422 "Validation Failed" with GitHub's `errors`: a missing title/head/base ({field, code:
 * "missing"}), an open pull request for the same head ("A pull request already exists for owner:branch."),
 * and, for a repository linked to a git directory (`linkRepository`), a base or head branch that does not
 * exist there ({field: "base"|"head", code: "invalid"}) or a head with no commits the base lacks ("No commits
 * between base and head"). A head is `branch` (of the repository itself) or `owner:branch`
 * (https://docs.github.com/rest/pulls/pulls#create-a-pull-request: "For cross-repository pull requests in the
 * same network, namespace head with a user like this: username:branch"): an owner other than the
 * repository's names a fork, which must be linked as one (`linkRepository(fork, dir, {forkOf})`), its branch
 * looked up there; an owner with no linked fork is an invalid head.
 *
 * With option `app`, the fake also plays a GitHub App (tests/support/fake-github-app.ts): its endpoints (GET /app,
 * GET /app/installations, GET /repos/:owner/:repo/installation, POST /app/installations/:id/access_tokens) take
 * only a JWT GitHub would take, and the installation tokens they hand out act as `<slug>[bot]` on the endpoints
 * below, within their installation's repositories and permissions, until they expire.
 *
 * Every request is recorded (method, path, parsed body, headers, status answered). Requests must carry
 * `Authorization: token <t>` or `Bearer <t>` with a token the fake knows (401 `Bad credentials` otherwise):
 * the configured one, which belongs to `login` (default `drydock-bot`), or one added with `addUser` (someone
 * else, e.g. a pull request's author). A comment records the login of the token that posted it. `fail` scripts
 * failures (500, 403 with retry-after, ...) consumed by the next matching requests. `hold` makes the fake
 * do what a request asks and then keep its answer back until released: the caller never learns that GitHub
 * accepted it (a test kills the caller meanwhile).
 */
import { execFileSync } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { createFakeChecks, type FakeCheckRun } from './fake-checks.js';
import { createFakeApp, type FakeApp, type FakeAppOptions } from './fake-github-app.js';

export interface GithubCall {
  method: string;
  path: string;
  body: any;
  headers: Record<string, string | string[] | undefined>;
  /** Status answered (set when the answer is sent). */
  status?: number;
  receivedAt: number;
}

export interface ScriptedFailure {
  status: number;
  /** Sent as `retry-after` (seconds). */
  retryAfter?: number;
  message?: string;
  headers?: Record<string, string>;
  /** Only requests whose `METHOD path` matches (default: any). */
  match?: RegExp;
  /** How many matching requests fail (default 1). */
  times?: number;
}

export interface HeldAnswer {
  /** Resolves with the request once it was carried out and its answer is being held. */
  reached: Promise<GithubCall>;
  /** Sends the held answer (to a caller that may be gone). */
  release(): void;
}

export interface FakeGithub {
  url: string;
  token: string;
  /** The GitHub App (option `app`, tests/support/fake-github-app.ts): its endpoints and installation tokens. */
  app: FakeApp | null;
  /** The login of `token`'s user. */
  login: string;
  /** Another account: requests with `token` act as `login`. */
  addUser(token: string, login: string): void;
  calls: GithubCall[];
  /** The pull request `GET /repos/:repo/pulls/:n` returns. */
  setPullRequest(repository: string, number: number, data: Record<string, unknown>): void;
  /** The jobs of workflow run `runId` (as the REST API shows a job: name, conclusion, html_url, steps, ...). */
  setWorkflowJobs(repository: string, runId: number, jobs: Record<string, unknown>[]): void;
  /** The check runs of check suite `suiteId` (name, conclusion, html_url, details_url, ...). */
  setCheckRuns(repository: string, suiteId: number, runs: Record<string, unknown>[]): void;
  /** The next matching requests fail (scripts are consumed in order). */
  fail(...failures: ScriptedFailure[]): void;
  /**
   * The next request whose `METHOD path` matches (and whose parsed body `body` accepts, when given) is carried
   * out, and its answer held until released.
   */
  hold(match: RegExp, body?: (body: any) => boolean): HeldAnswer;
  /** Comments posted successfully, oldest first. */
  comments(
    repository?: string,
    number?: number,
  ): { repository: string; number: number; body: string; login: string }[];
  /** Check runs created, oldest first, as they are now (of commit `sha` only, when given). */
  checkRuns(sha?: string): FakeCheckRun[];
  /** Statuses set successfully, oldest first. */
  statuses(
    sha?: string,
  ): { repository: string; sha: string; state: string; context: string; description: string }[];
  /**
   * Pull requests are checked against the branches of this git directory (a bare "remote" repository);
   * `forkOf`: the repository is a fork of that one (a pull request there may name its head `owner:branch`).
   */
  linkRepository(repository: string, gitDir: string, opts?: { forkOf?: string }): void;
  /** Pull requests opened successfully, oldest first. */
  pullRequests(repository?: string): FakePullRequest[];
  /** Polls until `check` is truthy (fails after `ms`). */
  waitFor<T>(check: () => T | undefined | null | false, ms?: number, what?: string): Promise<T>;
  close(): Promise<void>;
}

export interface FakePullRequest {
  repository: string;
  number: number;
  title: string;
  body: string;
  /** The head branch, and the owner of the repository it is in (the repository's own, or a fork's). */
  head: string;
  headOwner: string;
  /** The repository the head branch is in: this one, or a linked fork of it. */
  headRepository: string;
  base: string;
  html_url: string;
  state: 'open' | 'closed';
}

const REPO = '([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)';
const PULLS = new RegExp(`^/repos/${REPO}/pulls$`);
const COMMENTS = new RegExp(`^/repos/${REPO}/issues/(\\d+)/comments$`);
const STATUSES = new RegExp(`^/repos/${REPO}/statuses/([0-9a-f]{40})$`);
const PULL = new RegExp(`^/repos/${REPO}/pulls/(\\d+)$`);
const RUN_JOBS = new RegExp(`^/repos/${REPO}/actions/runs/(\\d+)/jobs$`);
const SUITE_RUNS = new RegExp(`^/repos/${REPO}/check-suites/(\\d+)/check-runs$`);
const STATES = new Set(['error', 'failure', 'pending', 'success']);

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startFakeGithub(opts: {
  token: string;
  login?: string;
  /** A GitHub App whose JWTs and installation tokens the fake takes as well. */
  app?: FakeAppOptions;
}): Promise<FakeGithub> {
  const calls: GithubCall[] = [];
  const app = opts.app ? createFakeApp(opts.app) : null;
  const checks = createFakeChecks();
  const login = opts.login ?? 'drydock-bot';
  /** Token → the login of its user. */
  const users = new Map<string, string>([[opts.token, login]]);
  const pulls = new Map<string, Record<string, unknown>>();
  /** `owner/repo jobs <run id>` or `owner/repo runs <suite id>` → its items. */
  const listed = new Map<string, Record<string, unknown>[]>();
  const failures: (ScriptedFailure & { left: number })[] = [];
  const posted: {
    id: number;
    repository: string;
    number: number;
    body: string;
    login: string;
    createdAt: string;
  }[] = [];
  const holds: {
    match: RegExp;
    body: (body: any) => boolean;
    reached: (call: GithubCall) => void;
    released: Promise<void>;
  }[] = [];
  const statuses: { repository: string; sha: string; state: string; context: string; description: string }[] =
    [];
  const sockets = new Set<Socket>();
  const linked = new Map<string, string>();
  /** Linked forks: fork (owner/repo) -> the repository it is a fork of. */
  const forks = new Map<string, string>();
  const opened: FakePullRequest[] = [];
  let nextPullNumber = 100;
  let nextId = 1;
  /** The commit a branch points at in the linked git directory, or null. */
  const branchSha = (gitDir: string, branch: string): string | null => {
    try {
      return execFileSync(
        'git',
        ['-C', gitDir, 'rev-parse', '--verify', '-q', `refs/heads/${branch}^{commit}`],
        {
          encoding: 'utf8',
          env: {
            PATH: process.env.PATH ?? '/usr/bin:/bin',
            GIT_CONFIG_NOSYSTEM: '1',
            GIT_CONFIG_GLOBAL: '/dev/null',
          },
        },
      ).trim();
    } catch {
      return null;
    }
  };
  /** Commits of `head` (in `gitDir`) that `base` lacks; `baseDir` lends its objects when it is another one. */
  const commitsBetween = (gitDir: string, base: string, head: string, baseDir = gitDir): number =>
    Number(
      execFileSync('git', ['-C', gitDir, 'rev-list', '--count', `${base}..${head}`], {
        encoding: 'utf8',
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_CONFIG_GLOBAL: '/dev/null',
          ...(baseDir !== gitDir ? { GIT_ALTERNATE_OBJECT_DIRECTORIES: join(baseDir, 'objects') } : {}),
        },
      }).trim(),
    );
  const validationFailed = (call: GithubCall, res: ServerResponse, errors: Record<string, string>[]) =>
    send(call, res, 422, {
      message: 'Validation Failed',
      errors,
      documentation_url: 'https://docs.github.com/rest/pulls/pulls#create-a-pull-request',
      status: '422',
    });

  const send = (call: GithubCall, res: ServerResponse, status: number, body: unknown, headers = {}) => {
    const held = holds.find((h) => h.match.test(`${call.method} ${call.path}`) && h.body(call.body));
    if (held) {
      holds.splice(holds.indexOf(held), 1);
      held.reached(call);
      void held.released.then(() => {
        if (!res.destroyed) send(call, res, status, body, headers);
      });
      return;
    }
    call.status = status;
    const payload = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(payload)),
      'x-github-request-id': `FAKE:${nextId++}`,
      ...headers,
    });
    res.end(payload);
  };

  /** Answers with the next scripted failure matching the call, if any. */
  const scripted = (call: GithubCall, res: ServerResponse): boolean => {
    const failure = failures.find((f) => !f.match || f.match.test(`${call.method} ${call.path}`));
    if (!failure) return false;
    failure.left -= 1;
    if (failure.left <= 0) failures.splice(failures.indexOf(failure), 1);
    const headers: Record<string, string> = { ...failure.headers };
    if (failure.retryAfter !== undefined) headers['retry-after'] = String(failure.retryAfter);
    send(
      call,
      res,
      failure.status,
      {
        message: failure.message ?? `fake-github: scripted ${failure.status}`,
        status: String(failure.status),
      },
      headers,
    );
    return true;
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const method = req.method ?? 'GET';
    let body: any;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    const call: GithubCall = { method, path, body, headers: { ...req.headers }, receivedAt: Date.now() };
    calls.push(call);

    const auth = req.headers.authorization ?? '';
    // The App's endpoints and installation tokens (tests/support/fake-github-app.ts) answer for themselves.
    const query = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams;
    const verdict = app?.judge(method, path, query, auth, `http://${req.headers.host}`) ?? null;
    if (verdict && 'status' in verdict) {
      if (verdict.status < 400 && scripted(call, res)) return;
      send(call, res, verdict.status, verdict.body, verdict.headers);
      return;
    }
    const m = /^(token|bearer)\s+(\S+)$/i.exec(auth);
    const user = verdict?.login ?? (m ? users.get(m[2]!) : undefined);
    if (user === undefined) {
      send(call, res, 401, {
        message: 'Bad credentials',
        documentation_url: 'https://docs.github.com/rest',
        status: '401',
      });
      return;
    }
    if (scripted(call, res)) return;

    if (path === '/user' && method === 'GET') {
      send(call, res, 200, userJson(user));
      return;
    }
    // An installation token acts as the App (verdict.login): only it may write check runs.
    const asApp = app && verdict?.login ? { id: app.id, slug: app.slug } : null;
    const checked = checks.handle(method, path, query, body, user, asApp);
    if (checked) {
      send(call, res, checked.status, checked.body, checked.headers);
      return;
    }
    let hit = COMMENTS.exec(path);
    if (hit && method === 'GET') {
      const repository = `${hit[1]}/${hit[2]}`;
      const number = Number(hit[3]);
      const known =
        pulls.has(`${repository}#${number}`) ||
        opened.some((p) => p.repository === repository && p.number === number) ||
        posted.some((c) => c.repository === repository && c.number === number);
      if (!known) {
        send(call, res, 404, {
          message: 'Not Found',
          documentation_url: 'https://docs.github.com/rest/issues/comments#list-issue-comments',
          status: '404',
        });
        return;
      }
      const query = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams;
      // GitHub takes any per_page and serves at most 100; a page past the end is an empty list.
      const perPage = Math.min(100, Math.max(1, Number(query.get('per_page') ?? 30) || 30));
      const page = Math.max(1, Number(query.get('page') ?? 1) || 1);
      const all = posted.filter((c) => c.repository === repository && c.number === number);
      const last = Math.max(1, Math.ceil(all.length / perPage));
      const link = (p: number, rel: string) =>
        `<${'https://api.github.com'}/repositories/1/issues/${number}/comments?per_page=${perPage}&page=${p}>; rel="${rel}"`;
      const links = [
        ...(page < last ? [link(page + 1, 'next'), link(last, 'last')] : []),
        ...(page > 1 ? [link(1, 'first'), link(page - 1, 'prev')] : []),
      ];
      send(
        call,
        res,
        200,
        all.slice((page - 1) * perPage, page * perPage).map((c) => ({
          id: c.id,
          node_id: `IC_${c.id}`,
          url: `https://api.github.com/repos/${repository}/issues/comments/${c.id}`,
          html_url: `https://github.com/${repository}/pull/${number}#issuecomment-${c.id}`,
          body: c.body,
          user: userJson(c.login),
          created_at: c.createdAt,
          updated_at: c.createdAt,
        })),
        links.length ? { link: links.join(', ') } : {},
      );
      return;
    }
    if (hit && method === 'POST') {
      if (typeof body?.body !== 'string' || body.body === '') {
        send(call, res, 422, { message: 'Validation Failed', errors: [{ field: 'body', code: 'missing' }] });
        return;
      }
      if (body.body.length > 65_536) {
        send(call, res, 422, {
          message: 'Validation Failed',
          errors: [{ resource: 'IssueComment', code: 'custom', field: 'body', message: 'body is too long' }],
        });
        return;
      }
      const repository = `${hit[1]}/${hit[2]}`;
      const number = Number(hit[3]);
      const id = nextId++;
      posted.push({
        id,
        repository,
        number,
        body: body.body,
        login: user,
        createdAt: new Date().toISOString(),
      });
      send(call, res, 201, {
        id,
        node_id: `IC_${id}`,
        url: `${'https://api.github.com'}/repos/${repository}/issues/comments/${id}`,
        html_url: `https://github.com/${repository}/pull/${number}#issuecomment-${id}`,
        body: body.body,
        user: userJson(user),
        created_at: new Date().toISOString(),
        updated_at: new Date().toISOString(),
      });
      return;
    }
    hit = STATUSES.exec(path);
    if (hit && method === 'POST') {
      const description = typeof body?.description === 'string' ? body.description : '';
      if (!STATES.has(body?.state) || description.length >= 140) {
        send(call, res, 422, {
          message: 'Validation Failed',
          errors: [{ resource: 'Status', code: 'invalid' }],
        });
        return;
      }
      const entry = {
        repository: `${hit[1]}/${hit[2]}`,
        sha: hit[3]!,
        state: body.state as string,
        context: typeof body.context === 'string' ? body.context : 'default',
        description,
      };
      statuses.push(entry);
      const id = nextId++;
      send(call, res, 201, { id, ...entry, created_at: new Date().toISOString() });
      return;
    }
    hit = PULLS.exec(path);
    if (hit && method === 'POST') {
      const repository = `${hit[1]}/${hit[2]}`;
      const owner = hit[1]!;
      for (const field of ['title', 'head', 'base'] as const) {
        if (typeof body?.[field] !== 'string' || body[field] === '') {
          validationFailed(call, res, [{ resource: 'PullRequest', field, code: 'missing' }]);
          return;
        }
      }
      if (body.body !== undefined && (typeof body.body !== 'string' || body.body.length > 65_536)) {
        validationFailed(call, res, [
          {
            resource: 'PullRequest',
            code: 'custom',
            field: 'body',
            message: 'body is too long (maximum is 65536 characters)',
          },
        ]);
        return;
      }
      // head is `branch` or `owner:branch`: another owner's is a branch of their fork of this repository.
      const colon = body.head.indexOf(':');
      const headOwner = colon >= 0 ? body.head.slice(0, colon) : owner;
      const headBranch = colon >= 0 ? body.head.slice(colon + 1) : body.head;
      const label = `${headOwner}:${headBranch}`;
      const sameOwner = headOwner.toLowerCase() === owner.toLowerCase();
      const fork = sameOwner
        ? null
        : [...forks].find(
            ([f, of]) => of === repository && f.split('/')[0]!.toLowerCase() === headOwner.toLowerCase(),
          );
      if (!sameOwner && !fork) {
        validationFailed(call, res, [{ resource: 'PullRequest', field: 'head', code: 'invalid' }]);
        return;
      }
      const gitDir = linked.get(repository);
      if (gitDir) {
        const headDir = fork ? linked.get(fork[0]) : gitDir;
        const baseSha = branchSha(gitDir, body.base);
        if (!baseSha) {
          validationFailed(call, res, [{ resource: 'PullRequest', field: 'base', code: 'invalid' }]);
          return;
        }
        const headSha = headDir ? branchSha(headDir, headBranch) : null;
        if (!headSha) {
          validationFailed(call, res, [{ resource: 'PullRequest', field: 'head', code: 'invalid' }]);
          return;
        }
        if (commitsBetween(headDir!, baseSha, headSha, gitDir) === 0) {
          validationFailed(call, res, [
            {
              resource: 'PullRequest',
              code: 'custom',
              message: `No commits between ${body.base} and ${headBranch}`,
            },
          ]);
          return;
        }
      }
      if (
        opened.some(
          (p) => p.repository === repository && p.state === 'open' && `${p.headOwner}:${p.head}` === label,
        )
      ) {
        validationFailed(call, res, [
          { resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${label}.` },
        ]);
        return;
      }
      const number = nextPullNumber++;
      const pr: FakePullRequest = {
        repository,
        number,
        title: body.title,
        body: body.body ?? '',
        head: headBranch,
        headOwner,
        headRepository: fork ? fork[0] : repository,
        base: body.base,
        html_url: `https://github.com/${repository}/pull/${number}`,
        state: 'open',
      };
      opened.push(pr);
      send(call, res, 201, pullJson(pr), {
        location: `https://api.github.com/repos/${repository}/pulls/${number}`,
      });
      return;
    }
    if (hit && method === 'GET') {
      const repository = `${hit[1]}/${hit[2]}`;
      const query = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams;
      const state = query.get('state') ?? 'open';
      const head = query.get('head');
      const items = opened.filter(
        (p) =>
          p.repository === repository &&
          (state === 'all' || p.state === state) &&
          (!head || `${p.headOwner}:${p.head}` === head),
      );
      send(call, res, 200, items.map(pullJson));
      return;
    }
    const jobsHit = RUN_JOBS.exec(path) ?? SUITE_RUNS.exec(path);
    if (jobsHit && method === 'GET') {
      const jobs = RUN_JOBS.test(path);
      const items = listed.get(`${jobsHit[1]}/${jobsHit[2]} ${jobs ? 'jobs' : 'runs'} ${jobsHit[3]}`);
      const docs = jobs
        ? 'https://docs.github.com/rest/actions/workflow-jobs#list-jobs-for-a-workflow-run'
        : 'https://docs.github.com/rest/checks/runs#list-check-runs-in-a-check-suite';
      if (!items) {
        send(call, res, 404, { message: 'Not Found', documentation_url: docs, status: '404' });
        return;
      }
      const query = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams;
      const filter = query.get('filter') ?? 'latest';
      if (filter !== 'latest' && filter !== 'all') {
        send(call, res, 422, {
          message: 'Validation Failed',
          errors: [{ resource: 'Search', field: 'filter', code: 'invalid' }],
          documentation_url: docs,
          status: '422',
        });
        return;
      }
      const perPage = Math.min(100, Math.max(1, Number(query.get('per_page') ?? 30) || 30));
      const page = Math.max(1, Number(query.get('page') ?? 1) || 1);
      const last = Math.max(1, Math.ceil(items.length / perPage));
      const next = `<https://api.github.com${path}?per_page=${perPage}&page=${page + 1}>; rel="next"`;
      send(
        call,
        res,
        200,
        {
          total_count: items.length,
          [jobs ? 'jobs' : 'check_runs']: items.slice((page - 1) * perPage, page * perPage),
        },
        page < last ? { link: next } : {},
      );
      return;
    }
    hit = PULL.exec(path);
    if (hit && method === 'GET') {
      const pr = pulls.get(`${hit[1]}/${hit[2]}#${hit[3]}`);
      if (pr) send(call, res, 200, pr);
      else send(call, res, 404, { message: 'Not Found', status: '404' });
      return;
    }
    send(call, res, 404, { message: 'Not Found', status: '404' });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | null = null;

  return {
    url: `http://127.0.0.1:${port}`,
    token: opts.token,
    app,
    login,
    calls,
    addUser(token, who) {
      users.set(token, who);
    },
    setPullRequest(repository, number, data) {
      pulls.set(`${repository}#${number}`, data);
    },
    setWorkflowJobs(repository, runId, jobs) {
      listed.set(`${repository} jobs ${runId}`, jobs);
    },
    setCheckRuns(repository, suiteId, runs) {
      listed.set(`${repository} runs ${suiteId}`, runs);
    },
    fail(...more) {
      for (const f of more) failures.push({ ...f, left: f.times ?? 1 });
    },
    hold(match, body = () => true) {
      let reached!: (call: GithubCall) => void;
      let release!: () => void;
      const reachedP = new Promise<GithubCall>((resolve) => {
        reached = resolve;
      });
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      holds.push({ match, body, reached, released });
      return { reached: reachedP, release };
    },
    comments(repository, number) {
      return posted
        .filter(
          (c) =>
            (!repository || c.repository === repository) && (number === undefined || c.number === number),
        )
        .map(({ repository, number, body, login }) => ({ repository, number, body, login }));
    },
    statuses(sha) {
      return statuses.filter((s) => !sha || s.sha === sha);
    },
    checkRuns(sha) {
      return checks.list(sha);
    },
    linkRepository(repository, gitDir, link = {}) {
      linked.set(repository, gitDir);
      if (link.forkOf) forks.set(repository, link.forkOf);
    },
    pullRequests(repository) {
      return opened.filter((p) => !repository || p.repository === repository);
    },
    async waitFor(check, ms = 10_000, what = 'condition') {
      const end = Date.now() + ms;
      for (;;) {
        const v = check();
        if (v) return v;
        if (Date.now() > end) throw new Error(`fake-github: timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      return closing;
    },
  };
}

/** A user as the REST API shows it (`GET /user`, a comment's `user`): the fields drydock and the tests read. */
function userJson(login: string): Record<string, unknown> {
  return {
    login,
    id: [...login].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 1_000_000_007, 7),
    type: login.endsWith('[bot]') || login.endsWith('-bot') ? 'Bot' : 'User',
    html_url: `https://github.com/${login}`,
  };
}

/** A pull request as the REST API returns it (the fields drydock and the tests read). */
function pullJson(p: FakePullRequest): Record<string, unknown> {
  const owner = p.repository.split('/')[0];
  return {
    url: `https://api.github.com/repos/${p.repository}/pulls/${p.number}`,
    html_url: p.html_url,
    number: p.number,
    state: p.state,
    title: p.title,
    body: p.body,
    head: { label: `${p.headOwner}:${p.head}`, ref: p.head, repo: { full_name: p.headRepository } },
    base: { label: `${owner}:${p.base}`, ref: p.base, repo: { full_name: p.repository } },
    user: { login: 'drydock-bot', type: 'Bot' },
  };
}
