import { type EventReading, noFacts, rejected } from './context.js';
import { at, capped, login, refName, repositoryOf, safeName, sha, short, webUrl } from './read.js';

// A deployment status (success, failure, ...): the run plans on the deployed commit. GitHub's payload
// (https://docs.github.com/webhooks/webhook-events-and-payloads#deployment_status, action `created`):
// deployment_status {state: error|failure|inactive|pending|success|queued|in_progress, environment,
// description, log_url, target_url, environment_url}, deployment {sha, ref (a branch, tag or sha), environment,
// task, creator.login}. Environment names are the repository's, up to 255 characters.

export function deploymentStatusEvent(payload: unknown): EventReading {
  const repository = repositoryOf(payload);
  if (!repository) return rejected('the deployment_status payload lacks a repository');
  const deployed = sha(at(payload, 'deployment', 'sha'));
  if (!deployed) return rejected('the deployment lacks the sha it deployed');
  const environment =
    short(at(payload, 'deployment_status', 'environment'), 255) ??
    short(at(payload, 'deployment', 'environment'), 255) ??
    '';
  const state = short(at(payload, 'deployment_status', 'state'), 40) ?? '';
  const branch = refName(at(payload, 'deployment', 'ref'));
  const creator = login(at(payload, 'deployment', 'creator', 'login'));
  const status = (...path: string[]) => at(payload, 'deployment_status', ...path);
  return {
    context: {
      kind: 'event',
      family: 'deployment_status',
      event: 'deployment_status.created',
      repository,
      subject: `${repository}@environment:${safeName(environment) || 'unnamed'}`,
      requester: creator,
      // The ref, when it names a branch, is a second way to fetch the commit; a tag or sha there just fails.
      target: {
        sha: deployed,
        ref: branch && branch !== deployed ? `refs/heads/${branch}` : null,
        memory: true,
      },
      facts: { ...noFacts, environment, state, branch, author: creator },
      values: {
        sha: deployed,
        environment: safeName(environment),
        state: state.replace(/[^a-z_]/g, ''),
        ...(creator ? { author: creator } : {}),
      },
      external: {
        deployment: {
          environment,
          state,
          description: capped(status('description'), 1_000),
          ref: short(at(payload, 'deployment', 'ref'), 255),
          sha: deployed,
          task: short(at(payload, 'deployment', 'task'), 100),
          creator: short(at(payload, 'deployment', 'creator', 'login'), 100),
          log_url: webUrl(status('log_url')) ?? webUrl(status('target_url')),
          environment_url: webUrl(status('environment_url')),
        },
      },
      jobs: null,
    },
  };
}
