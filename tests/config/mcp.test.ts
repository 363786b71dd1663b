import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';

// mcp.servers: the shape of a server, its name, and secrets named (never written) in env and headers.

function problems(raw: unknown, env: Record<string, string> = {}): string[] {
  const path = writeConfig(raw);
  try {
    loadConfig({ configPath: path, env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';

function writeConfig(raw: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'drydock-mcp-config-'));
  const path = join(dir, 'drydock.yaml');
  writeFileSync(path, stringify(raw));
  return path;
}

describe('mcp.servers', () => {
  it('fills every default of a stdio and a streamable HTTP server', () => {
    const config = configSchema.parse({
      mcp: { servers: { db: { command: 'node' }, tracker: { url: 'https://mcp.example.com/mcp' } } },
    });
    expect(config.mcp.servers.db).toEqual({
      command: 'node',
      args: [],
      env: {},
      read_only_paths: [],
      network: [],
      loopback_ports: [],
      headers: {},
      plan_tools: [],
      auto_tools: [],
      trust_annotations: false,
      start_timeout_ms: 30_000,
      timeout_ms: 60_000,
      max_output_chars: 30_000,
    });
    expect(config.mcp.servers.tracker?.url).toBe('https://mcp.example.com/mcp');
    expect(configSchema.parse({}).mcp).toEqual({ servers: {} });
  });

  it('lists every problem of the servers at once', () => {
    const found = problems(
      {
        mcp: {
          servers: {
            a__b: { command: 'x' },
            both: { command: 'node', url: 'https://x.example' },
            neither: { args: ['x'] },
            http: { url: 'https://x.example', network: ['example.com'], env: { A: `\${B}` } },
            stdio: { command: 'node', headers: { Authorization: `Bearer \${T}` } },
            names: { command: 'node', auto_tools: ['bad.name'] },
          },
        },
      },
      { B: 'x', T: 'y' },
    );
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^mcp\.servers\.a__b: expected a server name/),
        'mcp.servers.both: expected exactly one of command (stdio) or url (streamable HTTP)',
        'mcp.servers.neither: expected exactly one of command (stdio) or url (streamable HTTP)',
        'mcp.servers.http.network: only for a stdio server (command)',
        'mcp.servers.http.env: only for a stdio server (command)',
        'mcp.servers.stdio.headers: only for a streamable HTTP server (url)',
        expect.stringMatching(/^mcp\.servers\.names\.auto_tools\[0\]: expected a tool name/),
      ]),
    );
  });

  it('refuses a tool name that cannot fit the Messages API once prefixed', () => {
    expect(
      problems({ mcp: { servers: { long: { command: 'node', plan_tools: ['t'.repeat(120)] } } } }),
    ).toEqual([
      `mcp.servers.long.plan_tools[0]: mcp__long__${'t'.repeat(120)} is longer than the 128 characters a tool name may have`,
    ]);
    expect(problems({ mcp: { servers: { [`s${'x'.repeat(120)}`]: { command: 'node' } } } })[0]).toMatch(
      /: expected a server name of letters, digits and -, with single _ between them \(at most 120 characters/,
    );
  });

  it('takes secrets only by name, and never shows a value written inline', () => {
    const found = problems(
      {
        mcp: {
          servers: { db: { command: 'node', env: { PGPASSWORD: 'hunter2-inline', OK: `\${PG_PASSWORD}` } } },
        },
      },
      { PG_PASSWORD: 'x' },
    );
    expect(found).toEqual([
      `mcp.servers.db.env.PGPASSWORD: expected a value that names a secret as \${VARIABLE}; secrets are never written here`,
    ]);
    expect(found.join('\n')).not.toContain('hunter2');
  });

  it('refuses a start while a named secret is unset, naming each', () => {
    const found = problems(
      {
        mcp: {
          servers: {
            db: { command: 'node', env: { PGPASSWORD: `\${PG_PASSWORD}`, PGUSER: `\${PG_USER}` } },
            tracker: { url: 'https://x.example/mcp', headers: { Authorization: `Bearer \${TRACKER_TOKEN}` } },
          },
        },
      },
      { PG_USER: 'reader', TRACKER_TOKEN: '' },
    );
    expect(found).toEqual([
      'mcp.servers.db.env.PGPASSWORD: names the secret PG_PASSWORD, which is not set in the environment',
      'mcp.servers.tracker.headers.Authorization: names the secret TRACKER_TOKEN, which is not set in the environment',
    ]);
  });

  it('loads when every named secret is set', () => {
    const path = writeConfig({
      mcp: { servers: { db: { command: 'node', env: { PGPASSWORD: `\${PG_PASSWORD}` } } } },
    });
    const config = loadConfig({ configPath: path, env: { PG_PASSWORD: 's3cret' } });
    // The configuration keeps the reference; the secret is read from the environment when the server starts.
    expect(config.mcp.servers.db?.env).toEqual({ PGPASSWORD: `\${PG_PASSWORD}` });
    expect(JSON.stringify(config)).not.toContain('s3cret');
  });
});
