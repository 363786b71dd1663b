import { type EventContext, type EventReading, noFacts, rejected } from './context.js';
import { at, capped, labelsOf, login, positive, refName, repositoryOf, short, str, webUrl } from './read.js';

// issues (opened, labeled, ...) and issue_comment on an issue (a `/drydock plan <text>` command): the run plans
// on the head of the repository's default branch, fetched from the clone's remote when it starts.
// GitHub's payloads (https://docs.github.com/webhooks/webhook-events-and-payloads#issues and #issue_comment):
// `issue` with number, title, body, user.login, labels[].name, html_url; an issue_comment's `issue` carries a
// `pull_request` key when the comment is on a pull request, and its `comment` has body, user.login, html_url;
// `repository.default_branch` names the default branch.

/** The largest issue body or comment kept (GitHub's own limit for both is 65,536 characters). */
const BODY_MAX = 65_536;

interface Issue {
  repository: string;
  number: number;
  defaultBranch: string;
  author: string | null;
  labels: string[];
  /** External. */
  data: Record<string, unknown>;
}

function issueOf(payload: unknown): Issue | string {
  const repository = repositoryOf(payload);
  const number = positive(at(payload, 'issue', 'number'));
  if (!repository || !number) return 'the payload lacks a repository or an issue number';
  const defaultBranch = refName(at(payload, 'repository', 'default_branch'));
  if (!defaultBranch) return `the repository's default branch is not a usable branch name`;
  const author = login(at(payload, 'issue', 'user', 'login'));
  const labels = labelsOf(at(payload, 'issue', 'labels'));
  const data = {
    repository,
    number,
    title: short(at(payload, 'issue', 'title'), 1_000) ?? '',
    body: capped(at(payload, 'issue', 'body'), BODY_MAX),
    author: short(at(payload, 'issue', 'user', 'login'), 100),
    labels,
    state: short(at(payload, 'issue', 'state'), 20),
    url: webUrl(at(payload, 'issue', 'html_url')),
  };
  return { repository, number, defaultBranch, author, labels, data };
}

function onDefaultBranch(issue: Issue): EventContext['target'] {
  return { sha: null, ref: `refs/heads/${issue.defaultBranch}`, memory: true };
}

/** An `issues` delivery (the action was checked by the caller). */
export function issuesEvent(payload: unknown, action: string): EventReading {
  const issue = issueOf(payload);
  if (typeof issue === 'string') return rejected(issue);
  const { repository, number, author } = issue;
  return {
    context: {
      kind: 'event',
      family: 'issues',
      event: `issues.${action}`,
      repository,
      subject: `${repository}#${number}`,
      requester: author,
      target: onDefaultBranch(issue),
      facts: { ...noFacts, labels: issue.labels, author },
      values: { number: String(number), branch: issue.defaultBranch, ...(author ? { author } : {}) },
      external: { issue: issue.data, ...labelAdded(payload, action) },
      jobs: null,
    },
  };
}

/** The label an `issues.labeled` added (external: anyone with triage access names labels). */
function labelAdded(payload: unknown, action: string): Record<string, unknown> {
  const name = short(at(payload, 'label', 'name'), 100);
  return action === 'labeled' && name !== null ? { label_added: name } : {};
}

/**
 * A `/drydock plan <text>` comment on an issue (not a pull request: the caller checked), by `commenter`. `text`,
 * what the comment asks for, is external like the issue itself.
 */
export function issueCommentEvent(payload: unknown, text: string): EventReading {
  const issue = issueOf(payload);
  if (typeof issue === 'string') return rejected(issue);
  const { repository, number } = issue;
  const commenter = login(at(payload, 'comment', 'user', 'login'));
  return {
    context: {
      kind: 'event',
      family: 'issue_comment',
      event: 'issue_comment.created',
      repository,
      subject: `${repository}#${number}`,
      requester: commenter,
      target: onDefaultBranch(issue),
      facts: { ...noFacts, labels: issue.labels, author: commenter },
      values: {
        number: String(number),
        branch: issue.defaultBranch,
        ...(commenter ? { author: commenter } : {}),
      },
      external: {
        issue: issue.data,
        comment: {
          author: short(at(payload, 'comment', 'user', 'login'), 100),
          request: capped(text, BODY_MAX),
          url: webUrl(at(payload, 'comment', 'html_url')),
        },
      },
      jobs: null,
    },
  };
}

/** Whether an issue_comment payload's issue is a pull request. */
export const onPullRequest = (payload: unknown): boolean => !!at(payload, 'issue', 'pull_request');

export const commentBody = (payload: unknown): string => str(at(payload, 'comment', 'body')) ?? '';
