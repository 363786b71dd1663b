import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { packageRoot } from '../../src/paths.js';
import { ADMIN_TOKEN, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { tempDir } from '../support/harness.js';

// --mcp NAME (repeated) and --no-mcp on the commands that set run options, run as the built binary against a
// real daemon whose configuration names two MCP servers (never started: no run executes).

const CLI = join(packageRoot(), 'dist/src/cli/main.js');
vi.setConfig({ testTimeout: 60_000 });

let d: TestDaemon;
let workspace: { path: string; remove(): void };

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: '/tmp',
      DRYDOCK_URL: d.daemon.url,
      DRYDOCK_TOKEN: ADMIN_TOKEN,
    },
    cwd: workspace.path,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => {
    stdout += b;
  });
  child.stderr.on('data', (b) => {
    stderr += b;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  workspace = tempDir('drydock-cli-mcp-ws-');
  d = await startTestDaemon({
    maxRetries: 0,
    timeoutMs: 2_000,
    patch: (c) => {
      c.mcp = configSchema.parse({
        mcp: {
          servers: { tracker: { url: 'http://127.0.0.1:9/mcp' }, db: { url: 'http://127.0.0.1:9/db' } },
        },
      }).mcp;
    },
  });
});
afterAll(async () => {
  await d?.stop();
  workspace?.remove();
});

describe('choosing MCP servers from the command line', () => {
  it('sessions, jobs and triggers take --mcp and --no-mcp; show prints them; an unknown name is refused', async () => {
    const s = await cli(['sessions', 'create', '--workspace', '.', '--mcp', 'tracker', '--mcp', 'db']);
    expect(s.code, s.stderr).toBe(0);
    const sessionId = s.stdout.trim();
    expect((await d.api('GET', `/v1/sessions/${sessionId}`)).body.defaults.mcp).toEqual(['tracker', 'db']);
    const shown = await cli(['sessions', 'show', sessionId]);
    expect(shown.stdout).toMatch(/mcp\s+tracker, db/);

    const j = await cli([
      'jobs',
      'create',
      '--session',
      sessionId,
      '--cron',
      '0 9 * * *',
      '--prompt',
      'p',
      '--no-mcp',
    ]);
    expect(j.code, j.stderr).toBe(0);
    expect((await d.api('GET', `/v1/jobs/${j.stdout.trim()}`)).body.options).toEqual({ mcp: [] });

    const t = await cli([
      'triggers',
      'create',
      '--kind',
      'generic',
      '--name',
      'g',
      '--prompt',
      'p',
      '--workspace',
      '.',
      '--mcp',
      'db',
    ]);
    expect(t.code, t.stderr).toBe(0);
    const triggerId = /trigger (\S+) created/.exec(t.stdout)![1]!;
    expect((await d.api('GET', `/v1/triggers/${triggerId}`)).body.options).toEqual({ mcp: ['db'] });
    const u = await cli(['triggers', 'update', triggerId, '--mcp', 'tracker', '--execute-mode', 'edits']);
    expect(u.code, u.stderr).toBe(0);
    expect((await d.api('GET', `/v1/triggers/${triggerId}`)).body.options).toEqual({
      mcp: ['tracker'],
      execute_mode: 'edits',
    });

    const bad = await cli(['sessions', 'create', '--workspace', '.', '--mcp', 'jira']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('jira; configured: tracker, db');
    const both = await cli([
      'jobs',
      'create',
      '--session',
      sessionId,
      '--cron',
      '0 9 * * *',
      '--prompt',
      'p',
      '--mcp',
      'db',
      '--no-mcp',
    ]);
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain('give --mcp or --no-mcp, not both');
  });
});
