// What an execution's commands may reach over the network: a list of host names, nothing else. The invariant:
// a command reaches no address but through drydock's egress proxy (src/agent/egress.ts), and the proxy
// connects only to names on the plan's list. A session's, job's or trigger's `network` says which list:
//   - false (or unset, or []): none; the command has only a loopback of its own;
//   - a list of names: `registry.npmjs.org` is that name only, `*.github.com` any name below github.com
//     (not github.com itself), compared without regard to case; the way Claude Code's sandbox writes its
//     allowed domains ("Wildcards such as *.example.com match subdomains", Claude Code settings,
//     sandbox.network.allowedDomains);
//   - true: the configured default list (execute.network_default_domains). Deprecated: it meant "the host's
//     network" before there were lists.
// A plan records the list it was resolved to, so the approvers see the names the execution will reach.

/** A run option's `network`, as sessions, jobs and triggers store it. */
export type NetworkSetting = boolean | string[];

/**
 * The default of execute.network_default_domains: the package registries of npm, PyPI and crates.io and
 * GitHub's hosts for git over HTTPS, release downloads and raw files.
 */
export const DEFAULT_NETWORK_DOMAINS: readonly string[] = Object.freeze([
  'registry.npmjs.org',
  'pypi.org',
  'files.pythonhosted.org',
  'crates.io',
  'index.crates.io',
  'static.crates.io',
  'github.com',
  'api.github.com',
  'codeload.github.com',
  'objects.githubusercontent.com',
  'raw.githubusercontent.com',
]);

/** At most this many names in one list. */
export const MAX_NETWORK_DOMAINS = 100;

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Why `entry` is no host name a list may hold, or null when it is one. Refused: anything but letters, digits,
 * hyphens and dots (so no scheme, port, path, user or IPv6 address), an IP address or any name whose last
 * label is a number (`127.1` is 127.0.0.1 to most resolvers), a single label (`localhost`, `intranet`),
 * names under `localhost`, and a `*` anywhere but a leading `*.` followed by at least two labels.
 */
export function domainProblem(entry: string): string | null {
  if (entry === '') return 'an empty entry';
  if (entry.includes('://')) return 'a URL: give the host name alone, without scheme, port or path';
  if (entry.includes(':')) return 'a port or an IPv6 address: give a host name alone';
  if (/[/?#@\s]/.test(entry)) return 'not a host name: no path, user or spaces';
  if (entry.length > 253) return 'longer than 253 characters';
  const wildcard = entry.startsWith('*.');
  const labels = (wildcard ? entry.slice(2) : entry).toLowerCase().split('.');
  if (labels.some((l) => l.includes('*'))) return 'a wildcard may only be a leading `*.`, as in *.github.com';
  if (labels.some((l) => !LABEL.test(l))) {
    return 'not a host name: labels of letters, digits and inner hyphens (1-63 each), separated by single dots';
  }
  if (/^\d+$/.test(labels[labels.length - 1]!)) return 'an IP address: only host names are allowed';
  if (labels.length < 2) return 'a single label: give a full name such as registry.npmjs.org';
  if (labels[labels.length - 1] === 'localhost') return 'a name of this machine (localhost)';
  return null;
}

/** The first problem of a list, as one sentence naming the entry; null when every entry is a host name. */
export function domainsProblem(list: readonly unknown[]): string | null {
  if (list.length > MAX_NETWORK_DOMAINS) return `network: at most ${MAX_NETWORK_DOMAINS} host names`;
  for (const [i, entry] of list.entries()) {
    if (typeof entry !== 'string') return `network[${i}]: expected a host name`;
    const problem = domainProblem(entry);
    if (problem) return `network[${i}] ${JSON.stringify(entry)} is ${problem}`;
  }
  return null;
}

/** A list as it is stored: lower case, each name once, sorted (the same list always reads the same). */
export function normalizedDomains(list: readonly string[]): string[] {
  return [...new Set(list.map((d) => d.toLowerCase()))].sort();
}

/** The names a setting allows: none for false or unset, the defaults for true, else the list itself. */
export function networkDomains(setting: NetworkSetting | undefined, defaults: readonly string[]): string[] {
  if (setting === undefined || setting === false) return [];
  return normalizedDomains(setting === true ? defaults : setting);
}

/** Whether `host` (a name as a client asked for it) is one the list allows. */
export function hostAllowed(list: readonly string[], host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return list.some((entry) => covers(entry.toLowerCase(), name));
}

/** Whether list entry `entry` allows everything `other` (a name, or a wildcard) allows. */
function covers(entry: string, other: string): boolean {
  if (entry === other) return true;
  // `*.x` covers every name below x, and every wildcard below x (`*.a.x`), never x itself.
  return entry.startsWith('*.') && other.endsWith(entry.slice(1));
}

/** The entries of `after` that `before` does not allow (a looser list has some; an equal or stricter none). */
export function domainsAdded(before: readonly string[], after: readonly string[]): string[] {
  return after.filter((a) => !before.some((b) => covers(b.toLowerCase(), a.toLowerCase())));
}
