import { realpathSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ADMIN_TOKEN, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { tempDir } from '../support/harness.js';
import { postgresAvailable } from '../support/postgres.js';
import { runCli } from './cli-process.js';

// `drydock apply` and `drydock export`: the built binary in a child process against a real daemon, through a
// loopback proxy that records every request it makes (so "changes nothing" is counted, not assumed).

vi.setConfig({ testTimeout: 90_000 });

const postgresUp = await postgresAvailable('drydock export round trip on PostgreSQL');

let workspace: { path: string; remove(): void };
let ws: string;
beforeAll(() => {
  workspace = tempDir('drydock-cli-apply-');
  ws = realpathSync(workspace.path);
});
afterAll(() => workspace?.remove());

/** A loopback proxy in front of the daemon that records each request's method and path. */
async function recordingProxy(
  target: string,
): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      seen.push(`${req.method} ${req.url}`);
      const body = Buffer.concat(chunks);
      const answer = await fetch(`${target}${req.url}`, {
        method: req.method,
        headers: Object.fromEntries(
          ['authorization', 'content-type', 'accept'].flatMap((h) =>
            req.headers[h] ? [[h, String(req.headers[h])]] : [],
          ),
        ),
        body: body.length ? body : undefined,
      });
      const text = Buffer.from(await answer.arrayBuffer());
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const writes = (seen: string[]) => seen.filter((r) => !r.startsWith('GET '));

let d: TestDaemon;
let proxy: Awaited<ReturnType<typeof recordingProxy>>;
let dir: { path: string; remove(): void };
beforeEach(async () => {
  d = await startTestDaemon({});
  proxy = await recordingProxy(d.daemon.url);
  dir = tempDir('drydock-cli-apply-files-');
});
afterEach(async () => {
  await proxy?.close();
  await d?.stop();
  dir?.remove();
});

const cli = (...args: string[]) => runCli(args, { DRYDOCK_URL: proxy.url, DRYDOCK_TOKEN: ADMIN_TOKEN });

/** Writes a file of the test's directory and returns its path. */
function file(name: string, text: string): string {
  const path = join(dir.path, name);
  writeFileSync(path, text);
  return path;
}

const DOC = (over: { cron?: string; withOld?: boolean } = {}) => `apiVersion: drydock/v1
sessions:
  - name: nightly
    workspace: ${ws}
    defaults: { execute_mode: manual }
    jobs:
      - name: review
        cron: "${over.cron ?? '0 9 * * *'}"
        timezone: Europe/Berlin
        prompt: Review yesterday's commits.
      - name: deps
        cron: "0 6 * * 1"
        prompt: Check the dependencies.
        options: { max_turns: 5 }
${over.withOld ? `      - name: old\n        cron: "0 1 * * *"\n        prompt: Old.\n` : ''}triggers:
  - name: pr-review
    kind: github
    events: [pull_request.opened]
    filters: { repositories: [acme/app] }
    prompt: Review the pull request.
  - name: deploy-check
    kind: generic
    workspace: ${ws}
    prompt: Check the deploy.
  - name: weekly
    kind: schedule
    workspace: ${ws}
    cron: "0 3 * * 1"
    timezone: UTC
    prompt: Weekly tidy-up.
${over.withOld ? `  - name: old-trigger\n    kind: generic\n    workspace: ${ws}\n    prompt: Old.\n` : ''}`;

describe('drydock apply', () => {
  it('creates what the file says, prints the token once, and a second apply changes nothing', async () => {
    const path = file('drydock.yaml', DOC());
    const first = await cli('apply', '-f', path);
    expect(first.code, first.stderr).toBe(0);
    const lines = first.stdout.split('\n');
    expect(lines).toContain(`+ session nightly (${ws})`);
    expect(lines).toContain('+ job nightly/review (0 9 * * *)');
    expect(lines).toContain('+ job nightly/deps (0 6 * * 1)');
    expect(lines).toContain('+ trigger pr-review (github)');
    expect(lines).toContain('+ trigger deploy-check (generic)');
    expect(lines).toContain('+ trigger weekly (schedule)');
    expect(lines).toContain('6 change(s) applied');
    const token = /^ {2}token: (\S+)$/m.exec(first.stdout)?.[1];
    expect(token).toBeDefined();
    // The token works: it fires its trigger.
    const triggers = (await d.api('GET', '/v1/triggers')).body.items as { id: string; name: string }[];
    const generic = triggers.find((t) => t.name === 'deploy-check')!;
    const fired = await fetch(`${d.daemon.url}/v1/triggers/${generic.id}/fire`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'x' }),
    });
    expect(fired.status).toBe(201);

    proxy.seen.length = 0;
    const second = await cli('apply', '-f', path);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe('no changes\n');
    expect(writes(proxy.seen)).toEqual([]);
    const exported = await cli('export');
    expect(exported.stdout).not.toContain(token);
    expect(second.stdout + exported.stdout + exported.stderr).not.toContain('token');
  });

  it('changes one field with one request, and says what it changes', async () => {
    await cli('apply', '-f', file('a.yaml', DOC()));
    const job = (
      (await d.api('GET', '/v1/sessions?status=open')).body.items as { id: string; name: string }[]
    )
      .filter((s) => s.name === 'nightly')
      .map((s) => s.id)[0]!;
    const before = (await d.api('GET', `/v1/sessions/${job}/jobs`)).body.items as {
      id: string;
      name: string;
    }[];
    proxy.seen.length = 0;
    const changed = await cli('apply', '-f', file('b.yaml', DOC({ cron: '0 9 * * 1-5' })));
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stdout).toBe(
      '~ job nightly/review: cron "0 9 * * *" → "0 9 * * 1-5"\n1 change(s) applied\n',
    );
    const review = before.find((j) => j.name === 'review')!;
    expect(writes(proxy.seen)).toEqual([`PATCH /v1/jobs/${review.id}`]);
    const after = (await d.api('GET', `/v1/jobs/${review.id}`)).body;
    expect(after).toMatchObject({
      id: review.id,
      name: 'review',
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
    });
  });

  it('--dry-run prints the diff and writes nothing; --exit-code says whether anything would change', async () => {
    const path = file('drydock.yaml', DOC());
    const dry = await cli('apply', '-f', path, '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('+ trigger deploy-check (generic)\n');
    expect(dry.stdout).toContain('dry run: 6 change(s) would be made; nothing was changed\n');
    expect(dry.stdout).not.toContain('token');
    expect(writes(proxy.seen)).toEqual([]);
    expect((await d.api('GET', '/v1/triggers')).body.items).toEqual([]);
    expect((await cli('apply', '-f', path, '--dry-run', '--exit-code')).code).toBe(3);
    await cli('apply', '-f', path);
    const none = await cli('apply', '-f', path, '--dry-run', '--exit-code');
    expect(none).toMatchObject({ code: 0, stdout: 'no changes\n' });
  });

  it('--prune removes the named objects the file leaves out, and leaves unnamed jobs and other sessions alone', async () => {
    await cli('apply', '-f', file('a.yaml', DOC({ withOld: true })));
    const sessions = (await d.api('GET', '/v1/sessions?status=open')).body.items as {
      id: string;
      name: string;
    }[];
    const nightly = sessions.find((s) => s.name === 'nightly')!;
    const unnamed = await d.api('POST', `/v1/sessions/${nightly.id}/jobs`, {
      cron: '0 2 * * *',
      prompt: 'By hand.',
    });
    expect(unnamed.status).toBe(201);
    const other = await d.api('POST', '/v1/sessions', { name: 'other', workspace: ws });
    const byHand = await d.api('POST', '/v1/sessions', { workspace: ws });

    const path = file('b.yaml', DOC());
    const without = await cli('apply', '-f', path);
    expect(without.stdout).toBe(`  job nightly/${unnamed.body.id}: unmanaged (it has no name)\nno changes\n`);
    proxy.seen.length = 0;
    const pruned = await cli('apply', '-f', path, '--prune');
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout.split('\n')).toEqual([
      `  job nightly/${unnamed.body.id}: unmanaged (it has no name)`,
      '- job nightly/old (prune)',
      '- trigger old-trigger (prune)',
      '- session other (prune: closed)',
      '3 change(s) applied',
      '',
    ]);
    expect(writes(proxy.seen)).toHaveLength(3);
    const jobs = (await d.api('GET', `/v1/sessions/${nightly.id}/jobs`)).body.items as {
      name: string | null;
    }[];
    expect(jobs.map((j) => j.name ?? '(no name)').sort()).toEqual(['(no name)', 'deps', 'review']);
    expect((await d.api('GET', `/v1/sessions/${other.body.id}`)).body.status).toBe('closed');
    // A session made without a name (its name is its id) and the schedule trigger's own session stay open.
    expect((await d.api('GET', `/v1/sessions/${byHand.body.id}`)).body.status).toBe('open');
    const open = (await d.api('GET', '/v1/sessions?status=open')).body.items as {
      made_by_trigger: boolean;
    }[];
    expect(open.filter((s) => s.made_by_trigger)).toHaveLength(1);
    expect((await cli('apply', '-f', path, '--prune')).stdout).toContain('no changes');
  });

  it('refuses a name two objects share, naming both, and changes nothing', async () => {
    const a = await d.api('POST', '/v1/sessions', { name: 'nightly', workspace: ws });
    const b = await d.api('POST', '/v1/sessions', { name: 'nightly', workspace: ws });
    proxy.seen.length = 0;
    const refused = await cli('apply', '-f', file('drydock.yaml', DOC()));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `2 sessions are named "nightly" (${a.body.id}, ${b.body.id}): apply cannot tell which one the file means`,
    );
    expect(writes(proxy.seen)).toEqual([]);
  });

  it('refuses a change to a session and a trigger of another kind, changing nothing', async () => {
    await cli('apply', '-f', file('a.yaml', DOC()));
    const other = DOC().replace('defaults: { execute_mode: manual }', 'defaults: { execute_mode: edits }');
    const changedKind = other.replace('kind: generic', 'kind: schedule\n    cron: "0 4 * * *"');
    proxy.seen.length = 0;
    const refused = await cli('apply', '-f', file('b.yaml', changedKind));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'session nightly: defaults {"execute_mode":"manual"} → {"execute_mode":"edits"}: a session cannot change once made',
    );
    expect(refused.stderr).toContain(
      "trigger deploy-check: kind generic → schedule: a trigger's kind cannot change",
    );
    expect(writes(proxy.seen)).toEqual([]);
  });

  it('says where the file is wrong, with the key it probably meant, before any request', async () => {
    const typo = DOC().replace('        timezone: Europe/Berlin', '        timezon: Europe/Berlin');
    const r = await cli('apply', '-f', file('typo.yaml', typo));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('sessions[0].jobs[0].timezon: unknown key; did you mean "timezone"?');
    const version = await cli('apply', '-f', file('v.yaml', 'apiVersion: drydock/v2\n'));
    expect(version.code).toBe(2);
    expect(version.stderr).toContain('apiVersion:');
    expect(proxy.seen).toEqual([]);
  });
});

describe('drydock export', () => {
  it('round trips: export, apply on an empty daemon (on PostgreSQL when one answers), export again is the same text', async () => {
    await cli('apply', '-f', file('a.yaml', DOC({ withOld: true })));
    // A second change made by hand, outside any file: it is exported too.
    const triggers = (await d.api('GET', '/v1/triggers')).body.items as { id: string; name: string }[];
    const pr = triggers.find((t) => t.name === 'pr-review')!;
    await d.api('PATCH', `/v1/triggers/${pr.id}`, { enabled: false, hourly_cap: 7 });
    const first = await cli('export');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('apiVersion: drydock/v1');
    expect(first.stdout).toContain('hourly_cap: 7');

    // The other backend where there is one: the same file makes the same objects on both.
    const empty = await startTestDaemon(postgresUp ? { store: 'postgres' } : {});
    try {
      const other = (...args: string[]) =>
        runCli(args, { DRYDOCK_URL: empty.daemon.url, DRYDOCK_TOKEN: ADMIN_TOKEN });
      const applied = await other('apply', '-f', file('exported.yaml', first.stdout));
      expect(applied.code, applied.stderr).toBe(0);
      const second = await other('export');
      expect(second.stdout).toBe(first.stdout);
      expect((await other('apply', '-f', file('exported.yaml', first.stdout))).stdout).toBe('no changes\n');
    } finally {
      await empty.stop();
    }
  });

  it('writes to a file with -o', async () => {
    await cli('apply', '-f', file('a.yaml', DOC()));
    const out = join(dir.path, 'out.yaml');
    const r = await cli('export', '-o', out);
    expect(r).toMatchObject({ code: 0, stdout: '' });
    const again = await cli('apply', '-f', out);
    expect(again.stdout).toBe('no changes\n');
  });
});
