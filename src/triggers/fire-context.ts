import type { EventContext } from '../github/events/index.js';
import { at, SHA } from '../github/events/index.js';

export { at };

/**
 * What a trigger knows about the thing that fired it. Fields marked external come from a webhook payload or
 * a caller: they reach the model only inside the untrusted-data block, never in the instructions.
 */
export interface PullRequestContext {
  kind: 'pull_request';
  event: string; // e.g. pull_request.opened
  repository: string; // owner/repo
  number: number;
  headSha: string;
  headRef: string;
  baseRef: string;
  /** The base branch's commit when the event was sent (null when the payload lacks a valid one). */
  baseSha: string | null;
  /**
   * owner/repo of the head branch (`pull_request.head.repo.full_name`): `repository` itself, or a fork; null
   * when the payload names none (GitHub sends null once the fork is deleted) or an invalid one.
   */
  headRepository: string | null;
  draft: boolean;
  /** A closed pull request that was merged: its run plans on the merge commit, not the head. */
  merged?: boolean;
  /** The merge commit of a merged pull request (null when the payload lacks a valid one: the base branch's head). */
  mergeSha?: string | null;
  labels: string[];
  author: string; // GitHub login
  url: string | null;
  /** External. */
  title: string;
  /** External. */
  body: string;
}

export interface FireContext {
  kind: 'fire';
  event: 'fire';
  /** External. */
  text: string | null;
}

export type TriggerContext = PullRequestContext | FireContext | EventContext;

const REPO = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const REF = /^[\w./-]{1,255}$/;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * Reads a pull_request (or pull_request-shaped) payload defensively: anything missing or malformed gives null,
 * never an exception. Identifiers that end up in commands or paths must match strict patterns.
 */
export function pullRequestContext(event: string, payload: unknown): PullRequestContext | null {
  const pr = at(payload, 'pull_request');
  const repository = str(at(payload, 'repository', 'full_name'));
  const action = str(at(payload, 'action'));
  if (!pr || typeof pr !== 'object' || !repository || !REPO.test(repository) || !action) return null;
  const headSha = str(at(pr, 'head', 'sha'));
  const headRef = str(at(pr, 'head', 'ref'));
  const baseRef = str(at(pr, 'base', 'ref'));
  const number = at(pr, 'number');
  if (!headSha || !SHA.test(headSha) || !headRef || !REF.test(headRef) || !baseRef || !REF.test(baseRef))
    return null;
  if (typeof number !== 'number' || !Number.isSafeInteger(number) || number <= 0) return null;
  const rawLabels = at(pr, 'labels');
  const labels = Array.isArray(rawLabels)
    ? rawLabels.map((l) => str(at(l, 'name'))).filter((l): l is string => !!l)
    : [];
  return {
    kind: 'pull_request',
    event: `${event}.${action}`,
    repository,
    number,
    headSha,
    headRef,
    baseRef,
    baseSha: SHA.test(str(at(pr, 'base', 'sha')) ?? '') ? (str(at(pr, 'base', 'sha')) as string) : null,
    headRepository: headRepositoryOf(pr),
    draft: at(pr, 'draft') === true,
    merged: action === 'closed' && at(pr, 'merged') === true,
    mergeSha: SHA.test(str(at(pr, 'merge_commit_sha')) ?? '')
      ? (str(at(pr, 'merge_commit_sha')) as string)
      : null,
    labels,
    author: str(at(pr, 'user', 'login')) ?? 'unknown',
    url: str(at(pr, 'html_url')),
    title: str(at(pr, 'title')) ?? '',
    body: str(at(pr, 'body')) ?? '',
  };
}

/**
 * The head branch's repository, when the payload names a well-formed one: `pull_request.head.repo.full_name`
 * of the pull_request webhook (https://docs.github.com/webhooks/webhook-events-and-payloads#pull_request) and
 * of GET /repos/{owner}/{repo}/pulls/{n}. The published schema types `head.repo` as a repository, but a pull
 * request whose fork was deleted shows no repository to take it from; anything but owner/repo is null here,
 * which a delivery treats as a fork.
 */
function headRepositoryOf(pr: unknown): string | null {
  const name = str(at(pr, 'head', 'repo', 'full_name'));
  return name && REPO.test(name) ? name : null;
}

/** The subject a pull request's runs and plans belong to; a new push to it supersedes their plans. */
export const prSubject = (repository: string, number: number) => `${repository}#${number}`;
