import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { ADMIN_TOKEN, readSse, waitFor } from '../support/daemon.js';
import { makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';

const CLI = join(packageRoot(), 'dist/src/cli/main.js');
let model: ModelServer;
const children: ChildProcess[] = [];
const dirs: { remove(): void }[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const x of dirs.splice(0)) x.remove();
  await model?.close();
});

function serve(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dataDir,
      DRYDOCK_DATA_DIR: dataDir,
      DRYDOCK_PORT: '0',
      DRYDOCK_ADMIN_TOKEN: ADMIN_TOKEN,
      DRYDOCK_LOG_LEVEL: 'warn',
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: model.url,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (b) => {
      err += b;
      const m = /drydock listening on (\S+)/.exec(err);
      if (m) resolve({ child, url: m[1]! });
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}

it('a run cut off mid-turn by a crash (SIGKILL) is retried once from its stored conversation', async () => {
  model = await startModelServer();
  const tmp = tempDir('drydock-crash-');
  dirs.push(tmp);
  const repo = join(tmp.path, 'repo');
  makeRepo(repo, { 'a.txt': 'hello\n' });
  model.enqueue(
    { kind: 'message', content: [{ type: 'tool_use', id: 'g', name: 'Glob', input: { pattern: '*' } }] },
    { kind: 'hang' }, // the second turn never answers: the daemon dies meanwhile
    {
      kind: 'message',
      content: [{ type: 'tool_use', id: 'p', name: 'ExitPlanMode', input: { plan: '## plan' } }],
    },
  );
  const api = async (url: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  const first = await serve(join(tmp.path, 'data'));
  const s = await api(first.url, 'POST', '/v1/sessions', { workspace: repo });
  const j = await api(first.url, 'POST', `/v1/sessions/${s.body.id}/jobs`, {
    cron: '0 9 * * *',
    prompt: 'plan',
  });
  const runId = (await api(first.url, 'POST', `/v1/jobs/${j.body.id}/run`)).body.id;
  await waitFor(async () => model.requests.length === 2, 10_000, 'the second model request');
  first.child.kill('SIGKILL');
  await new Promise((r) => first.child.once('exit', r));

  const second = await serve(join(tmp.path, 'data'));
  const run = await waitFor(async () => {
    const r = await api(second.url, 'GET', `/v1/runs/${runId}`);
    return r.body.status === 'planned' ? r.body : undefined;
  });
  expect(run.attempt).toBe(2);
  expect(run.turns).toBe(2); // the cut-off turn never completed and was not counted
  // The retry resent the stored conversation: the Glob result was not lost.
  const retried = model.requests.at(-1)!.body.messages;
  expect(retried).toHaveLength(3);
  expect(retried[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'g' });
  const events = await readSse(`${second.url}/v1/runs/${runId}/events`, ADMIN_TOKEN);
  expect(events.map((e) => e.event)).toContain('run_interrupted');
  expect(events.at(-1)).toMatchObject({ event: 'run_finished', data: { status: 'planned' } });
  second.child.kill('SIGTERM');
});
