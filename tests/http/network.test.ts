import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_NETWORK_DOMAINS } from '../../src/domain/network.js';
import { openApiDocument } from '../../src/http/openapi.js';
import { appDeps, createApp } from '../../src/server.js';
import { createHarness, type Harness } from '../support/harness.js';
import { createSession, expectError, jobIds } from './helpers.js';

// `network` on sessions, jobs and triggers is a list of host names (README, Security model): checked where it is
// given (422 naming the entry), stored normalized, compared as sets by the loosening rule; `true` still works as
// the configured default list, and is logged as deprecated each time something is made with it.

let h: Harness;
let logs: Record<string, unknown>[];
beforeEach(async () => {
  h = await createHarness();
  logs = [];
});
afterEach(async () => h.close());

/** The harness's app with a logger whose lines the test reads. */
function loggedApp() {
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return createApp({ ...appDeps(h.services), logger: pino({ level: 'info' }, sink), metrics: undefined });
}

async function post(path: string, body: unknown, role: 'admin' | 'operator' = 'operator') {
  const res = await loggedApp().request(path, {
    method: 'POST',
    headers: { authorization: `Bearer ${h.tokens[role]}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

describe('network as a list of host names', () => {
  it('a session takes a list, stored lower case, each name once, sorted', async () => {
    const s = await createSession(h, {
      defaults: { network: ['Registry.npmjs.org', '*.github.com', 'registry.npmjs.org'] },
    });
    expect(s.defaults.network).toEqual(['*.github.com', 'registry.npmjs.org']);
    expect((await h.call('GET', `/v1/sessions/${s.id}`)).body.defaults.network).toEqual([
      '*.github.com',
      'registry.npmjs.org',
    ]);
  });

  it.each([
    ['127.0.0.1', 'is an IP address'],
    ['registry.npmjs.org:443', 'is a port or an IPv6 address'],
    ['https://registry.npmjs.org', 'is a URL'],
    ['', 'is an empty entry'],
    ['localhost', 'is a single label'],
    ['*.com', 'is a single label'],
  ])('refuses %j with 422 naming the entry, on sessions, jobs and triggers', async (entry, problem) => {
    const named = `network[1] ${JSON.stringify(entry)} ${problem}`;
    const network = ['registry.npmjs.org', entry];
    const session = await h.call('POST', '/v1/sessions', {
      body: { workspace: h.workspace, defaults: { network } },
    });
    expect(expectError(session, 422, 'invalid_request').message).toContain(`defaults.network: ${named}`);
    expect((await h.call('GET', '/v1/sessions')).body.items).toEqual([]);

    const s = await createSession(h, { defaults: { network: ['registry.npmjs.org'] } });
    const job = await h.call('POST', `/v1/sessions/${s.id}/jobs`, {
      body: { cron: '0 9 * * *', prompt: 'p', options: { network } },
    });
    expect(expectError(job, 422, 'invalid_request').message).toContain(named);
    expect(await jobIds(h, s.id)).toEqual([]);

    const trigger = await h.call('POST', '/v1/triggers', {
      body: { kind: 'generic', name: 'g', prompt: 'p', workspace: h.workspace, options: { network } },
    });
    expect(expectError(trigger, 422, 'invalid_request').message).toContain(named);
  });

  it('refuses what is neither a boolean nor a list of strings', async () => {
    for (const network of ['registry.npmjs.org', [7], { a: 1 }]) {
      const res = await h.call('POST', '/v1/sessions', {
        body: { workspace: h.workspace, defaults: { network } },
      });
      expectError(res, 422, 'invalid_request');
    }
  });

  it('an operator may add a job whose list the session covers; a name more is an admin’s', async () => {
    const s = await createSession(h, { defaults: { network: ['*.github.com', 'registry.npmjs.org'] } });
    const add = (network: unknown) =>
      h.call('POST', `/v1/sessions/${s.id}/jobs`, {
        body: { cron: '0 9 * * *', prompt: 'p', options: { network } },
      });
    expect((await add(['api.github.com'])).status).toBe(201);
    expect((await add([])).status).toBe(201);
    expect((await add(false)).status).toBe(201);
    const err = expectError(await add(['registry.npmjs.org', 'pypi.org']), 403, 'forbidden');
    expect(err.message).toContain(
      'network [pypi.org, registry.npmjs.org] (session: [*.github.com, registry.npmjs.org])',
    );
    // true is the default list, which holds names (pypi.org, github.com) the session does not allow.
    expectError(await add(true), 403, 'forbidden');
  });
});

describe('network: true (deprecated)', () => {
  it('is taken as the configured default list, and logged once for each session, job or trigger made with it', async () => {
    const s = await post('/v1/sessions', { workspace: h.workspace, defaults: { network: true } }, 'admin');
    expect(s.status).toBe(201);
    // Stored as given: it follows execute.network_default_domains, resolved when a plan is made.
    expect(s.body.defaults.network).toBe(true);
    const job = await post(`/v1/sessions/${s.body.id}/jobs`, {
      cron: '0 9 * * *',
      prompt: 'p',
      options: { network: true },
    });
    expect(job.status).toBe(201);
    const trigger = await post('/v1/triggers', {
      kind: 'generic',
      name: 'g',
      prompt: 'p',
      workspace: h.workspace,
      options: { network: true },
    });
    expect(trigger.status).toBe(201);
    const listed = await post('/v1/sessions', {
      workspace: h.workspace,
      defaults: { network: ['pypi.org'] },
    });
    expect(listed.status).toBe(201);
    const notes = logs.filter((l) => String(l.msg).startsWith('network: true is deprecated'));
    expect(notes.map((l) => [l.level, l.subject])).toEqual([
      [40, `session ${s.body.id}`],
      [40, `job ${job.body.id}`],
      [40, `trigger ${trigger.body.id}`],
    ]);
    expect(notes[0]!.msg).toContain('execute.network_default_domains');
  });

  it('an operator may set a job to a list within the default list under a session that says true', async () => {
    const s = await createSession(h, { defaults: { network: true } });
    const res = await h.call('POST', `/v1/sessions/${s.id}/jobs`, {
      body: { cron: '0 9 * * *', prompt: 'p', options: { network: ['registry.npmjs.org'] } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it('is marked deprecated in the OpenAPI document', () => {
    const doc = JSON.stringify(openApiDocument('test'));
    expect(doc).toContain('"deprecated":true');
    expect(doc).toContain('network_domains');
  });

  it('the default list of the configuration is the built-in one', () => {
    expect(h.config.execute.network_default_domains).toEqual([...DEFAULT_NETWORK_DOMAINS]);
  });
});
