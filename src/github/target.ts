import { realpath } from 'node:fs/promises';
import { sep } from 'node:path';
import type { PullRequestCheckout, Run } from '../domain/types.js';
import type { PlanStore, RunStore } from '../store/store.js';

// Where a plan's GitHub work goes: the pull request a run came from (what reports and the delivery's comment
// are about), and the repository a delivery goes to, if any: that pull request's, a repository the
// configuration maps to a local clone, or a remote URL on github.com (or the configured GitHub Enterprise host).

/** How many revision rounds back a run's pull request is looked for. */
const MAX_REVISION_HOPS = 50;

/**
 * The pull request a run is about: its own checkout, or that of the plan a revision round revises (and so on
 * back); null for a run no pull request started (a run on a commit another event named, such as a merged pull
 * request's merge commit, is about no open pull request). The one answer reports and deliveries both use.
 */
export async function pullRequestOf(
  store: Pick<RunStore, 'getRun'> & Pick<PlanStore, 'getPlan'>,
  run: Run | null,
): Promise<PullRequestCheckout | null> {
  for (let hop = 0; run && hop < MAX_REVISION_HOPS; hop++) {
    if (run.checkout) return run.checkout.kind === 'commit' ? null : run.checkout;
    if (!run.revisesPlanId) return null;
    const plan = await store.getPlan(run.revisesPlanId);
    run = plan ? await store.getRun(plan.runId) : null;
  }
  return null;
}

/** owner/repo of a GitHub remote URL (https, ssh or scp-like), or null. `hosts`: GitHub's web hosts. */
export function githubRepositoryOfUrl(url: string, hosts: readonly string[]): string | null {
  const name = '([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\\.git)?/?';
  for (const host of hosts) {
    const h = host.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const patterns = [
      new RegExp(`^(?:https?|ssh|git)://(?:[^@/]+@)?${h}(?::\\d+)?/${name}$`, 'i'),
      new RegExp(`^(?:[^@/]+@)?${h}:${name}$`, 'i'),
    ];
    for (const p of patterns) {
      const m = p.exec(url);
      if (m) return `${m[1]}/${m[2]}`;
    }
  }
  return null;
}

/** GitHub's web hosts for an API URL: github.com, and the host of a GitHub Enterprise API (https://HOST/api/v3). */
export function githubHosts(apiUrl: string): string[] {
  const hosts = ['github.com'];
  try {
    const host = new URL(apiUrl).hostname;
    if (host !== 'api.github.com' && !hosts.includes(host)) hosts.push(host);
  } catch {
    // a malformed URL is refused by the configuration already
  }
  return hosts;
}

/**
 * The base URL repositories are cloned from (`<base>/<owner>/<repo>.git`): `gitUrl` when configured, else
 * GitHub's web host of the API. github.com serves git over HTTPS at https://github.com/OWNER/REPO.git for the
 * API at https://api.github.com; GitHub Enterprise Server serves its API at https://HOST/api/v3 and git at
 * https://HOST/OWNER/REPO.git: "an HTTPS URL like https://[product url]/user/repo.git"
 * (https://docs.github.com/en/get-started/git-basics/about-remote-repositories), API endpoints "prefixed with
 * http(s)://HOSTNAME/api/v3" (https://docs.github.com/en/enterprise-server@3.10/rest/enterprise-admin).
 */
export function githubGitUrl(apiUrl: string, gitUrl: string | null): string {
  if (gitUrl) return gitUrl.replace(/\/+$/, '');
  const api = new URL(apiUrl);
  if (api.hostname === 'api.github.com') return 'https://github.com';
  return `${api.protocol}//${api.host}`;
}

/** The configured repository (owner/repo) whose clone holds `workspace`, or null. */
export async function githubRepositoryOfPath(
  workspace: string,
  repositories: Record<string, { path: string }>,
): Promise<string | null> {
  const real = await realpath(workspace).catch(() => workspace);
  for (const [repository, { path }] of Object.entries(repositories)) {
    const clone = await realpath(path).catch(() => path);
    if (real === clone || real.startsWith(clone.endsWith(sep) ? clone : clone + sep)) return repository;
  }
  return null;
}
