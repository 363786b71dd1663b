import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { loadMigrations } from '../../src/store/migrations.js';
import { tempDir } from '../support/harness.js';

const CLI = join(packageRoot(), 'dist/src/cli/main.js');
const children: ChildProcess[] = [];
const dirs: { remove(): void }[] = [];

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) d.remove();
});

function dir(): string {
  const d = tempDir('drydock-cli-');
  dirs.push(d);
  return d.path;
}

const baseEnv = (dataDir: string, extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '/tmp',
  DRYDOCK_DATA_DIR: dataDir,
  DRYDOCK_PORT: '0',
  DRYDOCK_LOG_LEVEL: 'info',
  ...extra,
});

/** Starts `drydock serve` and resolves once it prints where it listens. */
function serve(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string; stderr: () => string; stdout: () => string }> {
  const child = spawn(process.execPath, [CLI, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let err = '';
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  // No deadline of its own: a start that never prints the line is ended by the test's timeout.
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (d) => {
      err += d;
      const m = /drydock listening on (http:\/\/\S+)/.exec(err);
      if (m && err.includes('admin token')) {
        resolve({ child, url: m[1]!, stderr: () => err, stdout: () => out });
      }
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}

/**
 * `drydock serve` expected to fail: its exit code and stderr, once it has exited by itself (a start that hangs
 * instead never exits, and the test's timeout ends it; no wall-clock bound, which a busy machine would break).
 */
async function failedStart(
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stderr };
}

/** A port something else listens on, until `close`. */
async function busyPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server };
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

describe('drydock serve', () => {
  it('creates an admin token once, serves the API with it, and exits 0 on SIGTERM', async () => {
    const data = dir();
    const first = await serve(baseEnv(data));
    const token = /admin token \(shown once, keep it safe\): (ddk_\S+)/.exec(first.stderr())?.[1];
    expect(token).toBeDefined();
    // The secret never goes to the JSON log.
    expect(first.stdout()).not.toContain(token!);

    const unauthorized = await fetch(`${first.url}/v1/sessions`);
    expect(unauthorized.status).toBe(401);
    const ok = await fetch(`${first.url}/v1/sessions`, { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ items: [], next_cursor: null });
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200);

    first.child.kill('SIGTERM');
    expect(await exited(first.child)).toBe(0);
    expect(first.stdout()).toContain('"msg":"drydock stopped"');

    // Second start: no new token is printed, the old one still works.
    const second = await serve(baseEnv(data));
    expect(second.stderr()).not.toMatch(/ddk_/);
    const again = await fetch(`${second.url}/v1/sessions`, { headers: { authorization: `Bearer ${token}` } });
    expect(again.status).toBe(200);
    second.child.kill('SIGINT');
    expect(await exited(second.child)).toBe(0);
  });

  it('starts without ANTHROPIC_API_KEY with a warning; /readyz says the model is not configured', async () => {
    const d = await serve(baseEnv(dir()));
    for (let i = 0; i < 50 && !d.stdout().includes('"msg":"drydock started"'); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const ready = await fetch(`${d.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as any).model).toEqual({ id: 'claude-sonnet-5-5', configured: false });
    const warning = d
      .stdout()
      .split('\n')
      .filter((l) => l.includes('ANTHROPIC_API_KEY'))
      .map((l) => JSON.parse(l));
    expect(warning).toHaveLength(1);
    expect(warning[0].level).toBe(40);
    expect(warning[0].msg).toMatch(/^ANTHROPIC_API_KEY is not set: the daemon serves, but every run fails/);
    d.child.kill('SIGTERM');
    expect(await exited(d.child)).toBe(0);

    const keyed = await serve(baseEnv(dir(), { ANTHROPIC_API_KEY: 'sk-ant-test' }));
    expect(((await (await fetch(`${keyed.url}/readyz`)).json()) as any).model.configured).toBe(true);
    expect(keyed.stdout()).not.toContain('ANTHROPIC_API_KEY is not set');
    expect(keyed.stdout()).not.toContain('sk-ant-test');
    keyed.child.kill('SIGTERM');
    expect(await exited(keyed.child)).toBe(0);
  });

  it('refuses to start on a retired default model, naming its replacement', () => {
    const data = dir();
    const config = join(data, 'drydock.yaml');
    // Sonnet 4.5 retired on 2026-11-30 (docs/models.md); the daemon reads today's date from the system clock.
    writeFileSync(config, 'anthropic:\n  model: claude-sonnet-4-5\n');
    const r = spawnSync(process.execPath, [CLI, 'serve'], {
      env: baseEnv(data, { ANTHROPIC_API_KEY: 'k', DRYDOCK_CONFIG: config }),
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      'anthropic.model: claude-sonnet-4-5 retired on 2026-11-30 and no longer answers; use claude-sonnet-5-5 (docs/models.md)',
    );
  });

  it('adopts DRYDOCK_ADMIN_TOKEN on first start and never prints it', async () => {
    const secret = 'operator-chosen-admin-token-0123456789';
    const d = await serve(baseEnv(dir(), { DRYDOCK_ADMIN_TOKEN: secret }));
    expect(d.stderr() + d.stdout()).not.toContain(secret);
    const res = await fetch(`${d.url}/v1/sessions`, { headers: { authorization: `Bearer ${secret}` } });
    expect(res.status).toBe(200);
    d.child.kill('SIGTERM');
    expect(await exited(d.child)).toBe(0);
  });

  it('lists every configuration problem and exits 2', () => {
    const r = spawnSync(process.execPath, [CLI, 'serve'], {
      env: baseEnv(dir(), { DRYDOCK_PORT: 'abc', DRYDOCK_LOG_LEVEL: 'loud', DRYDOCK_TIMEZONE: 'Mars/Base' }),
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('server.port');
    expect(r.stderr).toContain('DRYDOCK_PORT');
    expect(r.stderr).toContain('log_level');
    expect(r.stderr).toContain('timezone');
  });

  it('refuses to start against a newer schema and says what to do', async () => {
    const data = dir();
    const m = spawnSync(process.execPath, [CLI, 'migrate'], { env: baseEnv(data), encoding: 'utf8' });
    expect(m.status, m.stderr).toBe(0);
    // Every migration of this build, in order (each new one moves these numbers).
    const latest = loadMigrations().length;
    const versions = Array.from({ length: latest }, (_, i) => i + 1).join(', ');
    expect(m.stdout).toContain(`schema at version ${latest} (applied ${versions})`);
    const db = new Database(join(data, 'drydock.db'));
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 0)").run();
    db.close();
    const r = spawnSync(process.execPath, [CLI, 'serve'], { env: baseEnv(data), encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`schema is at version 99, newer than this build of drydock knows (${latest})`);
    expect(r.stderr).toMatch(/Upgrade drydock/);
  });

  it('token create makes a working token of the given role; bad roles are usage errors', async () => {
    const data = dir();
    const bad = spawnSync(process.execPath, [CLI, 'token', 'create', '--name', 'ann', '--role', 'king'], {
      env: baseEnv(data),
      encoding: 'utf8',
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--role must be one of admin, operator, approver, viewer/);
    // Where no daemon ever ran, it makes no database: it says where it looked, and leaves nothing behind.
    const stray = join(dir(), 'elsewhere');
    const refused = spawnSync(
      process.execPath,
      [CLI, 'token', 'create', '--name', 'ann', '--role', 'viewer'],
      {
        env: baseEnv(stray),
        encoding: 'utf8',
      },
    );
    expect(refused.status).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(
      `token create: no drydock database at ${join(stray, 'drydock.db')} (data_dir ${stray})`,
    );
    expect(refused.stderr).toContain('--data-dir DIR');
    expect(refused.stderr).toContain('--init makes a new database there');
    expect(existsSync(stray)).toBe(false);
    for (const sub of [
      ['revoke', 'abc'],
      ['create', '--name', 'x', '--role', 'viewer'],
    ]) {
      const r = spawnSync(process.execPath, [CLI, 'token', ...sub], {
        env: baseEnv(stray),
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(2);
    }
    const gc = spawnSync(process.execPath, [CLI, 'gc'], { env: baseEnv(stray), encoding: 'utf8' });
    expect(gc.status).toBe(2);
    expect(gc.stderr).toContain('gc: no drydock database at');
    expect(existsSync(stray)).toBe(false);
    // --init means it: a new database, named in what it says.
    const made = spawnSync(
      process.execPath,
      [CLI, 'token', 'create', '--init', '--name', 'ann', '--role', 'viewer'],
      { env: baseEnv(data), encoding: 'utf8' },
    );
    expect(made.status, made.stderr).toBe(0);
    expect(made.stderr).toContain(`created in ${join(data, 'drydock.db')};`);
    const token = made.stdout.trim();
    expect(token).toMatch(/^ddk_/);
    const d = await serve(baseEnv(data));
    const read = await fetch(`${d.url}/v1/sessions`, { headers: { authorization: `Bearer ${token}` } });
    expect(read.status).toBe(200);
    const write = await fetch(`${d.url}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ workspace: data }),
    });
    expect(write.status).toBe(403);
    d.child.kill('SIGTERM');
    expect(await exited(d.child)).toBe(0);
  });

  it('token revoke ends a token (by its id or the token itself) at once, on a running daemon too', async () => {
    const data = dir();
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, [CLI, 'token', ...args], { env: baseEnv(data), encoding: 'utf8' });
    const made = cli('create', '--init', '--name', 'bob', '--role', 'approver');
    expect(made.status, made.stderr).toBe(0);
    const token = made.stdout.trim();
    const id = /^token (\S+) for bob \(approver\) created/.exec(made.stderr)?.[1];
    expect(token.startsWith(`ddk_${id}.`)).toBe(true);
    const other = cli('create', '--name', 'cy', '--role', 'viewer').stdout.trim();
    const d = await serve(baseEnv(data));
    const as = (t: string) => fetch(`${d.url}/v1/sessions`, { headers: { authorization: `Bearer ${t}` } });
    expect((await as(token)).status).toBe(200);

    const revoked = cli('revoke', id!);
    expect(revoked.status, revoked.stderr).toBe(0);
    expect(revoked.stderr).toMatch(new RegExp(`token ${id} \\(bob\\) revoked; its /ui sessions ended`));
    expect((await as(token)).status).toBe(401);
    expect(cli('revoke', id!).stderr).toMatch(/was already revoked/);
    // The whole token works as the argument too.
    expect(cli('revoke', other).status).toBe(0);
    expect((await as(other)).status).toBe(401);
    const unknown = cli('revoke', 'nosuchtokenid000');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/no token with id nosuchtokenid000/);
    expect(cli('revoke').status).toBe(2);
    d.child.kill('SIGTERM');
    expect(await exited(d.child)).toBe(0);
  });

  it('token revoke takes an id that starts with "-" (ids issued before they began with a letter or digit)', () => {
    const data = dir();
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, [CLI, 'token', ...args], { env: baseEnv(data), encoding: 'utf8' });
    const made = cli('create', '--init', '--name', 'dee', '--role', 'viewer');
    expect(made.status, made.stderr).toBe(0);
    const id = /^token (\S+) for dee/.exec(made.stderr)?.[1];
    expect(id).toMatch(/^[A-Za-z0-9]/);
    // Give the stored token the shape an older id could have: a leading '-' parses as short options.
    const legacy = `-J${id!.slice(2)}`;
    const db = new Database(join(data, 'drydock.db'));
    db.prepare('UPDATE api_tokens SET id = ? WHERE id = ?').run(legacy, id);
    db.close();
    const revoked = cli('revoke', legacy);
    expect(revoked.status, revoked.stderr).toBe(0);
    expect(revoked.stderr).toContain(`token ${legacy} (dee) revoked`);
    // Options still read as options beside it.
    expect(cli('revoke', legacy, '--data-dir', data).stderr).toMatch(/was already revoked/);
    expect(cli('revoke', '-Jnotanid').status).toBe(2);
  });

  it('a port in use fails the start at once, creating nothing; the next start prints the admin token', async () => {
    const data = join(dir(), 'data');
    const busy = await busyPort();
    const failed = await failedStart(baseEnv(data, { DRYDOCK_PORT: String(busy.port) }));
    expect(failed.code).toBe(1);
    expect(failed.stderr).toBe(
      `drydock: port ${busy.port} is in use: stop the other process or set DRYDOCK_PORT / --port\n`,
    );
    // Neither the database nor (in it) an admin token that no one was shown.
    expect(existsSync(data)).toBe(false);
    await new Promise((resolve) => busy.server.close(resolve));

    const next = await serve(baseEnv(data, { DRYDOCK_PORT: String(busy.port) }));
    const token = /admin token \(shown once, keep it safe\): (ddk_\S+)/.exec(next.stderr())?.[1];
    expect(token).toBeDefined();
    const ok = await fetch(`${next.url}/v1/sessions`, { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    next.child.kill('SIGTERM');
    expect(await exited(next.child)).toBe(0);
  });

  it('a data directory that is a file, or lies under one, fails the start with exit 1 and one line', async () => {
    const file = join(dir(), 'not-a-dir');
    writeFileSync(file, 'x');
    const isFile = await failedStart(baseEnv(file));
    expect(isFile.code).toBe(1);
    expect(isFile.stderr).toBe(
      `drydock: data directory ${file} is a file, not a directory: set data_dir (DRYDOCK_DATA_DIR, --data-dir) to a writable directory\n`,
    );
    // The work directory (work_dir) is checked the same way, and named as such.
    const work = await failedStart({ ...baseEnv(dir()), DRYDOCK_WORK_DIR: file });
    expect(work.code).toBe(1);
    expect(work.stderr).toBe(
      `drydock: work directory ${file} is a file, not a directory: set work_dir (DRYDOCK_WORK_DIR) to a writable directory, or unset it to use data_dir\n`,
    );
    // As --data-dir too, and with missing levels between it and the file (root cannot get past this either).
    const under = await failedStart(baseEnv(dir()), ['--data-dir', join(file, 'a', 'b')]);
    expect(under.code).toBe(1);
    expect(under.stderr).toBe(
      `drydock: data directory ${join(file, 'a', 'b')} cannot be created: ${file} is a file: set data_dir (DRYDOCK_DATA_DIR, --data-dir) to a writable directory\n`,
    );
  });

  it('a data directory that cannot be created (under /proc) fails at once instead of hanging', async () => {
    // Node's recursive mkdir never returns for /proc/x (ENOENT, then EEXIST for /proc, forever).
    const r = await failedStart(baseEnv('/proc/drydock-test'));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'drydock: data directory /proc/drydock-test cannot be created (mkdir /proc/drydock-test: no such file or directory): set data_dir (DRYDOCK_DATA_DIR, --data-dir) to a writable directory\n',
    );
    const m = spawnSync(process.execPath, [CLI, 'migrate'], {
      env: baseEnv('/proc/drydock-test'),
      encoding: 'utf8',
      timeout: 5_000,
    });
    expect(m.status).toBe(1);
    expect(m.stderr).toMatch(/^drydock: data directory \/proc\/drydock-test cannot be created/);
  });

  it('a data directory inside a clone the model works in fails the start with exit 1 and one line', async () => {
    // `cd repo && drydock serve --config drydock.yaml`, the repository mapped to itself: ./data is in it.
    const repo = dir();
    const configFile = join(repo, 'drydock.yaml');
    writeFileSync(configFile, `github:\n  repositories:\n    acme/app:\n      path: ${repo}\n`);
    const r = await failedStart(baseEnv(join(repo, 'data')), ['--config', configFile]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `drydock: data directory ${join(repo, 'data')} lies inside ${repo}, the clone of github.repositories.acme/app: the model of its pull requests' runs could read and change it; move data_dir (DRYDOCK_DATA_DIR, --data-dir) out of ${repo}, with its contents (or map acme/app to a clone elsewhere)\n`,
    );
  });

  it('a port in use does not leave a database behind in an existing data directory either', async () => {
    const data = dir();
    const busy = await busyPort();
    const failed = await failedStart(baseEnv(data, { DRYDOCK_PORT: String(busy.port) }));
    busy.server.close();
    expect(failed.code).toBe(1);
    expect(readdirSync(data)).toEqual([]);
  });

  it('prints usage for unknown commands with exit 2', () => {
    const r = spawnSync(process.execPath, [CLI, 'frobnicate'], { env: baseEnv(dir()), encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown command "frobnicate"');
    expect(r.stderr).toContain('usage: drydock');
  });
});
