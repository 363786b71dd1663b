import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ADMIN_TOKEN, readSse, waitFor } from '../support/daemon.js';
import { makeRepo } from '../support/git-repo.js';
import { tempDir } from '../support/harness.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';
import { serveProcess } from '../support/process-daemon.js';

let model: ModelServer;
const children: ChildProcess[] = [];
const dirs: { remove(): void }[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  for (const x of dirs.splice(0)) x.remove();
  await model?.close();
});

const serve = (dataDir: string) => serveProcess(dataDir, model.url, children);

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
  const first = await serve(join(tmp.path, 'data'));
  const s = await first.api('POST', '/v1/sessions', { workspace: repo });
  const j = await first.api('POST', `/v1/sessions/${s.body.id}/jobs`, {
    cron: '0 9 * * *',
    prompt: 'plan',
  });
  const runId = (await first.api('POST', `/v1/jobs/${j.body.id}/run`)).body.id;
  await waitFor(async () => model.requests.length === 2, 10_000, 'the second model request');
  await first.kill();

  const second = await serve(join(tmp.path, 'data'));
  const run = await waitFor(async () => {
    const r = await second.api('GET', `/v1/runs/${runId}`);
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
