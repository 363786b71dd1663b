import { type EventReading, ignored, noFacts, rejected } from './context.js';
import { at, capped, login, refName, repositoryOf, short, webUrl } from './read.js';

// A release (published, released, prereleased): the run plans on the commit of the release's tag, fetched from
// the clone's remote (refs/tags/<tag>) when the run starts. GitHub's payload
// (https://docs.github.com/webhooks/webhook-events-and-payloads#release): `release` with tag_name,
// target_commitish (the branch or commit the tag was made from, when GitHub made it), name, body (the notes),
// draft, prerelease, author.login, html_url. A draft release's tag need not exist yet.

/** Release notes are kept up to this many characters (GitHub allows 125,000). */
const NOTES_MAX = 65_536;

export function releaseEvent(payload: unknown, action: string): EventReading {
  const repository = repositoryOf(payload);
  if (!repository) return rejected('the release payload lacks a repository');
  if (at(payload, 'release', 'draft') === true) return ignored('a draft release has no tag to plan on yet');
  const tag = refName(at(payload, 'release', 'tag_name'));
  if (!tag) return rejected('the release has no usable tag name');
  const author = login(at(payload, 'release', 'author', 'login'));
  return {
    context: {
      kind: 'event',
      family: 'release',
      event: `release.${action}`,
      repository,
      subject: `${repository}@refs/tags/${tag}`,
      requester: author,
      target: { sha: null, ref: `refs/tags/${tag}`, memory: true },
      facts: { ...noFacts, author },
      values: { tag, ...(author ? { author } : {}) },
      external: {
        release: {
          tag,
          name: short(at(payload, 'release', 'name'), 1_000),
          notes: capped(at(payload, 'release', 'body'), NOTES_MAX),
          target_commitish: short(at(payload, 'release', 'target_commitish'), 255),
          prerelease: at(payload, 'release', 'prerelease') === true,
          author: short(at(payload, 'release', 'author', 'login'), 100),
          url: webUrl(at(payload, 'release', 'html_url')),
        },
      },
      jobs: null,
    },
  };
}
