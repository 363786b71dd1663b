import { Octokit } from '@octokit/rest';
import { pause } from '../clock.js';
import type { Logger } from '../logger.js';
import { type GithubAuth, GithubAuthError } from './auth.js';
import { webUrl } from './events/read.js';

/** How often and how long a GitHub call is tried. */
export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  /** First backoff when GitHub names no wait; doubled per try, with jitter. */
  baseDelayMs: number;
  /** The longest wait drydock accepts; GitHub asking for longer (retry-after, rate-limit reset) ends the tries. */
  maxDelayMs: number;
  /** Per try. */
  timeoutMs: number;
}

/** Reporting runs off the event path: a few tries, waiting as long as GitHub asks within a minute. */
export const REPORT_RETRY: RetryPolicy = {
  attempts: 4,
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
  timeoutMs: 30_000,
};
/** A lookup answers a webhook, which GitHub wants answered within 10 s: one quick retry at most. */
export const LOOKUP_RETRY: RetryPolicy = {
  attempts: 2,
  baseDelayMs: 500,
  maxDelayMs: 2_000,
  timeoutMs: 3_000,
};

export type CommitState = 'pending' | 'success' | 'failure' | 'error';

export interface GithubApiOptions {
  /** Whose credentials each call carries: the token of the repository it is about (src/github/auth.ts). */
  auth: GithubAuth;
  /** github.api_url, e.g. https://api.github.com */
  baseUrl: string;
  logger: Logger;
  reportRetry?: Partial<RetryPolicy>;
  lookupRetry?: Partial<RetryPolicy>;
}

/** A failed GitHub call as it may be logged: status and message, never a token or the request. */
export class GithubCallError extends Error {
  constructor(
    readonly call: string,
    readonly status: number | null,
    message: string,
    /** The `errors[].message` texts of a 422 answer (scrubbed), e.g. "A pull request already exists for …". */
    readonly details: string[] = [],
    /** Failed for want of credentials (the App not installed on the repository, its JWT refused), not the call. */
    readonly credentials = false,
  ) {
    super(`${call}: ${status ?? 'no response'} ${message}`);
  }
}

const noop = () => {};
/** GitHub serves at most 100 items a page. */
const COMMENTS_PER_PAGE = 100;
/** Pages read at most (100,000 comments): a bound on a pull request that never ends. */
const MAX_COMMENT_PAGES = 1_000;

/** Reads a pull request (GET /repos/:repo/pulls/:n): its payload, or null when GitHub does not know it. */
export type PullRequestLookup = (repository: string, number: number) => Promise<unknown | null>;

/** A comment on an issue or pull request, as GitHub lists it. */
export interface IssueComment {
  id: number;
  /** Its web address (html_url). */
  url: string;
  body: string;
  /** The login of its author; null for a deleted account. */
  author: string | null;
}

/** The jobs GitHub is asked for about a failed run: a workflow run's jobs, or a check suite's check runs. */
export type FailedJobsQuery =
  | { kind: 'workflow_run'; runId: number }
  | { kind: 'check_suite'; suiteId: number };

/**
 * A job of a failed run that did not succeed. External: its name and step names are whatever the workflow's
 * author wrote, and reach the model only as untrusted data.
 */
export interface FailedJob {
  name: string;
  conclusion: string;
  /** The job's page on GitHub, which shows its log (html_url). */
  url: string | null;
  /** A check run's page at the service that ran it (details_url), where its log is. */
  detailsUrl: string | null;
  /** A workflow job's steps that failed. */
  failedSteps: string[];
}

/** A check run's status as drydock sets it (GitHub Actions alone may set waiting, requested, pending). */
export type CheckRunStatus = 'queued' | 'in_progress' | 'completed';
/** A completed check run's conclusion as drydock may set it (GitHub alone sets stale). */
export type CheckRunConclusion =
  | 'action_required'
  | 'cancelled'
  | 'failure'
  | 'neutral'
  | 'success'
  | 'skipped'
  | 'timed_out';

/** A button on a check run (GitHub: label at most 20 characters, description 40, identifier 20). */
export interface CheckRunAction {
  label: string;
  description: string;
  identifier: string;
}

/** What a check run says: the fields drydock sets when creating or updating one. */
export interface CheckRunFields {
  status: CheckRunStatus;
  /** Required with status completed. */
  conclusion?: CheckRunConclusion;
  detailsUrl?: string;
  output: { title: string; summary: string };
  /** The buttons; an empty list takes away those set before. */
  actions: CheckRunAction[];
}

/** A check run as GitHub lists it: the fields drydock reads. */
export interface ListedCheckRun {
  id: number;
  externalId: string | null;
  /** The slug of the App that made it: only that App may update it. */
  appSlug: string | null;
  status: string;
  conclusion: string | null;
}

/** Pages of check runs read at most when looking for one (100 a page). */
const MAX_CHECK_RUN_PAGES = 10;

/** The conclusions of a job that failed (GitHub's others: success, neutral, skipped, cancelled, stale). */
const FAILED = new Set(['failure', 'timed_out', 'startup_failure', 'action_required']);
/** At most this many failed jobs are kept, and this many pages of 100 read. */
const MAX_FAILED_JOBS = 50;
const MAX_JOB_PAGES = 5;

/** What each call sends: its abort signal and the Authorization header of the repository it is about. */
interface CallRequest {
  signal: AbortSignal;
  headers: { authorization: string };
}

/**
 * The few GitHub REST calls drydock makes (comment and list comments, commit status, check runs, read or open a
 * pull request), through Octokit,
 * with bounded retries on 5xx, timeouts and rate limits (retry-after and the rate-limit reset are obeyed
 * up to a cap). Each call carries the token `auth` gives for its repository (an App's installation token, or
 * the personal access token); a token GitHub refuses with 401 is renewed once. Errors come out as
 * GithubCallError, scrubbed of every token.
 */
export class GithubApi {
  private readonly octokit: Octokit;
  private readonly closed = new AbortController();
  private readonly report: RetryPolicy;
  private readonly lookup: RetryPolicy;
  /** The token's user, read once (a failed read is tried again on the next call). */
  private self: Promise<string> | null = null;

  constructor(private readonly opts: GithubApiOptions) {
    this.report = { ...REPORT_RETRY, ...opts.reportRetry };
    this.lookup = { ...LOOKUP_RETRY, ...opts.lookupRetry };
    // No `auth`: each call sets the Authorization header of its own repository.
    this.octokit = new Octokit({
      baseUrl: opts.baseUrl.replace(/\/+$/, ''),
      userAgent: 'drydock',
      // Octokit's own request log would print request options; drydock logs its calls itself.
      log: { debug: noop, info: noop, warn: noop, error: noop },
    });
  }

  async createComment(repository: string, number: number, body: string): Promise<{ id: number }> {
    const { id } = await this.createCommentWithUrl(repository, number, body);
    return { id };
  }

  async createStatus(
    repository: string,
    sha: string,
    status: { state: CommitState; context: string; description: string },
  ): Promise<void> {
    const { owner, repo } = split(repository);
    await this.call(
      `POST status ${status.state} on ${repository}@${sha.slice(0, 12)}`,
      this.report,
      repository,
      ({ signal, headers }) =>
        this.octokit.rest.repos.createCommitStatus({
          owner,
          repo,
          sha,
          ...status,
          headers,
          request: { signal },
        }),
    );
  }

  /** The pull request as GitHub returns it, or null when it does not exist or cannot be read. */
  readonly lookupPullRequest: PullRequestLookup = async (repository, number) => {
    let parts: { owner: string; repo: string };
    try {
      parts = split(repository);
    } catch {
      return null;
    }
    try {
      const res = await this.call(
        `GET pull request ${repository}#${number}`,
        this.lookup,
        repository,
        ({ signal, headers }) =>
          this.octokit.rest.pulls.get({ ...parts, pull_number: number, headers, request: { signal } }),
      );
      return res.data;
    } catch (err) {
      const e = err as GithubCallError;
      if (e.status !== 404 || e.credentials)
        this.opts.logger.warn({ github: e.message }, 'GitHub pull request lookup failed');
      return null;
    }
  };

  /**
   * Opens a pull request from `head` (a branch of the same repository) into `base`; when GitHub answers that
   * one is already open for that head, the open one is returned instead (`existing: true`), so a delivery
   * retried after a crash neither fails nor opens a second.
   *
   * GitHub's contract (https://docs.github.com/rest/pulls/pulls#create-a-pull-request): POST
   * /repos/{owner}/{repo}/pulls with title, head, base, body answers 201 with the pull request (`html_url`,
   * `number`), 403, or 422 "Validation Failed" whose `errors` say why: {"resource":"PullRequest","code":
   * "custom","message":"A pull request already exists for owner:branch."} when one is open for that head,
   * {"code":"custom","message":"No commits between base and head"} when head adds nothing, {"field":"base"
   * (or "head"),"code":"invalid"} when a branch does not exist. The lookup (https://docs.github.com/rest/pulls/
   * pulls#list-pull-requests): GET /repos/{owner}/{repo}/pulls?head=owner:branch, open ones by default.
   */
  async createPullRequest(
    repository: string,
    pr: { title: string; head: string; base: string; body: string },
  ): Promise<{ url: string; number: number; existing: boolean }> {
    const { owner, repo } = split(repository);
    try {
      const res = await this.call(
        `POST pull request ${repository} ${pr.head} -> ${pr.base}`,
        this.report,
        repository,
        ({ signal, headers }) =>
          this.octokit.rest.pulls.create({ owner, repo, ...pr, headers, request: { signal } }),
      );
      return { url: res.data.html_url, number: res.data.number, existing: false };
    } catch (err) {
      const exists =
        err instanceof GithubCallError &&
        err.status === 422 &&
        err.details.some((d) => /pull request already exists/i.test(d));
      if (!exists) throw err;
      // `head` is a branch of the repository, or `owner:branch` of a fork: the list filters by the latter.
      const found = await this.findPullRequest(
        repository,
        pr.head.includes(':') ? pr.head : `${owner}:${pr.head}`,
      );
      if (!found) throw err;
      return { ...found, existing: true };
    }
  }

  /** The open pull request whose head is `head` (`owner:branch`), or null. */
  async findPullRequest(repository: string, head: string): Promise<{ url: string; number: number } | null> {
    const { owner, repo } = split(repository);
    const res = await this.call(
      `GET pull requests of ${repository} from ${head}`,
      this.report,
      repository,
      ({ signal, headers }) =>
        this.octokit.rest.pulls.list({ owner, repo, head, state: 'open', headers, request: { signal } }),
    );
    const pr = res.data[0];
    return pr ? { url: pr.html_url, number: pr.number } : null;
  }

  /** The comment's web address as well as its id. */
  async createCommentWithUrl(
    repository: string,
    number: number,
    body: string,
  ): Promise<{ id: number; url: string }> {
    const { owner, repo } = split(repository);
    const res = await this.call(
      `POST comment on ${repository}#${number}`,
      this.report,
      repository,
      ({ signal, headers }) =>
        this.octokit.rest.issues.createComment({
          owner,
          repo,
          issue_number: number,
          body,
          headers,
          request: { signal },
        }),
    );
    return { id: res.data.id, url: res.data.html_url };
  }

  /**
   * Every comment on an issue or pull request, oldest first: GET /repos/{owner}/{repo}/issues/{number}/comments
   * (https://docs.github.com/rest/issues/comments#list-issue-comments), 100 a page (GitHub's most), following
   * the Link header's rel="next" to the last page. 404 when the issue does not exist.
   */
  async listComments(repository: string, number: number): Promise<IssueComment[]> {
    const { owner, repo } = split(repository);
    const all: IssueComment[] = [];
    for (let page = 1; ; page++) {
      const res = await this.call(
        `GET comments of ${repository}#${number} (page ${page})`,
        this.report,
        repository,
        ({ signal, headers }) =>
          this.octokit.rest.issues.listComments({
            owner,
            repo,
            issue_number: number,
            per_page: COMMENTS_PER_PAGE,
            page,
            headers,
            request: { signal },
          }),
      );
      for (const c of res.data)
        all.push({ id: c.id, url: c.html_url, body: c.body ?? '', author: c.user?.login ?? null });
      if (!/\brel="next"/.test(res.headers.link ?? '') || page >= MAX_COMMENT_PAGES) return all;
    }
  }

  /**
   * The comments drydock's own account wrote on an issue or pull request, oldest first. What a retried effect
   * reads before posting again: anyone may copy drydock's hidden markers into a comment of theirs, so only
   * drydock's own comments count.
   */
  async ownComments(repository: string, number: number): Promise<IssueComment[]> {
    const self = await this.authenticatedLogin(repository);
    return (await this.listComments(repository, number)).filter((c) => c.author === self);
  }

  /**
   * The login of the account drydock acts as. With an App, its bot (`<slug>[bot]`, src/github/app-auth.ts): an
   * installation token cannot read GET /user. With a token, GET /user (https://docs.github.com/rest/users/users#
   * get-the-authenticated-user) answers the token's user, 401 without a valid token; asked with the credentials
   * of `repository` (any repository will do). Read once and kept (a failed read is tried again on the next call).
   */
  authenticatedLogin(repository: string): Promise<string> {
    this.self ??= this.readLogin(repository).catch((err: unknown) => {
      this.self = null;
      throw err;
    });
    return this.self;
  }

  /**
   * The jobs of a failed workflow run or check suite that did not succeed, at most 50, read with the lookup's
   * retry policy (a webhook is being routed). GitHub's contracts: GET /repos/{owner}/{repo}/actions/runs/{run_id}/
   * jobs (https://docs.github.com/rest/actions/workflow-jobs#list-jobs-for-a-workflow-run) answers
   * `{total_count, jobs: [{name, conclusion, html_url, steps: [{name, conclusion}]}]}`, `filter=latest` (the
   * default) for the jobs of the run's latest attempt; GET /repos/{owner}/{repo}/check-suites/{check_suite_id}/
   * check-runs (https://docs.github.com/rest/checks/runs#list-check-runs-in-a-check-suite) answers `{total_count,
   * check_runs: [{name, conclusion, html_url, details_url}]}`. Both take per_page up to 100 and page from 1, and
   * say in the Link header whether a next page exists; both need read access (actions:read, checks:read for an
   * App's token) and answer 404 for a run or suite the token cannot see.
   */
  async listFailedJobs(repository: string, query: FailedJobsQuery): Promise<FailedJob[]> {
    const { owner, repo } = split(repository);
    const failed: FailedJob[] = [];
    for (let page = 1; page <= MAX_JOB_PAGES && failed.length < MAX_FAILED_JOBS; page++) {
      const got = await this.jobsPage(owner, repo, query, page);
      for (const job of got.jobs) if (FAILED.has(job.conclusion)) failed.push(job);
      if (!got.more) break;
    }
    return failed.slice(0, MAX_FAILED_JOBS);
  }

  private async jobsPage(
    owner: string,
    repo: string,
    query: FailedJobsQuery,
    page: number,
  ): Promise<{ jobs: FailedJob[]; more: boolean }> {
    const paging = { owner, repo, filter: 'latest' as const, per_page: 100, page };
    const repository = `${owner}/${repo}`;
    if (query.kind === 'workflow_run') {
      const res = await this.call(
        `GET jobs of workflow run ${query.runId} (page ${page})`,
        this.lookup,
        repository,
        ({ signal, headers }) =>
          this.octokit.rest.actions.listJobsForWorkflowRun({
            ...paging,
            run_id: query.runId,
            headers,
            request: { signal },
          }),
      );
      const jobs = res.data.jobs.map((j) =>
        failedJob(
          j.name,
          j.conclusion,
          j.html_url,
          null,
          (j.steps ?? []).filter((s) => FAILED.has(s.conclusion ?? '')).map((s) => s.name),
        ),
      );
      return { jobs, more: /\brel="next"/.test(res.headers.link ?? '') };
    }
    const res = await this.call(
      `GET check runs of check suite ${query.suiteId} (page ${page})`,
      this.lookup,
      repository,
      ({ signal, headers }) =>
        this.octokit.rest.checks.listForSuite({
          ...paging,
          check_suite_id: query.suiteId,
          headers,
          request: { signal },
        }),
    );
    const jobs = res.data.check_runs.map((r) =>
      failedJob(r.name, r.conclusion, r.html_url, r.details_url, []),
    );
    return { jobs, more: /\brel="next"/.test(res.headers.link ?? '') };
  }

  /**
   * The check runs named `name` on commit `sha`, every one GitHub keeps (`filter=all`: the default, `latest`,
   * would hide a plan's check run behind a later round's of the same name on the same commit), at most 1,000.
   * GitHub's contract (https://docs.github.com/rest/checks/runs#list-check-runs-for-a-git-reference): GET
   * /repos/{owner}/{repo}/commits/{ref}/check-runs with check_name, filter (latest or all), per_page up to 100 and
   * page, answering `{total_count, check_runs: [{id, external_id, status, conclusion, app: {slug}}]}`, the Link
   * header saying whether a next page exists; an App's token needs checks read.
   */
  async listCheckRuns(repository: string, sha: string, name: string): Promise<ListedCheckRun[]> {
    const { owner, repo } = split(repository);
    const all: ListedCheckRun[] = [];
    for (let page = 1; page <= MAX_CHECK_RUN_PAGES; page++) {
      const res = await this.call(
        `GET check runs "${name}" of ${repository}@${sha.slice(0, 12)} (page ${page})`,
        this.report,
        repository,
        ({ signal, headers }) =>
          this.octokit.rest.checks.listForRef({
            owner,
            repo,
            ref: sha,
            check_name: name,
            filter: 'all',
            per_page: 100,
            page,
            headers,
            request: { signal },
          }),
      );
      for (const r of res.data.check_runs) {
        all.push({
          id: r.id,
          externalId: r.external_id ?? null,
          appSlug: r.app?.slug ?? null,
          status: r.status,
          conclusion: r.conclusion ?? null,
        });
      }
      if (!/\brel="next"/.test(res.headers.link ?? '')) break;
    }
    return all;
  }

  /**
   * Creates a check run named `name` on commit `sha`, `externalId` naming it in drydock
   * (https://docs.github.com/rest/checks/runs#create-a-check-run: POST /repos/{owner}/{repo}/check-runs, 201
   * with the check run; only a GitHub App's installation token with checks write may, a personal token gets
   * 403 "You must authenticate via a GitHub App.").
   */
  async createCheckRun(
    repository: string,
    run: { name: string; sha: string; externalId: string } & CheckRunFields,
  ): Promise<{ id: number }> {
    const { owner, repo } = split(repository);
    const res = await this.call(
      `POST check run "${run.name}" on ${repository}@${run.sha.slice(0, 12)}`,
      this.report,
      repository,
      ({ signal, headers }) =>
        this.octokit.rest.checks.create({
          owner,
          repo,
          name: run.name,
          head_sha: run.sha,
          external_id: run.externalId,
          ...checkRunBody(run),
          headers,
          request: { signal },
        }),
    );
    return { id: res.data.id };
  }

  /**
   * Updates check run `id` (https://docs.github.com/rest/checks/runs#update-a-check-run: PATCH
   * /repos/{owner}/{repo}/check-runs/{check_run_id}, 200; only the App that created it, with checks write).
   */
  async updateCheckRun(repository: string, id: number, fields: CheckRunFields): Promise<void> {
    const { owner, repo } = split(repository);
    await this.call(
      `PATCH check run ${id} on ${repository}`,
      this.report,
      repository,
      ({ signal, headers }) =>
        this.octokit.rest.checks.update({
          owner,
          repo,
          check_run_id: id,
          ...checkRunBody(fields),
          headers,
          request: { signal },
        }),
    );
  }

  private async readLogin(repository: string): Promise<string> {
    const bot = await this.opts.auth.botLogin(this.closed.signal).catch((err: unknown) => {
      throw this.describe('GET the GitHub App', err);
    });
    if (bot !== null) return bot;
    const res = await this.call(
      'GET the authenticated user',
      this.report,
      repository,
      ({ signal, headers }) => this.octokit.rest.users.getAuthenticated({ headers, request: { signal } }),
    );
    return res.data.login;
  }

  /** Ends waits and calls in flight; later calls fail at once. */
  close(): void {
    this.closed.abort();
  }

  /**
   * One call, tried as `policy` says, with the credentials of `repository`. A token GitHub answers 401 to is
   * renewed once (an App's installation token that lapsed early or was revoked; `auth.refused` says whether a
   * new one can differ), without counting as a try.
   */
  private async call<T>(
    what: string,
    policy: RetryPolicy,
    repository: string,
    fn: (request: CallRequest) => Promise<T>,
  ): Promise<T> {
    let renewed = false;
    for (let attempt = 1; ; attempt++) {
      if (this.closed.signal.aborted) throw new GithubCallError(what, null, 'drydock is stopping');
      const signal = AbortSignal.any([this.closed.signal, AbortSignal.timeout(policy.timeoutMs)]);
      let token: string | null = null;
      try {
        token = await this.opts.auth.tokenFor(repository, signal);
        return await fn({ signal, headers: { authorization: `token ${token}` } });
      } catch (err) {
        if (
          token !== null &&
          !renewed &&
          statusOf(err) === 401 &&
          this.opts.auth.refused(repository, token)
        ) {
          renewed = true;
          attempt -= 1;
          this.opts.logger.info({ github: what }, 'GitHub refused the token; renewing it once');
          continue;
        }
        const failure = this.describe(what, err);
        const wait = this.closed.signal.aborted ? null : retryDelay(err, attempt, policy, Date.now());
        if (wait === null || attempt >= policy.attempts) throw failure;
        this.opts.logger.warn(
          { github: failure.message, attempt, retry_in_ms: wait },
          'GitHub call failed; retrying',
        );
        await pause(wait, this.closed.signal);
      }
    }
  }

  private describe(what: string, err: unknown): GithubCallError {
    const status = statusOf(err);
    const raw = err instanceof Error ? err.message : String(err);
    // The message comes from GitHub's answer or the network stack; make sure no token can ride along.
    const secrets = this.opts.auth.secrets().filter((secret) => secret !== '');
    const scrub = (text: string) => secrets.reduce((t, secret) => t.split(secret).join('[redacted]'), text);
    const message = scrub(raw).slice(0, 300);
    const errors = (err as { response?: { data?: { errors?: unknown } } } | null)?.response?.data?.errors;
    const details = Array.isArray(errors)
      ? errors.flatMap((e) =>
          typeof (e as { message?: unknown })?.message === 'string'
            ? [scrub((e as { message: string }).message).slice(0, 300)]
            : [],
        )
      : [];
    return new GithubCallError(what, status, message, details, err instanceof GithubAuthError);
  }
}

/** A job as drydock keeps it: names cut to 200 characters, at most 20 failed steps, only http(s) links. */
function failedJob(
  name: string,
  conclusion: string | null,
  url: string | null | undefined,
  detailsUrl: string | null | undefined,
  steps: string[],
): FailedJob {
  return {
    name: name.slice(0, 200),
    conclusion: conclusion ?? '',
    url: webUrl(url),
    detailsUrl: webUrl(detailsUrl),
    failedSteps: steps.slice(0, 20).map((s) => s.slice(0, 200)),
  };
}

/** A check run's fields as the REST API names them. */
function checkRunBody(fields: CheckRunFields) {
  return {
    status: fields.status,
    ...(fields.conclusion ? { conclusion: fields.conclusion } : {}),
    ...(fields.detailsUrl ? { details_url: fields.detailsUrl } : {}),
    output: fields.output,
    actions: fields.actions,
  };
}

function split(repository: string): { owner: string; repo: string } {
  const m = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)$/.exec(repository);
  if (!m) throw new Error(`not an owner/repo: ${repository}`);
  return { owner: m[1]!, repo: m[2]! };
}

function statusOf(err: unknown): number | null {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status > 0 ? status : null;
}

function headersOf(err: unknown): Record<string, string | undefined> {
  const headers = (err as { response?: { headers?: unknown } } | null)?.response?.headers;
  return headers && typeof headers === 'object' ? (headers as Record<string, string | undefined>) : {};
}

/**
 * How long to wait before trying again, or null not to: 5xx and network failures (Octokit reports both as
 * 5xx), 429, and 403 rate limits (secondary: retry-after or the documented message; primary: remaining 0).
 * A wait GitHub names (retry-after, x-ratelimit-reset) is obeyed; longer than the policy's cap, it ends
 * the tries rather than calling early.
 */
export function retryDelay(err: unknown, attempt: number, policy: RetryPolicy, now: number): number | null {
  const status = statusOf(err);
  if (status === null) return null;
  const headers = headersOf(err);
  const message = err instanceof Error ? err.message : '';
  const exhausted = headers['x-ratelimit-remaining'] === '0';
  const secondary = /secondary rate limit|abuse detection/i.test(message);
  const retryable =
    status >= 500 ||
    status === 429 ||
    (status === 403 && (!!headers['retry-after'] || exhausted || secondary));
  if (!retryable) return null;

  let named: number | null = null;
  const after = headers['retry-after'];
  if (after !== undefined) {
    const seconds = Number(after);
    named = Number.isFinite(seconds) ? Math.max(0, seconds * 1000) : Math.max(0, Date.parse(after) - now);
    if (Number.isNaN(named)) named = null;
  } else if (exhausted && headers['x-ratelimit-reset']) {
    const reset = Number(headers['x-ratelimit-reset']) * 1000;
    if (Number.isFinite(reset)) named = Math.max(0, reset - now);
  } else if (secondary) {
    named = 60_000; // GitHub: without retry-after, wait at least a minute after a secondary rate limit
  }
  if (named !== null) return named <= policy.maxDelayMs ? named : null;
  const backoff = policy.baseDelayMs * 2 ** (attempt - 1);
  return Math.min(policy.maxDelayMs, Math.round(backoff * (0.5 + Math.random() / 2)));
}
