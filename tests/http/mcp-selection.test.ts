import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Config, configSchema } from '../../src/config/schema.js';
import { createHarness, type Harness } from '../support/harness.js';
import { createSession, expectError, jobIds } from './helpers.js';

// `mcp: [names]` on sessions, jobs and triggers (README, MCP servers): each name must be a server under
// mcp.servers in the configuration; anything else is a 422 naming the unknown server and the configured
// ones, and nothing is written. What is stored is what the API shows back.

/** Two configured servers, parsed as the daemon parses them; never started here (no run executes). */
function withServers(c: Config): void {
  c.mcp = configSchema.parse({
    mcp: {
      servers: {
        tracker: { url: 'http://127.0.0.1:9/mcp' },
        db: { command: 'node', args: ['server.js'] },
      },
    },
  }).mcp;
}

let h: Harness;
beforeEach(async () => {
  h = await createHarness({ patch: withServers });
});
afterEach(async () => h.close());

describe('choosing MCP servers', () => {
  it('a session, a job and a trigger keep the servers they name, and show them', async () => {
    const s = await createSession(h, { defaults: { mcp: ['tracker', 'db'] } });
    expect(s.defaults.mcp).toEqual(['tracker', 'db']);
    expect((await h.call('GET', `/v1/sessions/${s.id}`)).body.defaults.mcp).toEqual(['tracker', 'db']);

    const job = await h.call('POST', `/v1/sessions/${s.id}/jobs`, {
      body: { cron: '0 9 * * *', prompt: 'p', options: { mcp: [] } },
    });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    expect(job.body.options.mcp).toEqual([]);
    expect((await h.call('GET', `/v1/jobs/${job.body.id}`)).body.options.mcp).toEqual([]);

    const trigger = await h.call('POST', '/v1/triggers', {
      body: { kind: 'generic', name: 'g', prompt: 'p', workspace: h.workspace, options: { mcp: ['db'] } },
    });
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(201);
    expect(trigger.body.options.mcp).toEqual(['db']);
    const patched = await h.call('PATCH', `/v1/triggers/${trigger.body.id}`, {
      body: { options: { mcp: ['tracker'] } },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect((await h.call('GET', `/v1/triggers/${trigger.body.id}`)).body.options.mcp).toEqual(['tracker']);
  });

  it('a name not under mcp.servers is a 422 naming it and the configured servers; nothing is written', async () => {
    const expected = 'not under mcp.servers in the configuration: jira; configured: tracker, db';
    const session = await h.call('POST', '/v1/sessions', {
      body: { workspace: h.workspace, defaults: { mcp: ['tracker', 'jira'] } },
    });
    expect(expectError(session, 422, 'invalid_request').message).toContain(expected);
    expect((await h.call('GET', '/v1/sessions')).body.items).toEqual([]);

    const s = await createSession(h);
    const job = await h.call('POST', `/v1/sessions/${s.id}/jobs`, {
      body: { cron: '0 9 * * *', prompt: 'p', options: { mcp: ['jira'] } },
    });
    expect(expectError(job, 422, 'invalid_request').message).toContain(expected);
    expect(await jobIds(h, s.id)).toEqual([]);

    const trigger = await h.call('POST', '/v1/triggers', {
      body: { kind: 'generic', name: 'g', prompt: 'p', workspace: h.workspace, options: { mcp: ['jira'] } },
    });
    expect(expectError(trigger, 422, 'invalid_request').message).toContain(expected);
    expect((await h.call('GET', '/v1/triggers')).body.items).toEqual([]);

    const made = await h.call('POST', '/v1/triggers', {
      body: { kind: 'generic', name: 'g', prompt: 'p', workspace: h.workspace },
    });
    const patch = await h.call('PATCH', `/v1/triggers/${made.body.id}`, {
      body: { options: { mcp: ['db', 'jira'] } },
    });
    expect(expectError(patch, 422, 'invalid_request').message).toContain(expected);
    expect((await h.call('GET', `/v1/triggers/${made.body.id}`)).body.options.mcp).toBeUndefined();
  });

  it('a server named twice is a 422', async () => {
    const res = await h.call('POST', '/v1/sessions', {
      body: { workspace: h.workspace, defaults: { mcp: ['db', 'db'] } },
    });
    expect(expectError(res, 422, 'invalid_request').message).toContain(
      'mcp names a server more than once: db',
    );
  });
});

describe('choosing MCP servers without any configured', () => {
  it('says there are none', async () => {
    const bare = await createHarness();
    try {
      const res = await bare.call('POST', '/v1/sessions', {
        body: { workspace: bare.workspace, defaults: { mcp: ['tracker'] } },
      });
      expect(expectError(res, 422, 'invalid_request').message).toContain(
        'configured: none (the configuration has no mcp.servers)',
      );
    } finally {
      await bare.close();
    }
  });
});
