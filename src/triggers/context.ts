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
  draft: boolean;
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

export type TriggerContext = PullRequestContext | FireContext;

const SHA = /^[0-9a-f]{40}$/;
const REPO = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const REF = /^[\w./-]{1,255}$/;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * Reads a pull_request (or pull_request-shaped) payload defensively: anything missing or malformed gives null,
 * never an exception. Identifiers that end up in commands or paths must match strict patterns.
 */
export function pullRequestContext(event: string, payload: unknown): PullRequestContext | null {
  const p = payload as Record<string, any> | null;
  const pr = p?.pull_request;
  const repository = str(p?.repository?.full_name);
  const action = str(p?.action);
  if (!pr || typeof pr !== 'object' || !repository || !REPO.test(repository) || !action) return null;
  const headSha = str(pr.head?.sha);
  const headRef = str(pr.head?.ref);
  const baseRef = str(pr.base?.ref);
  const number = pr.number;
  if (!headSha || !SHA.test(headSha) || !headRef || !REF.test(headRef) || !baseRef || !REF.test(baseRef))
    return null;
  if (!Number.isSafeInteger(number) || number <= 0) return null;
  const labels = Array.isArray(pr.labels)
    ? pr.labels.map((l: any) => str(l?.name)).filter((l: string | null): l is string => !!l)
    : [];
  return {
    kind: 'pull_request',
    event: `${event}.${action}`,
    repository,
    number,
    headSha,
    headRef,
    baseRef,
    draft: pr.draft === true,
    labels,
    author: str(pr.user?.login) ?? 'unknown',
    url: str(pr.html_url),
    title: str(pr.title) ?? '',
    body: str(pr.body) ?? '',
  };
}

/** The subject a pull request's runs and plans belong to; a new push to it supersedes their plans. */
export const prSubject = (repository: string, number: number) => `${repository}#${number}`;
