import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { freshDatabase, postgresAvailable } from '../support/postgres.js';
import { CLI } from '../support/process-daemon.js';

// `drydock doctor` checks every dependency of a real configuration on temporary directories, one line each,
// "ok <what>: ..." or "FAIL <what>: <what to do>", and exits 1 when any check fails: the store (SQLite writable,
// PostgreSQL reachable and migrated), the tokens that may approve, the sandbox, ripgrep, GitHub's webhook
// secrets, the notification webhooks (reached on loopback), delivery and GitHub's credentials.

let model: ModelServer;
let tmp: ReturnType<typeof tempDir>;
let hook: Server;
let hookUrl: string;
const hookMethods: string[] = [];

beforeEach(async () => {
  model = await startModelServer();
  tmp = tempDir('drydock-doctor-checks-');
  hookMethods.length = 0;
  hook = createServer((req, res) => {
    hookMethods.push(req.method ?? '');
    res.writeHead(405).end();
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/services/T0/B0/secret-path`;
});
afterEach(async () => {
  hook.closeAllConnections();
  await new Promise((resolve) => hook.close(resolve));
  await model.close();
  tmp.remove();
});

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: tmp.path,
    ANTHROPIC_API_KEY: 'sk-doctor-test',
    ANTHROPIC_BASE_URL: model.url,
    DRYDOCK_LOG_LEVEL: 'silent',
    ...extra,
  };
}

/** A local command run to its end (migrate, token create). */
function local(args: string[], extra: Record<string, string> = {}): void {
  const r = spawnSync(process.execPath, [CLI, ...args], { env: env(extra), cwd: tmp.path, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
}

async function doctor(config: string, extra: Record<string, string> = {}) {
  model.enqueue({ kind: 'message', content: [{ type: 'text', text: 'ready' }] });
  const child = spawn(process.execPath, [CLI, 'doctor', '--config', config], {
    env: env(extra),
    cwd: tmp.path,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (b) => {
    stdout += b;
  });
  const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? -1)));
  const lines = stdout.trim().split('\n');
  return {
    code,
    stdout,
    lines,
    line: (what: string) => lines.find((l) => / /.test(l) && l.split(' ')[1]!.startsWith(what)),
  };
}

function writeConfig(name: string, yaml: string): string {
  const path = join(tmp.path, name);
  writeFileSync(path, yaml);
  return path;
}

describe('drydock doctor: every dependency', () => {
  it('says ok for each when everything works, and exits 0', async () => {
    const data = join(tmp.path, 'data');
    const config = writeConfig(
      'ok.yaml',
      `data_dir: ${data}\nnotifications:\n  webhooks:\n    - url: ${hookUrl}\ndelivery:\n  enabled: true\ngithub:\n  token: ghp_doctorTestToken0123456789\n  report: true\n  webhook_secrets: [doctor-webhook-secret]\n`,
    );
    local(['migrate', '--config', config]);
    local(['token', 'create', '--name', 'alice', '--role', 'admin', '--config', config]);
    local(['token', 'create', '--name', 'bob', '--role', 'approver', '--config', config]);
    const r = await doctor(config);
    expect(r.code, r.stdout).toBe(0);
    for (const line of r.lines) expect(line, r.stdout).toMatch(/^(ok|warn|note) /);
    expect(r.line('store')).toBe(`ok store: SQLite ${join(data, 'drydock.db')}, migrated`);
    expect(r.line('tokens')).toBe('ok tokens: 1 admin and 1 approver token active');
    expect(r.line('webhook')).toBe('ok webhook secrets: 1 set, for github.report');
    expect(r.line('sandbox')).toMatch(/^ok sandbox: /);
    expect(r.line('ripgrep')).toMatch(/^ok ripgrep: \//);
    expect(r.line('notification')).toBe(
      `ok notification webhook [0] ${new URL(hookUrl).origin}: reachable (HTTP 405)`,
    );
    expect(hookMethods).toEqual(['HEAD']);
    expect(r.line('delivery')).toBe(
      'ok delivery: executed plans pushed to the remote origin, pull requests opened on GitHub',
    );
    expect(r.line('github')).toMatch(/^ok github: personal access token/);
    // Secrets and a webhook's path (its credential) are never printed.
    for (const secret of ['sk-doctor-test', 'ghp_doctorTestToken', 'doctor-webhook-secret', 'secret-path']) {
      expect(r.stdout).not.toContain(secret);
    }
  }, 60_000);

  it('says FAIL with what to do for each broken dependency, and exits 1', async () => {
    const file = join(tmp.path, 'a-file');
    writeFileSync(file, '');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const config = writeConfig(
      'bad.yaml',
      `data_dir: ${join(file, 'data')}\nnotifications:\n  webhooks:\n    - url: http://127.0.0.1:${port}/hook\ndelivery:\n  enabled: true\ngithub:\n  report: true\n`,
    );
    const r = await doctor(config, { PATH: tmp.path });
    expect(r.code, r.stdout).toBe(1);
    expect(r.line('store')).toBe(
      `FAIL store: ${join(file, 'data')} cannot be made or written (${file}: ENOTDIR): set data_dir (DRYDOCK_DATA_DIR) to a directory this user may write`,
    );
    expect(r.line('ripgrep')).toMatch(/^FAIL ripgrep: rg is not on PATH: install the ripgrep package/);
    expect(r.line('notification')).toMatch(
      new RegExp(
        `^FAIL notification webhook \\[0\\] http://127\\.0\\.0\\.1:${port}: not reachable \\(.*\\): check notifications\\.webhooks\\[0\\]\\.url and the network$`,
      ),
    );
    expect(r.line('webhook')).toBe(
      "FAIL webhook secrets: github.report need GitHub's webhooks, which are refused while neither github.webhook_secrets (GITHUB_WEBHOOK_SECRET) nor github.app.webhook_secret is set: set the secret the webhook was made with",
    );
    expect(r.line('delivery')).toBe(
      'FAIL delivery: delivery.pull_request is true but neither github.token (GITHUB_TOKEN) nor github.app is set, so no pull request can be opened: set one of them, or set delivery.pull_request: false to push the branch only',
    );
    expect(r.line('tokens')).toBe('note tokens: not checked, the store did not open');
  }, 60_000);

  it('says when one token alone may approve: its holder cannot approve their own plans', async () => {
    const data = join(tmp.path, 'data');
    mkdirSync(data);
    const config = writeConfig('one.yaml', `data_dir: ${data}\n`);
    local(['token', 'create', '--init', '--name', 'alice', '--role', 'admin', '--config', config]);
    const r = await doctor(config);
    expect(r.code, r.stdout).toBe(1);
    expect(r.line('tokens')).toBe(
      'FAIL tokens: one token may approve (admin), and self-approval is off, so no one can approve the plans its holder requests: give a second person an approver token (drydock token create --name <person> --role approver), or set allow_self_approval on the sessions and jobs whose plans their requester may approve',
    );
  }, 60_000);
});

describe('drydock doctor: PostgreSQL', async () => {
  const available = await postgresAvailable('doctor');
  it.skipIf(!available)(
    'says FAIL while unreachable or not migrated, ok once migrated',
    async () => {
      const refused = writeConfig(
        'pg-refused.yaml',
        'database_url: postgres://drydock:pw@127.0.0.1:1/none\n',
      );
      const down = await doctor(refused);
      expect(down.code).toBe(1);
      expect(down.line('store')).toBe(
        'FAIL store: PostgreSQL postgres://drydock:***@127.0.0.1:1/none cannot be reached (ECONNREFUSED): check database_url (DATABASE_URL), or unset it to use the embedded SQLite store',
      );
      const db = await freshDatabase({ prefix: 'drydock_doctor' });
      try {
        const config = writeConfig(
          'pg.yaml',
          `database_url: ${db.url}\ndata_dir: ${join(tmp.path, 'pg-data')}\n`,
        );
        const before = await doctor(config);
        expect(before.code).toBe(1);
        expect(before.line('store')).toMatch(
          /^FAIL store: PostgreSQL .* is not migrated \(schema version 0 of \d+\): run drydock migrate/,
        );
        local(['migrate', '--config', config]);
        const after = await doctor(config);
        expect(after.line('store')).toMatch(/^ok store: PostgreSQL .*, reachable and migrated$/);
        expect(after.line('tokens')).toMatch(/^FAIL tokens: no admin or approver token/);
      } finally {
        await db.drop();
      }
    },
    120_000,
  );
});
