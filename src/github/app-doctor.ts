import { keyReadableByOthers, readAppPrivateKey } from '../config/app-key.js';
import type { Config } from '../config/schema.js';
import { silentLogger } from '../logger.js';
import { AppAuth, type AppInstallation } from './app-auth.js';

// `drydock doctor`'s GitHub lines: with an App configured, whether GitHub accepts its JWT (GET /app), where it is
// installed (GET /app/installations) and what each installation lacks of what drydock needs, one line per
// problem; the repositories of github.repositories the App cannot reach. GitHub lists each installation's
// `permissions` as `{name: "read" | "write"}` (https://docs.github.com/rest/apps/apps#list-installations-for-the-authenticated-app);
// which permission each endpoint needs: https://docs.github.com/rest/overview/permissions-required-for-github-apps.

export type Access = 'read' | 'write';

/** What drydock needs of each installation of its App, and what for (docs/github.md, A GitHub App). */
export const NEEDED_PERMISSIONS: readonly { name: string; access: Access; why: string }[] = [
  { name: 'contents', access: 'write', why: 'cloning and fetching repositories, pushing delivered branches' },
  { name: 'pull_requests', access: 'write', why: 'reading, opening and commenting on pull requests' },
  { name: 'issues', access: 'write', why: 'comments on issues and pull requests' },
  { name: 'checks', access: 'write', why: 'check runs with Approve and Reject buttons' },
  { name: 'metadata', access: 'read', why: 'reading repositories (GitHub gives it to every App)' },
];

export interface GithubDoctorReport {
  ok: boolean;
  lines: string[];
}

/** The permissions an installation lacks, as `name: access (has …)`, in NEEDED_PERMISSIONS' order. */
export function missingPermissions(granted: Record<string, string>): string[] {
  return NEEDED_PERMISSIONS.flatMap(({ name, access }) => {
    const has = granted[name];
    const enough = has === 'write' || (has === 'read' && access === 'read');
    return enough ? [] : [`${name}: ${access} (has ${has ?? 'none'})`];
  });
}

/**
 * The GitHub lines of `drydock doctor`. Without an App: one line saying which credentials are set. With one:
 * the checks above, each problem on a line of its own; `ok` is false when any was found. `app` replaces the App
 * client built from the configuration (tests).
 */
export async function githubDoctor(config: Config, app?: AppAuth): Promise<GithubDoctorReport> {
  const { id, private_key_file } = config.github.app;
  if (id === null || private_key_file === null) {
    const line = config.github.token
      ? `github: personal access token (github.token) for ${config.github.api_url}; no GitHub App configured`
      : 'github: neither github.token nor github.app is set: pull requests are not read, reported on or delivered to';
    return { ok: true, lines: [line] };
  }
  const lines: string[] = [];
  if (keyReadableByOthers(private_key_file)) {
    lines.push(`github app: warning: ${private_key_file} is readable by others than its owner: chmod 600 it`);
  }
  const read = readAppPrivateKey(private_key_file);
  if ('problem' in read) return { ok: false, lines: [...lines, `github app: KEY: ${read.problem}`] };
  const auth =
    app ??
    new AppAuth({ appId: id, privateKey: read.pem, baseUrl: config.github.api_url, logger: silentLogger() });
  const problems = await appChecks(config, auth, lines);
  return { ok: problems === 0, lines };
}

/** Runs the App's checks, appending one line each; returns how many problems it found. */
async function appChecks(config: Config, auth: AppAuth, lines: string[]): Promise<number> {
  const signal = AbortSignal.timeout(30_000);
  try {
    const found = await auth.getApp(signal);
    lines.push(
      `github app: JWT accepted: ${found.name} (${found.slug}, id ${found.id}) at ${config.github.api_url}; its comments are by ${found.slug}[bot]`,
    );
  } catch (err) {
    lines.push(`github app: JWT REFUSED: ${messageOf(err)}`);
    return 1;
  }
  let installations: AppInstallation[];
  try {
    installations = await auth.listInstallations(signal);
  } catch (err) {
    lines.push(`github app: could not list its installations: ${messageOf(err)}`);
    return 1;
  }
  let problems = 0;
  if (installations.length === 0) {
    lines.push('github app: NOT INSTALLED anywhere: install it on the repositories drydock works on');
    problems += 1;
  }
  for (const i of installations) problems += installationLine(i, lines);
  for (const repository of Object.keys(config.github.repositories)) {
    const reached = await auth.installationOf(repository, signal).then(
      () => true,
      () => false,
    );
    if (!reached) {
      lines.push(
        `github app: ${repository} (github.repositories) is in no installation of the App: install it there`,
      );
      problems += 1;
    }
  }
  return problems;
}

function installationLine(i: AppInstallation, lines: string[]): number {
  const where = `installation ${i.id} on ${i.account} (${i.repositorySelection === 'all' ? 'all repositories' : 'selected repositories'})`;
  if (i.suspended) {
    lines.push(`github app: ${where}: SUSPENDED: drydock cannot act there until it is unsuspended`);
    return 1;
  }
  const missing = missingPermissions(i.permissions);
  if (missing.length === 0) {
    lines.push(`github app: ${where}: permissions ok`);
    return 0;
  }
  const needs = NEEDED_PERMISSIONS.filter((p) => missing.some((m) => m.startsWith(`${p.name}:`)));
  lines.push(
    `github app: ${where}: MISSING ${missing.join(', ')}: needed for ${needs.map((p) => p.why).join('; ')} (set them in the App's settings, Permissions; the installation then accepts them)`,
  );
  return 1;
}

function messageOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
}
