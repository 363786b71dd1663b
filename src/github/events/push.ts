import { type EventReading, ignored, noFacts, rejected } from './context.js';
import { at, branchOfRef, capped, login, repositoryOf, sha, short, str, webUrl } from './read.js';

// A push to a branch: the run plans on the pushed commit (`after`). A trigger on push names the branches it
// fires for (filters.branches): without that, drydock's own delivery branches would fire it too.
// GitHub's payload (https://docs.github.com/webhooks/webhook-events-and-payloads#push): ref (refs/heads/<b> or
// refs/tags/<t>), before, after, created, deleted, forced, compare, pusher {name, email}, sender.login, and
// commits[] {id, message, author {name, username}, url}, at most 2,048 of them.

const COMMITS_KEPT = 20;
const MESSAGE_MAX = 4_000;

export function pushEvent(payload: unknown): EventReading {
  const repository = repositoryOf(payload);
  if (!repository) return rejected('the push payload lacks a repository');
  const ref = str(at(payload, 'ref')) ?? '';
  if (ref.startsWith('refs/tags/')) return ignored('a tag push: push triggers fire on branches');
  const branch = branchOfRef(ref);
  if (!branch) return rejected('the push names no usable branch');
  if (at(payload, 'deleted') === true) return ignored(`the push deleted branch ${branch}`);
  const after = sha(at(payload, 'after'));
  if (!after) return rejected('the push lacks the sha it pushed (after)');
  const pusher = login(at(payload, 'sender', 'login'));
  const commits = at(payload, 'commits');
  const list = Array.isArray(commits) ? commits : [];
  return {
    context: {
      kind: 'event',
      family: 'push',
      event: 'push',
      repository,
      subject: `${repository}@refs/heads/${branch}`,
      requester: pusher,
      target: { sha: after, ref: `refs/heads/${branch}`, memory: true },
      facts: { ...noFacts, branch, author: pusher },
      values: { branch, sha: after, ...(pusher ? { author: pusher } : {}) },
      external: {
        push: {
          branch,
          before: sha(at(payload, 'before')),
          after,
          forced: at(payload, 'forced') === true,
          pusher: short(at(payload, 'pusher', 'name'), 100),
          compare: webUrl(at(payload, 'compare')),
          commit_count: list.length,
          commits: list.slice(-COMMITS_KEPT).map((c) => ({
            sha: sha(at(c, 'id')),
            message: capped(at(c, 'message'), MESSAGE_MAX),
            author: short(at(c, 'author', 'username'), 100) ?? short(at(c, 'author', 'name'), 100),
          })),
        },
      },
      jobs: null,
    },
  };
}
