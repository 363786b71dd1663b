import { spawn } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { githubDoctor, missingPermissions } from '../../src/github/app-doctor.js';
import { type FakeGithub, startFakeGithub } from '../support/fake-github.js';
import { appKeyPair, type FakeAppInstallation, FULL_APP_PERMISSIONS } from '../support/fake-github-app.js';
import { tempDir } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { CLI } from '../support/process-daemon.js';

// `drydock doctor` with a GitHub App: the JWT accepted or refused, the App's installations and what each lacks
// of the permissions drydock needs, the configured repositories no installation reaches; one line per problem.

const APP_ID = 7070;
const keys = appKeyPair();
const FULL = FULL_APP_PERMISSIONS;

let github: FakeGithub | undefined;
let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir('drydock-app-doctor-');
});
afterEach(async () => {
  await github?.close();
  github = undefined;
  tmp.remove();
});

async function setUp(installations: FakeAppInstallation[], key = keys.privateKey): Promise<Config> {
  github = await startFakeGithub({
    token: 'ghp_unused0123456789',
    app: { id: APP_ID, slug: 'drydock-ops', publicKey: keys.publicKey, installations },
  });
  const keyFile = join(tmp.path, 'app.pem');
  writeFileSync(keyFile, key, { mode: 0o600 });
  const config = defaultConfig();
  config.github.api_url = github.url;
  config.github.app = { id: APP_ID, private_key_file: keyFile, webhook_secret: null };
  return config;
}

describe('drydock doctor, GitHub App', () => {
  it('says which permission each installation lacks, and which configured repository no installation reaches', async () => {
    const config = await setUp([
      { id: 1, account: 'acme', repositories: 'all', permissions: { ...FULL } },
      {
        id: 2,
        account: 'globex',
        repositories: ['globex/gadgets'],
        permissions: { contents: 'read', pull_requests: 'write', issues: 'write', metadata: 'read' },
      },
    ]);
    config.github.repositories = {
      'acme/widgets': { path: '/srv/acme-widgets' },
      'initech/tps': { path: '/srv/initech-tps' },
    };
    const report = await githubDoctor(config);
    expect(report.ok).toBe(false);
    expect(report.lines).toEqual([
      `github app: JWT accepted: drydock test (drydock-ops, id ${APP_ID}) at ${github!.url}; its comments are by drydock-ops[bot]`,
      'github app: installation 1 on acme (all repositories): permissions ok',
      "github app: installation 2 on globex (selected repositories): MISSING contents: write (has read), checks: write (has none): needed for cloning and fetching repositories, pushing delivered branches; check runs with Approve and Reject buttons (set them in the App's settings, Permissions; the installation then accepts them)",
      'github app: initech/tps (github.repositories) is in no installation of the App: install it there',
    ]);
    // Only the App's endpoints were asked, each with a JWT; no installation token was made.
    expect(github!.calls.every((c) => /^bearer /i.test(String(c.headers.authorization)))).toBe(true);
    expect(github!.app!.issued()).toEqual([]);
  });

  it('passes when every installation has what drydock needs', async () => {
    const config = await setUp([{ id: 1, account: 'acme', repositories: 'all', permissions: { ...FULL } }]);
    const report = await githubDoctor(config);
    expect(report).toEqual({
      ok: true,
      lines: [
        `github app: JWT accepted: drydock test (drydock-ops, id ${APP_ID}) at ${github!.url}; its comments are by drydock-ops[bot]`,
        'github app: installation 1 on acme (all repositories): permissions ok',
      ],
    });
    expect(missingPermissions({ ...FULL, pull_requests: 'read' })).toEqual([
      'pull_requests: write (has read)',
    ]);
  });

  it('says when GitHub refuses the JWT, when the App is installed nowhere, and when the key is readable by others', async () => {
    const config = await setUp([], appKeyPair().privateKey);
    chmodSync(config.github.app.private_key_file!, 0o644);
    const refused = await githubDoctor(config);
    expect(refused).toEqual({
      ok: false,
      lines: [
        `github app: warning: ${config.github.app.private_key_file} is readable by others than its owner: chmod 600 it`,
        "github app: JWT REFUSED: GitHub refused the App's JWT (401 A JSON web token could not be decoded): check github.app.id and github.app.private_key_file",
      ],
    });
    writeFileSync(config.github.app.private_key_file!, keys.privateKey, { mode: 0o600 });
    chmodSync(config.github.app.private_key_file!, 0o600);
    const nowhere = await githubDoctor(config);
    expect(nowhere.ok).toBe(false);
    expect(nowhere.lines.at(-1)).toBe(
      'github app: NOT INSTALLED anywhere: install it on the repositories drydock works on',
    );
    const token = defaultConfig();
    token.github.token = 'ghp_x';
    expect(await githubDoctor(token)).toEqual({
      ok: true,
      lines: [
        'github: personal access token (github.token) for https://api.github.com; no GitHub App configured',
      ],
    });
  });
});

describe('drydock doctor, the command', () => {
  let model: ModelServer;
  beforeEach(async () => {
    model = await startModelServer();
  });
  afterEach(async () => {
    await model.close();
  });

  it('prints the App lines after the model lines and exits 1 for a missing permission, never the key', async () => {
    const config = await setUp([
      { id: 9, account: 'acme', repositories: 'all', permissions: { ...FULL, checks: 'read' } },
    ]);
    model.enqueue({ kind: 'message', content: [{ type: 'text', text: 'ready' }] });
    const child = spawn(process.execPath, [CLI, 'doctor'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: tmp.path,
        ANTHROPIC_API_KEY: 'sk-test',
        ANTHROPIC_BASE_URL: model.url,
        GITHUB_APP_ID: String(APP_ID),
        GITHUB_APP_PRIVATE_KEY_FILE: config.github.app.private_key_file!,
        DRYDOCK_CONFIG: writeConfig(`github:\n  api_url: ${github!.url}\n`),
      },
      cwd: tmp.path,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (b) => {
      stdout += b;
    });
    const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? -1)));
    expect(code, stdout).toBe(1);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ok anthropic key: set/);
    expect(lines.slice(-2)).toEqual([
      `ok github app: JWT accepted: drydock test (drydock-ops, id ${APP_ID}) at ${github!.url}; its comments are by drydock-ops[bot]`,
      "FAIL github app: installation 9 on acme (all repositories): MISSING checks: write (has read): needed for check runs with Approve and Reject buttons (set them in the App's settings, Permissions; the installation then accepts them)",
    ]);
    expect(stdout).not.toContain(keys.privateKey.split('\n')[1]!);
  });
});

function writeConfig(text: string): string {
  const path = join(tmp.path, 'drydock.yaml');
  writeFileSync(path, text);
  return path;
}
