/**
 * The check runs of the fake GitHub (tests/support/fake-github.ts), as strict as GitHub about what it takes:
 *
 *   POST  /repos/:owner/:repo/check-runs                  201, the new check run
 *   PATCH /repos/:owner/:repo/check-runs/:id              200, the check run; 404 for one the repository lacks
 *   GET   /repos/:owner/:repo/check-runs/:id              200, the check run
 *   GET   /repos/:owner/:repo/commits/:sha/check-runs     200 `{total_count, check_runs}`: `check_name`, `status`,
 *                                                         `filter` (latest, the default: only the newest of each
 *                                                         name; all), paged (per_page default 30, at most 100;
 *                                                         Link rel="next")
 *
 * What GitHub documents and this holds to (https://docs.github.com/rest/checks/runs):
 * - Writing check runs is for GitHub Apps: "OAuth apps and authenticated users can view check runs and check
 *   suites, but they are not able to create them"; a personal token's POST or PATCH is answered 403 "You must
 *   authenticate via a GitHub App." (GitHub's answer, as its users report it: actions/github-script#118,
 *   EnricoMi/publish-unit-test-result-action#31, LouisBrunner/checks-action#141). An App's installation token
 *   needs checks write for them (403 "Resource not accessible by integration" otherwise, judged by
 *   fake-github-app.ts), and only the App that made a check run may update it.
 * - `name` and `head_sha` are required; `status` is queued, in_progress or completed (waiting, requested and
 *   pending are GitHub Actions' own); `conclusion` one of action_required, cancelled, failure, neutral, success,
 *   skipped, timed_out (stale: "only GitHub can set this"), "Required if you provide completed_at or a status of
 *   completed", and "Providing conclusion will automatically set the status parameter to completed". A body
 *   that breaks the schema is answered 422 with GitHub's schema message, "Invalid request.\n\n…" (for a missing
 *   field `"name" wasn't supplied.`, as humanmade/linter-bot#71 shows it; for a value outside an enum `For
 *   'properties/status', "x" is not a member of [...]`).
 * - `output` needs `title` and `summary`; the summary's limit is 65535 bytes: 422 Validation Failed, error
 *   `{resource: "CheckRun", code: "custom", field: "summary", message: "summary exceeds a maximum bytesize of
 *   65535"}` (github/docs#35252).
 * - `actions`: "A maximum of three actions are accepted", each `label` at most 20 characters, `description` at
 *   most 40, `identifier` at most 20, all three required. GitHub documents the limits but not the words of its
 *   refusal: answered here 422 Validation Failed with a custom error naming the field.
 * - A completed check run does not go back to queued or in_progress: GitHub takes the update and leaves it
 *   completed (https://github.com/orgs/community/discussions/24761, tektoncd/pipelines-as-code#998); its
 *   conclusion may change.
 * - A check run's `external_id` is given back as set ("" when none was).
 */

import { createHash } from 'node:crypto';

export interface FakeCheckRun {
  id: number;
  repository: string;
  name: string;
  headSha: string;
  externalId: string;
  status: string;
  conclusion: string | null;
  detailsUrl: string | null;
  title: string | null;
  summary: string | null;
  actions: { label: string; description: string; identifier: string }[];
  /** The login of the App's bot that made it, and the App. */
  madeBy: string;
  app: { id: number; slug: string };
  /** How many times it was updated. */
  updates: number;
  createdAt: string;
}

/** What a request to the check-run endpoints is answered, or null when it is not one of them. */
export type ChecksAnswer = { status: number; body: unknown; headers?: Record<string, string> } | null;

export interface FakeChecks {
  /** `user`: the login the request acts as; `app`: the App's {id, slug} when the token is an installation's. */
  handle(
    method: string,
    path: string,
    query: URLSearchParams,
    body: any,
    user: string,
    app: { id: number; slug: string } | null,
  ): ChecksAnswer;
  /** The check runs, oldest first (optionally of one commit). */
  list(sha?: string): FakeCheckRun[];
}

const REPO = '([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)';
const RUNS = new RegExp(`^/repos/${REPO}/check-runs$`);
const RUN = new RegExp(`^/repos/${REPO}/check-runs/(\\d+)$`);
const OF_REF = new RegExp(`^/repos/${REPO}/commits/([^/]+)/check-runs$`);
const STATUSES = ['queued', 'in_progress', 'completed'];
const CONCLUSIONS = ['action_required', 'cancelled', 'failure', 'neutral', 'success', 'skipped', 'timed_out'];
const DOCS = {
  create: 'https://docs.github.com/rest/checks/runs#create-a-check-run',
  update: 'https://docs.github.com/rest/checks/runs#update-a-check-run',
  list: 'https://docs.github.com/rest/checks/runs#list-check-runs-for-a-git-reference',
  get: 'https://docs.github.com/rest/checks/runs#get-a-check-run',
};

const answer = (status: number, body: unknown, headers?: Record<string, string>): ChecksAnswer => ({
  status,
  body,
  ...(headers ? { headers } : {}),
});
const invalid = (detail: string, docs: string) =>
  answer(422, { message: `Invalid request.\n\n${detail}`, documentation_url: docs, status: '422' });
const validationFailed = (field: string, message: string, docs: string) =>
  answer(422, {
    message: 'Validation Failed',
    errors: [{ resource: 'CheckRun', code: 'custom', field, message }],
    documentation_url: docs,
    status: '422',
  });

export function createFakeChecks(): FakeChecks {
  const runs: FakeCheckRun[] = [];
  let nextId = 7_000;

  /** Why GitHub refuses these fields (creating: `name` and `head_sha` too), or null. */
  function refusal(body: any, creating: boolean, docs: string): ChecksAnswer {
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      return answer(400, { message: 'Problems parsing JSON', documentation_url: docs, status: '400' });
    for (const field of creating ? ['name', 'head_sha'] : []) {
      if (typeof body[field] !== 'string' || body[field] === '')
        return invalid(`"${field}" wasn't supplied.`, docs);
    }
    if (body.status !== undefined && !STATUSES.includes(body.status))
      return invalid(
        `For 'properties/status', ${JSON.stringify(body.status)} is not a member of ${JSON.stringify(STATUSES)}.`,
        docs,
      );
    if (body.conclusion !== undefined && !CONCLUSIONS.includes(body.conclusion))
      return invalid(
        `For 'properties/conclusion', ${JSON.stringify(body.conclusion)} is not a member of ${JSON.stringify(CONCLUSIONS)}.`,
        docs,
      );
    if ((body.status === 'completed' || body.completed_at !== undefined) && body.conclusion === undefined)
      return invalid(`"conclusion" wasn't supplied.`, docs);
    if (body.output !== undefined) {
      const out = body.output;
      for (const field of ['title', 'summary']) {
        if (typeof out?.[field] !== 'string') return invalid(`"${field}" wasn't supplied.`, docs);
      }
      if (Buffer.byteLength(out.summary, 'utf8') > 65_535)
        return validationFailed('summary', 'summary exceeds a maximum bytesize of 65535', docs);
    }
    return body.actions === undefined ? null : actionsRefusal(body.actions, docs);
  }

  function actionsRefusal(actions: unknown, docs: string): ChecksAnswer {
    if (!Array.isArray(actions))
      return invalid(`For 'properties/actions', ${JSON.stringify(actions)} is not an array.`, docs);
    if (actions.length > 3) return validationFailed('actions', 'a check run takes at most 3 actions', docs);
    const limits = { label: 20, description: 40, identifier: 20 } as const;
    for (const action of actions) {
      for (const [field, max] of Object.entries(limits)) {
        const value = (action as Record<string, unknown>)?.[field];
        if (typeof value !== 'string' || value === '') return invalid(`"${field}" wasn't supplied.`, docs);
        if (value.length > max)
          return validationFailed(
            `actions.${field}`,
            `${field} is too long (maximum is ${max} characters)`,
            docs,
          );
      }
    }
    return null;
  }

  /** Sets what the body says on `run`: a conclusion completes it; a completed run stays completed. */
  function apply(run: FakeCheckRun, body: any): void {
    const wasCompleted = run.status === 'completed';
    if (body.status !== undefined && !(wasCompleted && body.status !== 'completed')) run.status = body.status;
    if (body.conclusion !== undefined) {
      run.conclusion = body.conclusion;
      run.status = 'completed';
    }
    if (typeof body.details_url === 'string') run.detailsUrl = body.details_url;
    if (typeof body.external_id === 'string') run.externalId = body.external_id;
    if (typeof body.name === 'string') run.name = body.name;
    if (body.output) {
      run.title = body.output.title ?? run.title;
      run.summary = body.output.summary;
    }
    if (Array.isArray(body.actions)) run.actions = body.actions.map((a: any) => ({ ...a }));
  }

  function json(run: FakeCheckRun): Record<string, unknown> {
    const { app } = run;
    return {
      id: run.id,
      node_id: `CR_${run.id}`,
      head_sha: run.headSha,
      external_id: run.externalId,
      url: `https://api.github.com/repos/${run.repository}/check-runs/${run.id}`,
      html_url: `https://github.com/${run.repository}/runs/${run.id}`,
      details_url: run.detailsUrl,
      status: run.status,
      conclusion: run.status === 'completed' ? run.conclusion : null,
      started_at: run.createdAt,
      completed_at: run.status === 'completed' ? run.createdAt : null,
      output: {
        title: run.title,
        summary: run.summary,
        text: null,
        annotations_count: 0,
        annotations_url: `https://api.github.com/repos/${run.repository}/check-runs/${run.id}/annotations`,
      },
      name: run.name,
      check_suite: {
        id: Number.parseInt(createHash('sha1').update(run.headSha).digest('hex').slice(0, 8), 16),
      },
      app: { id: app.id, slug: app.slug, node_id: `A_${app.id}`, name: app.slug },
      pull_requests: [],
    };
  }

  return {
    handle(method, path, query, body, user, app) {
      const created = RUNS.exec(path);
      const one = RUN.exec(path);
      const ofRef = OF_REF.exec(path);
      if (!created && !one && !ofRef) return null;
      const repository = `${(created ?? one ?? ofRef)![1]}/${(created ?? one ?? ofRef)![2]}`;
      const docs = created ? DOCS.create : one ? (method === 'GET' ? DOCS.get : DOCS.update) : DOCS.list;
      const writes = method === 'POST' || method === 'PATCH';
      if (writes && !app)
        return answer(403, {
          message: 'You must authenticate via a GitHub App.',
          documentation_url: docs,
          status: '403',
        });
      if (created && method === 'POST') {
        const refused = refusal(body, true, docs);
        if (refused) return refused;
        const run: FakeCheckRun = {
          id: nextId++,
          repository,
          name: body.name,
          headSha: body.head_sha,
          externalId: '',
          status: 'queued',
          conclusion: null,
          detailsUrl: null,
          title: null,
          summary: null,
          actions: [],
          madeBy: user,
          app: { ...app! },
          updates: 0,
          createdAt: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
        };
        apply(run, body);
        runs.push(run);
        return answer(201, json(run));
      }
      if (one && (method === 'PATCH' || method === 'GET')) {
        const run = runs.find((r) => r.id === Number(one[3]) && r.repository === repository);
        if (!run) return answer(404, { message: 'Not Found', documentation_url: docs, status: '404' });
        if (method === 'GET') return answer(200, json(run));
        if (run.madeBy !== user)
          return answer(403, {
            message: 'Resource not accessible by integration',
            documentation_url: docs,
            status: '403',
          });
        const refused = refusal(body, false, docs);
        if (refused) return refused;
        apply(run, body);
        run.updates += 1;
        return answer(200, json(run));
      }
      if (ofRef && method === 'GET') return listed(repository, decodeURIComponent(ofRef[3]!), query, path);
      return answer(404, { message: 'Not Found', documentation_url: docs, status: '404' });
    },
    list(sha) {
      return runs
        .filter((r) => !sha || r.headSha === sha)
        .map((r) => ({ ...r, app: { ...r.app }, actions: r.actions.map((a) => ({ ...a })) }));
    },
  };

  function listed(repository: string, ref: string, query: URLSearchParams, path: string): ChecksAnswer {
    const filter = query.get('filter') ?? 'latest';
    if (filter !== 'latest' && filter !== 'all')
      return invalid(
        `For 'filter', ${JSON.stringify(filter)} is not a member of ["latest", "all"].`,
        DOCS.list,
      );
    const name = query.get('check_name');
    const status = query.get('status');
    let found = runs.filter(
      (r) =>
        r.repository === repository &&
        r.headSha === ref &&
        (!name || r.name === name) &&
        (!status || r.status === status),
    );
    // latest: the newest check run of each name only.
    if (filter === 'latest')
      found = found.filter((r) => !found.some((o) => o.name === r.name && o.id > r.id));
    const perPage = Math.min(100, Math.max(1, Number(query.get('per_page') ?? 30) || 30));
    const page = Math.max(1, Number(query.get('page') ?? 1) || 1);
    const last = Math.max(1, Math.ceil(found.length / perPage));
    const params = new URLSearchParams(query);
    params.set('page', String(page + 1));
    const next = `<https://api.github.com${path}?${params}>; rel="next"`;
    const items = found.slice((page - 1) * perPage, page * perPage).map((r) => json(r));
    return answer(
      200,
      { total_count: found.length, check_runs: items },
      page < last ? { link: next } : undefined,
    );
  }
}
