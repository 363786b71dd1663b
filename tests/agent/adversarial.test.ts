import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ADMIN_TOKEN, readSse, startTestDaemon, type TestDaemon, waitFor } from '../support/daemon.js';
import { git, makeRepo } from '../support/git-repo.js';
import { type ModelServer, startModelServer } from '../support/model-server.js';

let model: ModelServer;
let d: TestDaemon;
let repo: string;
let outside: string;

beforeEach(async () => {
  model = await startModelServer();
  d = await startTestDaemon({ modelUrl: model.url });
  repo = join(d.dir, 'repo');
  makeRepo(repo, { 'src/app.ts': 'export const app = 1;\n' });
  outside = join(d.dir, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'TOP-SECRET-VALUE\n');
  symlinkSync(join(outside, 'secret.txt'), join(repo, 'leak.txt'));
  symlinkSync(outside, join(repo, 'outdir'));
  // 50 MB of text lines in the workspace.
  const chunk = 'a log line of some length, repeated to make a big file\n'.repeat(20_000);
  const fd = openSync(join(repo, 'big.log'), 'w');
  while (fstatSync(fd).size < 50 * 1024 * 1024) writeSync(fd, chunk);
  closeSync(fd);
  // Committed: a plan run reads a clean checkout of the workspace's commit, links and all.
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'links out, and a big file');
});
afterEach(async () => {
  await d.stop();
  await model.close();
});

it('in plan mode nothing is executed, written or leaked; each attempt is a violation or a bounded error', async () => {
  const pwned = join(d.dir, 'pwned');
  model.enqueue(
    {
      kind: 'message',
      content: [
        { type: 'tool_use', id: 'w', name: 'Write', input: { file_path: 'src/new.ts', content: 'x' } },
        { type: 'tool_use', id: 'b', name: 'Bash', input: { command: `touch ${pwned}` } },
        { type: 'tool_use', id: 'u', name: 'DeleteEverything', input: {} },
        {
          type: 'tool_use',
          id: 'e',
          name: 'Edit',
          input: { file_path: 'src/app.ts', old_string: '1', new_string: '2' },
        },
      ],
    },
    {
      kind: 'message',
      content: [
        { type: 'tool_use', id: 'r1', name: 'Read', input: { file_path: '../../etc/passwd' } },
        { type: 'tool_use', id: 'r2', name: 'Read', input: { file_path: '/etc/passwd' } },
        { type: 'tool_use', id: 'r3', name: 'Read', input: { file_path: 'leak.txt' } },
        { type: 'tool_use', id: 'r4', name: 'Read', input: { file_path: 'outdir/secret.txt' } },
        { type: 'tool_use', id: 'r5', name: 'Read', input: { file_path: 'big.log' } },
        { type: 'tool_use', id: 'g1', name: 'Grep', input: { pattern: 'TOP-SECRET', path: '..' } },
        { type: 'tool_use', id: 'g2', name: 'Grep', input: { pattern: 'TOP-SECRET' } },
      ],
    },
    {
      kind: 'message',
      content: [{ type: 'tool_use', id: 'p', name: 'ExitPlanMode', input: { plan: 'nothing to do' } }],
    },
  );
  const s = await d.api('POST', '/v1/sessions', { workspace: repo });
  const j = await d.api('POST', `/v1/sessions/${s.body.id}/jobs`, {
    cron: '0 9 * * *',
    prompt: 'try everything',
  });
  const runId = (await d.api('POST', `/v1/jobs/${j.body.id}/run`)).body.id;
  const run = await waitFor(async () => {
    const r = await d.api('GET', `/v1/runs/${runId}`);
    return ['planned', 'failed'].includes(r.body.status) ? r.body : undefined;
  });
  expect(run.status).toBe('planned');

  // Nothing was executed or written.
  expect(existsSync(pwned)).toBe(false);
  expect(existsSync(join(repo, 'src/new.ts'))).toBe(false);

  const events = await readSse(`${d.daemon.url}/v1/runs/${runId}/events`, ADMIN_TOKEN);
  const violations = events.filter((e) => e.event === 'policy_violation').map((e) => e.data.tool);
  expect(violations).toEqual(['Write', 'Bash', 'DeleteEverything', 'Edit']);

  const results: Record<string, any> = {};
  for (const m of model.requests.at(-1)!.body.messages) {
    for (const b of Array.isArray(m.content) ? m.content : [])
      if (b.type === 'tool_result') results[b.tool_use_id] = b;
  }
  for (const id of ['w', 'b', 'u', 'e']) {
    expect(results[id].is_error).toBe(true);
    expect(results[id].content).toMatch(/not available in plan mode; nothing was executed/);
  }
  for (const id of ['r1', 'r2', 'r3', 'r4', 'g1']) {
    expect(results[id].is_error, id).toBe(true);
    expect(results[id].content, id).toMatch(/outside the workspace/);
  }
  // Grep inside the workspace does not follow the symlinks out of it.
  expect(results.g2.content).not.toContain('TOP-SECRET-VALUE');
  // The 50 MB file: bounded, and says it was cut.
  expect(results.r5.content.length).toBeLessThanOrEqual(30_000);
  expect(results.r5.content).toMatch(/truncated/);
  // No secret and no absolute path of the host anywhere in what the model was sent.
  const sent = JSON.stringify(model.requests.map((r) => r.body));
  expect(sent).not.toContain('TOP-SECRET-VALUE');
  expect(sent).not.toContain('root:x:0:0');
  // Tool results never reveal where the workspace lives on the host.
  for (const r of Object.values(results)) expect(r.content).not.toContain(d.dir);
});
