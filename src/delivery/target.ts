import { realpath } from 'node:fs/promises';
import { sep } from 'node:path';

// Which GitHub repository a delivery goes to, if any: the pull request a run came from, a repository the
// configuration maps to a local clone, or a remote URL on github.com (or the configured GitHub Enterprise host).

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
