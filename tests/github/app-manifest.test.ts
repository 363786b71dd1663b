import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GITHUB_APP_EVENTS,
  GITHUB_APP_PERMISSIONS,
  type GithubEventName,
} from '../../src/github/app-manifest.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { deliver, example, SECRET } from '../triggers/helpers.js';

// What drydock asks of GitHub is one list (src/github/app-manifest.ts); the App manifest at the repository root
// (github-app.json) and docs/github.md ("Setting up GitHub") say the same, and the list's `handled` says what the
// webhook intake really does with each event: none of them can drift from the others.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'github-app.json'), 'utf8'));
const page = readFileSync(join(ROOT, 'docs', 'github.md'), 'utf8');

/** docs/github.md's opening section ("Setting up GitHub"), up to its first level-2 heading. */
function setupSection(): string {
  expect(page.startsWith('# Setting up GitHub\n'), 'docs/github.md opens with "# Setting up GitHub"').toBe(
    true,
  );
  const end = page.indexOf('\n## ');
  return page.slice(0, end === -1 ? undefined : end);
}

/** The table whose header row starts with `header`: its rows by the name in their first cell. */
function table(section: string, header: string): Map<string, string[]> {
  const lines = section.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`| ${header} |`));
  expect(start, `a table headed "${header}"`).toBeGreaterThanOrEqual(0);
  const rows = new Map<string, string[]>();
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    rows.set(cells[0]!.replace(/^`(.*)`$/, '$1'), cells.slice(1));
  }
  return rows;
}

const LEVEL = { read: 1, write: 2 } as const;
const events = Object.keys(GITHUB_APP_EVENTS) as GithubEventName[];

describe('github-app.json, the GitHub App manifest', () => {
  it("uses only the parameters of GitHub's manifest format, with the required ones", () => {
    // https://docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest
    const known = [
      'name',
      'url',
      'hook_attributes',
      'redirect_url',
      'callback_urls',
      'setup_url',
      'description',
      'public',
      'default_events',
      'default_permissions',
      'request_oauth_on_install',
      'setup_on_update',
    ];
    expect(Object.keys(manifest).filter((k) => !known.includes(k))).toEqual([]);
    expect(new URL(manifest.url).protocol).toBe('https:');
    expect(Object.keys(manifest.hook_attributes).sort()).toEqual(['active', 'url']);
    expect(manifest.hook_attributes.active).toBe(true);
    // The daemon's webhook route; docs/github.md tells to replace the placeholder host.
    const hook = new URL(manifest.hook_attributes.url);
    expect(hook.pathname).toBe('/webhooks/github');
    expect(hook.host).toBe('drydock.example.com');
    // GitHub sends the browser back here with ?code=: a page the daemon serves without a token or a redirect.
    expect(new URL(manifest.redirect_url).pathname).toBe('/healthz');
    expect(manifest.public).toBe(false);
  });

  it('asks for exactly the permissions of src/github/app-manifest.ts', () => {
    expect(manifest.default_permissions).toEqual(GITHUB_APP_PERMISSIONS);
  });

  it('subscribes to exactly the events of src/github/app-manifest.ts', () => {
    expect(manifest.default_events).toEqual(events);
  });

  it('grants every event the permission GitHub requires to receive it', () => {
    for (const event of events) {
      const need = GITHUB_APP_EVENTS[event].permission;
      expect(manifest.default_permissions[need], `${event} needs ${need}`).toBeDefined();
    }
    // The requested_action of check runs (the Approve and Reject buttons) comes only with write access.
    expect(LEVEL[manifest.default_permissions.checks as 'read' | 'write']).toBe(LEVEL.write);
  });
});

describe('docs/github.md, "Setting up GitHub"', () => {
  it('names the list it follows and the manifest', () => {
    const section = setupSection();
    expect(section).toContain('`src/github/app-manifest.ts`');
    expect(section).toContain('github-app.json');
  });

  it('lists every permission with its access, and no other', () => {
    const rows = table(setupSection(), 'permission');
    expect([...rows.keys()].sort()).toEqual(Object.keys(GITHUB_APP_PERMISSIONS).sort());
    for (const [name, access] of Object.entries(GITHUB_APP_PERMISSIONS)) {
      expect(rows.get(name)![0], `${name}'s access`).toBe(access);
    }
  });

  it('lists every event, and no other, saying "(coming)" exactly for those not handled yet', () => {
    const rows = table(setupSection(), 'event');
    expect([...rows.keys()]).toEqual(events);
    for (const event of events) {
      expect(rows.get(event)!.join(' ').includes('(coming)'), `${event}: (coming) iff not handled`).toBe(
        !GITHUB_APP_EVENTS[event].handled,
      );
    }
  });
});

describe('what the webhook intake does with each event', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startTestDaemon({ patch: (c) => (c.github.webhook_secrets = [SECRET]) });
  });
  afterAll(async () => {
    await d.stop();
  });

  it.each(events)('%s: acted on exactly when the list says it is handled', async (event) => {
    // A real payload of the event (@octokit/webhooks-examples), signed and delivered over HTTP.
    const r = await deliver(d, event, example(event), { wait: false });
    expect(r.status, JSON.stringify(r.answer)).toBe(202);
    const unhandled = r.answer.detail === `no trigger handles ${event} events`;
    expect(unhandled, `${event}: ${JSON.stringify(r.answer)}`).toBe(!GITHUB_APP_EVENTS[event].handled);
  });
});
