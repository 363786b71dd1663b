import type { EventContext, EventReading } from './context.js';
import { noFacts, rejected } from './context.js';
import { at, capped, login, positive, refName, repositoryOf, sha, short, str, webUrl } from './read.js';

// A completed check suite or workflow run ("analyse the logs and propose a fix"): the run plans on its head
// commit, and the model gets the head branch and the jobs that failed with their pages (looked up with
// GithubApi.listFailedJobs: the webhook payload lists no jobs). Which conclusions fire is the trigger's filter.
// GitHub's payloads (https://docs.github.com/webhooks/webhook-events-and-payloads#check_suite and #workflow_run):
// check_suite {id, head_branch, head_sha, conclusion, app.name, head_commit.message, pull_requests[].number};
// workflow_run {id, name, display_title, event, head_branch, head_sha, conclusion, html_url, run_number,
// run_attempt, actor.login, head_repository.full_name, head_commit.message}. A check suite of a push to a fork
// has head_branch null and no pull_requests (https://docs.github.com/rest/checks/suites); a workflow run of a
// fork's pull request names the fork in head_repository. drydock plans only on commits of the repository's own
// branches: a head in a fork is a contributor's code, which a failure run must not carry into the repository.

const MESSAGE_MAX = 4_000;

interface Head {
  repository: string;
  sha: string;
  branch: string;
}

function headOf(payload: unknown, object: 'check_suite' | 'workflow_run'): Head | string {
  const repository = repositoryOf(payload);
  const head = sha(at(payload, object, 'head_sha'));
  if (!repository || !head) return `the ${object} payload lacks a repository or a head sha`;
  const branch = refName(at(payload, object, 'head_branch'));
  if (!branch)
    return `the ${object}'s head is on no branch of ${repository} (a fork's): drydock plans only on the repository's own branches`;
  return { repository, sha: head, branch };
}

function failureContext(
  head: Head,
  parts: Pick<EventContext, 'family' | 'event' | 'requester' | 'external' | 'jobs'> & { conclusion: string },
): EventReading {
  const { repository, branch } = head;
  const { conclusion, ...rest } = parts;
  return {
    context: {
      kind: 'event',
      ...rest,
      repository,
      subject: `${repository}@refs/heads/${branch}`,
      target: { sha: head.sha, ref: `refs/heads/${branch}`, memory: true },
      facts: { ...noFacts, branch, conclusion, author: parts.requester },
      values: {
        sha: head.sha,
        head_sha: head.sha,
        branch,
        head_ref: branch,
        conclusion: conclusion.replace(/[^a-z_]/g, ''),
        ...(parts.requester ? { author: parts.requester } : {}),
      },
    },
  };
}

/** A `check_suite.completed` delivery. */
export function checkSuiteEvent(payload: unknown): EventReading {
  const head = headOf(payload, 'check_suite');
  if (typeof head === 'string') return rejected(head);
  const id = positive(at(payload, 'check_suite', 'id'));
  if (!id) return rejected('the check_suite payload lacks its id');
  const conclusion = short(at(payload, 'check_suite', 'conclusion'), 40) ?? '';
  const prs = at(payload, 'check_suite', 'pull_requests');
  return failureContext(head, {
    family: 'check_suite',
    event: 'check_suite.completed',
    requester: null,
    conclusion,
    jobs: { kind: 'check_suite', suiteId: id },
    external: {
      check_suite: {
        app: short(at(payload, 'check_suite', 'app', 'name'), 200),
        head_branch: head.branch,
        head_sha: head.sha,
        conclusion,
        head_commit_message: capped(at(payload, 'check_suite', 'head_commit', 'message'), MESSAGE_MAX),
        pull_requests: Array.isArray(prs) ? prs.slice(0, 20).map((p) => positive(at(p, 'number'))) : [],
      },
    },
  });
}

/** A `workflow_run.completed` delivery. */
export function workflowRunEvent(payload: unknown): EventReading {
  const head = headOf(payload, 'workflow_run');
  if (typeof head === 'string') return rejected(head);
  const id = positive(at(payload, 'workflow_run', 'id'));
  if (!id) return rejected('the workflow_run payload lacks its id');
  const from = str(at(payload, 'workflow_run', 'head_repository', 'full_name'));
  if (from !== null && from.toLowerCase() !== head.repository.toLowerCase()) {
    return rejected(
      `the workflow run's head is in ${from.slice(0, 200)}, a fork: drydock plans only on ${head.repository}'s own branches`,
    );
  }
  const conclusion = short(at(payload, 'workflow_run', 'conclusion'), 40) ?? '';
  const actor = login(at(payload, 'workflow_run', 'actor', 'login'));
  const w = (...path: string[]) => at(payload, 'workflow_run', ...path);
  return failureContext(head, {
    family: 'workflow_run',
    event: 'workflow_run.completed',
    requester: actor,
    conclusion,
    jobs: { kind: 'workflow_run', runId: id },
    external: {
      workflow_run: {
        workflow: short(w('name'), 200),
        title: short(w('display_title'), 1_000),
        triggered_by: short(w('event'), 50),
        head_branch: head.branch,
        head_sha: head.sha,
        conclusion,
        url: webUrl(w('html_url')),
        run_number: positive(w('run_number')),
        run_attempt: positive(w('run_attempt')),
        actor: short(w('actor', 'login'), 100),
        head_commit_message: capped(w('head_commit', 'message'), MESSAGE_MAX),
      },
    },
  });
}
