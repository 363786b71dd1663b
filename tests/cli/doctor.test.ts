import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { CLI } from '../support/process-daemon.js';

// `drydock doctor` as a real process against the stand-in (which refuses what the real API refuses): one
// tiny request shaped as runs shape theirs, and one line each for key, model, thinking and price.

let model: ModelServer;
let tmp: ReturnType<typeof tempDir>;
beforeEach(async () => {
  model = await startModelServer();
  tmp = tempDir('drydock-doctor-');
});
afterEach(async () => {
  await model.close();
  tmp.remove();
});

function doctor(env: Record<string, string>, args: string[] = []): Promise<{ code: number; stdout: string }> {
  const child = spawn(process.execPath, [CLI, 'doctor', ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: tmp.path, ...env },
    cwd: tmp.path,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (b) => {
    stdout += b;
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code: code ?? -1, stdout })));
}

describe('drydock doctor', () => {
  it('reports key, model, thinking and price, one line each, after one real request', async () => {
    model.enqueue({ kind: 'message', content: [{ type: 'text', text: 'ready' }] });
    const r = await doctor({ ANTHROPIC_API_KEY: 'sk-test-secret', ANTHROPIC_BASE_URL: model.url });
    expect(r.code, r.stdout).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe(`ok anthropic key: set (anthropic.api_key / ANTHROPIC_API_KEY), for ${model.url}`);
    expect(lines[1]).toMatch(
      /^ok model claude-sonnet-5-5: answered \(claude-sonnet-5-5\) in \d+ ms, stop reason end_turn; this check cost \$0\.\d{6}$/,
    );
    expect(lines[2]).toBe(
      "ok thinking: asked adaptive; sent adaptive, display summarized; effort the model's default",
    );
    expect(lines[3]).toBe(
      'ok price: $2 input / $10 output / $2.5 5-min cache write / $4 1-h cache write / $0.1 cache read per million tokens',
    );
    expect(lines[4]).toMatch(/^ok ripgrep: \/.*\/rg, for the Grep tool$/);
    expect(r.stdout).not.toContain('sk-test-secret');
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]!.body).toMatchObject({
      model: 'claude-sonnet-5-5',
      thinking: { type: 'adaptive', display: 'summarized' },
    });
    expect(model.requests[0]!.status).toBe(200);
  });

  it('says what failed: a refused key, a model the API does not know', async () => {
    model.enqueue({ kind: 'status', status: 401, message: 'invalid x-api-key' });
    const refused = await doctor({ ANTHROPIC_API_KEY: 'bad', ANTHROPIC_BASE_URL: model.url });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(
      'FAIL model claude-sonnet-5-5: the API key was refused (401 authentication_error: invalid x-api-key): set ANTHROPIC_API_KEY',
    );

    const config = join(tmp.path, 'drydock.yaml');
    writeFileSync(
      config,
      'anthropic:\n  model: claude-nonexistent-9\nmodels:\n  claude-nonexistent-9:\n    price: { input: 1, output: 1, cache_write_5m: 1, cache_write_1h: 1, cache_read: 1 }\n',
    );
    const unknown = await doctor({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: model.url }, [
      '--config',
      config,
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toMatch(
      /FAIL model claude-nonexistent-9: the model claude-nonexistent-9 was not found \(404 not_found_error/,
    );
  });

  it('says when ripgrep is missing: Grep cannot search', async () => {
    model.enqueue({ kind: 'message', content: [{ type: 'text', text: 'ready' }] });
    const r = await doctor({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: model.url, PATH: tmp.path });
    expect(r.code, r.stdout).toBe(1);
    expect(r.stdout).toContain(
      'FAIL ripgrep: rg is not on PATH: install the ripgrep package (Debian: apt-get install ripgrep); the Grep tool refuses to search until then',
    );
  });

  it('without a key: says so and exits 1 without a request', async () => {
    const r = await doctor({ ANTHROPIC_BASE_URL: model.url });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('FAIL anthropic key: set ANTHROPIC_API_KEY');
    expect(model.requests).toHaveLength(0);
  });
});
