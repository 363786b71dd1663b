import type { Config } from './schema.js';

// Delivery settings that cannot work together, said once for the start's warning, `drydock doctor` and the
// delivery that meets them (src/delivery/worker.ts fails it at once with the same words).

/** Whether drydock has GitHub credentials of its own (a token or an App) to open pull requests with. */
export function hasGithubCredentials(config: Config): boolean {
  return config.github.token !== null || config.github.app.id !== null;
}

/**
 * Why a delivery to a GitHub repository cannot open its pull request, or null: delivery.pull_request is on
 * and neither github.token nor github.app is set.
 */
export function pullRequestDeliveryProblem(config: Config): string | null {
  if (!config.delivery.pull_request || hasGithubCredentials(config)) return null;
  return 'delivery.pull_request is true but neither github.token (GITHUB_TOKEN) nor github.app is set, so no pull request can be opened: set one of them, or set delivery.pull_request: false to push the branch only';
}

/** What the start warns of delivery when it is on by default (delivery.enabled). */
export function deliveryStartWarnings(config: Config): string[] {
  if (!config.delivery.enabled) return [];
  const problem = pullRequestDeliveryProblem(config);
  return problem === null
    ? []
    : [`${problem}; deliveries to GitHub repositories fail until then (non-GitHub remotes get the branch)`];
}
