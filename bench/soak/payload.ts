import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

// The webhook every delivery carries: the pull_request.opened example of @octokit/webhooks-examples with its
// head commit rewritten to the local clone's HEAD (so the run's worktree can be made without a fetch) and a
// distinct pull request number per delivery. Signed with X-Hub-Signature-256 as GitHub does.

interface Example {
  action?: string;
  number?: number;
  pull_request?: Record<string, any>;
  repository?: { full_name?: string };
}

export interface PullRequestPayloads {
  /** owner/repo of the example: github.repositories maps it to the local clone. */
  repository: string;
  body(number: number): string;
  sign(body: string): string;
}

export function pullRequestPayloads(headSha: string, secret: string): PullRequestPayloads {
  const require = createRequire(import.meta.url);
  const definitions = JSON.parse(readFileSync(require.resolve('@octokit/webhooks-examples'), 'utf8')) as {
    name: string;
    examples: Example[];
  }[];
  const example = definitions
    .find((d) => d.name === 'pull_request')
    ?.examples.find((e) => e.action === 'opened' && e.pull_request && e.repository?.full_name);
  if (!example?.pull_request || !example.repository?.full_name) {
    throw new Error('@octokit/webhooks-examples has no pull_request.opened example');
  }
  const pr = example.pull_request;
  return {
    repository: example.repository.full_name,
    body: (number) =>
      JSON.stringify({
        ...example,
        number,
        pull_request: { ...pr, number, head: { ...pr.head, sha: headSha } },
      }),
    sign: (body) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
  };
}
